"""scripts/training_curves.py: the train stages of a run's manifest, their convergence, the table and the plot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "training_curves.py"


def _train(run: Path, system: str, losses: list[float], converged: bool, status: str = "ran") -> dict:
    d = run / "stages" / "train" / system / "k"
    d.mkdir(parents=True)
    vals = [{"epoch": i + 1, "updates": 41 * (i + 1), "valid_loss": v} for i, v in enumerate(losses)]
    best = min(range(len(losses)), key=losses.__getitem__)
    (d / "training.json").write_text(json.dumps({
        "validations": vals, "converged": converged, "wall_seconds": 60.0 * len(losses),
        "stop_reason": "early stopping" if converged else "max_epoch reached",
        "best": {"epoch": best + 1, "valid_loss": losses[best]}}))
    return {"stage": "train", "system": system, "status": status, "directory": f"stages/train/{system}/k"}


def test_table_plot_and_only_the_manifests_stages(tmp_path):
    run = tmp_path / "grid"
    stages = [_train(run, "baseline", [6.0, 5.0, 4.5, 4.6, 4.7, 4.8], True),
              _train(run, "iob", [6.0, 5.5, 5.0], False),
              _train(run, "failed", [6.0], False, status="failed")]
    (run / "stages" / "train" / "stale" / "k").mkdir(parents=True)   # not in the manifest: ignored
    (run / "manifest.json").write_text(json.dumps({"stages": stages}))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(run), "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    md = (out / "training.md").read_text()
    assert "2 models; 1 stopped by early stopping" in md
    assert "| baseline | 6 | 246 | 3 | 4.500 | early stopping (converged) | 6.0 |" in md
    assert "| iob | 3 | 123 | 3 | 5.000 | max_epoch reached | 3.0 |" in md
    assert "failed" not in md.split("\n\n", 2)[2]
    assert (out / "training.png").read_bytes()[:4] == b"\x89PNG"


def test_a_run_without_training_exits_2(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"stages": []}))
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "-o", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "no finished train stage" in proc.stderr
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope"), "-o", str(tmp_path / "o")],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "not a run manifest" in proc.stderr
