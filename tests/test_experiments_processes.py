"""No process outlives a killed run, and no run shares a stage directory with a stray process.

Regression tests for `kill -9` of `mwemt run` / `mwemt train` leaving `fairseq-train` running: the
stage here starts a child the way the train stage starts fairseq-train (`guarded_command`); the real
thing is killed mid-training in tests/test_experiments_faults.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mwemt.process_tree import guarded_command, holders

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}

SCRIPT = textwrap.dedent("""
    import subprocess, sys, time
    from mwemt.experiments import workers
    from mwemt.experiments.runner import Runner
    from mwemt.process_tree import guarded_command

    workers.LOCK_WAIT_SECONDS = 2

    def child(ctx):
        cmd = [sys.executable, "-c", "import time; time.sleep(120)"]
        if ctx.params["mode"] == "guarded":
            cmd = guarded_command(cmd)
        proc = subprocess.Popen(cmd)
        (ctx.out / "child.pid").write_text(str(proc.pid))
        if ctx.params["mode"] == "quick":
            proc.kill()
            proc.wait()
            (ctx.out / "out.txt").write_text("done")
            return {"out": "out.txt"}
        proc.wait()

    with Runner(sys.argv[1]) as r:
        r.stage("child", "sys", child, params={"mode": sys.argv[2]})
""")


def processes_of(run: Path) -> list[int]:
    """Live processes (not zombies) whose command line names the run directory, or that hold one of
    its files open: the command, its stage workers (forks of it), fairseq and its data loader."""
    found = []
    needle = str(run).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            hit = needle in (entry / "cmdline").read_bytes() or any(
                os.readlink(fd).startswith(str(run)) for fd in (entry / "fd").iterdir())
        except OSError:
            continue
        if hit:
            found.append(int(entry.name))
    return found


def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def start(script: Path, run: Path, mode: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(script), str(run), mode], env=ENV, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_kill_9_of_the_run_takes_its_stage_workers_and_their_children_along(tmp_path):
    script = tmp_path / "pipe.py"
    script.write_text(SCRIPT, encoding="utf-8")
    run = tmp_path / "run"
    proc = start(script, run, "guarded")
    wait_until(lambda: list(run.glob("stages/child/sys/*/child.pid")), 60, "the stage never started its child")
    (lock,) = run.glob("stages/child/sys/*.lock")
    assert len(holders(lock)) >= 2, "the worker and its child hold the stage lock"
    proc.kill()
    proc.wait()
    wait_until(lambda: not processes_of(run), 10, "a worker or its child outlived the killed run")
    assert not holders(lock)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_new_run_refuses_a_stage_directory_a_stray_process_still_uses(tmp_path):
    script = tmp_path / "pipe.py"
    script.write_text(SCRIPT, encoding="utf-8")
    run = tmp_path / "run"
    proc = start(script, run, "stray")         # an unguarded child: it survives the kill
    wait_until(lambda: list(run.glob("stages/child/sys/*/child.pid")), 60, "the stage never started its child")
    stray = int(next(run.glob("stages/child/sys/*/child.pid")).read_text())
    try:
        proc.kill()
        proc.wait()
        again = subprocess.run([sys.executable, str(script), str(run), "quick"], env=ENV, capture_output=True,
                               text=True, timeout=120)
        assert again.returncode != 0
        assert "is still in use" in again.stderr and f"pid {stray}" in again.stderr, again.stderr[-2000:]
        assert not list(run.glob("stages/child/sys/*/DONE"))
    finally:
        os.kill(stray, signal.SIGKILL)
    wait_until(lambda: not processes_of(run), 10, "the stray did not die")
    done = subprocess.run([sys.executable, str(script), str(run), "quick"], env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert next(run.glob("stages/child/sys/*/out.txt")).read_text() == "done"


def test_guarded_command_runs_the_command():
    out = subprocess.run(guarded_command([sys.executable, "-c", "print('hi')"]), capture_output=True, text=True,
                         env=ENV, timeout=60)
    assert out.returncode == 0 and out.stdout == "hi\n"
