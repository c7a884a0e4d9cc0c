"""configs/paper-big.yaml runs on a fresh clone with ../shared/data beside it (issue 35 item 3): every path it
names is there (its back-translation text used to be a file the user had to supply, so even --dry-run failed),
and its header says how long it takes on a GPU and that this is an estimate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "paper-big.yaml"
# the config's paths are relative to itself: ../../shared/data is the checkout's sibling, whatever MWEMT_SHARED says
DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_beside_checkout() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


def test_paper_big_dry_run_passes_with_the_shared_data(shared_beside_checkout):
    out = subprocess.run([sys.executable, "-m", "mwemt", "run", str(CONFIG), "--dry-run"], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    cfg = json.loads(out.stdout)
    assert cfg["name"] == "paper-big"
    # back-translation reads the Italian of the Tatoeba pairs the training sample leaves out
    assert cfg["data"]["monolingual"] == "split-rest" and cfg["data"]["split"]["train_size"] > 0
    assert "backtranslation" in cfg["systems"]


def test_paper_big_header_gives_an_estimated_gpu_time():
    header = "".join(line for line in CONFIG.read_text(encoding="utf-8").splitlines(keepends=True)
                     if line.startswith("#") and not line.startswith("# -"))
    assert "GPU time: an ESTIMATE" in header and "GPU-hours" in header
    assert "12 s an epoch" in header           # the measurement it is derived from
    assert "CPU only" not in header
