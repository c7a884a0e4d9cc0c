"""The run's results report, per constraint system and test, the lines constrained, accepted and rejected
(issue 36 item 2), read from each translate stage's constraints.json."""

from __future__ import annotations

import json

from mwemt.experiments.experiment import _constraint_reports
from mwemt.experiments.results import format_constraint_section


def test_counts_come_from_each_translate_stage_and_reach_results_md(tmp_path):
    hyps = {}
    for system, report in (("baseline", None),
                           ("judged", {"mode": "judged", "lines": 10, "lines_with_mwes": 4, "constrained_lines": 3,
                                       "accepted": 2, "rejected": 1, "threshold": 0.5, "per_line": []}),
                           ("forced", {"mode": "unordered", "lines": 10, "lines_with_mwes": 5,
                                       "constrained_lines": 5, "accepted": 5, "rejected": 0, "threshold": None})):
        d = tmp_path / system
        d.mkdir()
        (d / "hyp.txt").write_text("x\n", encoding="utf-8")
        if report is not None:
            (d / "constraints.json").write_text(json.dumps(report), encoding="utf-8")
        hyps.setdefault("t", {})[system] = d / "hyp.txt"
    counts = _constraint_reports(hyps)
    assert set(counts) == {"judged", "forced"}
    assert counts["judged"]["t"] == {"mode": "judged", "lines": 10, "lines_with_mwes": 4, "constrained_lines": 3,
                                     "accepted": 2, "rejected": 1, "threshold": 0.5}
    text = "\n".join(format_constraint_section({"constraints": counts}))
    assert "| judged | t | judged | 10 | 4 | 3 | 2 | 1 | 0.500 |" in text
    assert "| forced | t | unordered | 10 | 5 | 5 | 5 | 0 |  |" in text
    assert format_constraint_section({"constraints": {}}) == []
