"""The comparison report inside `mwemt run`: the report stage on the compare fixture (no model needed).

The stage must give the same aggregate scores as the score stage with the same section (the report
and the results table are one computation's numbers), use the training pairs for the frequency
buckets and the dictionary for coverage, name the run's files relative to the run directory, be
cached like any stage, and publish a whole report into RUN/report/TEST/ (never over other files).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mwemt.errors import MwemtError
from mwemt.evaluate.compare import REPORT_FILES, publish_report
from mwemt.experiments import stages as S
from mwemt.experiments.config import ReportConfig, config_from_data
from mwemt.experiments.experiment import count_stages
from mwemt.experiments.runner import Runner

FX = Path(__file__).resolve().parent / "fixtures" / "compare"
SYSTEMS = ("base", "mwe", "copy")


def _score_section() -> S.ScoreSection:
    return S.ScoreSection(("bleu", "chrf", "mwe"), SYSTEMS, "it", False, 200, 7, "sentence", "auto")


def _inputs(run_dir: Path) -> dict[str, Path]:
    """The fixture's files copied into the run directory, as a run's stages would hold them."""
    d = run_dir / "files"
    d.mkdir(parents=True)
    names = ["testset.jsonl", "ref.it", "src.en", "train.en", "train.it", "dictionary.tsv", "compositionality.en.tsv",
             *[f"{s}.it" for s in SYSTEMS]]
    for name in names:
        (d / name).write_bytes((FX / name).read_bytes())
    return {**{f"hyp.{s}": d / f"{s}.it" for s in SYSTEMS}, "reference": d / "ref.it", "testset": d / "testset.jsonl",
            "source": d / "src.en", "train_src": d / "train.en", "train_tgt": d / "train.it",
            "dictionary": d / "dictionary.tsv", "mwe_compositionality": d / "compositionality.en.tsv"}


def test_report_stage_matches_the_score_stage_and_is_cached(tmp_path):
    run_dir = tmp_path / "run"
    inputs = _inputs(run_dir)
    section = S.ReportSection(_score_section(), "en", "auto", ReportConfig(examples=2))
    score_inputs = {k: v for k, v in inputs.items() if k.startswith("hyp.") or k in ("reference", "testset")}
    log = io.StringIO()
    with Runner(run_dir, progress=False, log=log) as runner:
        scores = runner.stage("score", "t", S.score_stage, config=_score_section(), inputs=score_inputs)
        entry = runner.stage("report", "t", S.report_stage, config=section, inputs=inputs)
        published = publish_report(entry.output("report"), run_dir / "report" / "t")
    report = json.loads(published["report.json"].read_text(encoding="utf-8"))
    table = json.loads(scores.output("scores").read_text(encoding="utf-8"))
    for metric in report["aggregate"]:
        for system in SYSTEMS:
            row, expected = metric["systems"][system], table["metrics"][metric["key"]]["systems"][system]
            assert row["score"] == pytest.approx(expected["score"]), (metric["key"], system)
            assert row["bs_ci95"] == pytest.approx(expected["bs_ci95"]), (metric["key"], system)
            assert row["p_value"] == pytest.approx(expected["p_value"]), (metric["key"], system)
    dims = {b["key"]: b for b in report["mwe"]["buckets"]}
    assert {"frequency", "dictionary", "compositionality"} <= set(dims), sorted(dims)
    covered = {b["label"]: b["mwes"] for b in dims["dictionary"]["buckets"]}
    assert sum(covered.values()) == 7 and 3 in covered.values()      # take care of x2, kick the bucket
    assert report["inputs"]["hyp:mwe"] == "files/mwe.it"              # relative to the run directory
    assert report["provenance"]["inputs"]["train_src"]["path"] == "files/train.en"
    assert all((run_dir / "report" / "t" / name).is_file() for name in REPORT_FILES)
    assert "<svg" in published["index.html"].read_text(encoding="utf-8")

    with Runner(run_dir, progress=False, log=log) as runner:
        again = runner.stage("report", "t", S.report_stage, config=section, inputs=inputs)
    assert runner.records[-1].status == "cached" and again.directory == entry.directory

    changed = S.ReportSection(_score_section(), "en", "auto", ReportConfig(examples=2, hit_threshold=0.8))
    with Runner(run_dir, progress=False, log=log) as runner:
        runner.stage("report", "t", S.report_stage, config=changed, inputs=inputs)
    assert runner.records[-1].status == "ran"


def test_publish_report_refuses_incomplete_reports_and_foreign_directories(tmp_path):
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "index.html").write_text("<html></html>", encoding="utf-8")
    with pytest.raises(MwemtError, match="report.md, report.json missing"):
        publish_report(tmp_path / "half", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    whole = tmp_path / "whole"
    whole.mkdir()
    for name in REPORT_FILES:
        (whole / name).write_text(name, encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(MwemtError, match="holds other files"):
        publish_report(whole, other)
    assert (other / "notes.txt").read_text(encoding="utf-8") == "mine"
    paths = publish_report(whole, tmp_path / "out")
    assert paths["report.md"].read_text(encoding="utf-8") == "report.md"


def _config(tmp_path: Path, **report) -> object:
    for name in ("src.en", "ref.it", "testset.jsonl", "train.en", "train.it"):
        (tmp_path / name).write_bytes((FX / name).read_bytes())
    (tmp_path / "dev.en").write_bytes((FX / "train.en").read_bytes())
    (tmp_path / "dev.it").write_bytes((FX / "train.it").read_bytes())
    data = {"data": {"train": "train", "valid": "dev"},
            "tests": {"plain": {"source": "src.en", "reference": "ref.it"},
                      "mwe": {"testset": "testset.jsonl", "role": "mwe", "metrics": ["bleu", "mwe"]}},
            "systems": {"baseline": {}, "other": {}}}
    if report:
        data["report"] = report
    return config_from_data(data, base_dir=tmp_path)


def test_report_config_selects_test_sets_and_counts_stages(tmp_path):
    cfg = _config(tmp_path)
    assert cfg.report.applies_to(cfg.tests) == ["plain", "mwe"]
    everything = count_stages(cfg, ["baseline", "other"])
    only = _config(tmp_path, tests=["mwe"])
    assert only.report.applies_to(only.tests) == ["mwe"]
    assert count_stages(only, ["baseline", "other"]) == everything - 1
    off = _config(tmp_path, enabled=False)
    assert off.report.applies_to(off.tests) == [] and count_stages(off, ["baseline", "other"]) == everything - 2
    assert count_stages(cfg, ["baseline"], with_tests=False) == count_stages(off, ["baseline"], with_tests=False)


@pytest.mark.parametrize("report, message", [
    ({"tests": ["mwee"]}, "report.tests: 'mwee' is not a test set"),
    ({"mwe_freq_buckets": [5, 2]}, "report.mwe_freq_buckets: mwe_freq_buckets must be increasing"),
    ({"hit_threshold": 0}, "report.hit_threshold"),
    ({"example": 3}, "report.example"),
])
def test_bad_report_settings_are_located_config_errors(tmp_path, report, message):
    from mwemt.schema import ConfigError

    with pytest.raises(ConfigError, match=message):
        _config(tmp_path, **report)
