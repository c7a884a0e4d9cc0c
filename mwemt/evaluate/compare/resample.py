"""Paired bootstrap of ratios over buckets (hit rates of MWE buckets, word F-measures), from
per-sentence counts.

A comparison report tests many small quantities at once: every bucket of every dimension, for
every system. Each is a ratio of two sums of per-sentence counts (MWE hits / MWEs in the bucket;
2 x matched words / (reference + hypothesis words)), so, as for the corpus metrics
(`mwemt.evaluate.bootstrap`), a resample's value is the ratio of its summed counts and the
sentences are what is resampled: MWEs of one sentence stay together and every system sees the
same resamples (the test is paired).

The resamples are the very index draws of `mwemt.evaluate.bootstrap.resample_indices` (same
seed, same sentences as the aggregate scores). They are turned into a (resamples x sentences)
matrix of how often each sentence was drawn, so the counts of every resample and bucket are one
matrix product; the counts are whole numbers, so the sums are exact in float64.

Intervals are the percentile intervals sacrebleu's `estimate_ci` takes (the n//40-th lowest and
highest resampled values), kept as [lo, hi] rather than a half-width because rates near 0 or 100
have lopsided intervals. The p-value is `mwemt.evaluate.bootstrap.bootstrap_p_value`'s. A
resample in which a bucket is empty gives that bucket no value and is left out of its interval
and test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mwemt.evaluate.bootstrap import BootstrapSettings, bootstrap_p_value, resample_indices


def resample_weights(n: int, settings: BootstrapSettings) -> np.ndarray:
    """(resamples, n): how often each sentence is drawn in each resample."""
    idxs = resample_indices(n, settings.samples, settings.seed)
    flat = idxs + (np.arange(idxs.shape[0], dtype=np.int64)[:, None] * n)
    return np.bincount(flat.ravel(), minlength=idxs.shape[0] * n).reshape(idxs.shape[0], n).astype(np.float64)


@dataclass
class RatioEstimate:
    """One system over K buckets: the value, the percentile interval and the p-value against the
    baseline (None for the baseline). NaN where the bucket is empty."""

    value: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    p_value: np.ndarray | None = None


def _ratio(num: np.ndarray, den: np.ndarray, scale: float) -> np.ndarray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(scale * num, den, out=out, where=den > 0)
    return out


def percentile_interval(samples: np.ndarray) -> tuple[float, float]:
    """sacrebleu's 95% interval of resampled values (NaNs left out; NaN, NaN when none is left)."""
    values = np.sort(samples[~np.isnan(samples)])
    if not len(values):
        return math.nan, math.nan
    k = len(values) // 40
    return float(values[k]), float(values[len(values) - k - 1])



def paired_ratio_bootstrap(nums: Sequence[np.ndarray], dens: Sequence[np.ndarray], weights: np.ndarray,
                           scale: float = 100.0) -> list[RatioEstimate]:
    """Every system's ``scale * sum(num) / sum(den)`` per bucket, with intervals and paired tests.

    ``nums[k]`` and ``dens[k]`` are system k's (sentences, buckets) counts (a denominator shared by
    all systems may be the same array); system 0 is the baseline. ``weights`` comes from
    `resample_weights`.
    """
    out: list[RatioEstimate] = []
    base_samples = base_value = None
    for k, (num, den) in enumerate(zip(nums, dens)):
        value = _ratio(num.sum(axis=0), den.sum(axis=0), scale)
        samples = _ratio(weights @ num, weights @ den, scale)           # (resamples, buckets)
        bounds = [percentile_interval(samples[:, b]) for b in range(samples.shape[1])]
        lo = np.array([b[0] for b in bounds])
        hi = np.array([b[1] for b in bounds])
        p = None
        if k == 0:
            base_samples, base_value = samples, value
        else:
            p = np.full(len(value), np.nan)
            for b in range(len(value)):
                ok = ~np.isnan(samples[:, b]) & ~np.isnan(base_samples[:, b])
                if ok.any() and not np.isnan(value[b]) and not np.isnan(base_value[b]):
                    p[b] = bootstrap_p_value(samples[ok, b], base_samples[ok, b], value[b] - base_value[b])
        out.append(RatioEstimate(value, lo, hi, p))
    return out
