"""scripts/aim_check.py: issue 36's aim on a results.json, worked by hand on a two-seed grid."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "aim_check.py"


def _load():
    spec = importlib.util.spec_from_file_location("aim_check", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["aim_check"] = mod   # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


COLUMNS = ["t/bleu", "t/chrf", "m/bleu", "m/mwe-p", "ted/mwe-p"]


def _results(method: dict[str, list[tuple[float, float]]]) -> dict:
    """Baseline seeds score 30 / 29 everywhere; ``method``: column -> [(score, p)] per seed."""
    scores = {"baseline": {c: {"score": 30.0, "p_value": None} for c in COLUMNS},
              "baseline-seed2": {c: {"score": 29.0, "p_value": 0.5} for c in COLUMNS},
              "x": {}, "x-seed2": {}}
    for c in COLUMNS:
        (s1, p1), (s2, p2) = method.get(c, [(30.0, 1.0), (29.0, 1.0)])
        scores["x"][c] = {"score": s1, "p_value": p1}
        scores["x-seed2"][c] = {"score": s2, "p_value": 0.9, "seed_baseline": "baseline-seed2", "seed_p_value": p2}
    return {"name": "g", "baseline": "baseline", "columns": [{"id": c} for c in COLUMNS], "scores": scores,
            "seed_groups": {"baseline": ["baseline", "baseline-seed2"], "x": ["x", "x-seed2"]}}


def _check(tmp_path, method) -> dict:
    mod = _load()
    (tmp_path / "results.json").write_text(json.dumps(_results(method)))
    args = mod.argparse.Namespace(mwe="m/mwe-p", ted="ted/mwe-p", bleu="t/bleu", chrf="t/chrf", mwe_bleu="m/bleu",
                                  mwe_gain=3.0, bleu_loss=0.5)
    return {c.name: c for c in mod.check(mod.read_results(str(tmp_path)), args)["x"]}


def test_a_method_that_meets_the_aim(tmp_path):
    # MWE-P +4 / +3.5 (spread: baseline 1.0, x 1.5): mean 3.75 > 1.5; TED +2 / +2; BLEU -0.4 / -0.5 (mean -0.45);
    # chrF -1 on seed 2 but not significant; MWE-test BLEU lower but p 0.2
    c = _check(tmp_path, {"m/mwe-p": [(34.0, 0.001), (32.5, 0.01)], "ted/mwe-p": [(32.0, 0.01), (31.0, 0.02)],
                          "t/bleu": [(29.6, 0.3), (28.5, 0.04)], "t/chrf": [(30.0, 1.0), (28.0, 0.2)],
                          "m/bleu": [(29.0, 0.2), (28.0, 0.2)]})
    assert all(x.met for x in c.values()), c
    assert c["mwe"].deltas == (4.0, 3.5) and c["mwe"].mean_delta == 3.75 and c["mwe"].spread == 1.5
    assert abs(c["bleu"].mean_delta + 0.45) < 1e-9


def test_each_rule_can_fail(tmp_path):
    c = _check(tmp_path, {"m/mwe-p": [(34.0, 0.001), (32.5, 0.06)],      # seed 2 not significant
                          "ted/mwe-p": [(30.5, 0.01), (29.5, 0.01)],    # +0.5 is within the spread (1.0)
                          "t/bleu": [(29.4, 0.01), (28.4, 0.01)],       # mean -0.6
                          "t/chrf": [(29.0, 0.01), (29.0, 1.0)],        # seed 1 significantly lower
                          "m/bleu": [(30.0, 1.0), (28.0, 0.04)]})       # seed 2 significantly lower
    assert not any(x.met for x in c.values()), c
    assert c["ted"].spread == 1.0


def test_markdown_says_met_or_not(tmp_path, capsys):
    mod = _load()
    (tmp_path / "results.json").write_text(json.dumps(_results({})))
    assert mod.main([str(tmp_path), "--mwe", "m/mwe-p", "--bleu", "t/bleu", "--chrf", "t/chrf",
                     "--mwe-bleu", "m/bleu"]) == 0
    out = capsys.readouterr().out
    assert "| x | **not met**: +0.0 (+0.0 / +0.0) |" in out and "| not met |" in out
