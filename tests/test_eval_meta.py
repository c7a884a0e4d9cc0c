"""Meta-evaluation statistics on hand-made rankings (counts worked out in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from mwemt.errors import InputError
from mwemt.evaluate.meta_eval import (
    STATISTICS,
    bootstrap_weights,
    build_grid,
    coverage,
    kendall_wmt13,
    kendall_wmt14,
    meta_evaluate,
    pair_counts,
    read_segment_scores,
    statistic,
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
    assert res["tau_wmt13"] == pytest.approx((4 - 1) / (4 + 1))
    assert res["tau_wmt14"] == pytest.approx((4 - 1) / (4 + 1 + 1))
    assert res.n_items == 8 and res.n_segments == 3 and res.n_systems == 3


def test_pearson_and_system_level_by_hand(fixtures):
    res = meta_evaluate(_fixture_grid(fixtures), "m", n_bootstrap=0)
    human = [3, 2, 1, 1, 2, 2, 1, 2]  # A3 is missing, so A's metric .7 is not used
    metric = [.9, .5, .5, .2, .1, .3, .1, .6]
    assert res["pearson_seg"] == pytest.approx(sps.pearsonr(metric, human)[0])
    h_sys = [2.0, 5 / 3, 5 / 3]  # A, B, C means over their judged items
    m_sys = [(.9 + .2) / 2, (.5 + .1 + .1) / 3, (.5 + .3 + .6) / 3]
    assert res["pearson_sys"] == pytest.approx(sps.pearsonr(m_sys, h_sys)[0])
    assert res["kendall_sys"] == pytest.approx(sps.kendalltau(m_sys, h_sys)[0])


def test_kendall_variants_on_perfect_and_reversed_rankings():
    segs = [str(i) for i in range(4)]
    human = {(s, g): float(k) for g in segs for k, s in enumerate("ABCD")}
    same = {k: 10 * v for k, v in human.items()}
    reverse = {k: -v for k, v in human.items()}
    flat = {k: 1.0 for k in human}
    assert meta_evaluate(build_grid(human, same), "same", n_bootstrap=0)["tau_wmt14"] == 1.0
    r = meta_evaluate(build_grid(human, reverse), "rev", n_bootstrap=0)
    assert r["tau_wmt13"] == -1.0 and r["tau_wmt14"] == -1.0
    f = meta_evaluate(build_grid(human, flat), "flat", n_bootstrap=0)
    # a metric that ties everything: no pair for WMT13, zero for WMT14
    assert np.isnan(f["tau_wmt13"]) and f["tau_wmt14"] == 0.0 and f.metric_ties == 4 * 6


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
        assert lo <= a[key] <= hi and lo < hi
    assert 0.3 < a["tau_wmt13"] < 0.8


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
    assert a.values == pytest.approx(b.values)
    assert {k: pytest.approx(v) for k, v in a.ci.items()} == b.ci


def test_system_correlation_uses_common_systems():
    human = {"A": 3.0, "B": 2.0, "C": 1.0, "D": 0.0}
    metric = {"A": 30.0, "B": 10.0, "C": 20.0, "E": 5.0}  # D and E are not in both
    res = system_correlation(human, metric)
    assert res["n_systems"] == 3
    assert res["kendall"] == pytest.approx(1 / 3)  # pairs AB, AC concordant, BC discordant
    assert res["pearson"] == pytest.approx(sps.pearsonr([30, 10, 20], [3, 2, 1])[0])


# ---------------------------------------------------------------- WMT-task statistics, worked by hand


def _grid(human_rows, metric_rows, systems="ABC"):
    """Segments as rows of per-system scores (None = missing)."""
    human = {(s, str(g + 1)): v for g, row in enumerate(human_rows) for s, v in zip(systems, row)}
    metric = {(s, str(g + 1)): v for g, row in enumerate(metric_rows) for s, v in zip(systems, row)}
    return build_grid(human, metric)


def test_acc_eq_with_tie_calibration_by_hand():
    # segment 1: humans tie A and B (0, 0) above C (-5); metric A .80, B .78, C .30
    #   AB human tie, metric gap .02: right once eps >= .02; AC (gap .50) and BC (gap .48) right below their gap
    # segment 2: humans B = C (0) above A (-1); metric A .50, B .51, C .90
    #   AB right while eps < .01; AC (gap .40) right while eps < .40; BC human tie, right once eps >= .39
    # accuracy per segment (right / 3 pairs), averaged over the 2 segments:
    #   eps 0: (2/3 + 2/3) / 2 = 2/3;  .01: (2/3 + 1/3) / 2 = 1/2;  .02: (1 + 1/3) / 2 = 2/3
    #   .39: (1 + 2/3) / 2 = 5/6  <- the best;  .40: (1 + 1/3) / 2 = 2/3;  .48: (2/3 + 1/3) / 2 = 1/2
    grid = _grid([[0, 0, -5], [-1, 0, 0]], [[.80, .78, .30], [.50, .51, .90]])
    acc = statistic("acc_eq")
    prepared = acc.prepare(grid)
    values, eps = acc.values_and_epsilon(prepared, np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 1.0]]))
    # alone, segment 1 is all right at eps .02; segment 2 at best 2/3, already at eps 0 (the smallest wins)
    assert values == pytest.approx([5 / 6, 1.0, 2 / 3])
    assert eps == pytest.approx([.39, .02, 0.0])
    res = meta_evaluate(grid, "m", n_bootstrap=0)
    assert res["acc_eq"] == pytest.approx(5 / 6) and res.acc_eq_epsilon == pytest.approx(.39)
    # a metric tying every pair is right on the human ties only: 1 of 3 pairs in each segment
    assert res.acc_eq_all_ties == pytest.approx(1 / 3)
    assert meta_evaluate(_grid([[0, 0, -5], [-1, 0, 0]], [[1, 1, 1], [2, 2, 2]]), "c", n_bootstrap=0)["acc_eq"] \
        == pytest.approx(1 / 3)


def test_acc_eq_on_the_fixture_by_hand(fixtures):
    # segment 1: AB right, AC right, BC metric tie (.5 = .5) but humans B > C: wrong   -> 2/3
    # segment 2: AB wrong (humans B > A, metric A > B), AC right, BC human tie, metric gap .2 -> 1/3 at eps 0
    # segment 3: only B and C judged: right -> 1/1. eps 0: (2/3 + 1/3 + 1) / 3 = 2/3; eps .1 loses AC of
    # segment 2 (5/9); eps .2 wins BC back (2/3 again); larger eps only lose: 2/3 at the smallest eps, 0
    res = meta_evaluate(_fixture_grid(fixtures), "m", n_bootstrap=0)
    assert res["acc_eq"] == pytest.approx(2 / 3) and res.acc_eq_epsilon == 0.0


def test_system_pairwise_accuracy_by_hand(fixtures):
    # system means: human A 2, B 5/3, C 5/3 (B and C tied); metric A .55, B .233, C .467
    # AB right, AC right, BC: humans tie, the metric does not: wrong -> 2/3 (Kocmi et al. 2021)
    res = meta_evaluate(_fixture_grid(fixtures), "m", n_bootstrap=0)
    assert res["pairwise_acc_sys"] == pytest.approx(2 / 3)
    flipped = _grid([[3, 2, 1]], [[1, 2, 3]])  # every pair reversed
    assert meta_evaluate(flipped, "m", n_bootstrap=0)["pairwise_acc_sys"] == 0.0


def test_correlations_grouped_by_item_by_hand(fixtures):
    # Pearson per segment: 1: metric (.9, .5, .5) vs human (3, 2, 1): centred (4, -2, -2)/15 and (1, 0, -1),
    #   r = (6/15) / sqrt(24/225 * 2) = sqrt(3)/2;  2: (.2, .1, .3) vs (1, 2, 2): covariance 0, r = 0;
    #   3: two items (B, C), same order: r = 1
    # Kendall tau-b per segment: 1: S = 2 concordant, n0 = 3 pairs, one metric tie: 2 / sqrt(2 * 3);
    #   2: one concordant, one discordant, one human tie: 0 / sqrt(3 * 2) = 0;  3: 1
    res = meta_evaluate(_fixture_grid(fixtures), "m", n_bootstrap=0)
    assert res["pearson_item"] == pytest.approx((math.sqrt(3) / 2 + 0 + 1) / 3)
    assert res["kendall_item"] == pytest.approx((2 / math.sqrt(6) + 0 + 1) / 3)
    assert res.segments_defined == {"pearson_item": 3, "kendall_item": 3}
    # a segment where the humans tie every system has no correlation and is left out of the mean
    grid = _grid([[3, 2, 1], [0, 0, 0]], [[3, 2, 1], [1, 2, 3]])
    res = meta_evaluate(grid, "m", n_bootstrap=0)
    assert res["pearson_item"] == pytest.approx(1.0) and res["kendall_item"] == pytest.approx(1.0)
    assert res.segments_defined == {"pearson_item": 1, "kendall_item": 1}


def test_statistics_of_weights_equal_statistics_of_repeated_segments():
    # a bootstrap weight of 2 is the same as the segment appearing twice
    rng = np.random.default_rng(4)
    h, m = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    grid = _grid(h.tolist(), m.tolist(), systems="ABCDE")
    doubled = _grid([*h.tolist(), h[0].tolist()], [*m.tolist(), m[0].tolist()], systems="ABCDE")
    w = np.array([[2.0, 1, 1, 1]])
    for s in STATISTICS:
        got = s.values(s.prepare(grid), w)[0]
        want = s.values(s.prepare(doubled), np.ones((1, 5)))[0]
        assert got == pytest.approx(want), s.key


def test_bootstrap_weights_draw_only_judged_segments():
    grid = _grid([[1, 2, 3], [None, None, None], [3, 1, 2]], [[1, 2, 3], [1, 2, 3], [3, 2, 1]])
    w = bootstrap_weights(grid, 50, seed=1)
    assert w.shape == (50, 3) and (w[:, 1] == 0).all() and (w.sum(axis=1) == 2).all()


def test_coverage_names_missing_items():
    human = {(s, str(g)): 1.0 for s in "AB" for g in range(1, 101)} | {("ref", "1"): 0.0}
    metric = {(s, str(g)): 0.5 for s in "AB" for g in range(1, 91)} | {("A", "x1"): 0.1}
    cov = coverage(human, metric, exclude_systems=["ref"])
    assert cov.judged == 200 and len(cov.missing) == 20 and cov.noticeable
    text = cov.describe("m.tsv", "h.tsv")
    assert "no row for 20 of the 200 items" in text and "10 judged segment ids without a row, e.g. 91, 92" in text
    assert "1 segment ids the human file does not judge, e.g. x1" in text
    cov = coverage(human, metric)
    assert cov.missing_systems == ["ref"]
    nearly = {k: 0.5 for k in human if k != ("A", "7") and k[0] != "ref"}
    assert not coverage(human, nearly, exclude_systems=["ref"]).noticeable  # 1 of 200 items: 0.5%
