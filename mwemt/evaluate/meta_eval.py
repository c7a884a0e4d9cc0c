"""Meta-evaluation: how well metric scores agree with human judgments.

The unit is an *item*: one system's translation of one segment, with a human score and a metric
score, both oriented so that higher is better (negate error scores such as MQM first).

Segment-level Kendall tau, as in the WMT relative-ranking / DARR evaluations: the pair set is every
unordered pair of two different systems' translations *of the same segment* for which both items
have a human and a metric score. Pairs the humans tie are left out. Of the rest, a pair is
concordant (C) if the metric orders it as the humans do, discordant (D) if the other way, and a
metric tie (T) if the metric gives both the same score. Then

- WMT13 variant (metric ties excluded):              tau = (C - D) / (C + D)
- WMT14 variant (metric ties count in the denominator): tau = (C - D) / (C + D + T)

(variants named after the WMT13 and WMT14 metrics tasks, Macháček & Bojar 2013, 2014, whose segment-
level tau differed in how metric ties are treated). The WMT14 variant penalizes a metric that
cannot separate translations; the WMT13 one does not.

Also: segment-level Pearson r over all items (no grouping), and system-level Pearson r and Kendall
tau-b between per-system mean scores. Confidence intervals are 95% percentile intervals from a
seeded bootstrap that resamples *segments* (each with all its systems' items), so the pairs of a
segment stay together. Scores are compared with a tolerance of 1e-9 to decide ties.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats as sps

from mwemt.evaluate.bootstrap import DEFAULT_SEED, resample_indices
from mwemt.judgements import natural_key, read_score_tsv

TIE_TOL = 1e-9
Key = tuple[str, str]  # (system, segment id)


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


def build_grid(human: Mapping[Key, float | None], metric: Mapping[Key, float | None],
               exclude_systems: Iterable[str] = ()) -> ScoreGrid:
    """Join human and metric scores on (system, segment); items missing on either side become NaN."""
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


# ---------------------------------------------------------------- segment-level Kendall


def pair_counts(grid: ScoreGrid) -> np.ndarray:
    """(n_segments, 3) counts of concordant, discordant and metric-tied pairs (human ties excluded)."""
    h, m, ok = grid.human, grid.metric, grid.valid
    dh = h[:, :, None] - h[:, None, :]
    dm = m[:, :, None] - m[:, None, :]
    n_sys = h.shape[1]
    upper = np.triu(np.ones((n_sys, n_sys), dtype=bool), k=1)[None]
    both = ok[:, :, None] & ok[:, None, :] & upper
    with np.errstate(invalid="ignore"):
        human_order = both & (np.abs(dh) > TIE_TOL)
        metric_tie = np.abs(dm) <= TIE_TOL
        same = np.sign(dh) == np.sign(dm)
    c = (human_order & ~metric_tie & same).sum(axis=(1, 2))
    d = (human_order & ~metric_tie & ~same).sum(axis=(1, 2))
    t = (human_order & metric_tie).sum(axis=(1, 2))
    return np.stack([c, d, t], axis=1).astype(np.int64)


def kendall_wmt13(c: float, d: float, t: float = 0) -> float:
    return (c - d) / (c + d) if c + d else float("nan")


def kendall_wmt14(c: float, d: float, t: float) -> float:
    return (c - d) / (c + d + t) if c + d + t else float("nan")


# ---------------------------------------------------------------- Pearson and system level


def _pearson_from_sums(n, sx, sy, sxx, syy, sxy):
    cov = sxy - sx * sy / n
    vx = sxx - sx * sx / n
    vy = syy - sy * sy / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return cov / np.sqrt(vx * vy)


def segment_sums(grid: ScoreGrid) -> np.ndarray:
    """Per-segment (n, Σx, Σy, Σxx, Σyy, Σxy) over valid items, x = metric, y = human."""
    ok = grid.valid
    x = np.where(ok, grid.metric, 0.0)
    y = np.where(ok, grid.human, 0.0)
    return np.stack([ok.sum(1), x.sum(1), y.sum(1), (x * x).sum(1), (y * y).sum(1), (x * y).sum(1)], axis=1)


def system_means(grid: ScoreGrid, seg_idx: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-system mean human and metric scores over the (resampled) segments' valid items."""
    ok = grid.valid if seg_idx is None else grid.valid[seg_idx]
    h = grid.human if seg_idx is None else grid.human[seg_idx]
    m = grid.metric if seg_idx is None else grid.metric[seg_idx]
    n = ok.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(ok, h, 0).sum(0) / n, np.where(ok, m, 0).sum(0) / n)


def _corr(x: np.ndarray, y: np.ndarray, kind: str) -> float:
    keep = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    if kind == "pearson":
        return float(sps.pearsonr(x, y)[0])
    return float(sps.kendalltau(x, y)[0])


def system_correlation(human: Mapping[str, float], metric: Mapping[str, float]) -> dict[str, float]:
    """Pearson r and Kendall tau-b over the systems both mappings score (e.g. corpus BLEU per system
    against mean human score), for metrics whose system score is not a mean of segment scores."""
    common = sorted(set(human) & set(metric))
    h = np.array([human[s] for s in common], dtype=np.float64)
    m = np.array([metric[s] for s in common], dtype=np.float64)
    return {"n_systems": len(common), "pearson": _corr(m, h, "pearson"), "kendall": _corr(m, h, "kendall")}


# ---------------------------------------------------------------- the report


@dataclass
class MetaEvalResult:
    metric: str
    n_segments: int
    n_items: int
    n_systems: int
    concordant: int
    discordant: int
    metric_ties: int
    human_ties: int
    tau_wmt13: float
    tau_wmt14: float
    pearson_seg: float
    pearson_sys: float
    kendall_sys: float
    human_items_without_metric: int = 0
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)
    bootstrap: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _human_ties(grid: ScoreGrid) -> int:
    h, ok = grid.human, grid.valid
    n_sys = h.shape[1]
    upper = np.triu(np.ones((n_sys, n_sys), dtype=bool), k=1)[None]
    both = ok[:, :, None] & ok[:, None, :] & upper
    with np.errstate(invalid="ignore"):
        return int((both & (np.abs(h[:, :, None] - h[:, None, :]) <= TIE_TOL)).sum())


def meta_evaluate(grid: ScoreGrid, metric_name: str, *, n_bootstrap: int = 1000,
                  seed: int = DEFAULT_SEED) -> MetaEvalResult:
    """All correlations of one metric with the human scores, with bootstrap CIs over segments."""
    counts = pair_counts(grid)
    c, d, t = (int(v) for v in counts.sum(0))
    sums = segment_sums(grid)
    n_items = int(sums[:, 0].sum())
    h_sys, m_sys = system_means(grid)
    result = MetaEvalResult(
        metric=metric_name, n_segments=int((sums[:, 0] > 0).sum()), n_items=n_items,
        n_systems=int((~np.isnan(h_sys)).sum()), concordant=c, discordant=d, metric_ties=t,
        human_ties=_human_ties(grid), tau_wmt13=kendall_wmt13(c, d), tau_wmt14=kendall_wmt14(c, d, t),
        pearson_seg=float(_pearson_from_sums(*sums.sum(0))) if n_items > 2 else float("nan"),
        pearson_sys=_corr(m_sys, h_sys, "pearson"), kendall_sys=_corr(m_sys, h_sys, "kendall"),
        human_items_without_metric=int((~np.isnan(grid.human) & np.isnan(grid.metric)).sum()))
    # resample the segments that have judged items: unjudged ones (a score file's None rows) would
    # only add noise to how many informative segments a resample holds
    judged = np.flatnonzero(grid.valid.any(axis=1))
    if n_bootstrap > 0 and len(judged) > 1:
        idxs = judged[resample_indices(len(judged), n_bootstrap, seed)]
        cs = counts[idxs].sum(axis=1)  # (B, 3)
        ss = sums[idxs].sum(axis=1)  # (B, 6)
        with np.errstate(invalid="ignore", divide="ignore"):
            samples = {
                "tau_wmt13": (cs[:, 0] - cs[:, 1]) / (cs[:, 0] + cs[:, 1]),
                "tau_wmt14": (cs[:, 0] - cs[:, 1]) / cs.sum(axis=1),
                "pearson_seg": _pearson_from_sums(*ss.T),
            }
        sys_p, sys_k = [], []
        for row in idxs:
            hs, ms = system_means(grid, row)
            sys_p.append(_corr(ms, hs, "pearson"))
            sys_k.append(_corr(ms, hs, "kendall"))
        samples["pearson_sys"] = np.array(sys_p)
        samples["kendall_sys"] = np.array(sys_k)
        result.ci = {k: percentile_ci(v) for k, v in samples.items()}
        result.bootstrap = {"resamples": n_bootstrap, "seed": seed, "unit": "segment", "interval": "95% percentile"}
    return result


def percentile_ci(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    s = np.asarray(samples, dtype=np.float64)
    s = s[~np.isnan(s)]
    if not len(s):
        return (float("nan"), float("nan"))
    lo, hi = np.percentile(s, [50 * (1 - level), 100 - 50 * (1 - level)])
    return (float(lo), float(hi))


# ---------------------------------------------------------------- input


def read_segment_scores(path: str | Path, *, negate: bool = False) -> dict[Key, float | None]:
    """Read ``system<TAB>seg_id<TAB>score`` lines (an optional header starts with ``system``) as a mapping.

    ``None``, ``nan`` or an empty score marks an item without a judgment. ``negate`` flips an
    error score (lower is better, e.g. TER) so that higher is better. Human judgment files in
    other formats: `mwemt.evaluate.human_scores.load_human_scores`.
    """
    return {s.key: s.oriented() for s in read_score_tsv(path, lower_better=negate)}
