"""Human compositionality ratings, normalized to one scale, and agreement of predictions with them.

Every reader returns scores in [0, 1] with 1 = compositional, whatever the file's own scale:

- ``nctti`` (Garcia et al. 2021, ``data_en.tsv``): TAB-separated, quoted, with a header; the MWE is in
  ``compound`` and the type-level score in ``CompType``, 0-5 with 5 = compositional (the ``C`` class
  averages 4.2 in the English file, ``NC`` 1.3). Score / 5. A row with an empty ``CompType`` is
  unrated (one English row, "small fry"): it is counted and listed, not scored.
- ``reddy`` (Reddy, McCarthy and Manandhar 2011): TAB-separated, no header, ``w1 w2 s1 s2 s3`` where
  s1/s2 rate how literal each word is and s3 how literal the whole compound is, 0-5 with
  5 = compositional. The gold score is s3 / 5.
- ``farahmand`` (Farahmand, Smith and Nivre 2015, ``nonComp-judgments.csv``): comma-separated,
  ``compound,j1,...,jk`` with k binary judgments of NON-compositionality (1 = non-compositional).
  The direction is reversed: score = 1 - mean(j), so four 0s give 1.0 and four 1s give 0.0.
- ``tsv``: the mwemt score file, header ``mwe<TAB>compositionality``, scores already in [0, 1].

MWEs are matched case-insensitively on their space-separated words.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines
from mwemt.formats import iter_compositionality, normalize_mwe

GOLD_FORMATS = ("nctti", "reddy", "farahmand", "tsv")
# the rating sets in the shared data: name -> (path under the shared data directory, format)
SHARED_GOLD = {
    "nctti": ("compositionality/nctti/data_en.tsv", "nctti"),
    "reddy": ("compositionality/reddy2011-nc/reddy2011.csv", "reddy"),
    "farahmand": ("compositionality/farahmand2015-nc/nonComp-judgments.csv", "farahmand"),
}
SCALES = {
    "nctti": "CompType 0-5, 5 = compositional; normalized score/5",
    "reddy": "compound score (5th column) 0-5, 5 = compositional; normalized score/5",
    "farahmand": "binary non-compositionality judgments (1 = non-compositional); normalized 1 - mean",
    "tsv": "0-1, 1 = compositional; used as is",
}


@dataclass(frozen=True)
class GoldItem:
    mwe: str
    score: float
    raw: str
    line: int


@dataclass
class GoldSet:
    fmt: str
    path: str
    items: dict[str, GoldItem] = field(default_factory=dict)
    unrated: list[tuple[int, str]] = field(default_factory=list)

    def add(self, mwe: str, score: float, raw: str, line: int) -> None:
        if len(mwe.split()) < 2:
            raise InputError(f"{mwe!r} is not a multiword expression", self.path, line,
                             expected="an MWE of at least two words")
        key = normalize_mwe(mwe)
        if key in self.items:
            raise InputError(f"{mwe!r} is rated twice (first on line {self.items[key].line})", self.path, line,
                             expected="each MWE once")
        self.items[key] = GoldItem(mwe, score, raw, line)

    def scores(self) -> dict[str, float]:
        return {k: it.score for k, it in self.items.items()}


def _number(text: str, path: str, line: int, what: str, lo: float, hi: float) -> float:
    try:
        x = float(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a number", path, line, expected=f"a number in [{lo:g}, {hi:g}]") from None
    if not lo <= x <= hi or math.isnan(x):
        raise InputError(f"{what} {x:g} is out of range", path, line, expected=f"a number in [{lo:g}, {hi:g}]")
    return x


def _rows(path: str, delimiter: str) -> Iterable[tuple[int, list[str]]]:
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        yield lineno, next(csv.reader([line], delimiter=delimiter))


def read_gold(path: str | Path, fmt: str) -> GoldSet:
    """Read a rating file in one of `GOLD_FORMATS`, normalized to [0, 1], 1 = compositional."""
    path = str(path)
    if fmt not in GOLD_FORMATS:
        raise MwemtError(f"unknown gold format {fmt!r}; choose one of {', '.join(GOLD_FORMATS)}")
    gold = GoldSet(fmt, path)
    reader = {"nctti": _read_nctti, "reddy": _read_reddy, "farahmand": _read_farahmand, "tsv": _read_tsv}[fmt]
    reader(path, gold)
    if not gold.items:
        raise InputError("no rated MWE found", path, expected=f"the {fmt} format: {SCALES[fmt]}")
    return gold


def _read_nctti(path: str, gold: GoldSet) -> None:
    rows = iter(_rows(path, "\t"))
    first = next(rows, None)
    if first is None:
        raise InputError("file is empty", path, 1, expected="an NCTTI header with 'compound' and 'CompType'")
    _, header = first
    if "compound" not in header or "CompType" not in header:
        raise InputError(f"header {header[:4]}", path, 1, expected="an NCTTI header with 'compound' and 'CompType'")
    i_mwe, i_score = header.index("compound"), header.index("CompType")
    for lineno, cols in rows:
        if len(cols) != len(header):
            raise InputError(f"{len(cols)} columns", path, lineno, expected=f"{len(header)} TAB-separated columns")
        mwe, raw = cols[i_mwe].strip(), cols[i_score].strip()
        if not mwe:
            raise InputError("empty compound", path, lineno, expected="a noun compound")
        if not raw:
            gold.unrated.append((lineno, mwe))
            continue
        gold.add(mwe, _number(raw, path, lineno, "CompType", 0, 5) / 5.0, raw, lineno)


def _read_reddy(path: str, gold: GoldSet) -> None:
    for lineno, cols in _rows(path, "\t"):
        if len(cols) != 5:
            raise InputError(f"{len(cols)} columns", path, lineno,
                             expected="w1<TAB>w2<TAB>score_w1<TAB>score_w2<TAB>score_compound (0-5)")
        for k in (2, 3):
            _number(cols[k], path, lineno, f"column {k + 1}", 0, 5)
        score = _number(cols[4], path, lineno, "compound score", 0, 5)
        gold.add(f"{cols[0].strip()} {cols[1].strip()}", score / 5.0, cols[4], lineno)


def _read_farahmand(path: str, gold: GoldSet) -> None:
    for lineno, cols in _rows(path, ","):
        if len(cols) < 2:
            raise InputError(f"{len(cols)} column(s)", path, lineno,
                             expected="compound,j1,...,jk with binary non-compositionality judgments")
        judgments = []
        for k, raw in enumerate(cols[1:], 2):
            if raw.strip() not in ("0", "1"):
                raise InputError(f"judgement {raw!r} in column {k}", path, lineno,
                                 expected="0 (compositional) or 1 (non-compositional)")
            judgments.append(int(raw))
        score = 1.0 - sum(judgments) / len(judgments)
        gold.add(cols[0].strip(), score, ",".join(cols[1:]), lineno)


def _read_tsv(path: str, gold: GoldSet) -> None:
    for mwe, score, lineno in iter_compositionality(path):
        gold.add(mwe, score, f"{score}", lineno)


def read_shared_gold(shared: str | Path) -> dict[str, GoldSet]:
    """NCTTI (English), Reddy 2011 and Farahmand 2015 from the shared data directory."""
    return {name: read_gold(Path(shared) / rel, fmt) for name, (rel, fmt) in SHARED_GOLD.items()}


def rated_mwes(golds: Mapping[str, GoldSet]) -> list[str]:
    """Every distinct rated MWE of these sets, lowercased, sorted: the lexicon to collapse for them."""
    return sorted({" ".join(it.mwe.lower().split()) for g in golds.values() for it in g.items.values()})


# ---------------------------------------------------------------- agreement


BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 12345  # the seed of the sentence-level bootstrap of the metrics, for one convention


@dataclass
class Agreement:
    """Pearson and Spearman correlation of predictions with gold, over the MWEs both have.

    ``pearson_ci`` and ``spearman_ci`` are 95% percentile bootstrap intervals over the rated MWEs
    (resampled with replacement, ``BOOTSTRAP_SAMPLES`` times, seeded), or None when not computed.
    """

    n: int
    gold_size: int
    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float
    not_predicted: list[str] = field(default_factory=list)
    unrated: int = 0
    pearson_ci: tuple[float, float] | None = None
    spearman_ci: tuple[float, float] | None = None

    @property
    def coverage(self) -> float:
        return self.n / self.gold_size if self.gold_size else 0.0

    def to_dict(self) -> dict:
        def num(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 4)

        def ci(pair: tuple[float, float] | None) -> list[float | None] | None:
            return None if pair is None else [num(pair[0]), num(pair[1])]

        return {"n": self.n, "gold_size": self.gold_size, "coverage": round(self.coverage, 4),
                "pearson": num(self.pearson), "pearson_p": None if math.isnan(self.pearson_p) else float(f"{self.pearson_p:.3g}"),
                "pearson_ci95": ci(self.pearson_ci),
                "spearman": num(self.spearman),
                "spearman_p": None if math.isnan(self.spearman_p) else float(f"{self.spearman_p:.3g}"),
                "spearman_ci95": ci(self.spearman_ci),
                "gold_unrated": self.unrated, "not_predicted": len(self.not_predicted)}


def _rowwise_pearson(a, b):
    import numpy as np

    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (a * b).sum(axis=1) / den, np.nan)


def bootstrap_correlation_ci(x, y, n_samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED,
                             level: float = 0.95) -> tuple[tuple[float, float], tuple[float, float]]:
    """Percentile bootstrap intervals of Pearson's r and Spearman's rho, resampling (x, y) pairs.

    A resample whose values are all equal has no correlation and is left out of the percentiles.
    """
    import numpy as np
    from scipy.stats import rankdata

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_samples, len(x)))
    xs, ys = x[idx], y[idx]
    pear = _rowwise_pearson(xs, ys)
    spear = _rowwise_pearson(rankdata(xs, axis=1), rankdata(ys, axis=1))
    tail = 100.0 * (1.0 - level) / 2.0

    def interval(v) -> tuple[float, float]:
        v = v[~np.isnan(v)]
        if not len(v):
            return math.nan, math.nan
        lo, hi = np.percentile(v, [tail, 100.0 - tail])
        return float(lo), float(hi)

    return interval(pear), interval(spear)


def agreement(pred: Mapping[str, float], gold: GoldSet, min_n: int = 3, bootstrap: int = 0,
              seed: int = BOOTSTRAP_SEED) -> Agreement:
    """Correlate on the gold MWEs that have a prediction; the rest lower the coverage.

    With ``bootstrap`` > 0, 95% confidence intervals from that many resamples are added.
    """
    import warnings

    from scipy.stats import pearsonr, spearmanr

    keys = [k for k in gold.items if k in pred]
    missing = [gold.items[k].mwe for k in gold.items if k not in pred]
    if len(keys) < min_n:
        raise MwemtError(f"only {len(keys)} of {len(gold.items)} gold MWEs have a prediction; "
                         f"need at least {min_n} to correlate (are the MWE lists the same?)")
    x = [pred[k] for k in keys]
    y = [gold.items[k].score for k in keys]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input gives NaN, reported as null
        pr = pearsonr(x, y)
        sr = spearmanr(x, y)
    cis = bootstrap_correlation_ci(x, y, bootstrap, seed) if bootstrap > 0 else (None, None)
    return Agreement(len(keys), len(gold.items), float(pr[0]), float(pr[1]), float(sr[0]), float(sr[1]),
                     missing, len(gold.unrated), *cis)
