"""File I/O at the edges: strict UTF-8 reading with located errors, and atomic writes.

Every output of mwemt goes through `atomic_write` so an interrupted run never leaves a half
file that looks complete: data goes to a temporary file beside the target and is renamed
into place only when the writer finishes without error. A file the user may not write is not
replaced (`unwritable_reason`), and a file rightly replaced keeps its mode.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import hashlib
import io
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from mwemt.errors import InputError, MwemtError
from mwemt.processes import on_force_exit, raise_if_stopped

_UMASK = os.umask(0)
os.umask(_UMASK)
_PARTIAL: set[str] = set()  # temporary files of the atomic writes in progress


TAR_SUFFIXES = (".tar.gz", ".tgz", ".tar")
# errors of a write that a user fixes by freeing space or choosing another place
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


# ---------------------------------------------------------------- outputs never replace inputs
# Every file opened for reading here is remembered by identity (device, inode, and its change time,
# so that an inode number reused by a later file does not match); `atomic_write` refuses to replace
# such a file, however it is named: the same path, a symlink or a hard link to it.
_READ: dict[tuple[int, int], tuple[str, int]] = {}


def _regular_file_id(path: str | Path) -> os.stat_result | None:
    """The stat of a regular file at ``path`` (symlinks followed); None for anything else or nothing."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def forget_inputs() -> None:
    """Start afresh: a new command (`mwemt.cli.main`, called again in one process) has read nothing."""
    _READ.clear()


def note_input(path: str | Path) -> None:
    """Remember that ``path`` was read: no `atomic_write` of this process may replace it."""
    st = _regular_file_id(path)
    if st is not None:
        _READ[(st.st_dev, st.st_ino)] = (str(path), st.st_ctime_ns)


def release_inputs(*paths: str | Path) -> None:
    """Allow replacing files this process read, on purpose: a cache rebuilding its own stale files
    (they were read as cache, not as the user's inputs)."""
    for path in paths:
        st = _regular_file_id(path)
        if st is not None:
            _READ.pop((st.st_dev, st.st_ino), None)


def refuse_replacing_input(path: str | Path) -> None:
    """Raise `MwemtError` if ``path`` is (or links to) a file this process has read as an input."""
    st = _regular_file_id(path)
    if st is None:
        return
    read = _READ.get((st.st_dev, st.st_ino))
    if read is not None and read[1] == st.st_ctime_ns:
        same = "" if read[0] == str(path) else f" ({path} and {read[0]} are the same file)"
        raise MwemtError(f"{path}: this output is the input {read[0]}{same}; writing it would destroy the "
                         "input (expected an output path that is not an input)")


# ---------------------------------------------------------------- outputs the user may not write
# A file the user may not write (``chmod 444``, another user's file) is not replaced, although renaming
# a temporary file over it would succeed wherever its directory is writable: that rename would sidestep
# the protection (`sort -o` and `cp` refuse such a target too). The decision is the kernel's permission
# check for the real user (`os.access`), so root, who may write any file, replaces it as `cp` does.


def _mode_text(path: Path) -> str:
    try:
        return f"mode {stat.S_IMODE(os.stat(path).st_mode):04o}"
    except OSError:
        return "mode unknown"


def _read_only_filesystem(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def unwritable_reason(path: str | Path) -> str | None:
    """Why this process may not write the output file (or directory) ``path``, or None if it may.

    An existing regular file needs write permission itself, and its directory too (outputs are
    renamed into place); an existing directory (an output directory written into) needs write
    permission itself; a path that does not exist yet needs its nearest existing directory to be
    writable (the directories in between are created). Devices and pipes are checked as files.
    """
    path = Path(path)
    exists = path.exists()
    anchor = path if exists else _nearest_existing(path)
    if _read_only_filesystem(anchor):
        return "it is on a read-only file system"
    if exists and not path.is_dir():
        if not os.access(path, os.W_OK):
            return f"the file is write-protected ({_mode_text(path)})"
        if not path.is_file():
            return None   # a device or pipe is written in place, its directory does not matter
        if _sticky_protected(path):
            return (f"the directory {path.parent} is sticky ({_mode_text(path.parent)}, as /tmp) and the file "
                    "belongs to another user: only its owner may replace it")
        return _directory_reason(path.parent)
    return _directory_reason(anchor)


def _sticky_protected(path: Path) -> bool:
    """Whether the sticky bit of ``path``'s directory keeps this (real) user from replacing it: only the
    owner of the file or of the directory (or root) may rename over a file there."""
    try:
        st, st_dir = os.stat(path), os.stat(path.parent)
    except OSError:
        return False
    return bool(st_dir.st_mode & stat.S_ISVTX) and os.getuid() not in (0, st.st_uid, st_dir.st_uid)


def _directory_reason(directory: Path) -> str | None:
    """Why files may not be created in ``directory``, or None (also when it is not a directory:
    a file where a directory must be is reported by the write, with the path)."""
    if directory.is_dir() and not os.access(directory, os.W_OK | os.X_OK):
        return f"the directory {directory} is not writable for you ({_mode_text(directory)})"
    return None


def _nearest_existing(path: Path) -> Path:
    """``path``'s nearest ancestor that exists (the current directory for a relative path)."""
    for p in path.parents:
        if p.exists() or p.is_symlink():
            return p
    return Path(".")


def refuse_unwritable(path: str | Path, name: str = "") -> None:
    """Raise `MwemtError` naming ``path`` (and the option ``name`` given it) if `unwritable_reason`
    finds a reason not to write it: mwemt does not replace a file the user may not write."""
    why = unwritable_reason(path)
    if why is not None:
        raise MwemtError(f"{name + ' ' if name else ''}{path}: cannot write there: {why} (expected an output path "
                         "you may write: choose another, or change its permissions)")


def check_output_paths(outputs: dict[str, str | Path | None], inputs: dict[str, str | Path | None]) -> None:
    """Before any work: no output may be the same file as an input, or as another output, and every
    output must be writable (`unwritable_reason`).

    Both map a name for messages (an argument, a config key) to a path; ``None`` and ``-`` are
    skipped. Files are compared by device and inode, so a symlink or a hard link to an input is
    caught as well as the same path; outputs that are not regular files (devices, pipes) are fine.
    """
    seen: dict[tuple, tuple[str, str, str]] = {}
    for role, kind in ((inputs, "input"), (outputs, "output")):
        for name, path in role.items():
            if path is None or str(path) == "-":
                continue
            st = _regular_file_id(path)
            if st is not None:
                key: tuple = (st.st_dev, st.st_ino)
            elif kind == "output" and not os.path.lexists(path):   # two outputs named the same new file
                key = ("new", os.path.realpath(path))
            else:
                continue
            if kind == "output" and key in seen:
                other_kind, other_name, other_path = seen[key]
                raise MwemtError(f"{name} {path} is the same file as the {other_kind} {other_name} {other_path}; "
                                 f"writing it would destroy the {other_kind} (expected an output path that is "
                                 f"{'not an input' if other_kind == 'input' else 'not another output'})")
            seen.setdefault(key, (kind, name, str(path)))
    for name, path in outputs.items():
        if path is not None and str(path) != "-":
            refuse_unwritable(path, name)


@contextlib.contextmanager
def _opening_input(path: str) -> Iterator[None]:
    """Report the errors of opening the input ``path`` as `InputError`s naming it (exit 2)."""
    try:
        yield
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path) from None
    except PermissionError:
        raise InputError("permission denied", path, expected="a readable file") from None


def _open_binary(path: str | Path) -> IO[bytes]:
    path = str(path)
    if path == "-":
        return sys.stdin.buffer
    with _opening_input(path):
        if path.endswith(TAR_SUFFIXES):
            fh = _open_single_member(path)
        elif path.endswith(".gz"):
            fh = gzip.open(path, "rb")
        else:
            fh = open(path, "rb")
    note_input(path)
    return fh


class _MemberStream(io.BufferedReader):
    """A tar member opened for reading that closes its archive with it."""

    def __init__(self, archive: tarfile.TarFile, member: IO[bytes]):
        super().__init__(member)  # type: ignore[arg-type]
        self._archive = archive

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._archive.close()


def _open_single_member(path: str) -> IO[bytes]:
    """The one file inside a (compressed) tar archive, as data sets are often published.

    An archive with several files is refused: which one is meant cannot be guessed.
    """
    try:
        archive = tarfile.open(path, "r:*")
    except EOFError:
        raise InputError("the archive ends early (truncated)", path, expected="a complete .tar.gz holding one file") from None
    except (tarfile.TarError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"not a readable tar archive ({exc})", path, expected="a .tar.gz holding one file") from None
    try:
        files = [m for m in archive.getmembers() if m.isfile()]
    except (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError) as exc:
        archive.close()
        what = "the archive ends early (truncated)" if isinstance(exc, EOFError) else f"a damaged archive ({exc})"
        raise InputError(what, path, expected="a complete .tar.gz holding one file") from None
    if len(files) != 1:
        archive.close()
        names = ", ".join(m.name for m in files[:5]) or "none"
        raise InputError(f"the archive holds {len(files)} files ({names})", path,
                         expected="a .tar.gz holding exactly one file; unpack it and name the file")
    member = archive.extractfile(files[0])
    assert member is not None  # a regular file always has a stream
    return _MemberStream(archive, member)


# ---------------------------------------------------------------- the one text normalization
# Every line of text mwemt reads goes through `normalize_text`, here and nowhere else, so that the
# tokenizer, the lexicon matcher, the metrics and the subword model all see the same characters:
# - NFC: a letter written as base + combining mark ("e" + U+0301) becomes the one precomposed
#   character ("\u00e9") that lexicons and references spell, instead of a token of its own;
# - invisible characters that only hint at line breaking or join nothing are dropped: U+200B ZERO
#   WIDTH SPACE, U+2060 WORD JOINER and U+FEFF (a byte-order mark, or the old ZERO WIDTH NO-BREAK
#   SPACE). U+200C/U+200D (zero width non-joiner / joiner) are kept: they change how Persian, Indic
#   scripts and emoji are written, so dropping them would change the text.
ZERO_WIDTH_DROPPED = "\u200b\u2060\ufeff"
_DROP_ZERO_WIDTH = dict.fromkeys(map(ord, ZERO_WIDTH_DROPPED))
NORMALIZATION = "nfc-zw"   # the name of `normalize_text` in signatures (``norm:nfc-zw``)


def normalize_text(text: str) -> str:
    """``text`` in NFC without the zero-width characters of `ZERO_WIDTH_DROPPED` (ASCII is returned as is)."""
    if text.isascii():
        return text
    if "\u200b" in text or "\u2060" in text or "\ufeff" in text:
        text = text.translate(_DROP_ZERO_WIDTH)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return text


# what a damaged compressed file raises while it is read (zlib's stream errors, a truncated stream,
# a .gz that is not gzip, a tar whose blocks are cut)
_DAMAGED = (EOFError, zlib.error, gzip.BadGzipFile, tarfile.TarError)


def _damaged_error(exc: BaseException, label: str, lineno: int) -> InputError:
    if isinstance(exc, EOFError):
        what = "the compressed file ends early (truncated)"
    elif isinstance(exc, gzip.BadGzipFile):
        what = "not gzip data, although the name ends in .gz"
    else:
        what = f"damaged compressed data ({exc})"
    where = f"after line {lineno}: " if lineno else ""
    return InputError(f"{where}{what}", label, expected="a complete .gz (or tar) file; recompress or download it again")


def decode_lines(fh: IO[bytes], label: str, *, normalize: bool = True,
                 changed: list[int] | None = None) -> Iterator[str]:
    """The lines of an open binary stream as `iter_lines` gives them: strict UTF-8 (errors name
    ``label`` and the line), no line ending, `normalize_text` applied (the line numbers it changed
    are appended to ``changed``), and a damaged compressed stream reported as an `InputError`."""
    lineno = 0
    it = iter(fh)
    while True:
        try:
            raw = next(it)
        except StopIteration:
            return
        except _DAMAGED as exc:
            raise _damaged_error(exc, label, lineno) from None
        lineno += 1
        nul = raw.find(b"\0")
        if nul >= 0:
            raise InputError(f"a NUL byte (byte {nul + 1} of the line)", label, lineno,
                             expected="text without NUL bytes; is this a binary file?")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid UTF-8 at byte {exc.start}", label, lineno,
                             expected="UTF-8 text") from None
        line = line.rstrip("\n").rstrip("\r")
        if normalize:
            norm = normalize_text(line)
            if norm != line:
                if changed is not None:
                    changed.append(lineno)
                line = norm
        yield line


def iter_lines(path: str | Path, *, allow_empty: bool = True, name: str | None = None,
               allow_empty_file: bool = True, normalize: bool = True,
               changed: list[int] | None = None) -> Iterator[str]:
    """Yield the lines of a UTF-8 text file without their line ending.

    Bad UTF-8 raises `InputError` naming the file and line. With ``allow_empty=False`` an
    empty (or whitespace-only) line is an error too, and with ``allow_empty_file=False`` a file
    without any line. ``-`` reads standard input; ``.gz`` files and tar archives holding one file
    (``.tar.gz``, ``.tgz``, ``.tar``) are read as the text inside, and a damaged one is an
    `InputError` naming it. Every line is normalized by `normalize_text` (NFC, no zero-width
    characters, so no byte-order mark either) unless ``normalize=False``; the numbers of the lines
    that changed are appended to ``changed``.
    """
    label = name or ("<stdin>" if str(path) == "-" else str(path))
    fh = _open_binary(path)
    lineno = 0
    try:
        for lineno, line in enumerate(decode_lines(fh, label, normalize=normalize, changed=changed), 1):
            if not allow_empty and not line.strip():
                raise InputError("empty line", label, lineno, expected="a non-empty sentence")
            yield line
        if lineno == 0 and not allow_empty_file:
            raise InputError("file is empty", label, expected="at least one line")
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def read_lines(path: str | Path, *, allow_empty: bool = True, changed: list[int] | None = None) -> list[str]:
    return list(iter_lines(path, allow_empty=allow_empty, changed=changed))


def check_line_lengths(lines: Iterable[str], limit: int, path: str | Path, *, why: str,
                       unit: str = "characters", size: Callable[[str], int] = len, first: int = 1) -> None:
    """Refuse the first line longer than ``limit`` (``size(line)`` in ``unit``), naming its file and
    line: commands whose cost grows with a line's length check this before any work."""
    for lineno, line in enumerate(lines, first):
        n = size(line)
        if n > limit:
            raise InputError(f"a line of {n:,} {unit} is longer than the limit of {limit:,} {unit} ({why})",
                             path, lineno, expected=f"lines of at most {limit:,} {unit}: split or drop longer ones")


def iter_parallel(*paths: str | Path, allow_empty: bool = False) -> Iterator[tuple[str, ...]]:
    """Yield aligned lines from several files, failing clearly if their lengths differ."""
    iters = [iter_lines(p, allow_empty=allow_empty) for p in paths]
    lineno = 0
    sentinel = object()
    while True:
        lineno += 1
        row = [next(it, sentinel) for it in iters]
        done = [r is sentinel for r in row]
        if all(done):
            if lineno == 1:
                raise InputError("file is empty", paths[0], expected="at least one line")
            return
        if any(done):
            short = [str(p) for p, d in zip(paths, done) if d]
            long_ = [str(p) for p, d in zip(paths, done) if not d]
            raise InputError(
                f"parallel files are misaligned: {', '.join(short)} ended after {lineno - 1} lines "
                f"but {', '.join(long_)} continues", long_[0], lineno,
                expected="the same number of lines in every file")
        yield tuple(row)  # type: ignore[arg-type]


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Write to ``path`` atomically; ``-`` writes to standard output directly."""
    if str(path) == "-":
        if "b" in mode:
            yield sys.stdout.buffer
        else:
            yield sys.stdout
        sys.stdout.flush()
        return
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():
        # a device or pipe (/dev/null, /dev/stdout, a FIFO): nothing to replace, and renaming a
        # temporary file over it would destroy it (as root, /dev/null itself)
        try:
            with open(path, mode, **({} if "b" in mode else {"encoding": encoding})) as fh:
                yield fh
        except OSError as exc:
            if exc.errno in WRITE_ERRNOS:
                raise MwemtError(f"{path}: cannot write: {exc.strerror}") from None
            raise
        return
    if path.is_dir():
        raise MwemtError(f"{path}: is a directory (expected an output file path)")
    refuse_replacing_input(path)
    refuse_unwritable(path)
    replaced = _regular_file_id(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as exc:
        blocker = file_in_the_way(path.parent)
        why = f"{blocker} is a file, not a directory" if blocker is not None else exc.strerror
        raise MwemtError(f"{path}: cannot write there: {why} (expected a writable output path)") from None
    _PARTIAL.add(tmp)
    try:
        _take_over_permissions(fd, replaced)
        if "b" in mode:
            fh: IO = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding=encoding, newline="\n")
        try:
            with fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            if exc.errno in WRITE_ERRNOS:
                raise MwemtError(f"{path}: cannot write: {exc.strerror}; nothing was written "
                                 "(expected a writable output path with free space)") from None
            raise
        refuse_replacing_input(path)  # an input read while this output was being written
        raise_if_stopped()  # an interrupt whose exception was swallowed must not commit the output
        try:
            os.replace(tmp, path)
        except OSError as exc:   # name the output, not the temporary file (a sticky directory: EPERM)
            raise MwemtError(f"{path}: cannot replace this output: {exc.strerror} (expected an output path you "
                             "may write)") from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        _PARTIAL.discard(tmp)


def _take_over_permissions(fd: int, replaced: os.stat_result | None) -> None:
    """Give the temporary file of an output the mode (and, where allowed, the owner and group) of the
    file it replaces, else the usual mode of a new file: mkstemp makes 0600."""
    if replaced is None:
        os.fchmod(fd, new_file_mode())
        return
    for owner in ((replaced.st_uid, replaced.st_gid), (-1, replaced.st_gid)):
        try:
            os.fchown(fd, *owner)   # root keeps the owner; a member of the file's group keeps the group
            break
        except OSError:
            continue
    os.fchmod(fd, stat.S_IMODE(replaced.st_mode))


def remove_partial_files() -> None:
    """Delete the temporary files of every `atomic_write` still open (a forced exit's cleanup)."""
    for tmp in list(_PARTIAL):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _PARTIAL.clear()


on_force_exit(remove_partial_files)


def file_in_the_way(directory: str | Path) -> Path | None:
    """The first of ``directory`` and its parents that exists but is not a directory (a file where a
    directory of an output path must be), or None."""
    directory = Path(directory)
    for p in (directory, *directory.parents):
        if p.is_dir():
            return None
        if p.exists() or p.is_symlink():
            return p
    return None


def make_directory(path: str | Path) -> Path:
    """Create the directory ``path`` and its parents (an existing one is fine); a file in the way or
    an unwritable place is a `MwemtError` that names it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = file_in_the_way(path)
        why = f"{blocker} is a file, not a directory" if blocker is not None else exc.strerror
        raise MwemtError(f"{path}: cannot create this directory: {why} (expected a writable directory path)") from None
    return path


def new_file_mode(directory: bool = False) -> int:
    """The mode a new file (0666) or directory (0777) gets under this process's umask: what the 0600
    and 0700 of `tempfile.mkstemp`/`mkdtemp` are widened to before they are renamed into place."""
    return (0o777 if directory else 0o666) & ~_UMASK


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Fill a temporary directory beside ``path``; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    make_directory(path.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent))
    except OSError as exc:   # name the directory asked for, not the temporary one
        why = _directory_reason(path.parent) or exc.strerror
        raise MwemtError(f"{path}: cannot write this directory: {why} (expected a directory path you may "
                         "write)") from None
    try:
        os.chmod(tmp, new_file_mode(directory=True))   # mkdtemp makes 0700
        yield tmp
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def exclusive_lock(path: str | Path) -> Iterator[None]:
    """Hold an exclusive lock on the file ``path`` (created if missing) for the block, waiting for any
    other process that holds it: one process computes what all of them would, the others then read it.
    The kernel releases the lock when its process dies, so a killed holder never blocks the others."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # closing the descriptor releases the lock


def write_lines(path: str | Path, lines: Iterable[str]) -> int:
    """Atomically write lines (each followed by a newline); returns how many were written."""
    n = 0
    with atomic_write(path) as fh:
        for line in lines:
            if "\n" in line:
                raise ValueError(f"line {n + 1} for {path} contains a newline")
            fh.write(line)
            fh.write("\n")
            n += 1
    return n


def write_text(path: str | Path, text: str) -> None:
    """Atomically write ``text``; a path ending in .gz is written gzip-compressed, the same bytes every time
    (no timestamp in the header)."""
    if str(path).endswith(".gz"):
        import gzip

        with atomic_write(path, "wb") as fh:
            fh.write(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        with atomic_write(path) as fh:
            fh.write(text)


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """The file's sha256; a missing or unreadable file is an `InputError` naming it (exit 2), as when it is read."""
    h = hashlib.sha256()
    with _opening_input(str(path)):
        fh = open(path, "rb")
    with fh:
        while True:
            b = fh.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def count_lines(path: str | Path) -> int:
    """Newlines in the file ``path`` (a progress bar's total); a missing or unreadable file is an
    `InputError` naming it, as when it is read."""
    with _opening_input(str(path)):
        fh = open(path, "rb")
    with fh:
        return sum(buf.count(b"\n") for buf in iter(lambda: fh.read(1 << 20), b""))


def text_stream(fh: IO[bytes]) -> io.TextIOWrapper:
    return io.TextIOWrapper(fh, encoding="utf-8", newline="\n")
