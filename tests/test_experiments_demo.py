"""`mwemt demo` end to end at a smaller size: every stage runs (the comparison reports too), a rerun
is all cache hits, a changed translate setting reruns exactly translate, score and report, and a
training stage that never finished (no DONE) is trained again, to the same results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import requires_nmt

ROOT = Path(__file__).resolve().parents[1]
# A one-epoch reverse model writes outputs of any length: the length filter would reject nearly all of
# them (1 of 169 kept before identification agreed with surface forms, 0 of 152 after), and
# back-translation would then share every stage with the baseline. The test is about the mechanics.
TINY = ["data.train_size=150", "train.max_epoch=1", "tests.general.max_items=12", "tests.mwe.max_items=12",
        "score.bootstrap=50", "subword.vocab_size=400", "augment.backtranslation.max_length_ratio=50"]


def demo(run_dir: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "mwemt", "demo", "--run-dir", str(run_dir), "-q"]
    for o in TINY + list(extra):
        args += ["--set", o]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env, timeout=1200)


def stage_status(run_dir: Path) -> dict[tuple[str, str], str]:
    m = json.loads((run_dir / "manifest.json").read_text())
    return {(s["stage"], s["system"]): s["status"] for s in m["stages"]}


@pytest.mark.slow
@pytest.mark.nmt
@requires_nmt
def test_demo_end_to_end_cached_and_partial_rerun(tmp_path):
    run = tmp_path / "demo"
    first = demo(run)
    assert first.returncode == 0, first.stderr[-3000:]
    # a test the baseline cannot translate carries a dagger (the --small demo's scores mean nothing)
    assert "| system | general BLEU | general chrF | mwe BLEU | mwe chrF | mwe MWE | mwe tesla | mwe tesla-01 |" \
        in first.stdout.replace(" \u2020", "")
    for name in ("results.md", "results.json", "results.csv", "results.png", "manifest.json"):
        assert (run / name).is_file(), name
    for test in ("general", "mwe"):
        for name in ("index.html", "report.md", "report.json"):
            assert (run / "report" / test / name).is_file(), (test, name)
    results = json.loads((run / "results.json").read_text())
    assert results["reports"] == {"general": "report/general/index.html", "mwe": "report/mwe/index.html"}
    report = json.loads((run / "report" / "mwe" / "report.json").read_text())
    assert report["systems"] == results["systems"] and report["mwe"]["n_mwes"] > 0
    mwe_score = next(m for m in report["aggregate"] if m["key"] == "mwe")
    assert mwe_score["systems"]["iob"]["score"] == results["scores"]["iob"]["mwe/mwe"]["score"]
    assert results["systems"] == ["baseline", "dictionary", "backtranslation", "words-with-spaces", "iob"]
    status = stage_status(run)
    assert set(status.values()) == {"ran"}
    assert ("train", "reverse") in status and ("augment", "backtranslation") in status
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["seed"] == 1 and "fairseq-fixed" in manifest["versions"]

    second = demo(run)
    assert second.returncode == 0, second.stderr[-3000:]
    assert set(stage_status(run).values()) == {"cached"}
    assert json.loads((run / "results.json").read_text())["scores"] == results["scores"]

    third = demo(run, "translate.beam=1")
    assert third.returncode == 0, third.stderr[-3000:]
    ran = {k for k, v in stage_status(run).items() if v == "ran"}
    assert {stage for stage, _ in ran} == {"translate", "score", "report"}
    assert len(ran) == 5 * 2 + 2 + 2

    # a training stage killed before DONE: trained again from an empty directory, to the same results
    (done,) = list(run.glob("stages/train/iob/*/DONE"))
    done.unlink()
    before = json.loads((run / "results.json").read_text())["scores"]
    fourth = demo(run, "translate.beam=1")
    assert fourth.returncode == 0, fourth.stderr[-3000:]
    assert "train        iob              running" in fourth.stderr
    assert stage_status(run)[("train", "iob")] == "ran"
    assert stage_status(run)[("train", "baseline")] == "cached"
    assert done.exists()
    assert json.loads((run / "results.json").read_text())["scores"] == before
