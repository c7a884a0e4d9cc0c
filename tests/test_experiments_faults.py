"""Fault injection on a tiny real grid: results do not depend on --jobs or on interruptions.

One uninterrupted `mwemt run --jobs 1` of two systems (baseline, IOB) is the reference. The same grid
with --jobs 2 in another run directory is killed again and again, first with SIGKILL in the middle
of a training (after its first epoch checkpoint), then with SIGTERM and SIGINT at random points,
each time resumed. Its final translations, scores and model weights must be byte-identical to the
reference (so neither --jobs nor the interruptions change a result), with no process left after
any kill, no partial file and no unfinished stage directory. The random points are drawn from MWEMT_FAULT_SEED (printed on
failure), a new seed each run unless it is set.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import requires_nmt
from tests.test_experiments_processes import ENV, ROOT, processes_of, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.nmt, requires_nmt]

CONFIG = ROOT / "mwemt" / "data" / "demo" / "demo.yaml"
TINY = ["data.train_size=150", "train.max_epoch=2", "tests.general.max_items=8", "tests.mwe.max_items=8",
        "score.bootstrap=50", "subword.vocab_size=400"]
SYSTEMS = "baseline,iob"


def command(run_dir: Path, jobs: int) -> list[str]:
    args = [sys.executable, "-m", "mwemt", "run", str(CONFIG), "--systems", SYSTEMS, "--run-dir", str(run_dir),
            "-q", "--no-plot", "--jobs", str(jobs)]
    for o in TINY:
        args += ["--set", o]
    return args


def run(run_dir: Path, jobs: int) -> subprocess.CompletedProcess:
    out = subprocess.run(command(run_dir, jobs), capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def outcome(run_dir: Path) -> dict:
    """What must not depend on --jobs or on interruptions: scores, and every translation's and
    score table's hash (stage outputs that carry no timestamp)."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    hashes = {f"{s['stage']}/{s['system']}": s["outputs"] for s in manifest["stages"]
              if s["stage"] in ("translate", "score", "subword", "annotate", "corpus", "testdata")}
    return {"scores": json.loads((run_dir / "results.json").read_text())["scores"], "outputs": hashes}


def model_weights(run_dir: Path, system: str) -> dict:
    import torch

    (ckpt,) = run_dir.glob(f"stages/train/{system}/*/model/checkpoints/checkpoint_last.pt")
    return torch.load(ckpt, map_location="cpu", weights_only=False)["model"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("faults") / "reference"
    run(run_dir, jobs=1)
    return run_dir


def assert_same_weights(reference: Path, run_dir: Path) -> None:
    import torch

    for system in SYSTEMS.split(","):
        a, b = model_weights(reference, system), model_weights(run_dir, system)
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), system


class Watched:
    """`mwemt run` in a session of its own, its stage lines counted as they come."""

    def __init__(self, run_dir: Path):
        self.proc = subprocess.Popen(command(run_dir, 2), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     text=True, cwd=ROOT, env=ENV, start_new_session=True)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def finished_stages(self) -> int:
        return sum(" done " in ln for ln in self.lines)

    def stop(self, sig: int) -> int:
        """Send ``sig`` as a terminal or a scheduler would (to the command's process group)."""
        os.killpg(self.proc.pid, sig)
        code = self.proc.wait(timeout=120)
        self.reader.join(timeout=10)
        return code


def test_a_killed_and_resumed_jobs_2_run_ends_with_the_results_of_an_uninterrupted_jobs_1_run(
        reference, tmp_path):
    seed = int(os.environ.get("MWEMT_FAULT_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    run_dir = tmp_path / "faulty"
    log = [f"MWEMT_FAULT_SEED={seed}"]

    def check_no_leftovers() -> None:
        wait_until(lambda: not processes_of(run_dir), 15, f"processes outlived the run: {processes_of(run_dir)}; {log}")

    # 1. SIGKILL in the middle of a training: after its first epoch's checkpoint, before its DONE
    w = Watched(run_dir)
    wait_until(lambda: list(run_dir.glob("stages/train/*/*/model/checkpoints/checkpoint_last.pt"))
               or w.proc.poll() is not None, 600, "no training started")
    assert w.proc.poll() is None, "".join(w.lines)[-3000:]
    killed = [p.parts[-5] for p in run_dir.glob("stages/train/*/*/model/checkpoints/checkpoint_last.pt")
              if not (p.parents[2] / "DONE").exists()]
    assert killed, "the training finished before the kill"
    assert w.stop(signal.SIGKILL) == -signal.SIGKILL
    log.append(f"SIGKILL during the training of {killed}")
    check_no_leftovers()

    # 2. the other signals at random points of the remaining work
    for sig in rng.sample([signal.SIGTERM, signal.SIGINT], 2):
        w = Watched(run_dir)
        target = rng.randint(0, 2)      # stages finished before the kill, then a random delay
        # not while the interpreter starts, before mwemt's first line runs: a signal there gets Python's
        # default (killed by it); from that line on the command exits 128 + the signal's number
        # (tests/test_interrupts.py: a signal while the command starts). The run's first line of output
        # says it has started, however long a loaded machine takes to get there
        wait_until(lambda w=w, target=target: (w.lines and w.finished_stages() >= target) or w.proc.poll() is not None,
                   600, f"stuck; {log}")
        time.sleep(rng.uniform(0.0, 2.0))
        if w.proc.poll() is not None:
            log.append(f"{sig.name}: the run had finished")
            break
        code = w.stop(sig)
        log.append(f"{sig.name} after {w.finished_stages()} stage(s): exit {code}")
        if sig == signal.SIGINT:
            assert code == 130, log
        check_no_leftovers()

    out = run(run_dir, jobs=2)
    assert "(2 jobs)" in out.stderr
    assert outcome(run_dir) == outcome(reference), log
    assert_same_weights(reference, run_dir)
    assert "train        " in out.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    assert not list(run_dir.rglob("*.part")), log
    unfinished = [d for d in run_dir.glob("stages/*/*/*") if d.is_dir() and not (d / "DONE").exists()]
    assert not unfinished, (unfinished, log)


def test_ctrl_c_leaves_a_manifest_that_says_interrupted(tmp_path):
    """docs/experiments.md, "Interrupts and kills": after Ctrl-C the run's manifest says `interrupted`
    (the guard that keeps outputs from being committed after a stop signal must not stop this record)."""
    run_dir = tmp_path / "stopped"
    w = Watched(run_dir)
    wait_until(lambda: w.finished_stages() >= 2 or w.proc.poll() is not None, 600, "no stage finished")
    assert w.proc.poll() is None, "".join(w.lines)[-3000:]
    assert w.stop(signal.SIGINT) == 130, "".join(w.lines)[-3000:]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
