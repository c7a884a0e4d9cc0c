"""Issue 37, item 13: every process of a `mwemt run` killed with SIGKILL during training goes with it at once.

The run's main process alone is killed (`kill -9 PID`, not its process group): the kernel then stops its
stage worker and fairseq-train (`mwemt.process_tree.die_with_parent`). fairseq's data loader used to run in
processes of its own that noticed their parent's death only by polling (every 5 s), so one survived its run
by 4-9 s; now no process of the run may be left 1 s after the kill."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import requires_nmt
from tests.test_experiments_processes import ENV, ROOT, processes_of, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.nmt, requires_nmt]

CONFIG = ROOT / "mwemt" / "data" / "demo" / "demo.yaml"
# a baseline that trains far longer than the test waits: every kill lands in the middle of training;
# small batches make each epoch many updates long
SETTINGS = ["data.train_size=300", "train.max_epoch=500", "train.max_tokens=256", "train.patience=-1",
            "subword.vocab_size=400", "train.log_interval=1"]


def fairseq_of(run: Path) -> list[int]:
    """The run's fairseq-train processes (the data loader's included, if any)."""
    found = []
    for pid in processes_of(run):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"fairseq_cli.train" in cmdline or b"fairseq_launch" in cmdline:
            found.append(pid)
    return found


def training_updates(run: Path) -> int:
    return sum(log.read_text(errors="replace").count('"num_updates"')
               for log in run.glob("stages/train/*/*/model/train.log"))


def test_13_kill_9_of_a_training_run_leaves_no_process(tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "mwemt", "run", str(CONFIG), "--systems", "baseline", "--run-dir", str(run), "-q",
           "--no-plot"]
    for s in SETTINGS:
        cmd += ["--set", s]
    rng = random.Random(os.environ.get("MWEMT_FAULT_SEED", "13"))
    for attempt in range(4):
        proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        try:
            before = training_updates(run)
            # training has started (fairseq logged an update) and goes on for a random while
            wait_until(lambda p=proc, n=before: p.poll() is not None or (fairseq_of(run) and training_updates(run) > n),
                       600, "fairseq-train never started")
            assert proc.poll() is None, proc.stderr.read()[-3000:] if proc.stderr else ""
            time.sleep(rng.uniform(0.0, 1.5))
            assert fairseq_of(run), "training ended before the kill"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            time.sleep(1.0)
            left = processes_of(run)
            described = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:160] for pid in left
                         if Path(f"/proc/{pid}").exists()}
            assert not left, f"kill {attempt + 1}: still alive 1 s after kill -9 of the run: {described}"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            for pid in processes_of(run):   # only what this test's run started
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
