"""Paired comparison of metrics: is metric A better than metric B at agreeing with the humans?

Why paired: two metrics are judged on the same translations, so their statistics move together
from one sample of segments to the next. Separate confidence intervals that overlap say nothing
about the difference; a paired test does (Deutsch, Dror & Roth 2021 discuss both tests below for
metric meta-evaluation).

For every pair (A, B) and every statistic of `mwemt.evaluate.meta_eval`:

- the difference stat(A) - stat(B), with a 95% percentile interval from a paired bootstrap: each
  resample draws segments (with all their items) once and computes both metrics' statistics on
  the same draw, from the same weights the per-metric intervals use;
- a two-sided permutation p-value: under the null hypothesis that A and B are exchangeable, each
  segment's scores are swapped between the two metrics with probability 1/2 (all its systems at
  once, so rankings within a segment stay intact); p = (1 + #{|d_perm| >= |d_obs|}) / (1 + K).
  Scores are z-normalized per metric first (over all judged items), so swapping compares like with
  like; every statistic here is unchanged by that normalization, and acc-eq re-calibrates its
  epsilon on every permutation;
- significance clusters per statistic: rank 1 holds the best metric and every metric not
  significantly worse than it (permutation p >= alpha); rank 2 the best of the rest and those not
  significantly worse than that one; and so on.

A permutation is computed on a *stacked* grid: A's segments followed by B's. A weighting that picks
A's copy of some segments and B's copy of the others is exactly a permuted metric, so the same
`Statistic.values` code computes observed values, resamples and permutations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations

import numpy as np
from tqdm import tqdm

from mwemt.evaluate.bootstrap import DEFAULT_SEED
from mwemt.evaluate.meta_eval import (
    STATISTICS,
    MetaEvalResult,
    ScoreGrid,
    Statistic,
    bootstrap_weights,
    meta_evaluate,
    percentile_ci,
)

ALPHA = 0.05


@dataclass
class PairedComparison:
    """One statistic, metric A minus metric B."""

    statistic: str
    a: str
    b: str
    a_value: float
    b_value: float
    delta: float
    ci: tuple[float, float]
    p_value: float | None


@dataclass
class MetaComparison:
    """Per-metric results, every paired comparison and the significance clusters."""

    results: list[MetaEvalResult]
    pairs: list[PairedComparison] = field(default_factory=list)
    clusters: dict[str, dict[str, int]] = field(default_factory=dict)  # statistic -> metric -> rank
    settings: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"results": [r.as_dict() for r in self.results], "paired": [asdict(p) for p in self.pairs],
                "clusters": self.clusters, "settings": self.settings}


def _zscore(grid: ScoreGrid) -> np.ndarray:
    values = grid.metric[grid.valid]
    if not len(values):
        return grid.metric
    sd = float(values.std())
    return (grid.metric - float(values.mean())) / (sd if sd > 0 else 1.0)


def stack_grids(a: ScoreGrid, b: ScoreGrid) -> ScoreGrid:
    """A's segments then B's, each metric z-normalized; both grids must share their axes."""
    if a.segments != b.segments or a.systems != b.systems:
        raise ValueError("paired comparison needs grids built over the same human scores")
    return ScoreGrid(a.segments + a.segments, a.systems, np.vstack([a.human, b.human]),
                     np.vstack([_zscore(a), _zscore(b)]))


def permutation_masks(n_segments: int, n_permutations: int, seed: int) -> np.ndarray:
    """(K, segments) booleans: True = swap that segment's scores between the two metrics."""
    return np.random.default_rng(seed).random((n_permutations, n_segments)) < 0.5


def permutation_p_values(a: ScoreGrid, b: ScoreGrid, swaps: np.ndarray,
                         statistics: Sequence[Statistic] = STATISTICS) -> dict[str, float]:
    """Two-sided permutation p-value of stat(A) - stat(B) for each statistic (module docstring)."""
    stacked = stack_grids(a, b)
    keep = np.ones((1, len(a.segments)))
    observed_w = (np.hstack([keep, 0 * keep]), np.hstack([0 * keep, keep]))
    swapped = swaps.astype(np.float64)
    perm_a = np.hstack([1.0 - swapped, swapped])
    perm_b = np.hstack([swapped, 1.0 - swapped])
    out: dict[str, float] = {}
    for stat in statistics:
        prepared = stat.prepare(stacked)
        observed = float(stat.values(prepared, observed_w[0])[0] - stat.values(prepared, observed_w[1])[0])
        if np.isnan(observed):
            out[stat.key] = float("nan")
            continue
        diffs = stat.values(prepared, perm_a) - stat.values(prepared, perm_b)
        diffs = diffs[~np.isnan(diffs)]
        out[stat.key] = float((1 + np.sum(np.abs(diffs) >= abs(observed) - 1e-12)) / (1 + len(diffs)))
    return out


def significance_clusters(values: Mapping[str, float], p_value) -> dict[str, int]:
    """Rank per metric: the best remaining metric and all metrics not significantly worse than it
    (``p_value(a, b)`` >= ALPHA) share a rank; repeat with the rest. NaN values rank last together."""
    remaining = sorted((m for m in values if not np.isnan(values[m])), key=lambda m: -values[m])
    ranks: dict[str, int] = {}
    rank = 0
    while remaining:
        rank += 1
        leader = remaining[0]
        cluster = [m for m in remaining if m == leader or not (p_value(leader, m) < ALPHA)]
        for m in cluster:
            ranks[m] = rank
        remaining = [m for m in remaining if m not in cluster]
    for m in values:
        ranks.setdefault(m, rank + 1)
    return ranks


def compare_metrics(grids: Mapping[str, ScoreGrid], *, n_bootstrap: int = 1000, n_permutations: int = 1000,
                    seed: int = DEFAULT_SEED, pairs: Sequence[tuple[str, str]] | None = None,
                    statistics: Sequence[Statistic] = STATISTICS, progress: bool = False) -> MetaComparison:
    """Meta-evaluate every metric and compare ``pairs`` of them (default: every pair, in the
    order given). All grids must be built over the same human scores (`build_grid`)."""
    names = list(grids)
    first = grids[names[0]]
    weights = bootstrap_weights(first, n_bootstrap, seed) if n_bootstrap > 0 else None
    results = [meta_evaluate(grids[n], n, n_bootstrap=n_bootstrap, weights=weights, seed=seed) for n in names]
    by_name = {r.metric: r for r in results}
    samples = {r.metric: r.samples for r in results if r.samples}
    every_pair = list(combinations(names, 2))
    todo = list(pairs) if pairs is not None else every_pair
    swaps = permutation_masks(len(first.segments), n_permutations, seed) if n_permutations > 0 else None
    p_values = {}
    for a, b in tqdm(todo, desc="permutation tests", unit="pair", disable=not progress or swaps is None, leave=False):
        p_values[(a, b)] = (permutation_p_values(grids[a], grids[b], swaps, statistics) if swaps is not None
                            else {s.key: float("nan") for s in statistics})
    comparison = MetaComparison(results, settings={
        "bootstrap": {"resamples": n_bootstrap, "seed": seed, "unit": "segment", "interval": "95% percentile"},
        "permutation": {"permutations": n_permutations, "seed": seed, "unit": "segment",
                        "scores": "z-normalized per metric", "alpha": ALPHA}})
    for a, b in todo:
        for stat in statistics:
            va, vb = by_name[a].values[stat.key], by_name[b].values[stat.key]
            ci = (percentile_ci(samples[a][stat.key] - samples[b][stat.key]) if samples
                  else (float("nan"), float("nan")))
            p = p_values[(a, b)][stat.key]
            comparison.pairs.append(PairedComparison(stat.key, a, b, va, vb, va - vb, ci,
                                                     None if np.isnan(p) else p))
    if swaps is not None and pairs is None and len(names) > 1:  # clusters need every pair
        comparison.clusters = {
            s.key: significance_clusters({n: by_name[n].values[s.key] for n in names},
                                         lambda x, y, k=s.key: p_values.get((x, y), p_values.get((y, x)))[k])
            for s in statistics}
    return comparison
