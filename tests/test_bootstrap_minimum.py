"""Too few bootstrap resamples are refused before any work (issue 37, item 10): with fewer than 20 resamples no
p-value can fall below 0.05 ((1 + k) / (1 + N)) and no 95% interval exists, yet `--bs-samples 1` was accepted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "mwemt" / "data" / "demo"


def mwemt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwemt", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.mark.parametrize("command", ["score", "compare"])
def test_fewer_than_20_resamples_are_refused(tmp_path, command):
    hyp = DEMO / "test.it"
    args = ["--hyp", str(hyp), "--ref", str(DEMO / "test.it"), "--metrics", "bleu"] if command == "score" else \
        [str(hyp), str(hyp), "--testset", str(DEMO / "test_mwe.jsonl"), "--lang", "it", "-o", str(tmp_path / "r")]
    out = mwemt(command, *args, "--bs-samples", "1")
    assert out.returncode == 2, out.stderr
    assert "--bs-samples" in out.stderr and "20" in out.stderr
    assert not (tmp_path / "r").exists()


def test_a_config_with_too_few_resamples_is_refused():
    out = mwemt("run", "configs/demo.yaml", "--dry-run", "--set", "score.bootstrap=5")
    assert out.returncode == 2, out.stderr
    assert "score.bootstrap" in out.stderr and "20" in out.stderr
