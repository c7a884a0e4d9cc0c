"""The shape every metric shares, after sacrebleu: sufficient statistics per sentence, a corpus score
from their sums, and a signature that says exactly how the score was computed.

Why statistics: a corpus score is a function of per-sentence counts summed over the corpus (BLEU's
n-gram matches, chrF's character n-gram matches, the MWE score's per-MWE sums, TESLA's sentence
scores). Once a metric has turned each sentence into a row of numbers (`Metric.sentence_stats`, the
slow part: tokenizing, lemmatizing, matching), everything else is arithmetic on those rows: the
corpus score (`Metric.score_from_totals` of the column sums), the sentence scores, the paired
bootstrap (`mwemt.evaluate.bootstrap`: sums of resampled rows, never a second matching pass), and
scores of any subset of sentences. Later tools (meta-evaluation, comparison reports) work on the
same `SentenceStats`.

A score can be undefined: the MWE score of a test set without MWEs, term use when no MWE has a given
translation, LiTER when no MWE has a blocklist (a ratio whose denominator is 0). Such a score is
NaN in the arrays of `Metric.scores_from_totals`, None in a `MetricScore` (``null`` in JSON) and
``n/a`` in tables (`format_score`); it is never 0, which would read as a measured worst (or, for
LiTER, best) result, and it gets no p-value.

A metric class is registered under its name(s) with `mwemt.evaluate.registry.register_metric` and
built from options with `Metric.from_options`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from mwemt.errors import MwemtError
from mwemt.evaluate.signature import Signature, format_signature

if TYPE_CHECKING:
    from mwemt.evaluate.inputs import ScoreInputs
    from mwemt.evaluate.registry import MetricOptions

__all__ = ["Metric", "MetricScore", "RatioMetric", "SentenceStats", "Signature", "format_signature",
           "REFERENCE_TEXT", "REFERENCE_MWES", "UNDEFINED", "defined", "format_score"]

# What a metric compares the hypotheses with (`Metric.reference_kind`):
REFERENCE_TEXT = "text"  # one reference sentence per hypothesis
REFERENCE_MWES = "mwes"  # the reference translations of each sentence's source MWEs (a test set)


UNDEFINED = "n/a"   # how tables (text, Markdown, CSV) show an undefined score; JSON has null


def undefined_note(name: str, reason: str) -> str:
    """The note under a table that shows metric ``name`` as n/a: one wording in every report."""
    return f"{name} {UNDEFINED}: undefined, {reason}."


def defined(value: float | None) -> float | None:
    """``value`` as a float, or None when it is undefined (None or NaN): what a `MetricScore` holds."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def format_score(value: float | None, width: int = 1, *, sign: bool = False) -> str:
    """A score (or a difference of scores) with ``width`` decimals; `UNDEFINED` when it is undefined."""
    value = defined(value)
    if value is None:
        return UNDEFINED
    return f"{value:+.{width}f}" if sign else f"{value:.{width}f}"


def column_sums(rows: np.ndarray) -> np.ndarray:
    """The sum of each column, each summed as one contiguous vector: numpy's pairwise summation,
    as ``np.sum`` and ``np.mean`` of a 1-D array do (exact for integer statistics)."""
    return np.ascontiguousarray(rows.T).sum(axis=-1)


class SegmentError(MwemtError):
    """A segment a metric cannot score (``side``: "hyp" or "ref"; ``sentence``: 1-based); the
    caller, who knows the files, turns it into an `InputError` naming file and line."""

    def __init__(self, message: str, sentence: int, side: str):
        super().__init__(f"sentence {sentence}: {message}")
        self.message, self.sentence, self.side = message, sentence, side


@dataclass(frozen=True, eq=False)
class SentenceStats:
    """One row of sufficient statistics per sentence (``rows``, shape (sentences, columns)).

    ``info`` holds what extraction found that is not a per-sentence sum but belongs to the result:
    counts of distinct types, solver statistics, whether alignments were used. It is reported, never
    resampled.
    """

    rows: np.ndarray
    columns: tuple[str, ...]
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.rows.ndim != 2 or self.rows.shape[1] != len(self.columns):
            raise ValueError(f"statistics of shape {self.rows.shape} for {len(self.columns)} columns")

    def __len__(self) -> int:
        return len(self.rows)

    def totals(self) -> np.ndarray:
        """Column sums over all sentences: what the corpus score is computed from."""
        return column_sums(self.rows)

    def subset(self, indices: Sequence[int] | np.ndarray) -> SentenceStats:
        """The statistics of some sentences (repeats allowed), e.g. one bootstrap resample."""
        return SentenceStats(self.rows[np.asarray(indices, dtype=np.int64)], self.columns, self.info)


@dataclass
class MetricScore:
    """A corpus-level score on a 0-100 scale, with the signature that makes it reproducible, the
    sentence scores when asked for, facts about the scoring in ``extra`` and the statistics the
    score came from (``stats``: for paired tests and reports that need more than the number).
    ``score`` is None when the score is undefined on the scored data (`Metric.undefined_reason`)."""

    name: str
    score: float | None
    signature: Signature
    sentence_scores: list[float | None] | None = None
    extra: dict = field(default_factory=dict)
    stats: SentenceStats | None = field(default=None, repr=False, compare=False)

    @property
    def defined(self) -> bool:
        return self.score is not None

    def format(self, width: int = 1) -> str:
        return f"{self.name} = {format_score(self.score, width)}"


class Metric(ABC):
    """A metric: per-sentence statistics, and scores computed from their sums.

    Subclasses implement `sentence_stats`, `score_from_totals` and `signature`; they set ``key``
    (the registry name, e.g. ``chrf++``) and ``name`` (the label in tables, e.g. ``chrF++``).
    Everything else has a default built on those three.
    """

    key: str = "metric"
    name: str = "metric"
    # why a score of this metric can be undefined (shown under tables that hold one as n/a)
    undefined_reason: ClassVar[str] = "nothing in the scored data counts towards it"
    reference_kind: ClassVar[str] = REFERENCE_TEXT
    uses_alignments: ClassVar[bool] = False
    # the `MetricOptions` fields and score inputs (beyond ``lang``) this metric is built from: `mwemt score`
    # refuses a setting that no metric it computes reads
    reads: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs: ScoreInputs | None = None) -> Metric:
        """The metric registered as ``key``, configured by ``options`` and the loaded ``inputs``
        (lexicons, compositionality tables). Registered classes override this."""
        raise NotImplementedError(f"{cls.__name__} cannot be built from options")

    # -- what subclasses implement
    @abstractmethod
    def sentence_stats(self, hyps: Sequence[str], refs: Sequence, **kwargs: Any) -> SentenceStats:
        """One row of statistics per hypothesis; ``refs`` as `reference_kind` says."""

    @abstractmethod
    def score_from_totals(self, totals: np.ndarray) -> float:
        """The corpus score (0-100) from statistics summed over sentences; NaN when it is undefined."""

    @abstractmethod
    def signature(self, stats: SentenceStats | None = None) -> Signature:
        """How scores are computed; ``stats`` adds what depends on the scored data (e.g. alignments)."""

    # -- defaults
    def scores_from_totals(self, totals: np.ndarray) -> np.ndarray:
        """Scores of many sets of totals at once, shape (k, columns) -> (k,): the bootstrap's step
        (NaN where a set's score is undefined)."""
        return np.array([self.score_from_totals(t) for t in totals], dtype=np.float64)

    def sentence_score_from_row(self, row: np.ndarray) -> float | None:
        """One sentence's score from its row; None when the sentence has nothing to score."""
        return self.score_from_totals(row)

    def sentence_signature(self, stats: SentenceStats | None = None) -> Signature:
        """The signature of sentence-level scores (differs where sentence scoring differs)."""
        return self.signature(stats)

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        """Facts about a scored corpus for `MetricScore.extra` (counts; nothing resampled)."""
        return dict(stats.info)

    # -- built on the above
    def sentence_scores(self, stats: SentenceStats) -> list[float | None]:
        return [self.sentence_score_from_row(row) for row in stats.rows]

    def corpus_score_from_stats(self, stats: SentenceStats, *, sentence_level: bool = False) -> MetricScore:
        """The corpus `MetricScore` of already extracted statistics."""
        return MetricScore(self.name, defined(self.score_from_totals(stats.totals())), self.signature(stats),
                           self.sentence_scores(stats) if sentence_level else None,
                           self.extra_from_stats(stats), stats)

    def corpus_score(self, hyps: Sequence[str], refs: Sequence, *, sentence_level: bool = False,
                     **kwargs: Any) -> MetricScore:
        """Score a corpus: statistics, then the score of their sums."""
        return self.corpus_score_from_stats(self.sentence_stats(hyps, refs, **kwargs), sentence_level=sentence_level)

    def sentence_score(self, hyp: str, ref: Any, **kwargs: Any) -> float | None:
        """Score one sentence against its reference(s) (0-100)."""
        return self.sentence_score_from_row(self.sentence_stats([hyp], [ref], **kwargs).rows[0])


class RatioMetric(Metric):
    """A corpus score that is ``scale`` x (sum of a numerator column) / (sum of a denominator
    column), undefined (NaN) when the denominator is 0: the MWE score, LiTER, term use and the
    TESLA-like metrics."""

    undefined_reason: ClassVar[str] = "nothing in the scored data counts towards it (its denominator is 0)"

    scale: ClassVar[float] = 100.0

    def ratio_columns(self) -> tuple[int, int]:
        """Indices of the numerator and denominator columns."""
        return 0, 1

    def scores_from_totals(self, totals: np.ndarray) -> np.ndarray:
        num_col, den_col = self.ratio_columns()
        totals = np.asarray(totals, dtype=np.float64)
        num, den = totals[..., num_col], totals[..., den_col]
        out = np.full(np.shape(num), np.nan, dtype=np.float64)
        np.divide(self.scale * num, den, out=out, where=den > 0)
        return out

    def score_from_totals(self, totals: np.ndarray) -> float:
        return float(self.scores_from_totals(np.asarray(totals)[None, :])[0])

    def sentence_score_from_row(self, row: np.ndarray) -> float | None:
        num_col, den_col = self.ratio_columns()
        return None if row[den_col] <= 0 else self.score_from_totals(row)
