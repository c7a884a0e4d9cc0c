"""`mwemt run --dry-run` checks where the run would write, as the run itself does before any work: a
`--run-dir` under a file or in a write-protected directory, and a `--publish` into the run directory, exit 2
with the option named (they passed the dry run and failed only when run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.experiments.config import PACKAGE_DATA

ROOT = Path(__file__).resolve().parents[1]
DEMO = PACKAGE_DATA / "demo" / "demo.yaml"


def dry_run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mwemt", "run", str(DEMO), "--dry-run", *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_dry_run_passes_good_targets(tmp_path):
    r = dry_run("--run-dir", str(tmp_path / "runs" / "x"), "--publish", str(tmp_path / "results" / "x"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert '"name"' in r.stdout
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()   # a dry run writes nothing


def test_dry_run_refuses_run_dir_under_a_file(tmp_path):
    (tmp_path / "afile").write_text("keep\n")
    r = dry_run("--run-dir", str(tmp_path / "afile" / "run"), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "--run-dir" in r.stderr and "a part of this path is a file, not a directory" in r.stderr
    assert str(tmp_path / "afile") + " (expected" in r.stderr
    assert (tmp_path / "afile").read_text() == "keep\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into write-protected directories")
def test_dry_run_refuses_unwritable_run_dir(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        r = dry_run("--run-dir", str(locked / "run"), cwd=tmp_path)
    finally:
        locked.chmod(0o755)
    assert r.returncode == 2, r.stderr
    assert "--run-dir" in r.stderr and "not writable" in r.stderr


def test_dry_run_refuses_publish_into_the_run(tmp_path):
    run = tmp_path / "runs" / "demo"
    r = dry_run("--run-dir", str(run), "--publish", str(run / "published"), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "--publish" in r.stderr and "inside the run directory" in r.stderr
