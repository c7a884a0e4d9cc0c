"""Word alignment of a corpus: eflomal, both directions, symmetrized.

The MWE test-set builder (`mwemt testset build`), `mwemt align` and the MWE translation table align
through this module, and so does the MWE score with ``--align eflomal``. The MWE score's default
aligner is the line-stable one of `mwemt.testsets.lexalign` (a model learned once per test, each
sentence pair aligned alone), which shares this module's symmetrization, link format, token limit
and cache directory: eflomal aligns a text as a whole, so the links of a line depend on the others.

- eflomal (Östling & Tiedemann 2016, a Bayesian HMM+fertility aligner sampled by Gibbs) runs once on
  the text to align followed by optional *extra* parallel text: more sentence pairs give better
  word-translation statistics, and only the text's own links are returned.
- It runs in both directions; `symmetrize` combines them (grow-diag-final-and, intersection or
  union). Symmetrization is pure and cheap, so the cache keeps the two directional link sets and any
  symmetrization is computed from them.
- Links are Pharaoh ``i-j`` pairs of 0-based token indices in exactly the token lists given, checked
  line by line: whoever tokenizes the text (the test set, the MWE score) owns the indices.
- eflomal seeds its sampler from the system and has no seed option, so two runs differ on some
  links. `AlignmentCache` keys the directional links by the hash of the exact token lines, extra text
  and settings: the same inputs then give the same alignment, which makes scoring reproducible, and
  scoring many systems aligns each one once. Computing an entry holds a lock on it, so processes that
  align the same input at once (stages side by side) share one alignment. A cache directory that
  cannot be used (not writable, a file in the way) costs only the cache: a warning, and the
  alignment is computed (and what the cache already holds is still read).

Sentences longer than eflomal's limit (`MAX_TOKENS`) or with an empty side are not aligned (no
links), and are counted in `Directional.skipped`. `mwemt align` refuses, before tokenizing, a line
of more than `MAX_LINE_CHARS` characters: far beyond any sentence eflomal could align.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import atomic_directory, exclusive_lock, file_in_the_way

SYMMETRIZATIONS = ("grow-diag-final-and", "intersection", "union")
DEFAULT_SYMMETRIZATION = "grow-diag-final-and"
MAX_TOKENS = 1024  # eflomal's MAX_SENT_LEN: longer sentences make the binary exit
MAX_LINE_CHARS = 16 * MAX_TOKENS  # `mwemt align` input lines: 1024 tokens of 16 characters with their spaces
CACHE_FORMAT = 1
logger = logging.getLogger(__name__)

Link = tuple[int, int]
Alignment = frozenset[Link]
Tokens = Sequence[str]
_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class AlignConfig:
    """eflomal's settings; every field is part of the cache key.

    ``model`` 1 = IBM1, 2 = + HMM, 3 = + fertility; ``samplers`` independent Gibbs samplers whose
    final counts are pooled (more is steadier and slower); ``iterations`` scales eflomal's automatic
    iteration counts; ``null_prior`` is the prior probability of a NULL link.
    """

    model: int = 3
    samplers: int = 3
    iterations: float = 1.0
    null_prior: float = 0.2

    def __post_init__(self) -> None:
        if self.model not in (1, 2, 3):
            raise MwemtError(f"alignment model must be 1, 2 or 3, not {self.model}")
        if self.samplers < 1:
            raise MwemtError(f"alignment samplers must be at least 1, not {self.samplers}")
        if not self.iterations > 0:
            raise MwemtError(f"alignment iterations factor must be > 0, not {self.iterations}")
        if not 0.0 <= self.null_prior < 1.0:
            raise MwemtError(f"alignment null_prior must be in [0, 1), not {self.null_prior}")


def signature(config: AlignConfig, symmetrization: str, n_extra: int) -> str:
    """How an alignment was made, for signatures of scores and test sets."""
    return (f"eflomal-{eflomal_version()}|model:{config.model}|samplers:{config.samplers}"
            f"|iter:{config.iterations:g}|null:{config.null_prior:g}|sym:{symmetrization}|extra:{n_extra}")


def eflomal_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("eflomal")
    except importlib.metadata.PackageNotFoundError:
        return "missing"


# ---------------------------------------------------------------- Pharaoh links (pure)


def parse_pharaoh(line: str) -> Alignment:
    """``"0-0 1-2"`` -> ``{(0, 0), (1, 2)}``; raises ValueError on a malformed pair."""
    links = set()
    for item in line.split():
        left, sep, right = item.partition("-")
        if not sep or not left.isdigit() or not right.isdigit():
            raise ValueError(f"bad alignment pair {item!r}")
        links.add((int(left), int(right)))
    return frozenset(links)


def format_pharaoh(links: Iterable[Link]) -> str:
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def check_links(links: Iterable[Link], n_src: int, n_tgt: int) -> None:
    """Raise ValueError if a link points past the ``n_src`` source or ``n_tgt`` target tokens."""
    for i, j in links:
        if not (0 <= i < n_src and 0 <= j < n_tgt):
            raise ValueError(f"link {i}-{j} is outside the {n_src} source and {n_tgt} target tokens")


# ---------------------------------------------------------------- symmetrization (pure)

_NEIGHBORS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def grow_diag_final_and(forward: Alignment, reverse: Alignment, n_src: int, n_tgt: int) -> Alignment:
    """Koehn et al.'s grow-diag-final-and: start from the intersection, add union links next to
    (also diagonally) an existing link that align a still unaligned word, then add the remaining
    directional links whose two words are both unaligned."""
    union = forward | reverse
    links = set(forward & reverse)
    src_done = {i for i, _ in links}
    tgt_done = {j for _, j in links}
    grown = True
    while grown:
        # One pass visits the links in (source, target) order, a link added after the current one
        # included, as a scan of the whole n_src x n_tgt grid would, in time of the links, not the grid.
        grown = False
        todo = sorted(p for p in links if 0 <= p[0] < n_src and 0 <= p[1] < n_tgt)
        while todo:
            i, j = heapq.heappop(todo)
            for di, dj in _NEIGHBORS:
                p = (i + di, j + dj)
                if p in union and p not in links and (p[0] not in src_done or p[1] not in tgt_done):
                    links.add(p)
                    src_done.add(p[0])
                    tgt_done.add(p[1])
                    grown = True
                    if p > (i, j):
                        heapq.heappush(todo, p)
    for direction in (forward, reverse):
        for i, j in sorted(direction):
            if i not in src_done and j not in tgt_done:
                links.add((i, j))
                src_done.add(i)
                tgt_done.add(j)
    return frozenset(links)


def symmetrize(forward: Alignment, reverse: Alignment, n_src: int, n_tgt: int,
               method: str = DEFAULT_SYMMETRIZATION) -> Alignment:
    """Combine the two directional link sets of one sentence pair."""
    if method == "grow-diag-final-and":
        return grow_diag_final_and(forward, reverse, n_src, n_tgt)
    if method == "intersection":
        return forward & reverse
    if method == "union":
        return forward | reverse
    raise MwemtError(f"unknown symmetrization {method!r}; choose one of {', '.join(SYMMETRIZATIONS)}")


# ---------------------------------------------------------------- running eflomal


@dataclass
class Directional:
    """Forward and reverse links of each sentence pair of the text (extra text left out)."""

    forward: list[Alignment]
    reverse: list[Alignment]
    key: str = ""
    cached: bool = False
    n_extra: int = 0
    skipped: list[int] = field(default_factory=list)  # 0-based pairs eflomal could not align

    def symmetrized(self, src: Sequence[Tokens], tgt: Sequence[Tokens],
                    method: str = DEFAULT_SYMMETRIZATION) -> list[Alignment]:
        return [symmetrize(f, r, len(s), len(t), method)
                for f, r, s, t in zip(self.forward, self.reverse, src, tgt)]


def _eflomal_line(tokens: Tokens) -> str:
    """A sentence as eflomal reads it: tokens joined by spaces, none containing whitespace."""
    return " ".join(_WHITESPACE.sub("_", t) or "_" for t in tokens)


def _alignable(src: Tokens, tgt: Tokens) -> bool:
    return 0 < len(src) <= MAX_TOKENS and 0 < len(tgt) <= MAX_TOKENS


def _check_parallel(src: Sequence[Tokens], tgt: Sequence[Tokens], what: str) -> None:
    if len(src) != len(tgt):
        raise MwemtError(f"{what}: {len(src)} source sentences but {len(tgt)} target sentences")


def run_eflomal(src: Sequence[Tokens], tgt: Sequence[Tokens], *,
                extra: tuple[Sequence[Tokens], Sequence[Tokens]] | None = None,
                config: AlignConfig = AlignConfig()) -> Directional:
    """Align ``src``/``tgt`` (lists of token lists) in both directions with eflomal, on the text
    followed by the ``extra`` pairs; returns the text's links only, checked against its tokens."""
    try:
        import eflomal
    except ImportError:
        raise MwemtError("word alignment needs the eflomal package: pip install eflomal") from None
    _check_parallel(src, tgt, "text to align")
    extra_src, extra_tgt = extra if extra is not None else ((), ())
    _check_parallel(extra_src, extra_tgt, "extra parallel text")
    skipped = [k for k, (s, t) in enumerate(zip(src, tgt)) if not _alignable(s, t)]
    skip = set(skipped)
    keep_extra = [k for k, (s, t) in enumerate(zip(extra_src, extra_tgt)) if _alignable(s, t)]
    src_lines = ["" if k in skip else _eflomal_line(s) for k, s in enumerate(src)]
    tgt_lines = ["" if k in skip else _eflomal_line(t) for k, t in enumerate(tgt)]
    src_lines += [_eflomal_line(extra_src[k]) for k in keep_extra]
    tgt_lines += [_eflomal_line(extra_tgt[k]) for k in keep_extra]
    if not src_lines:
        return Directional([], [], n_extra=0)
    aligner = eflomal.Aligner(model=config.model, n_samplers=config.samplers,
                              rel_iterations=config.iterations, null_prior=config.null_prior)
    with tempfile.TemporaryDirectory(prefix="mwemt-align-") as tmp:
        fwd, rev = os.path.join(tmp, "forward"), os.path.join(tmp, "reverse")
        aligner.align(src_lines, tgt_lines, links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        forward = _read_links(fwd, src, tgt, "forward")
        reverse = _read_links(rev, src, tgt, "reverse")
    return Directional(forward, reverse, n_extra=len(keep_extra), skipped=skipped)


def _read_links(path: str, src: Sequence[Tokens], tgt: Sequence[Tokens], direction: str) -> list[Alignment]:
    """The first len(src) lines of an eflomal links file, each checked against its sentence pair."""
    out: list[Alignment] = []
    with open(path, encoding="utf-8") as fh:
        for k, line in enumerate(fh):
            if k == len(src):
                break
            try:
                links = parse_pharaoh(line)
                check_links(links, len(src[k]), len(tgt[k]))
            except ValueError as exc:
                raise MwemtError(f"eflomal's {direction} links for sentence pair {k + 1}: {exc}") from None
            out.append(links)
    if len(out) != len(src):
        raise MwemtError(f"eflomal wrote {len(out)} {direction} link lines for {len(src)} sentence pairs")
    return out


# ---------------------------------------------------------------- cache


def _hash_lines(h, sentences: Iterable[Tokens]) -> int:
    n = 0
    for toks in sentences:
        h.update(_eflomal_line(toks).encode("utf-8"))
        h.update(b"\n")
        n += 1
    return n


def cache_key(src: Sequence[Tokens], tgt: Sequence[Tokens],
              extra: tuple[Sequence[Tokens], Sequence[Tokens]] | None, config: AlignConfig) -> str:
    """SHA-256 of the exact lines eflomal sees (text and extra), the settings and eflomal's version."""
    h = hashlib.sha256()
    settings = {"format": CACHE_FORMAT, "eflomal": eflomal_version(), "max_tokens": MAX_TOKENS, **asdict(config)}
    h.update(json.dumps(settings, sort_keys=True).encode("utf-8"))
    for part in (src, tgt, *(extra or ((), ()))):
        h.update(b"\0part\0")
        h.update(str(_hash_lines(h, part)).encode())
    return h.hexdigest()


def default_cache_dir() -> Path:
    """``$MWEMT_CACHE/align``, else ``$XDG_CACHE_HOME/mwemt/align``, else ``~/.cache/mwemt/align``."""
    if os.environ.get("MWEMT_CACHE"):
        return Path(os.environ["MWEMT_CACHE"]) / "align"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mwemt" / "align"


class AlignmentCache:
    """Directional links stored under ``DIR/<key>/`` (forward, reverse, info.json).

    An entry is written to a temporary directory and renamed into place, so an interrupted run
    leaves no half entry; a damaged entry is ignored and replaced.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def entry(self, key: str) -> Path:
        return self.directory / key[:2] / key

    def lock(self, key: str) -> Path:
        """The lock file that serializes computing the entry ``key`` across processes."""
        return self.directory / key[:2] / f"{key}.lock"

    def load(self, key: str, src: Sequence[Tokens], tgt: Sequence[Tokens]) -> Directional | None:
        d = self.entry(key)
        try:
            info = json.loads((d / "info.json").read_text(encoding="utf-8"))
            forward = _read_links(str(d / "forward"), src, tgt, "cached forward")
            reverse = _read_links(str(d / "reverse"), src, tgt, "cached reverse")
        except (OSError, ValueError, MwemtError):
            return None
        return Directional(forward, reverse, key=key, cached=True, n_extra=int(info.get("n_extra", 0)),
                           skipped=list(info.get("skipped", [])))

    def store(self, key: str, result: Directional, info: dict) -> None:
        """Write an entry; a failure (a full disk, a concurrent writer of the same key) only costs
        the cache, never the alignment already computed."""
        try:
            with atomic_directory(self.entry(key)) as tmp:
                for name, links in (("forward", result.forward), ("reverse", result.reverse)):
                    (tmp / name).write_text("".join(format_pharaoh(a) + "\n" for a in links), encoding="utf-8")
                (tmp / "info.json").write_text(json.dumps({**info, "n_extra": result.n_extra,
                                                           "skipped": result.skipped}, indent=1), encoding="utf-8")
        except (OSError, MwemtError) as exc:
            logger.warning("alignment cache %s not written: %s", self.directory, _cache_problem(exc))

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[bool]:
        """Hold the lock of entry ``key`` for the block; yields False (after a warning) where the cache
        cannot be locked (a directory the user may not write, a file in the way): the caller then reads
        what the cache has but stores nothing, and the alignment is computed as without a cache."""
        held = contextlib.ExitStack()
        try:
            held.enter_context(exclusive_lock(self.lock(key)))
        except OSError as exc:
            logger.warning("alignment cache %s is not usable (%s); aligning without storing in it (point "
                           "MWEMT_CACHE or --cache at a writable directory, or pass --no-cache)", self.directory,
                           _cache_problem(exc, self.directory))
            yield False
            return
        with held:
            yield True


def _cache_problem(exc: BaseException, directory: Path | None = None) -> str:
    """An error of the cache as one line: what went wrong, not which internal file it was."""
    if isinstance(exc, OSError) and exc.strerror:
        blocker = file_in_the_way(directory) if directory is not None else None
        return f"{blocker} is a file, not a directory" if blocker is not None else exc.strerror
    return str(exc)


def align_directional(src: Sequence[Tokens], tgt: Sequence[Tokens], *,
                      extra: tuple[Sequence[Tokens], Sequence[Tokens]] | None = None,
                      config: AlignConfig = AlignConfig(),
                      cache_dir: str | Path | None = None) -> Directional:
    """Forward and reverse links of each pair, from the cache in ``cache_dir`` when it has them."""
    key = cache_key(src, tgt, extra, config)
    cache = AlignmentCache(cache_dir) if cache_dir is not None else None
    # eflomal is not seedable: two processes aligning the same input at once (a run's score and report
    # stages side by side) would get different links and score one system two ways. The first one aligns
    # and stores; the others wait on the entry's lock and read what it stored.
    with cache.locked(key) if cache is not None else contextlib.nullcontext(False) as writable:
        hit = cache.load(key, src, tgt) if cache is not None else None
        if hit is not None:
            return hit
        result = run_eflomal(src, tgt, extra=extra, config=config)
        result.key = key
        if cache is not None and writable:
            cache.store(key, result, {"config": asdict(config), "eflomal": eflomal_version(),
                                      "sentences": len(src)})
    return result


def align(src: Sequence[Tokens], tgt: Sequence[Tokens], *,
          extra: tuple[Sequence[Tokens], Sequence[Tokens]] | None = None,
          symmetrization: str = DEFAULT_SYMMETRIZATION, config: AlignConfig = AlignConfig(),
          cache_dir: str | Path | None = None) -> list[Alignment]:
    """Symmetrized links of each sentence pair: ``src[k]``/``tgt[k]`` are token lists and each link
    ``(i, j)`` indexes them. ``extra`` = (source token lists, target token lists) only adds statistics.
    With ``cache_dir`` the directional links are cached there by input hash (see the module docstring).
    """
    if symmetrization not in SYMMETRIZATIONS:
        raise MwemtError(f"unknown symmetrization {symmetrization!r}; choose one of {', '.join(SYMMETRIZATIONS)}")
    return align_directional(src, tgt, extra=extra, config=config, cache_dir=cache_dir).symmetrized(
        src, tgt, symmetrization)


# ---------------------------------------------------------------- text in, tokens out (the edge)


def tokenize_side(lines: Iterable[str], lang: str, pretokenized: bool) -> list[list[str]]:
    """Token lists of one side: split on spaces when ``pretokenized``, else Moses tokens."""
    from mwemt.preprocess.tokenize import tokenize

    return [line.split() if pretokenized else tokenize(line, lang) for line in lines]


def read_extra(src_path: str | Path, tgt_path: str | Path, src_lang: str, tgt_lang: str, *,
               pretokenized: bool = False, limit: int | None = None) -> tuple[list[list[str]], list[list[str]]]:
    """Extra parallel text from two line-aligned files (Moses-tokenized unless ``pretokenized``).

    Pairs with an empty side are skipped: they carry no statistics. ``limit`` keeps the first pairs.
    """
    from mwemt.fileio import iter_parallel

    src_lines, tgt_lines = [], []
    for s, t in iter_parallel(src_path, tgt_path, allow_empty=True):
        if limit is not None and len(src_lines) >= limit:
            break
        if s.strip() and t.strip():
            src_lines.append(s)
            tgt_lines.append(t)
    if not src_lines:
        raise InputError("no non-empty sentence pairs", src_path, expected="extra parallel text")
    return tokenize_side(src_lines, src_lang, pretokenized), tokenize_side(tgt_lines, tgt_lang, pretokenized)


def read_alignment_file(path: str | Path, src: Sequence[Tokens] | None = None,
                        tgt: Sequence[Tokens] | None = None) -> list[Alignment]:
    """A Pharaoh file, one line per sentence pair; with the token lists, each line is checked
    against its pair and errors name the file and line."""
    from mwemt.fileio import iter_lines

    out: list[Alignment] = []
    for lineno, line in enumerate(iter_lines(path), 1):
        try:
            links = parse_pharaoh(line)
            if src is not None and tgt is not None and lineno <= len(src):
                check_links(links, len(src[lineno - 1]), len(tgt[lineno - 1]))
        except ValueError as exc:
            raise InputError(str(exc), path, lineno, expected="space-separated i-j pairs within the sentence") from None
        out.append(links)
    if src is not None and len(out) != len(src):
        raise InputError(f"{len(out)} alignment lines for {len(src)} sentence pairs", path,
                         expected="one line per sentence pair")
    return out
