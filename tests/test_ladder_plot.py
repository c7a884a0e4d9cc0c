"""scripts/ladder_plot.py: the data-size ladder's plot and table from runs' results.json."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ladder_plot.py"


def _load():
    spec = importlib.util.spec_from_file_location("ladder_plot", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(tmp_path, size: int, base: float, mwe: float, p: float, manifest: bool = True) -> Path:
    d = tmp_path / f"run-{size}"
    d.mkdir()
    col = {"id": "mwe-test/mwe", "test": "mwe-test", "role": "mwe", "metric": "mwe", "label": "mwe-test MWE",
           "signature": "sig", "n_sentences": 10}
    results = {"name": "ladder", "baseline": "baseline", "systems": ["baseline", "dictionary"], "columns": [col],
               "scores": {"baseline": {col["id"]: {"score": base, "bs_ci95": 1.0, "p_value": None}},
                          "dictionary": {col["id"]: {"score": mwe, "bs_ci95": 1.5, "p_value": p}}}}
    (d / "results.json").write_text(json.dumps(results))
    if manifest:
        (d / "manifest.json").write_text(json.dumps({"config": {"data": {"split": {"train_size": size}}}}))
    return d


def test_ladder_plot_and_table(tmp_path):
    mod = _load()
    runs = [_run(tmp_path, 50000, 40.0, 41.0, 0.3), _run(tmp_path, 25000, 30.0, 33.0, 0.01)]
    published = _run(tmp_path, 100000, 50.0, 50.5, 0.6, manifest=False)
    out = tmp_path / "ladder.png"
    assert mod.main([str(runs[0]), str(runs[1]), f"100000={published}", "--metric", "mwe-test/mwe",
                     "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = out.with_suffix(".md").read_text()
    assert "| metric | system | 25,000 pairs | 50,000 pairs | 100,000 pairs |" in table   # sorted by size
    assert "| mwe-test/mwe | dictionary | 33.0 ±1.5* | 41.0 ±1.5 | 50.5 ±1.5 |" in table


def test_ladder_seed_table_worked_by_hand(tmp_path):
    """Two seeds per group: means with max - min, and the method's difference seed by seed."""
    mod = _load()
    col = {"id": "t/mwe"}

    def res(base1, base2, m1, m2):
        sc = lambda v: {"t/mwe": {"score": v}}  # noqa: E731
        return {"baseline": "baseline", "columns": [col],
                "seed_groups": {"baseline": ["baseline", "baseline-seed2"], "cd": ["cd", "cd-seed2"]},
                "scores": {"baseline": sc(base1), "baseline-seed2": sc(base2), "cd": sc(m1), "cd-seed2": sc(m2)}}

    table = mod.seed_markdown([(60000, res(52.0, 51.0, 58.0, 56.5)), (15000, res(40.0, 38.0, 49.0, 47.0))],
                              ["t/mwe"])
    assert "| t/mwe | baseline | 39.0 (2.0) | 51.5 (1.0) |" in table        # 15k first: sorted by size
    assert "| t/mwe | cd | 48.0 (2.0) | 57.2 (1.5) |" in table
    assert "| t/mwe | cd Δ | +9.0 / +9.0 | +6.0 / +5.5 |" in table
    assert "baseline Δ" not in table
    assert mod.seed_markdown([(1, {"baseline": "b", "scores": {}})], ["t/mwe"]) == ""


def test_ladder_plot_errors(tmp_path):
    mod = _load()
    run = _run(tmp_path, 25000, 30.0, 33.0, 0.01)
    with pytest.raises(SystemExit, match="metric 'tatoeba/bleu' is not in the run of 25000 pairs"):
        mod.main([str(run), "--metric", "tatoeba/bleu", "-o", str(tmp_path / "x.png")])
    bare = _run(tmp_path, 50000, 30.0, 33.0, 0.01, manifest=False)
    with pytest.raises(SystemExit, match="give the run as SIZE=PATH"):
        mod.main([str(bare), "--metric", "mwe-test/mwe", "-o", str(tmp_path / "x.png")])
    with pytest.raises(SystemExit, match="system 'iob' is not in the run"):
        mod.main([str(run), "--metric", "mwe-test/mwe", "--systems", "iob", "-o", str(tmp_path / "x.png")])


def test_mwe_breakdown_plot_from_a_comparison_report(tmp_path, capsys):
    """The figure reads a report.json of `mwemt compare` (fixture: the demo grid's MWE report, trimmed)."""
    spec = importlib.util.spec_from_file_location("mwe_breakdown_plot", SCRIPT.with_name("mwe_breakdown_plot.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    report = Path(__file__).resolve().parent / "fixtures" / "science" / "report.json"
    data = mod.read_report(report)
    title, labels, series = mod.bucket_deltas(data, "contiguity")
    assert title == "Contiguous vs gapped" and labels[0].startswith("contiguous\n(")
    assert set(series) == {"dictionary", "backtranslation", "words-with-spaces", "iob"}
    deltas = mod.aggregate_deltas(data)
    assert ("BLEU", "iob", pytest.approx(4.100388759485824), pytest.approx(0.007992007992007992)) in deltas
    out = tmp_path / "breakdown.png"
    assert mod.main([str(report), "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit, match="no 'systems'"):
        mod.main([str(bad), "-o", str(out)])


def test_ladder_plot_with_an_undefined_score(tmp_path):
    """A score results.json holds as null (undefined: nothing in the test counts towards it) is n/a in the
    table and left out of the plot; it used to stop the script with a TypeError."""
    mod = _load()
    runs = [_run(tmp_path, 50000, 40.0, 41.0, 0.3), _run(tmp_path, 25000, 30.0, 33.0, 0.01)]
    res = json.loads((runs[1] / "results.json").read_text())
    res["scores"]["dictionary"]["mwe-test/mwe"] = {"score": None, "bs_ci95": None, "p_value": None}
    (runs[1] / "results.json").write_text(json.dumps(res))
    out = tmp_path / "ladder.png"
    assert mod.main([str(runs[0]), str(runs[1]), "--metric", "mwe-test/mwe", "-o", str(out)]) == 0
    assert "| mwe-test/mwe | dictionary | n/a | 41.0 ±1.5 |" in out.with_suffix(".md").read_text()
