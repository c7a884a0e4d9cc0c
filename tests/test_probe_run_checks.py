"""`mwemt run` refuses, before any work, what used to fail (or do damage) only at its end (issue 37 item 9):
`--publish` onto a file (it failed after the whole run: "File exists", exit 1), `--publish` into the run's own
directory (RUN/stages is the stage cache), and a config `name` that is not a plain name (the run directory is
runs/NAME: `name: ''` made it runs/ itself, `name: ../../x` put it outside runs/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.errors import MwemtError
from mwemt.experiments.config import PACKAGE_DATA, load_config
from mwemt.experiments.publish import check_publish_target
from mwemt.schema import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DEMO = PACKAGE_DATA / "demo" / "demo.yaml"
NMT = ROOT / "tests" / "fixtures" / "nmt"
# small enough that the code before these checks (which ran the whole grid first) finishes in seconds
TINY = ["data.train_size=150", "train.max_epoch=1", "tests.general.max_items=12", "tests.mwe.max_items=12",
        "score.bootstrap=20", "subword.vocab_size=400"]


def mwemt(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "mwemt", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=900)


def run_demo(tmp_path: Path, run_dir: Path, publish: Path) -> subprocess.CompletedProcess:
    args = ["run", str(DEMO), "--run-dir", str(run_dir), "--publish", str(publish), "-q", "--no-plot",
            "--systems", "baseline,iob"]
    for o in TINY:
        args += ["--set", o]
    return mwemt(*args, cwd=tmp_path)


# ---------------------------------------------------------------- --publish


def test_publish_onto_a_file_is_refused_before_the_run(tmp_path):
    target = tmp_path / "pubfile"
    target.write_text("mine\n", encoding="utf-8")
    out = run_demo(tmp_path, tmp_path / "run", target)
    assert out.returncode == 2, out.stderr[-2000:]
    assert f"--publish {target}: is a file, not a directory" in out.stderr
    assert not (tmp_path / "run").exists()                    # nothing ran
    assert target.read_text(encoding="utf-8") == "mine\n"     # and the file is untouched


def test_publish_into_the_run_stage_cache_is_refused_before_the_run(tmp_path):
    run_dir = tmp_path / "run"
    out = run_demo(tmp_path, run_dir, run_dir / "stages")
    assert out.returncode == 2, out.stderr[-2000:]
    assert "inside the run directory" in out.stderr and "publish to a directory outside it" in out.stderr
    assert not run_dir.exists()


@pytest.mark.parametrize("inside", [".", "stages/new", "report/general", "results"])
def test_publish_anywhere_in_the_run_directory_is_refused(tmp_path, inside):
    run_dir = tmp_path / "run"
    (run_dir / "stages").mkdir(parents=True)
    with pytest.raises(MwemtError, match="inside the run directory"):
        check_publish_target(run_dir / inside, run_dir)
    with pytest.raises(MwemtError, match="inside the run directory"):   # however the path is spelled
        check_publish_target(tmp_path / "elsewhere" / ".." / "run" / inside, Path(os.path.relpath(run_dir)))


def test_publish_target_checks(tmp_path):
    run_dir = tmp_path / "runs" / "x"
    check_publish_target(tmp_path / "results" / "x", run_dir)        # new, nested: fine
    (tmp_path / "results").mkdir()
    check_publish_target(tmp_path / "results", run_dir)              # an existing directory: fine
    check_publish_target(tmp_path / "runs", run_dir)                 # the folder above the run: fine
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    with pytest.raises(MwemtError, match="cannot be made: .*afile is a file"):
        check_publish_target(tmp_path / "afile" / "sub", run_dir)
    (tmp_path / "link").symlink_to(run_dir / "stages", target_is_directory=True)
    with pytest.raises(MwemtError, match="inside the run directory"):   # through a symbolic link too
        check_publish_target(tmp_path / "link", run_dir)
    (tmp_path / "pub").mkdir()
    (tmp_path / "pub" / "publish.json").write_text("[not a record", encoding="utf-8")
    with pytest.raises(MwemtError, match="not a publish record"):
        check_publish_target(tmp_path / "pub", run_dir)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_publish_into_a_read_only_directory_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(MwemtError, match="is not writable"):
            check_publish_target(locked / "results", tmp_path / "run")
    finally:
        locked.chmod(0o700)


# ---------------------------------------------------------------- config name


def config(tmp_path: Path, name: str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(f"name: {name}\ndata:\n  train: {NMT}/train\n  valid: {NMT}/valid\n"
                    f"tests:\n  general: {{source: {NMT}/valid.en, reference: {NMT}/valid.it}}\n"
                    "systems:\n  baseline: {}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "problem"), [
    ("''", "is empty"), ("' '", "is empty"), ("..", "is not a name"), (".", "is not a name"),
    ("../../x", "has a path separator"), ("a/b", "has a path separator"), ("/tmp/x", "has a path separator"),
    ('"a\\\\b"', "has a path separator"), ('"a\\nb"', "has a control character"),
])
def test_a_config_name_that_is_not_a_plain_name_is_refused(tmp_path, name, problem):
    path = config(tmp_path, name)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert (caught.value.path, caught.value.line) == (str(path), 1)
    assert str(caught.value).startswith(f"{path}:1: name: ") and problem in str(caught.value)
    assert caught.value.expected.startswith("a plain name for the run directory runs/NAME")


def test_mwemt_run_refuses_a_bad_name_with_exit_2(tmp_path):
    path = config(tmp_path, "''")
    out = mwemt("run", str(path), cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert f"{path}:1: name: '' is empty" in out.stderr
    assert not (tmp_path / "runs").exists()


def test_a_name_override_is_checked_too(tmp_path):
    with pytest.raises(ConfigError, match="override 'name=../elsewhere': name: '../elsewhere' has a path separator"):
        load_config(config(tmp_path, "fine"), ["name=../elsewhere"])


@pytest.mark.parametrize("name", ["paper-small", "x.y", "run_2", "é", "..x"])
def test_plain_names_pass(tmp_path, name):
    assert load_config(config(tmp_path, name)).name == name
