"""Seed groups of a grid and the results' seed section: the spread, and a difference called real only when it is
beyond the baseline's seed spread and significant on every seed (numbers worked by hand)."""

from __future__ import annotations

from mwemt.experiments.config import config_from_data
from mwemt.experiments.results import format_markdown, seed_summary


def _results(scores: dict[str, tuple[float, float | None]], groups: dict[str, list[str]]) -> dict:
    col = {"id": "mwe/mwe", "test": "mwe", "role": "mwe", "metric": "mwe", "label": "mwe MWE", "signature": "MWE|x",
           "n_sentences": 3}
    return {"name": "unit", "baseline": "baseline", "systems": list(scores), "columns": [col],
            "scores": {s: {"mwe/mwe": {"score": v, "p_value": p}} for s, (v, p) in scores.items()},
            "paired_bootstrap": None, "compositionality_breakdown": {}, "reports": {}, "seed_groups": groups,
            "meta": {}}


def test_spread_and_verdicts_worked_by_hand():
    scores = {"baseline": (40.0, None), "baseline-seed2": (41.0, 0.2),
              "good": (43.0, 0.01), "good-seed2": (44.5, 0.001),            # mean 43.75: +3.25 > spread 1.0
              "lucky": (42.0, 0.01), "lucky-seed2": (40.0, 0.5),            # one seed not significant
              "small": (41.2, 0.04), "small-seed2": (41.6, 0.03)}           # +0.9: within the baseline's 1.0
    groups = {g: [g, f"{g}-seed2"] for g in ("baseline", "good", "lucky", "small")}
    s = seed_summary(_results(scores, groups))
    assert s["baseline_group"] == "baseline"
    assert s["groups"]["baseline"]["mwe/mwe"]["mean"] == 40.5
    assert s["groups"]["lucky"]["mwe/mwe"]["spread"] == 2.0
    assert s["spread"]["mwe/mwe"] == 1.0                                    # the baseline's own: 41 - 40
    assert s["largest_spread"]["mwe/mwe"] == 2.0                            # the largest of 1.0, 1.5, 2.0, 0.4
    good, lucky, small = (s["verdicts"][g]["mwe/mwe"] for g in ("good", "lucky", "small"))
    assert good["real"] and abs(good["diff"] - 3.25) < 1e-9
    assert not lucky["real"] and not lucky["significant_every_seed"]
    assert not small["real"] and small["significant_every_seed"] and not small["beyond_spread"]
    assert good["separated"] == small["separated"] == "above" and lucky["separated"] is None   # 41.2 > 41 too
    md = format_markdown(_results(scores, groups))
    assert "| **baseline seed spread** (baseline) | | 1.0 |" in md
    assert "- **good** vs baseline: real differences: mwe MWE +3.2; every seed above every baseline seed: mwe MWE" in md
    assert ("- **small** vs baseline: no real difference; every seed above every baseline seed: mwe MWE; "
            "mwe MWE +0.9 (within the baseline's spread)") in md
    assert "- **lucky** vs baseline: no real difference; mwe MWE +0.5 (within the baseline's spread)" in md


def test_a_loss_is_real_only_in_its_own_direction():
    # both seeds significant, but one above and one below the baseline: not a real difference
    scores = {"baseline": (40.0, None), "baseline-seed2": (40.2, 0.6), "mixed": (45.0, 0.001),
              "mixed-seed2": (37.0, 0.001)}
    s = seed_summary(_results(scores, {"baseline": ["baseline", "baseline-seed2"], "mixed": ["mixed", "mixed-seed2"]}))
    assert not s["verdicts"]["mixed"]["mwe/mwe"]["significant_every_seed"]
    # no baseline group: no section
    assert seed_summary(_results(scores, {"mixed": ["mixed", "mixed-seed2"]})) == {}
    assert "## Seeds" not in format_markdown(_results(scores, {}))


def test_seed_groups_from_the_config():
    cfg = config_from_data({
        "name": "g", "data": {"train": "package:demo/train", "valid": "package:demo/dev",
                              "lexicon": "package:demo/lexicon.en.txt"},
        "tests": {"t": {"source": "package:demo/test.en", "reference": "package:demo/test.it"}},
        "systems": {"baseline": {}, "iob": {"encoding": "iob"}, "baseline-seed2": {"train": {"seed": 2}},
                    "iob-seed2": {"encoding": "iob", "train": {"seed": 2}}, "iob-seed3": {"encoding": "iob",
                                                                                        "train": {"seed": 3}},
                    "iob-lr": {"encoding": "iob", "train": {"seed": 2, "lr": 0.002}},      # not a twin: lr differs
                    "off": {"model_of": "iob", "translate": {"source_mwes": "none"}},
                    "off-seed2": {"model_of": "iob-seed2", "translate": {"source_mwes": "none"}},
                    "on-seed2": {"model_of": "iob-seed2"}}}, base_dir=".")
    groups = cfg.seed_groups(list(cfg.systems))
    assert groups == {"baseline": ["baseline", "baseline-seed2"], "iob": ["iob", "iob-seed2", "iob-seed3"],
                      "off": ["off", "off-seed2"]}
