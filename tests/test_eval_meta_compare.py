"""Paired comparison of metrics: differences, paired bootstrap CIs, permutation p-values, clusters."""

from __future__ import annotations

import numpy as np
import pytest

from mwemt.evaluate.meta_compare import (
    compare_metrics,
    permutation_masks,
    permutation_p_values,
    significance_clusters,
    stack_grids,
)
from mwemt.evaluate.meta_eval import STATISTIC_KEYS, build_grid


def _grids(human_rows, **metrics):
    systems = "ABCDEFGH"[:len(human_rows[0])]
    human = {(s, str(g)): v for g, row in enumerate(human_rows) for s, v in zip(systems, row)}
    return {name: build_grid(human, {(s, str(g)): v for g, row in enumerate(rows) for s, v in zip(systems, row)})
            for name, rows in metrics.items()}


def test_permutation_p_value_by_hand():
    # A ranks both segments as the humans do (tau13 = 1), B reverses both (tau13 = -1): observed A - B = 2.
    # Swapping neither segment gives +2, swapping both -2, swapping one gives A' and B' one right and one
    # reversed segment each: 0. So |d| >= 2 in half of the permutations and p -> 1/2.
    human = [[3, 2, 1], [1, 2, 3]]
    grids = _grids(human, A=human, B=[[1, 2, 3], [3, 2, 1]])
    swaps = permutation_masks(2, 4000, seed=7)
    p = permutation_p_values(grids["A"], grids["B"], swaps)
    assert p["tau_wmt13"] == pytest.approx(0.5, abs=0.03)


def test_a_copy_is_not_different():
    rng = np.random.default_rng(2)
    human = rng.normal(size=(40, 4)).tolist()
    metric = (np.array(human) + rng.normal(size=(40, 4))).tolist()
    res = compare_metrics(_grids(human, A=metric, B=metric), n_bootstrap=200, n_permutations=200, seed=1)
    assert len(res.pairs) == len(STATISTIC_KEYS)
    for pair in res.pairs:
        assert pair.delta == 0.0 and pair.ci == (0.0, 0.0)
        assert pair.p_value == 1.0, pair.statistic
    assert set(res.clusters["acc_eq"].values()) == {1}


def test_a_better_metric_wins_with_a_ci_that_excludes_zero():
    rng = np.random.default_rng(3)
    human = rng.normal(size=(80, 5))
    good = human + rng.normal(0, 0.3, size=human.shape)
    bad = human + rng.normal(0, 3.0, size=human.shape)
    grids = _grids(human.tolist(), good=good.tolist(), bad=bad.tolist(), noise=rng.normal(size=human.shape).tolist())
    res = compare_metrics(grids, n_bootstrap=300, n_permutations=300, seed=5)
    by = {(p.a, p.b, p.statistic): p for p in res.pairs}
    for key in ("tau_wmt13", "acc_eq", "pearson_seg", "kendall_item"):
        p = by[("good", "bad", key)]
        assert p.delta > 0 and p.ci[0] > 0 and p.p_value < 0.01, key
        assert p.ci[0] <= p.delta <= p.ci[1]
    assert res.clusters["tau_wmt13"] == {"good": 1, "bad": 2, "noise": 3}
    # --compare: one pair only, no clusters
    one = compare_metrics(grids, n_bootstrap=50, n_permutations=50, seed=5, pairs=[("bad", "good")])
    assert {(p.a, p.b) for p in one.pairs} == {("bad", "good")} and not one.clusters


def test_significance_clusters_by_hand():
    values = {"a": .5, "b": .4, "c": .3, "d": .2, "e": float("nan")}
    p = {("a", "b"): .2, ("a", "c"): .01, ("a", "d"): .3, ("c", "d"): .5}
    # rank 1: a and every metric not significantly worse than a (b, d); rank 2: c, the best of the rest
    ranks = significance_clusters(values, lambda x, y: p.get((x, y), p.get((y, x))))
    assert ranks == {"a": 1, "b": 1, "d": 1, "c": 2, "e": 3}


def test_stacking_needs_the_same_axes():
    a = _grids([[1, 2]], A=[[1, 2]])["A"]
    b = _grids([[1, 2], [2, 1]], B=[[1, 2], [2, 1]])["B"]
    with pytest.raises(ValueError, match="same human scores"):
        stack_grids(a, b)
