"""Issue 37 item 2: a score that is undefined on the test set is reported as undefined, never as 0.0.

The MWE score (and MWE-alts) of a test set without MWEs, term use when no MWE has a given translation
and LiTER when no MWE has a blocklist are ratios over nothing. They used to print 0.0 next to BLEU 100,
and `mwemt compare` printed "MWE 0.0 ±0.0" above "Not available: the test set has no MWEs". Now they
read n/a in tables (text, Markdown, CSV), null in JSON, and get no interval and no p-value, in
`mwemt score`, `mwemt compare` and a run's results. Each test runs the real command or the real
functions a run calls on real files."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from mwemt.cli import main
from mwemt.evaluate.bootstrap import BootstrapSettings, paired_bootstrap
from mwemt.evaluate.inputs import load_score_inputs
from mwemt.evaluate.mwe_score import MweScore
from mwemt.evaluate.registry import MetricOptions
from mwemt.evaluate.report import score_run_dict
from mwemt.evaluate.scoring import score_systems
from mwemt.experiments.results import SetScores, build_results, format_csv, format_markdown, write_results
from mwemt.records import TestMwe

UNDEFINED = ("mwe", "mwe-alts", "term-use", "liter")
SOURCES = ["we will keep in touch with you", "good night to all of you"]
REFS = ["resteremo in contatto con te", "buona notte a tutti voi"]


def _files(tmp_path, mwes_field: bool = True):
    """A two-sentence test set without MWEs (an empty ``mwes`` list, or no ``mwes`` field at all), two
    systems (the first a copy of the references: BLEU 100), a terms file and a dictionary."""
    lines = []
    for k, (src, ref) in enumerate(zip(SOURCES, REFS), 1):
        item = {"id": str(k), "source": src, "reference": ref}
        if mwes_field:
            item["mwes"] = []
        lines.append(json.dumps(item))
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "a.it").write_text("\n".join(REFS) + "\n")
    (tmp_path / "b.it").write_text("resteremo in contatto con te\nbuona sera a tutti\n")
    (tmp_path / "terms.tsv").write_text("keep in touch\trestare in contatto\n")
    (tmp_path / "dict.tsv").write_text("touch\ttoccare\n")
    return tmp_path


def _score_args(d, *extra: str) -> list[str]:
    return ["score", "--hyp", f"a={d / 'a.it'}", "--hyp", f"b={d / 'b.it'}", "--testset", str(d / "t.jsonl"),
            "--metrics", "bleu," + ",".join(UNDEFINED), "--terms", str(d / "terms.tsv"),
            "--dictionary", str(d / "dict.tsv"), "--lang", "it", "--align", "none", *extra]


@pytest.mark.parametrize("mwes_field", [True, False], ids=["empty-mwes", "no-mwes-field"])
def test_score_json_has_null_for_undefined_scores_and_no_p_value(tmp_path, mwes_field):
    d = _files(tmp_path, mwes_field)
    assert main(_score_args(d, "--paired-bs", "--bs-samples", "50", "--json", "-o", str(d / "s.json"))) == 0
    obj = json.loads((d / "s.json").read_text())
    assert obj["metrics"]["bleu"]["systems"]["a"]["score"] == pytest.approx(100.0)
    for key in UNDEFINED:
        entry = obj["metrics"][key]
        for system in ("a", "b"):
            row = entry["systems"][system]
            assert row["score"] is None, (key, row)          # was 0.0
            assert row["bs_mean"] is None and row["bs_ci95"] is None and row["p_value"] is None, (key, row)
        assert entry["undefined"], key                       # why the scores are null


def test_score_table_prints_n_a_and_says_why(tmp_path, capsys):
    d = _files(tmp_path)
    assert main(_score_args(d, "--paired-bs", "--bs-samples", "50")) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith(("a ", "b "))}
    # BLEU cell (score, mean ± ci), then one n/a per undefined metric: no 0.0, no interval, no p-value
    assert rows["a"][1] == "100.0" and rows["a"][-len(UNDEFINED):] == ["n/a"] * len(UNDEFINED)
    assert rows["b"][-len(UNDEFINED):] == ["n/a"] * len(UNDEFINED)
    assert "MWE n/a: undefined, no sentence of the test set has an MWE to score" in out
    assert "TermUse n/a: undefined" in out and "LiTER n/a: undefined" in out


def test_bootstrap_gives_no_interval_or_p_value_for_an_undefined_score():
    metric = MweScore("it", align="none", pretokenized=True)
    stats = [metric.sentence_stats(hyps, [[], []]) for hyps in (REFS, ["x", "y"])]
    results = paired_bootstrap(metric, stats, BootstrapSettings(20, 1))
    assert [(r.score, r.mean, r.ci, r.p_value) for r in results] == [(None, None, None, None)] * 2
    assert metric.corpus_score_from_stats(stats[0]).score is None
    assert metric.corpus_score_from_stats(stats[0]).format() == "MWE = n/a"


def test_resamples_without_an_mwe_are_left_out_not_scored_zero():
    # sentence 1 has an MWE scored 1.0, sentence 2 none: every resample that draws an MWE sentence
    # scores 100; a resample of sentence 2 only is undefined. Counted as 0 before, it pulled the
    # bootstrap mean below 100 and opened an interval around a score that cannot vary.
    metric = MweScore("it", align="none", pretokenized=True)
    mwe = TestMwe((1, 2, 3), "keep in touch", "in contatto")
    stats = metric.sentence_stats(["restiamo in contatto", "buona notte"], [[mwe], []])
    rows = stats.rows
    assert metric.scores_from_totals(rows[1:2]).tolist() == [pytest.approx(np.nan, nan_ok=True)]
    (result,) = paired_bootstrap(metric, [stats], BootstrapSettings(200, 3))
    assert (result.score, result.mean, result.ci) == (100.0, 100.0, 0.0)


def test_compare_report_shows_n_a_not_zero(tmp_path, capsys):
    d = _files(tmp_path)
    out = d / "report"
    assert main(["compare", "--hyp", f"a={d / 'a.it'}", "--hyp", f"b={d / 'b.it'}", "--testset", str(d / "t.jsonl"),
                 "--lang", "it", "--bs-samples", "50", "-q", "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    table = md.split("## Aggregate scores", 1)[1].split("## MWE accuracy", 1)[0]
    assert "| a | 100.0 ±0.0 | 100.0 ±0.0 | n/a |" in table, table      # was "| 0.0 ±0.0 |"
    assert "MWE n/a: undefined, no sentence of the test set has an MWE to score." in table
    assert "Not available: the test set has no MWEs." in md
    report = json.loads((out / "report.json").read_text())
    mwe = next(m for m in report["aggregate"] if m["key"] == "mwe")
    assert all(s["score"] is None and s["delta"] is None and s["p_value"] is None for s in mwe["systems"].values())
    html = (out / "index.html").read_text()
    assert ">n/a</td>" in html


def test_run_results_show_n_a_in_markdown_csv_json_and_plot(tmp_path):
    # what a run's score stage writes (score_run_dict) and what its results step makes of it
    d = _files(tmp_path)
    inputs = load_score_inputs([("baseline", d / "a.it"), ("iob", d / "b.it")], testset=d / "t.jsonl", lang="it")
    options = MetricOptions(lang="it", mwe_align="none", terms=str(d / "terms.tsv"), dictionary=str(d / "dict.tsv"))
    run = score_systems(inputs, ["bleu", *UNDEFINED], options, bootstrap=BootstrapSettings(50, 1))
    scores = json.loads(json.dumps(score_run_dict(run)))            # as scores.json stores it
    results = build_results([SetScores("mwe", "mwe", scores)], name="probe", baseline="baseline")
    md = format_markdown(results)
    row = next(line for line in md.splitlines() if line.startswith("| iob |"))
    assert row.endswith("| n/a | n/a | n/a | n/a |"), row          # was 0.0 ±0.0
    assert "mwe MWE n/a: undefined, no sentence of the test set has an MWE to score." in md
    finding = next(line for line in md.splitlines() if line.startswith("- **iob**"))
    assert "mwe BLEU" in finding and "MWE" not in finding.replace("mwe BLEU", "")   # nothing undefined compared
    table = list(csv.DictReader(io.StringIO(format_csv(results))))
    for r in table:
        if r["metric"] in UNDEFINED:
            assert (r["score"], r["bs_mean"], r["bs_ci95"], r["p_value"]) == ("n/a",) * 4, r
        else:
            assert float(r["score"]) >= 0
    paths = write_results(tmp_path / "out", results)
    saved = json.loads(paths["json"].read_text())
    assert saved["scores"]["iob"]["mwe/mwe"]["score"] is None and saved["scores"]["iob"]["mwe/liter"]["p_value"] is None
    assert paths["png"].stat().st_size > 0
