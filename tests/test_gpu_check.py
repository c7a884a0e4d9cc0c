"""bench/gpu.py's own logic, on the CPU: its options are refused before any step, and the paper-big epoch's
loss is read from the summary of a config that stops on BLEU (the KeyError the first H200 run hit)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(*args, tmp_path):
    return subprocess.run([sys.executable, str(ROOT / "bench" / "gpu.py"), "--out", str(tmp_path / "o"), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_epoch_loss_reads_the_last_validation_when_best_holds_bleu():
    gpu = _load()
    summary = {"best": {"epoch": 1, "updates": 114, "valid_bleu": 0.23, "validations_after": 0},
               "validations": [{"epoch": 1, "valid_loss": 10.5, "valid_bleu": 0.1},
                               {"epoch": 2, "valid_loss": 10.225, "valid_bleu": 0.23}]}
    assert gpu.epoch_loss(summary) == 10.225
    assert gpu.epoch_loss({"best": None, "validations": []}) is None
    assert gpu.epoch_loss({"best": {"valid_loss": 3.0}}) is None   # no validations: says so, no KeyError


@pytest.mark.parametrize("args, said", [
    (["--only", "demo,nope"], "expected a comma-separated list of steps"),
    (["--paper-big-precisions", "fp8"], "training precisions"),
])
def test_unknown_steps_and_precisions_are_refused(tmp_path, args, said):
    r = _run("--device", "cpu", *args, tmp_path=tmp_path)
    assert r.returncode == 2 and said in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_decode_model_must_be_a_model_directory(tmp_path):
    (tmp_path / "m").mkdir()
    r = _run("--device", "cpu", "--only", "decode", "--decode-model", str(tmp_path / "m"), tmp_path=tmp_path)
    assert r.returncode == 2 and "not a model directory" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_decode_without_a_model_is_a_failed_step_not_a_traceback(tmp_path):
    r = _run("--device", "cpu", "--only", "decode", tmp_path=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "give --decode-model DIR" in r.stdout, r.stdout
