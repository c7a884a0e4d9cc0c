"""The GPU path's process boundary (issue 35): on a machine with a GPU, `mwemt run`/`mwemt demo` used to
crash at the first translate stage, because the run's own process asked CUDA whether it had a GPU
(`train.device: auto`) and then forked its stage workers, which cannot use CUDA after that.

No GPU is needed here: tests/fakecuda/sitecustomize.py gives every interpreter of the command a torch
that keeps CUDA's books as a real one does (a fork of a process that asked CUDA anything cannot use it;
a fresh interpreter can) and logs every CUDA call. The model itself stays on the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import requires_nmt

ROOT = Path(__file__).resolve().parents[1]
FAKE = ROOT / "tests" / "fakecuda"
TINY = ["data.train_size=150", "train.max_epoch=1", "tests.general.max_items=12", "tests.mwe.max_items=12",
        "score.bootstrap=50", "subword.vocab_size=400", "augment.backtranslation.max_length_ratio=50"]


def fake_gpu_env(log: Path) -> dict:
    return {**os.environ, "PYTHONPATH": f"{FAKE}{os.pathsep}{ROOT}", "MWEMT_FAKE_CUDA_LOG": str(log)}


def cuda_calls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_fake_gpu_is_a_real_check(tmp_path):
    """The fake refuses CUDA in a fork of a process that asked CUDA, and allows it in a fresh interpreter,
    as torch does: without that the test below could not fail."""
    log = tmp_path / "cuda.jsonl"
    code = ("import os, torch\n"
            "assert torch.cuda.is_available()\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    try:\n"
            "        torch.nn.Linear(2, 2).cuda()\n"
            "    except RuntimeError as e:\n"
            "        os._exit(3 if 'forked subprocess' in str(e) else 4)\n"
            "    os._exit(0)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "assert os.waitstatus_to_exitcode(status) == 3, status\n"
            "import subprocess, sys\n"
            "subprocess.run([sys.executable, '-c', 'import torch; torch.nn.Linear(2, 2).cuda()'], check=True)\n")
    subprocess.run([sys.executable, "-c", code], env=fake_gpu_env(log), check=True, timeout=300)
    calls = cuda_calls(log)
    assert [c["failed"] for c in calls if c["call"] == "Module.cuda"] == [True, False]


def test_the_process_that_forks_never_asks_cuda(tmp_path):
    """`resolve_device('auto')` in a process with a (fake) GPU finds it, and the process itself can still
    fork workers that use CUDA: the answer came from a fresh interpreter."""
    log = tmp_path / "cuda.jsonl"
    code = ("import os\n"
            "from mwemt.processes import resolve_device\n"
            "assert resolve_device('auto') == 'cuda'\n"
            "assert resolve_device('cuda') == 'cuda'\n"
            "print(os.getpid())\n")
    out = subprocess.run([sys.executable, "-c", code], env=fake_gpu_env(log), check=True, timeout=300,
                         capture_output=True, text=True)
    me = int(out.stdout.split()[-1])
    calls = cuda_calls(log)
    assert calls, "the GPU was looked for somewhere"
    assert all(c["pid"] != me for c in calls), calls


@pytest.mark.slow
@pytest.mark.nmt
@requires_nmt
def test_demo_on_a_gpu_machine_runs_models_in_fresh_interpreters(tmp_path):
    """The demo's grid (a back-translation system: its reverse model translates too) on a machine with a
    GPU: the run finishes; its own process never asks CUDA anything; no forked process uses CUDA; every
    translation loads its model onto the GPU in a fresh interpreter."""
    log = tmp_path / "cuda.jsonl"
    args = [sys.executable, "-m", "mwemt", "run", "configs/demo.yaml", "--run-dir", str(tmp_path / "run"), "-q",
            "--systems", "backtranslation", "--jobs", "2", "--no-plot"]
    for o in TINY:
        args += ["--set", o]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env=fake_gpu_env(log))
    out, _ = proc.communicate(timeout=1800)
    calls = cuda_calls(log)
    assert not [c for c in calls if c["pid"] == proc.pid], f"the run's own process asked CUDA: {calls}"
    assert not [c for c in calls if c["failed"]], f"CUDA used in a forked process: {calls}\n{out[-3000:]}"
    assert proc.returncode == 0, out[-3000:]
    uses = [c for c in calls if c["call"] == "Module.cuda"]
    assert uses and all(not c["forked"] for c in uses), calls
    # baseline and backtranslation on two tests, and the reverse model's back-translation
    assert len(uses) >= 5, uses
