"""Seeded paired bootstrap resampling over sentences (Koehn 2004), for every metric, from statistics.

A resample draws n sentence indices with replacement; its score is the metric's score of the summed
statistics of those sentences (`Metric.scores_from_totals`), so resampling never tokenizes or
matches again. The same resampled indices serve every system, which is what makes the test paired.

Conventions are sacrebleu's paired bootstrap, so the columns of one table mean the same thing for
every metric and BLEU/chrF numbers equal sacrebleu's: indices from numpy
``default_rng(seed).choice``, the mean and 95% half-width from `sacrebleu.significance.estimate_ci`,
and a p-value for "the system differs from the baseline" from the shifted absolute differences:
``p = (1 + #{|d_b| - mean|d| >= |d_obs|}) / (B + 1)``. We count ``>=`` where sacrebleu 2.x counts
``>``: the two agree except on exact ties, where ``>`` calls a system compared with an identical copy
of itself significantly different (p = 1/(B+1)); ours gives p = 1.

Undefined scores (`mwemt.evaluate.base`: e.g. the MWE score of sentences without MWEs) are NaN. A
resample whose score is undefined is left out of the mean and interval, and of the test where the
baseline's or the system's is (a rare resample of a test set with few MWEs). A score undefined on
the whole test set has no mean, interval or p-value: they are None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from sacrebleu.significance import estimate_ci

from mwemt.evaluate.base import SentenceStats, column_sums, defined

DEFAULT_SAMPLES = 1000
# the least resamples worth asking for: fewer give no 95% interval and no p-value below 0.05 ((1 + k) / (1 + N))
MIN_SAMPLES = 20
MIN_SAMPLES_WHY = f"fewer than {MIN_SAMPLES} resamples give no 95% interval and no p-value below 0.05"
# the most: checked before any work (a count of 10**20 overflowed deep in numpy); more than this refine an
# interval or a p-value below the precision they are printed with
MAX_SAMPLES = 100_000
RESAMPLES_WHY = f"{MIN_SAMPLES_WHY}; more than {MAX_SAMPLES:,} refine them below their printed precision"
DEFAULT_SEED = 12345  # sacrebleu's default, so our resamples match its resamples
_CHUNK_VALUES = 1 << 22  # resampled statistics summed at once (bounds the memory of one step)


class ScoresFromTotals(Protocol):
    """What the bootstrap needs of a metric: scores of summed statistics (`mwemt.evaluate.base.Metric`)."""

    def score_from_totals(self, totals: np.ndarray) -> float: ...

    def scores_from_totals(self, totals: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class BootstrapSettings:
    """How many resamples, and the seed of the generator that draws them."""

    samples: int = DEFAULT_SAMPLES
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"the number of bootstrap samples must be at least 1, not {self.samples}")


@dataclass(frozen=True)
class BootstrapResult:
    """One system's score with its bootstrap mean, 95% CI half-width and p-value vs the baseline;
    all None where the score is undefined."""

    score: float | None
    mean: float | None
    ci: float | None
    p_value: float | None = None


def resample_indices(n: int, n_samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(n_samples, n) sentence indices drawn with replacement."""
    if n <= 0:
        raise ValueError("cannot resample an empty test set")
    rng = np.random.default_rng(seed)
    return rng.choice(n, size=(n_samples, n), replace=True)


def resampled_totals(rows: np.ndarray, idxs: np.ndarray) -> np.ndarray:
    """(n_samples, columns): the column sums of every resample, summed as the corpus totals are
    (`mwemt.evaluate.base.column_sums`), in chunks to bound memory."""
    n_samples, n = idxs.shape
    columns = np.ascontiguousarray(rows.T)
    step = max(1, _CHUNK_VALUES // max(1, n * rows.shape[1]))
    return np.concatenate([columns[:, idxs[i:i + step]].sum(axis=-1).T for i in range(0, n_samples, step)])


def resampled_scores(metric: ScoresFromTotals, rows: np.ndarray, idxs: np.ndarray) -> np.ndarray:
    """The metric's score of every resample."""
    return metric.scores_from_totals(resampled_totals(rows, idxs))


def bootstrap_p_value(sys_scores: np.ndarray, base_scores: np.ndarray, observed_diff: float) -> float:
    """Share of resamples whose shifted absolute difference reaches the observed one (+1 smoothed)."""
    diffs = np.abs(sys_scores - base_scores)
    centered = diffs - diffs.mean()
    return float((np.sum(centered >= abs(observed_diff)) + 1) / (len(diffs) + 1))


def paired_bootstrap(metric: ScoresFromTotals, stats: Sequence[SentenceStats | np.ndarray],
                     settings: BootstrapSettings = BootstrapSettings()) -> list[BootstrapResult]:
    """Paired test of every system against the first (the baseline).

    ``stats[k]`` is system k's `SentenceStats` (or its rows, shape (sentences, columns)); the
    baseline gets no p-value, nor does an undefined score. A system identical to the baseline gets p = 1.
    """
    if not stats:
        return []
    rows = [s.rows if isinstance(s, SentenceStats) else np.asarray(s) for s in stats]
    shape = rows[0].shape
    for k, r in enumerate(rows):
        if r.ndim != 2 or r.shape != shape:
            raise ValueError(f"system {k + 1}: statistics of shape {r.shape}, expected {shape}")
    idxs = resample_indices(shape[0], settings.samples, settings.seed)
    results: list[BootstrapResult] = []
    base_samples, base_score = None, None
    for k, r in enumerate(rows):
        score = defined(metric.score_from_totals(column_sums(r)))
        samples = resampled_scores(metric, r, idxs)
        finite = ~np.isnan(samples)
        mean = ci = p = None
        if score is not None and finite.any():
            mean, ci = (float(x) for x in estimate_ci(samples[finite]))
        if k == 0:
            base_samples, base_score = samples, score
        elif score is not None and base_score is not None:
            both = finite & ~np.isnan(base_samples)
            if both.any():
                p = bootstrap_p_value(samples[both], base_samples[both], score - base_score)
        results.append(BootstrapResult(score, mean, ci, p))
    return results
