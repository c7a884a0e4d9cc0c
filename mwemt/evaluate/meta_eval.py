"""Meta-evaluation: how well metric scores agree with human judgments, with the statistics of the
WMT metrics tasks, each with a bootstrap confidence interval.

Scores live in a grid of *segments* (the "items" of Deutsch et al. 2023: one source sentence) by
*systems*; a cell holds one system's translation of one segment with a human and a metric score,
both oriented so that higher is better (error scores such as MQM negated first). Two scores are
tied when they differ by at most ``TIE_TOL``.

Segment level, pairs = two systems' translations of the same segment (human ties left out of tau):

- ``tau_wmt13``, ``tau_wmt14``: Kendall-like tau over all such pairs (as the WMT relative-ranking
  evaluations): concordant C, discordant D, metric-tied T; WMT13 (C - D) / (C + D), WMT14
  (C - D) / (C + D + T) (Macháček & Bojar 2013, 2014), which penalizes a metric that cannot
  separate translations.
- ``acc_eq``: pairwise accuracy with ties (Deutsch, Foster & Freitag 2023), grouped by item: within
  a segment, a pair is right when the metric orders it as the humans do, or ties it when the humans
  tie it; the segment's accuracy is (right pairs) / (all pairs), and acc-eq the mean over segments.
  *Tie calibration*: the metric's ties are the pairs whose scores differ by at most epsilon, the
  epsilon that maximizes acc-eq (one for all segments; 0 = exact ties only). So a metric that never
  ties is not penalized against MQM, which ties often. The bootstrap re-calibrates epsilon on every
  resample, because the statistic is the calibrated accuracy.
- ``pearson_seg``: Pearson r over all items, without grouping; ``pearson_item`` and
  ``kendall_item``: Pearson r and Kendall tau-b computed per segment (over its systems) and
  averaged over the segments where they are defined (both sides vary).

System level, from each system's mean human and mean metric score over its judged items:
``pairwise_acc_sys`` (Kocmi et al. 2021): the share of system pairs that the metric orders as the
humans do (a pair the humans tie counts as right only if the metric ties it too);
``pearson_sys``; ``kendall_sys`` (tau-b).

Every statistic is computed from per-segment quantities combined with segment *weights* (how often
a bootstrap resample draws each segment), so a bootstrap resample never re-reads or re-ranks
anything: `Statistic.values` takes a (k, segments) weight matrix and returns k values. Resamples
draw segments (with all their systems' items) from the segments that have a human score, seeded.
Paired comparisons of metrics (`mwemt.evaluate.meta_compare`) use the same statistics.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

from mwemt.evaluate.bootstrap import DEFAULT_SEED, resample_indices
from mwemt.judgements import natural_key, read_score_tsv

TIE_TOL = 1e-9
Key = tuple[str, str]  # (system, segment id)
_CHUNK_VALUES = 1 << 18  # (resamples x pairs) values acc-eq computes at once: small enough for the cache


@dataclass
class ScoreGrid:
    """Human and metric scores as (segments x systems) arrays; NaN where an item is missing."""

    segments: list[str]
    systems: list[str]
    human: np.ndarray
    metric: np.ndarray

    @property
    def valid(self) -> np.ndarray:
        return ~np.isnan(self.human) & ~np.isnan(self.metric)

    @property
    def judged_segments(self) -> np.ndarray:
        """Indices of the segments with at least one human score: what a bootstrap resamples."""
        return np.flatnonzero((~np.isnan(self.human)).any(axis=1))


def build_grid(human: Mapping[Key, float | None], metric: Mapping[Key, float | None],
               exclude_systems: Iterable[str] = ()) -> ScoreGrid:
    """Join human and metric scores on (system, segment); items missing on either side become NaN.

    The axes come from the human scores only, so every metric's grid over the same human scores
    has the same segments and systems in the same order (what paired comparisons rely on).
    """
    excluded = set(exclude_systems)
    keys = [k for k in human if k[0] not in excluded]
    systems = sorted({k[0] for k in keys})
    segments = sorted({k[1] for k in keys}, key=natural_key)
    si = {s: i for i, s in enumerate(systems)}
    gi = {g: i for i, g in enumerate(segments)}
    h = np.full((len(segments), len(systems)), np.nan)
    m = np.full_like(h, np.nan)
    for (sys_, seg), value in human.items():
        if sys_ in excluded or value is None:
            continue
        h[gi[seg], si[sys_]] = value
        mv = metric.get((sys_, seg))
        if mv is not None and not math.isnan(mv):
            m[gi[seg], si[sys_]] = mv
    return ScoreGrid(segments, systems, h, m)


def _sign(x: np.ndarray) -> np.ndarray:
    """-1, 0 or 1, with differences within TIE_TOL counted as 0 (NaN stays NaN-free: 0)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x) <= TIE_TOL, 0, np.sign(np.nan_to_num(x)))


def _pair_mask(ok: np.ndarray) -> np.ndarray:
    """(..., S, S) mask of unordered pairs (upper triangle) of two valid items."""
    n_sys = ok.shape[-1]
    upper = np.triu(np.ones((n_sys, n_sys), dtype=bool), k=1)
    return ok[..., :, None] & ok[..., None, :] & upper


def _differences(x: np.ndarray) -> np.ndarray:
    return x[..., :, None] - x[..., None, :]


# ---------------------------------------------------------------- segment-level pair counts


def pair_counts(grid: ScoreGrid) -> np.ndarray:
    """(n_segments, 3) counts of concordant, discordant and metric-tied pairs (human ties excluded)."""
    both = _pair_mask(grid.valid)
    sh, sm = _sign(_differences(grid.human)), _sign(_differences(grid.metric))
    human_order = both & (sh != 0)
    c = (human_order & (sm != 0) & (sh == sm)).sum(axis=(1, 2))
    d = (human_order & (sm != 0) & (sh != sm)).sum(axis=(1, 2))
    t = (human_order & (sm == 0)).sum(axis=(1, 2))
    return np.stack([c, d, t], axis=1).astype(np.int64)


def human_tie_count(grid: ScoreGrid) -> int:
    both = _pair_mask(grid.valid)
    return int((both & (_sign(_differences(grid.human)) == 0)).sum())


def kendall_wmt13(c: float, d: float, t: float = 0) -> float:
    return (c - d) / (c + d) if c + d else float("nan")


def kendall_wmt14(c: float, d: float, t: float) -> float:
    return (c - d) / (c + d + t) if c + d + t else float("nan")


def _pearson_from_sums(n, sx, sy, sxx, syy, sxy):
    """Pearson r from sums; NaN where a side is constant. Sums leave a constant side a variance of
    rounding error (Σxx - (Σx)²/n of 0.5 repeated is about 1e-15, not 0), which would divide the
    covariance into a huge or infinite r: a variance within 1e-12 of Σxx counts as none."""
    cov = sxy - sx * sy / n
    vx = sxx - sx * sx / n
    vy = syy - sy * sy / n
    flat = (vx <= 1e-12 * np.abs(sxx)) | (vy <= 1e-12 * np.abs(syy))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(flat, np.nan, cov / np.sqrt(vx * vy))


def segment_sums(grid: ScoreGrid) -> np.ndarray:
    """Per-segment (n, Σx, Σy, Σxx, Σyy, Σxy) over valid items, x = metric, y = human."""
    ok = grid.valid
    x = np.where(ok, grid.metric, 0.0)
    y = np.where(ok, grid.human, 0.0)
    return np.stack([ok.sum(1), x.sum(1), y.sum(1), (x * x).sum(1), (y * y).sum(1), (x * y).sum(1)], axis=1)


# ---------------------------------------------------------------- statistics over weighted segments


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.full(np.shape(num), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


class Statistic(ABC):
    """One meta-evaluation statistic: ``prepare`` a grid once, then ``values`` for many weightings.

    ``values(prepared, weights)`` with weights of shape (k, segments) (1 everywhere = the data as
    it is; a bootstrap resample's draw counts; a permutation's 0/1 choice of stacked segments)
    returns k values, NaN where the statistic is undefined.
    """

    key: str
    label: str
    level: str  # "segment" or "system"

    @abstractmethod
    def prepare(self, grid: ScoreGrid) -> Any: ...

    @abstractmethod
    def values(self, prepared: Any, weights: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def why_undefined(self, grid: ScoreGrid) -> str:
        """Why the statistic is undefined (NaN) on ``grid``, in words a user can act on."""


class KendallWmt(Statistic):
    level = "segment"

    def __init__(self, variant: int):
        self.variant = variant
        self.key = f"tau_wmt{variant}"
        self.label = f"tau WMT{variant}"

    def prepare(self, grid):
        return pair_counts(grid).astype(np.float64)

    def values(self, prepared, weights):
        c, d, t = (weights @ prepared).T
        return _ratio(c - d, c + d) if self.variant == 13 else _ratio(c - d, c + d + t)

    def why_undefined(self, grid):
        c, d, t = pair_counts(grid).sum(0)
        if c + d + t == 0:
            return "no segment has two translations the humans rank apart (every pair is a human tie or missing)"
        return f"the metric ties all {t} pairs the humans rank apart (C + D = 0)"


class PearsonNoGrouping(Statistic):
    key, label, level = "pearson_seg", "Pearson", "segment"

    def prepare(self, grid):
        return segment_sums(grid)

    def values(self, prepared, weights):
        s = weights @ prepared
        with np.errstate(invalid="ignore", divide="ignore"):
            r = _pearson_from_sums(*s.T)
        return np.where(s[:, 0] > 2, r, np.nan)

    def why_undefined(self, grid):
        ok = grid.valid
        if ok.sum() <= 2:
            return f"only {int(ok.sum())} items have both a human and a metric score (3 or more needed)"
        return _constant_side(grid.metric[ok], grid.human[ok], "item")


def _per_segment_pearson(grid: ScoreGrid) -> np.ndarray:
    """Pearson r within each segment over its valid items; NaN with < 2 items or a constant side."""
    ok = grid.valid
    n = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(ok, grid.metric, 0).sum(1) / n
        my = np.where(ok, grid.human, 0).sum(1) / n
        xc = np.where(ok, grid.metric - mx[:, None], 0.0)
        yc = np.where(ok, grid.human - my[:, None], 0.0)
        vx, vy = (xc * xc).sum(1), (yc * yc).sum(1)
        r = (xc * yc).sum(1) / np.sqrt(vx * vy)
    flat = (_spread(grid.metric, ok) <= TIE_TOL) | (_spread(grid.human, ok) <= TIE_TOL)
    return np.where((n >= 2) & ~flat, r, np.nan)


def _spread(x: np.ndarray, ok: np.ndarray) -> np.ndarray:
    hi = np.where(ok, x, -np.inf).max(axis=1)
    lo = np.where(ok, x, np.inf).min(axis=1)
    return np.where(ok.any(axis=1), hi - lo, 0.0)


def _tau_b(sx: np.ndarray, sy: np.ndarray, pairs: np.ndarray, axes) -> np.ndarray:
    """Kendall tau-b from sign matrices over the masked pairs; NaN when a side is all ties."""
    s = (sx * sy * pairs).sum(axis=axes)
    n0 = pairs.sum(axis=axes)
    n1 = (pairs & (sx == 0)).sum(axis=axes)
    n2 = (pairs & (sy == 0)).sum(axis=axes)
    return _ratio(s.astype(np.float64), np.sqrt((n0 - n1) * (n0 - n2)).astype(np.float64))


class GroupedByItem(Statistic):
    """The mean over segments of a per-segment correlation (segments where it is defined)."""

    level = "segment"

    def __init__(self, kind: str):
        self.kind = kind
        self.key = f"{kind}_item"
        self.label = f"{'Pearson' if kind == 'pearson' else 'Kendall'} item"

    def prepare(self, grid):
        if self.kind == "pearson":
            per = _per_segment_pearson(grid)
        else:
            pairs = _pair_mask(grid.valid)
            per = _tau_b(_sign(_differences(grid.metric)), _sign(_differences(grid.human)), pairs, (1, 2))
        defined = ~np.isnan(per)
        return np.where(defined, per, 0.0), defined.astype(np.float64)

    def values(self, prepared, weights):
        per, defined = prepared
        return _ratio(weights @ per, weights @ defined)

    def why_undefined(self, grid):
        ok = grid.valid
        several = ok.sum(axis=1) >= 2
        if not several.any():
            return "no segment has two or more systems with both a human and a metric score"
        metric_varies = (_spread(grid.metric, ok) > TIE_TOL) & several
        human_varies = (_spread(grid.human, ok) > TIE_TOL) & several
        if not metric_varies.any():
            return "the metric gives every system the same score within each segment"
        if not human_varies.any():
            return "the humans give every system the same score within each segment"
        return "no segment where both the metric and the human scores vary"


@dataclass(frozen=True)
class _Pairs:
    """Within-segment pairs for acc-eq, sorted by the metric's absolute difference."""

    n_pairs: np.ndarray  # (G,) pairs per segment
    base: np.ndarray  # (G,) share of a segment's pairs right with exact ties only
    segment: np.ndarray  # (P,) segment of each pair with a metric difference > TIE_TOL, sorted ...
    gain: np.ndarray  # ... by that difference: +1 / -1 / 0 when the pair becomes a metric tie
    threshold: np.ndarray  # (P,) the difference
    last: np.ndarray  # positions ending a run of equal differences (the candidate epsilons)


class AccEq(Statistic):
    """Pairwise accuracy with ties, tie-calibrated, grouped by item (module docstring)."""

    key, label, level = "acc_eq", "acc-eq", "segment"

    def prepare(self, grid):
        pairs = _pair_mask(grid.valid)
        dh, dm = _differences(grid.human), _differences(grid.metric)
        sh, sm = _sign(dh), _sign(dm)
        n_pairs = pairs.sum(axis=(1, 2)).astype(np.float64)
        human_tie = sh == 0
        right0 = pairs & np.where(human_tie, sm == 0, (sm != 0) & (sh == sm))
        base = _ratio(right0.sum(axis=(1, 2)).astype(np.float64), n_pairs)
        movable = pairs & (sm != 0)  # pairs that a larger epsilon turns into metric ties
        g, i, j = np.nonzero(movable)
        diff = np.abs(dm[g, i, j])
        gain = np.where(human_tie[g, i, j], 1.0, np.where(sh[g, i, j] == sm[g, i, j], -1.0, 0.0))
        order = np.argsort(diff, kind="stable")
        diff, g, gain = diff[order], g[order], gain[order]
        last = np.flatnonzero(np.append(np.diff(diff) > 0, True)) if len(diff) else np.zeros(0, dtype=np.int64)
        return _Pairs(n_pairs, np.nan_to_num(base), g, gain, diff, last)

    def values(self, prepared, weights):
        return self.values_and_epsilon(prepared, weights)[0]

    def why_undefined(self, grid):
        return "no segment has two systems with both a human and a metric score"

    def values_and_epsilon(self, p: _Pairs, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """acc-eq at the best epsilon of each weighting, and that epsilon (0 = exact ties only)."""
        weights = np.asarray(weights, dtype=np.float64)
        norm = weights @ (p.n_pairs > 0).astype(np.float64)
        acc0 = _ratio(weights @ p.base, norm)
        best, eps = acc0.copy(), np.zeros(len(weights))
        if not len(p.segment):
            return best, eps
        per_pair = p.gain / p.n_pairs[p.segment]
        step = max(1, _CHUNK_VALUES // len(p.segment))
        for lo in range(0, len(weights), step):
            gains = weights[lo:lo + step][:, p.segment]
            gains *= per_pair
            np.cumsum(gains, axis=1, out=gains)
            acc = acc0[lo:lo + step, None] + _ratio(gains[:, p.last], norm[lo:lo + step, None])
            k = np.argmax(acc, axis=1)
            top = acc[np.arange(len(acc)), k]
            better = top > best[lo:lo + step] + 1e-12
            best[lo:lo + step] = np.where(better, top, best[lo:lo + step])
            eps[lo:lo + step] = np.where(better, p.threshold[p.last[k]], 0.0)
        return best, eps


def acc_eq_all_ties(grid: ScoreGrid) -> float:
    """acc-eq of a metric that ties every pair (epsilon above every difference): the mean share of
    human-tied pairs per segment. The floor a calibrated acc-eq is read against: where the humans tie
    most pairs (one MQM rater, many error-free translations), tie calibration may choose it."""
    pairs = _pair_mask(grid.valid)
    n_pairs = pairs.sum(axis=(1, 2)).astype(np.float64)
    ties = (pairs & (_sign(_differences(grid.human)) == 0)).sum(axis=(1, 2)).astype(np.float64)
    has = n_pairs > 0
    return float(np.mean(ties[has] / n_pairs[has])) if has.any() else float("nan")


def _system_sums(grid: ScoreGrid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ok = grid.valid
    return np.where(ok, grid.human, 0.0), np.where(ok, grid.metric, 0.0), ok.astype(np.float64)


def system_means(grid: ScoreGrid, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-system mean human and metric scores over the (weighted) segments' valid items;
    with ``weights`` of shape (k, segments), arrays of shape (k, systems)."""
    hs, ms, n = _system_sums(grid)
    if weights is None:
        return _ratio(hs.sum(0), n.sum(0)), _ratio(ms.sum(0), n.sum(0))
    w = np.asarray(weights, dtype=np.float64)
    count = w @ n
    return _ratio(w @ hs, count), _ratio(w @ ms, count)


def _rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x) & ~np.isnan(y)
    n = ok.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(ok, x, 0).sum(1) / n
        my = np.where(ok, y, 0).sum(1) / n
        xc = np.where(ok, x - mx[:, None], 0.0)
        yc = np.where(ok, y - my[:, None], 0.0)
        r = (xc * yc).sum(1) / np.sqrt((xc * xc).sum(1) * (yc * yc).sum(1))
    return np.where(n >= 3, r, np.nan)


class SystemLevel(Statistic):
    level = "system"
    LABELS = {"pairwise_acc": "pairwise acc", "pearson": "Pearson", "kendall": "Kendall"}

    def __init__(self, kind: str):
        self.kind = kind
        self.key = f"{kind}_sys"
        self.label = self.LABELS[kind]

    def prepare(self, grid):
        return grid

    def values(self, prepared, weights):
        h, m = system_means(prepared, weights)
        if self.kind == "pearson":
            return _rowwise_pearson(m, h)
        ok = ~np.isnan(h) & ~np.isnan(m)
        pairs = _pair_mask(ok)
        sh, sm = _sign(_differences(h)), _sign(_differences(m))
        if self.kind == "kendall":
            tau = _tau_b(sm, sh, pairs, (1, 2))
            return np.where(ok.sum(axis=1) >= 3, tau, np.nan)
        return _ratio((pairs & (sh == sm)).sum(axis=(1, 2)).astype(np.float64), pairs.sum(axis=(1, 2)))

    def why_undefined(self, grid):
        h, m = system_means(grid)
        ok = ~np.isnan(h) & ~np.isnan(m)
        need = 2 if self.kind == "pairwise_acc" else 3
        if ok.sum() < need:
            return f"only {int(ok.sum())} systems have both human and metric scores ({need} or more needed)"
        return _constant_side(m[ok], h[ok], "system", "mean ")


def _constant_side(metric: np.ndarray, human: np.ndarray, unit: str, what: str = "") -> str:
    """Why a correlation over ``unit``s is undefined when there are enough of them: a side is constant."""
    if np.ptp(metric) <= TIE_TOL:
        return f"the metric gives every {unit} the same {what}score ({metric[0]:g}): a constant has no correlation"
    if np.ptp(human) <= TIE_TOL:
        return f"the humans give every {unit} the same {what}score ({human[0]:g}): a constant has no correlation"
    return f"the {unit} scores vary too little to correlate"


STATISTICS: tuple[Statistic, ...] = (
    KendallWmt(13), KendallWmt(14), AccEq(), PearsonNoGrouping(), GroupedByItem("pearson"),
    GroupedByItem("kendall"), SystemLevel("pairwise_acc"), SystemLevel("pearson"), SystemLevel("kendall"),
)
STATISTIC_KEYS = tuple(s.key for s in STATISTICS)


def statistic(key: str) -> Statistic:
    for s in STATISTICS:
        if s.key == key:
            return s
    raise KeyError(key)


# ---------------------------------------------------------------- bootstrap weights


def bootstrap_weights(grid: ScoreGrid, n_bootstrap: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(n_bootstrap, segments) draw counts: each resample draws as many judged segments as there
    are, with replacement (seeded); unjudged segments (no human score) are never drawn."""
    judged = grid.judged_segments
    weights = np.zeros((n_bootstrap, len(grid.segments)))
    if n_bootstrap <= 0 or not len(judged):
        return weights
    idx = judged[resample_indices(len(judged), n_bootstrap, seed)]
    rows = np.repeat(np.arange(n_bootstrap), idx.shape[1])
    np.add.at(weights, (rows, idx.ravel()), 1.0)
    return weights


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    s = np.asarray(samples, dtype=np.float64)
    s = s[~np.isnan(s)]
    if not len(s):
        return (float("nan"), float("nan"))
    lo, hi = np.percentile(s, [50 * (1 - level), 100 - 50 * (1 - level)])
    return (float(lo), float(hi))


# ---------------------------------------------------------------- one metric


@dataclass
class MetaEvalResult:
    """Every statistic of one metric (``values``), with 95% bootstrap intervals (``ci``) and counts."""

    metric: str
    n_segments: int
    n_items: int
    n_systems: int
    concordant: int
    discordant: int
    metric_ties: int
    human_ties: int
    values: dict[str, float] = field(default_factory=dict)
    acc_eq_epsilon: float = 0.0
    acc_eq_all_ties: float = float("nan")  # acc-eq of a metric that ties every pair (`acc_eq_all_ties`)
    segments_defined: dict[str, int] = field(default_factory=dict)
    human_items_without_metric: int = 0
    undefined: dict[str, str] = field(default_factory=dict)  # statistic -> why it is undefined (NaN)
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    bootstrap: dict = field(default_factory=dict)
    samples: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # bootstrap values, not reported

    def __getitem__(self, key: str) -> float:
        return self.values[key]

    def as_dict(self) -> dict:
        out = asdict(self)
        del out["samples"]
        return out


def meta_evaluate(grid: ScoreGrid, metric_name: str, *, n_bootstrap: int = 1000, seed: int = DEFAULT_SEED,
                  weights: np.ndarray | None = None) -> MetaEvalResult:
    """All statistics of one metric against the human scores, with bootstrap CIs over segments.

    ``weights`` (bootstrap draw counts, `bootstrap_weights`) may be passed to share resamples
    across metrics; otherwise they are drawn from ``n_bootstrap`` and ``seed``.
    """
    counts = pair_counts(grid)
    c, d, t = (int(v) for v in counts.sum(0))
    ones = np.ones((1, len(grid.segments)))
    prepared = {s.key: s.prepare(grid) for s in STATISTICS}
    values = {s.key: float(s.values(prepared[s.key], ones)[0]) for s in STATISTICS}
    acc = statistic("acc_eq")
    _, eps = acc.values_and_epsilon(prepared["acc_eq"], ones)  # type: ignore[attr-defined]
    h_sys, _ = system_means(grid)
    ok = grid.valid
    result = MetaEvalResult(
        metric=metric_name, n_segments=int(ok.any(axis=1).sum()), n_items=int(ok.sum()),
        n_systems=int((~np.isnan(h_sys)).sum()), concordant=c, discordant=d, metric_ties=t,
        human_ties=human_tie_count(grid), values=values, acc_eq_epsilon=float(eps[0]),
        acc_eq_all_ties=acc_eq_all_ties(grid),
        segments_defined={k: int(prepared[k][1].sum()) for k in ("pearson_item", "kendall_item")},
        human_items_without_metric=int((~np.isnan(grid.human) & np.isnan(grid.metric)).sum()),
        undefined={s.key: s.why_undefined(grid) for s in STATISTICS if math.isnan(values[s.key])})
    if weights is None and n_bootstrap > 0 and len(grid.judged_segments) > 1:
        weights = bootstrap_weights(grid, n_bootstrap, seed)
    if weights is not None and len(weights):
        samples = {s.key: s.values(prepared[s.key], weights) for s in STATISTICS}
        result.samples = samples
        result.ci = {k: percentile_ci(v) for k, v in samples.items()}
        result.bootstrap = {"resamples": len(weights), "seed": seed, "unit": "segment",
                            "interval": "95% percentile"}
    return result


def system_correlation(human: Mapping[str, float], metric: Mapping[str, float]) -> dict[str, float]:
    """Pearson r, Kendall tau-b and pairwise accuracy over the systems both mappings score (e.g.
    corpus BLEU per system against mean human score), for metrics whose system score is not a mean
    of segment scores."""
    common = sorted(set(human) & set(metric))
    h = np.array([[human[s] for s in common]], dtype=np.float64)
    m = np.array([[metric[s] for s in common]], dtype=np.float64)
    ok = np.ones_like(h, dtype=bool)
    pairs = _pair_mask(ok)
    sh, sm = _sign(_differences(h)), _sign(_differences(m))
    kendall = float(sps.kendalltau(m[0], h[0])[0]) if len(common) >= 3 else float("nan")
    return {"n_systems": len(common), "pearson": float(_rowwise_pearson(m, h)[0]), "kendall": kendall,
            "pairwise_acc": float(_ratio((pairs & (sh == sm)).sum(axis=(1, 2)), pairs.sum(axis=(1, 2)))[0])}


# ---------------------------------------------------------------- input


def read_segment_scores(path: str | Path, *, negate: bool = False) -> dict[Key, float | None]:
    """Read ``system<TAB>seg_id<TAB>score`` lines (an optional header starts with ``system``) as a mapping.

    ``None``, ``nan`` or an empty score marks an item without a judgment. ``negate`` flips an
    error score (lower is better, e.g. TER) so that higher is better. Human judgment files in
    other formats: `mwemt.evaluate.human_scores.load_human_scores`.
    """
    return {s.key: s.oriented() for s in read_score_tsv(path, lower_better=negate)}


# ---------------------------------------------------------------- do the files cover the same items?


PARTIAL_TOLERANCE = 0.01  # share of judged items a metric file may lack (no row, or no score) before meta-eval refuses


@dataclass
class Coverage:
    """Which judged items a metric file has a score for: a missing row and a row whose score is
    ``None``/``nan`` both leave the item without one."""

    judged: int
    missing: list[Key]
    missing_systems: list[str]
    extra_segments: list[str]
    metric_segments: int
    human_segments: int
    without_score: int = 0  # of the missing items, those with a row whose score is None or nan

    @property
    def share_missing(self) -> float:
        return len(self.missing) / self.judged if self.judged else 0.0

    @property
    def noticeable(self) -> bool:
        return self.share_missing > PARTIAL_TOLERANCE

    def describe(self, metric_path: str, human_path: str, examples: int = 5) -> str:
        """Counts and a few example ids, for an error or a warning."""
        rows = (f"no row for {len(self.missing) - self.without_score} and a row without a score (None/nan) for "
                f"{self.without_score}" if self.without_score else f"no row for {len(self.missing)}")
        parts = [f"{metric_path} has {rows} of the {self.judged} items judged in "
                 f"{human_path} ({self.share_missing:.1%})"]
        if self.missing_systems:
            parts.append(f"systems absent from it: {', '.join(self.missing_systems[:examples])}"
                         + (" ..." if len(self.missing_systems) > examples else ""))
        absent = set(self.missing_systems)  # their rows are missing anyway: ids are shown for the others
        missing_segments = sorted({g for s, g in self.missing if s not in absent}, key=natural_key)
        if missing_segments:
            parts.append(f"{len(missing_segments)} judged segment ids without a row"
                         + (" or a score" if self.without_score else "")
                         + (" for the systems it has" if absent else "")
                         + f", e.g. {', '.join(missing_segments[:examples])}")
        if self.extra_segments:
            parts.append(f"it has {len(self.extra_segments)} segment ids the human file does not judge, e.g. "
                         f"{', '.join(self.extra_segments[:examples])}")
        return "; ".join(parts)


def coverage(human: Mapping[Key, float | None], metric: Mapping[Key, float | None],
             exclude_systems: Iterable[str] = ()) -> Coverage:
    """Compare the judged items of ``human`` with the scores of ``metric`` (a None score is missing)."""
    excluded = set(exclude_systems)
    judged = [k for k, v in human.items() if v is not None and k[0] not in excluded]
    missing = [k for k in judged if not _finite(metric.get(k))]
    metric_systems = {k[0] for k, v in metric.items() if _finite(v)}
    human_segments = {g for _, g in judged}
    metric_segments = {g for _, g in metric}
    return Coverage(
        judged=len(judged), missing=sorted(missing, key=lambda k: (k[0], natural_key(k[1]))),
        missing_systems=sorted({s for s, _ in judged} - metric_systems),
        extra_segments=sorted(metric_segments - {g for _, g in human}, key=natural_key),
        metric_segments=len(metric_segments), human_segments=len(human_segments),
        without_score=sum(1 for k in missing if k in metric))


def _finite(value: float | None) -> bool:
    """A score that counts: present and finite (``None`` and ``nan`` mark an item without one)."""
    return value is not None and math.isfinite(value)
