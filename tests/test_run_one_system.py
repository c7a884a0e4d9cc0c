"""One system is a valid run (issue 35 item 4): `mwemt run CONFIG --systems baseline` trains, translates and
scores the baseline and writes the results table; the comparison reports, which need two or more systems, are
skipped with a line that says so. The run used to stop in the report stage ("a comparison needs two or more
systems, got 1", exit 2) and take the other test's unfinished score stage down with it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.experiments.config import PACKAGE_DATA
from tests.conftest import requires_nmt

ROOT = Path(__file__).resolve().parents[1]
DEMO = PACKAGE_DATA / "demo" / "demo.yaml"
# the demo at its smallest: one epoch of the tiny model on 150 pairs, 12 items per test set
TINY = ["data.train_size=150", "train.max_epoch=1", "tests.general.max_items=12", "tests.mwe.max_items=12",
        "score.bootstrap=20", "subword.vocab_size=400"]


def run(run_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "mwemt", "run", str(DEMO), "--run-dir", str(run_dir), "-q", "--no-plot",
            "--jobs", "2", *extra]
    for o in TINY:
        args += ["--set", o]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)


@pytest.mark.slow
@pytest.mark.nmt
@requires_nmt
def test_a_single_system_run_scores_and_skips_the_comparison_report(tmp_path):
    out = run(tmp_path / "one", "--systems", "baseline")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "one system (baseline): no comparison report" in out.stderr
    assert "a comparison needs two or more systems" in out.stderr   # the reason, in the same line
    assert "FAILED" not in out.stderr
    run_dir = tmp_path / "one"
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    assert results["systems"] == ["baseline"] and results["reports"] == {}
    assert {"general", "mwe"} <= {key.split("/")[0] for key in results["scores"]["baseline"]}
    assert "| system | general BLEU" in out.stdout and "| baseline |" in out.stdout
    assert not (run_dir / "report").exists()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "finished"
    stages = {(s["stage"], s["system"]) for s in manifest["stages"]}
    assert {("score", "general"), ("score", "mwe")} <= stages
    assert not any(stage == "report" for stage, _ in stages)
    # the [k/N] labels count what runs: no report stage announced that never comes
    counts = [tuple(map(int, line[1:line.index("]")].split("/"))) for line in out.stderr.splitlines()
              if line.startswith("[") and "/" in line.split("]")[0]]
    assert counts and len({total for _, total in counts}) == 1
    assert max(k for k, _ in counts) == counts[0][1]
