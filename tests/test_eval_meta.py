"""Meta-evaluation statistics on hand-made rankings (counts worked out in the comments)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from mwemt.errors import InputError
from mwemt.evaluate.meta_eval import (
    build_grid,
    kendall_wmt13,
    kendall_wmt14,
    meta_evaluate,
    pair_counts,
    read_segment_scores,
    system_correlation,
)


def _fixture_grid(fixtures):
    human = read_segment_scores(fixtures / "eval" / "human.tsv")
    metric = read_segment_scores(fixtures / "eval" / "metric.tsv")
    return build_grid(human, metric)


def test_pair_counts_by_hand(fixtures):
    # segment 1: human A>B>C, metric A(.9) > B(.5) = C(.5): A-B conc, A-C conc, B-C metric tie
    # segment 2: human B=C>A, metric C(.3) > A(.2) > B(.1): A-B disc, A-C conc, B-C human tie (left out)
    # segment 3: A has no human score; B-C: human C>B, metric C>B: conc
    grid = _fixture_grid(fixtures)
    counts = pair_counts(grid)
    assert counts.tolist() == [[2, 0, 1], [1, 1, 0], [1, 0, 0]]
    res = meta_evaluate(grid, "m", n_bootstrap=0)
    assert (res.concordant, res.discordant, res.metric_ties, res.human_ties) == (4, 1, 1, 1)
    assert res.tau_wmt13 == pytest.approx((4 - 1) / (4 + 1))
    assert res.tau_wmt14 == pytest.approx((4 - 1) / (4 + 1 + 1))
    assert res.n_items == 8 and res.n_segments == 3 and res.n_systems == 3


def test_pearson_and_system_level_by_hand(fixtures):
    res = meta_evaluate(_fixture_grid(fixtures), "m", n_bootstrap=0)
    human = [3, 2, 1, 1, 2, 2, 1, 2]  # A3 is missing, so A's metric .7 is not used
    metric = [.9, .5, .5, .2, .1, .3, .1, .6]
    assert res.pearson_seg == pytest.approx(sps.pearsonr(metric, human)[0])
    h_sys = [2.0, 5 / 3, 5 / 3]  # A, B, C means over their judged items
    m_sys = [(.9 + .2) / 2, (.5 + .1 + .1) / 3, (.5 + .3 + .6) / 3]
    assert res.pearson_sys == pytest.approx(sps.pearsonr(m_sys, h_sys)[0])
    assert res.kendall_sys == pytest.approx(sps.kendalltau(m_sys, h_sys)[0])


def test_kendall_variants_on_perfect_and_reversed_rankings():
    segs = [str(i) for i in range(4)]
    human = {(s, g): float(k) for g in segs for k, s in enumerate("ABCD")}
    same = {k: 10 * v for k, v in human.items()}
    reverse = {k: -v for k, v in human.items()}
    flat = {k: 1.0 for k in human}
    assert meta_evaluate(build_grid(human, same), "same", n_bootstrap=0).tau_wmt14 == 1.0
    r = meta_evaluate(build_grid(human, reverse), "rev", n_bootstrap=0)
    assert r.tau_wmt13 == -1.0 and r.tau_wmt14 == -1.0
    f = meta_evaluate(build_grid(human, flat), "flat", n_bootstrap=0)
    # a metric that ties everything: no pair for WMT13, zero for WMT14
    assert np.isnan(f.tau_wmt13) and f.tau_wmt14 == 0.0 and f.metric_ties == 4 * 6


def test_formulas():
    assert kendall_wmt13(6, 2, 100) == pytest.approx(0.5)
    assert kendall_wmt14(6, 2, 2) == pytest.approx(0.4)


def test_bootstrap_ci_contains_estimate_and_is_seeded():
    rng = np.random.default_rng(0)
    human, metric = {}, {}
    for g in range(60):
        for s in "ABCDE":
            h = rng.normal()
            human[(s, str(g))] = h
            metric[(s, str(g))] = h + rng.normal(0, 1)
    grid = build_grid(human, metric)
    a = meta_evaluate(grid, "m", n_bootstrap=200, seed=5)
    b = meta_evaluate(grid, "m", n_bootstrap=200, seed=5)
    assert a.ci == b.ci
    for key in ("tau_wmt13", "tau_wmt14", "pearson_seg"):
        lo, hi = a.ci[key]
        assert lo <= getattr(a, key) <= hi and lo < hi
    assert 0.3 < a.tau_wmt13 < 0.8


def test_exclude_systems_and_negation(fixtures):
    human = read_segment_scores(fixtures / "eval" / "human.tsv", negate=True)
    assert human[("A", "1")] == -3.0 and human[("A", "3")] is None
    grid = build_grid(human, read_segment_scores(fixtures / "eval" / "metric.tsv"), exclude_systems=["C"])
    assert grid.systems == ["A", "B"]


def test_bad_score_file_names_line(tmp_path):
    p = tmp_path / "bad.tsv"
    p.write_text("system\tseg_id\tscore\nA\t1\t0.5\nA\t2\tgood\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.tsv:3: score 'good' is not a number"):
        read_segment_scores(p)
    p.write_text("A\t1\t0.5\nA\t1\t0.7\n", encoding="utf-8")
    with pytest.raises(InputError, match=r":2: duplicate"):
        read_segment_scores(p)
    p.write_text("A 1 0.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected system<TAB>seg_id<TAB>score"):
        read_segment_scores(p)


def test_unjudged_segments_do_not_change_confidence_intervals():
    rng = np.random.default_rng(1)
    human, metric = {}, {}
    for g in range(30):
        for s in "ABC":
            human[(s, str(g))] = float(rng.normal())
            metric[(s, str(g))] = human[(s, str(g))] + float(rng.normal())
    padded = dict(human) | {(s, f"x{g}"): None for g in range(10) for s in "ABC"}  # rows with None scores
    a = meta_evaluate(build_grid(human, metric), "m", n_bootstrap=100, seed=3)
    b = meta_evaluate(build_grid(padded, metric), "m", n_bootstrap=100, seed=3)
    assert a.ci == b.ci and a.tau_wmt13 == b.tau_wmt13


def test_system_correlation_uses_common_systems():
    human = {"A": 3.0, "B": 2.0, "C": 1.0, "D": 0.0}
    metric = {"A": 30.0, "B": 10.0, "C": 20.0, "E": 5.0}  # D and E are not in both
    res = system_correlation(human, metric)
    assert res["n_systems"] == 3
    assert res["kendall"] == pytest.approx(1 / 3)  # pairs AB, AC concordant, BC discordant
    assert res["pearson"] == pytest.approx(sps.pearsonr([30, 10, 20], [3, 2, 1])[0])
