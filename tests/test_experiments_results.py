"""results.md / .json / .csv / .png from real scores of `mwemt.evaluate.scoring`."""

from __future__ import annotations

import csv
import io
import json

from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.inputs import ScoreInputs, SystemOutput
from mwemt.evaluate.registry import MetricOptions
from mwemt.evaluate.report import score_run_dict
from mwemt.evaluate.scoring import score_systems
from mwemt.experiments.results import SetScores, build_results, findings, format_markdown, write_results
from mwemt.records import TestItem, TestMwe

REFS = ["si prende cura del giardino .", "vive in una torre d'avorio .", "ogni tanto legge un libro ."]
MWES = [[TestMwe((1, 2, 3), "take care of", "si prende cura")], [TestMwe((4, 5), "ivory tower", "torre d'avorio")],
        [TestMwe((0, 1, 2, 3), "once in a while", "ogni tanto")]]
BASE = ["guarda il giardino .", "vive in una torre bianca .", "a volte legge un libro ."]
GOOD = ["si prende cura del giardino .", "vive in una torre d'avorio .", "ogni tanto legge un libro ."]


def runs():
    systems = [SystemOutput("baseline", BASE), SystemOutput("iob", GOOD)]
    testset = [TestItem(str(i), "", ref, mwes) for i, (ref, mwes) in enumerate(zip(REFS, MWES), 1)]
    opts = MetricOptions(lang="it")
    bootstrap = BootstrapSettings(100, 1)
    general = score_systems(ScoreInputs(systems, REFS), ["bleu"], opts, bootstrap=bootstrap)
    mwe = score_systems(ScoreInputs(systems, REFS, testset), ["bleu", "mwe"], opts, bootstrap=bootstrap)
    return [SetScores("ted", "general", score_run_dict(general)), SetScores("mwe", "mwe", score_run_dict(mwe))]


def test_results_files(tmp_path):
    results = build_results(runs(), name="unit", baseline="baseline", meta={"seed": 1})
    assert [c["id"] for c in results["columns"]] == ["ted/bleu", "mwe/bleu", "mwe/mwe"]
    assert [c["role"] for c in results["columns"]] == ["general", "mwe", "mwe"]
    assert results["scores"]["iob"]["mwe/mwe"]["score"] == 100.0
    assert results["scores"]["baseline"]["mwe/mwe"]["score"] < 100.0

    paths = write_results(tmp_path, results)
    assert json.loads(paths["json"].read_text())["systems"] == ["baseline", "iob"]
    rows = list(csv.DictReader(io.StringIO(paths["csv"].read_text())))
    assert len(rows) == 6 and {r["system"] for r in rows} == {"baseline", "iob"}
    assert all(r["signature"] for r in rows)
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = paths["md"].read_text()
    assert md.startswith("# Results: unit")
    assert "| system | ted BLEU | mwe BLEU | mwe MWE |" in md
    assert "| iob | 100.0" in md
    assert "MWE|" in md and "BLEU|nrefs:1" in md   # signatures


def test_findings_state_direction_as_measured():
    results = build_results(runs(), name="unit", baseline="baseline")
    (line,) = findings(results)
    assert line.startswith("- **iob**")
    assert "mwe BLEU 100.0" in line and "mwe MWE 100.0" in line and "≥ baseline" in line
    # swap the roles: the better system is now the baseline, and the finding says "<"
    swapped = build_results(runs(), name="unit", baseline="iob")
    swapped["systems"] = ["iob", "baseline"]
    (line,) = findings(swapped)
    assert line.startswith("- **baseline**") and "< baseline" in line
    assert "MWE score, BLEU on MWE test sets" in format_markdown(results)
