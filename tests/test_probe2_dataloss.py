"""Issue 37, item 1 and the permission messages of item 10: an output never replaces a file the user may
not write, a file rightly replaced keeps its mode, and permission errors name the paths the user gave.

The tests run as root, whom the kernel lets write any file; the refusals are tested by running the real
command as an unprivileged user (``nobody``, through ``setpriv``) in a directory every user may enter, and
are skipped where no such user or switch exists. What root may do is tested in this process.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from mwemt.cli import main

ROOT = Path(__file__).resolve().parents[1]
LEXICON = "take care of\n"
TEXT = "He took care of it .\n"
ANNOTATED = "He|he|O took|take_care_of|B care|take_care_of|I of|take_care_of|I it|it|O .|.|O\n"


def _nobody() -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def _switch(uid: int, gid: int) -> list[str]:
    return [shutil.which("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]


def _unprivileged_python() -> tuple[list[str], dict[str, str]] | None:
    """(command prefix, environment) running this project's Python as nobody, or None where that cannot be
    done: not root, no nobody, no setpriv, or no interpreter nobody may run that imports mwemt."""
    ids = _nobody()
    if os.geteuid() != 0 or ids is None or shutil.which("setpriv") is None:
        return None
    env = dict(os.environ, HOME="/tmp",
               PYTHONPATH=os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in dict.fromkeys([sys.executable, getattr(sys, "_base_executable", sys.executable),
                                 f"/usr/bin/{version}", f"/usr/local/bin/{version}"]):
        probe = [*_switch(*ids), python, "-c", "import numpy, mwemt.cli"]
        try:
            if subprocess.run(probe, env=env, capture_output=True, timeout=120).returncode == 0:
                return [*_switch(*ids), python], env
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


@functools.cache
def _runner() -> tuple[list[str], dict[str, str]] | None:
    return _unprivileged_python()


@pytest.fixture
def as_nobody():
    """Skip where the command cannot be run as an unprivileged user (the refusals are the kernel's, for a user)."""
    if _runner() is None:
        pytest.skip("needs root, the user nobody, setpriv and a Python nobody may run")


def run_as_nobody(*argv: str, cwd: Path, code: str | None = None) -> subprocess.CompletedProcess:
    """`python -m mwemt ARGV` (or `python -c CODE`) as the user nobody, in ``cwd``."""
    runner = _runner()
    assert runner is not None
    prefix, env = runner
    command = [*prefix, "-c", code] if code is not None else [*prefix, "-m", "mwemt", *argv]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def shared_dir():
    """A directory nobody may enter and write (pytest's tmp_path is private to root)."""
    d = Path(tempfile.mkdtemp(prefix="mwemt-probe2-", dir="/tmp"))
    d.chmod(0o777)
    (d / "lex.txt").write_text(LEXICON, encoding="utf-8")
    (d / "in.txt").write_text(TEXT, encoding="utf-8")
    for f in ("lex.txt", "in.txt"):
        (d / f).chmod(0o644)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _own(path: Path, mode: int) -> None:
    ids = _nobody()
    assert ids is not None
    os.chown(path, *ids)
    path.chmod(mode)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# ---------------------------------------------------------------- item 1: write-protected outputs


def test_a_write_protected_output_of_the_user_is_not_replaced(as_nobody, shared_dir):
    """`echo keep > o.txt; chmod 444 o.txt; mwemt annotate ... -o o.txt`: refused, the file as it was."""
    out = shared_dir / "o.txt"
    out.write_text("keep\n")
    _own(out, 0o444)
    r = run_as_nobody("annotate", "-l", "lex.txt", "-i", "in.txt", "-o", "o.txt", "-q", cwd=shared_dir)
    assert r.returncode == 2, r.stderr
    assert "o.txt" in r.stderr and "write-protected (mode 0444)" in r.stderr and ".part" not in r.stderr
    assert out.read_text() == "keep\n" and _mode(out) == 0o444
    assert sorted(p.name for p in shared_dir.iterdir()) == ["in.txt", "lex.txt", "o.txt"]   # no .part left


def test_a_writable_output_of_the_user_is_replaced_and_keeps_its_mode(as_nobody, shared_dir):
    out = shared_dir / "o.txt"
    out.write_text("old\n")
    _own(out, 0o640)
    r = run_as_nobody("annotate", "-l", "lex.txt", "-i", "in.txt", "-o", "o.txt", "-q", cwd=shared_dir)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == ANNOTATED and _mode(out) == 0o640 and out.stat().st_uid == _nobody()[0]


def test_an_unwritable_report_directory_is_refused_before_any_output_is_written(as_nobody, shared_dir):
    """The report's directory is checked with the output's, before the work: no output is left behind."""
    ro = shared_dir / "ro"
    ro.mkdir(mode=0o555)
    ro.chmod(0o555)
    r = run_as_nobody("annotate", "-l", "lex.txt", "-i", "in.txt", "-o", "x.txt", "--report", "ro/rep.json", "-q",
                      cwd=shared_dir)
    assert r.returncode == 2, r.stderr
    assert "--report ro/rep.json: cannot write there: the directory ro is not writable for you (mode 0555)" \
        in r.stderr
    assert not (shared_dir / "x.txt").exists() and not list(ro.iterdir())


def test_another_users_file_in_a_sticky_directory_is_refused_naming_it(as_nobody, shared_dir):
    """/tmp's sticky bit lets only a file's owner replace it, although everyone may write it: refused up
    front, naming the output, where the rename used to fail naming its temporary file."""
    shared_dir.chmod(0o1777)
    out = shared_dir / "o.txt"
    out.write_text("root's\n")
    out.chmod(0o666)
    r = run_as_nobody("annotate", "-l", "lex.txt", "-i", "in.txt", "-o", "o.txt", "-q", cwd=shared_dir)
    assert r.returncode == 2, r.stderr
    assert "--output o.txt: cannot write there: the directory" in r.stderr and "sticky" in r.stderr
    assert ".part" not in r.stderr and out.read_text() == "root's\n"
    assert sorted(p.name for p in shared_dir.iterdir()) == ["in.txt", "lex.txt", "o.txt"]


def test_an_unwritable_output_directory_names_the_directory_asked_for(as_nobody, shared_dir):
    """atomic_directory (compare reports, the alignment cache) names the directory, not its temporary twin."""
    ro = shared_dir / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    code = ("from mwemt.fileio import atomic_directory\n"
            "from mwemt.errors import MwemtError\n"
            "try:\n"
            "    with atomic_directory('ro/rep') as tmp:\n"
            "        (tmp / 'a').write_text('x')\n"
            "except MwemtError as exc:\n"
            "    print(exc)\n")
    r = run_as_nobody(cwd=shared_dir, code=code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ro/rep: cannot write this directory: the directory ro is not writable"), r.stdout
    assert ".part" not in r.stdout


def test_root_replaces_a_write_protected_file_as_cp_does_and_keeps_its_mode(tmp_path, capsys):
    """The decision is the kernel's for the real user: root may write any file, so the output is replaced,
    with the file's mode (it used to become 0644 through the temporary file)."""
    if os.geteuid() != 0:
        pytest.skip("root only")
    (tmp_path / "lex.txt").write_text(LEXICON)
    (tmp_path / "in.txt").write_text(TEXT)
    for name, mode in (("ro.txt", 0o444), ("odd.txt", 0o604)):
        out = tmp_path / name
        out.write_text("old\n")
        out.chmod(mode)
        assert main(["annotate", "-l", str(tmp_path / "lex.txt"), "-i", str(tmp_path / "in.txt"), "-o", str(out),
                     "-q"]) == 0, capsys.readouterr().err
        assert out.read_text() == ANNOTATED and _mode(out) == mode


def test_a_new_output_gets_the_usual_mode(tmp_path):
    from mwemt.fileio import new_file_mode, write_text

    write_text(tmp_path / "new.txt", "x\n")
    assert _mode(tmp_path / "new.txt") == new_file_mode()


# ---------------------------------------------------------------- item 10: an unusable alignment cache


def _align_args(tmp_path: Path) -> list[str]:
    (tmp_path / "s.txt").write_text("a b c\nd e\n")
    (tmp_path / "t.txt").write_text("x y z\nu v\n")
    return ["align", "--src", str(tmp_path / "s.txt"), "--tgt", str(tmp_path / "t.txt"), "--src-tokenized",
            "--tgt-tokenized", "-q"]


def test_a_cache_path_under_a_file_warns_and_aligns_without_it(tmp_path, monkeypatch, capsys, caplog):
    """MWEMT_CACHE naming a file used to stop the command ('.../align/f7: Not a directory')."""
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    monkeypatch.setenv("MWEMT_CACHE", str(blocker))
    out = tmp_path / "links.txt"
    with caplog.at_level("WARNING"):
        assert main([*_align_args(tmp_path), "-o", str(out)]) == 0, capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 2 and blocker.read_text() == "mine\n"
    warning = caplog.text
    assert f"alignment cache {blocker}/align is not usable ({blocker} is a file, not a directory)" in warning
    assert "aligning without storing in it" in warning


def test_an_unwritable_cache_directory_warns_and_aligns_without_it(as_nobody, shared_dir):
    roc = shared_dir / "roc"
    roc.mkdir()
    roc.chmod(0o555)
    for name, text in (("s.txt", "a b c\nd e\n"), ("t.txt", "x y z\nu v\n")):
        (shared_dir / name).write_text(text)
        (shared_dir / name).chmod(0o644)
    argv = ["align", "--src", "s.txt", "--tgt", "t.txt", "--src-tokenized", "--tgt-tokenized", "-q"]
    r = run_as_nobody(*argv, "--cache", "roc", "-o", "links.txt", cwd=shared_dir)
    assert r.returncode == 0, r.stderr
    assert "alignment cache roc is not usable (Permission denied); aligning without storing in it" in r.stderr
    assert len((shared_dir / "links.txt").read_text().splitlines()) == 2 and not list(roc.iterdir())
