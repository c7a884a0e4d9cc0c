"""BLEU and chrF through sacrebleu, so our numbers are sacrebleu's numbers.

Both score detokenized, case-sensitive text by default (sacrebleu's 13a tokenizer for BLEU,
characters for chrF). The wrappers adapt sacrebleu to our `Metric` shape: the sentence statistics
are sacrebleu's own (`_extract_corpus_statistics`: n-gram counts per sentence), and every score
is sacrebleu's `_compute_score_from_stats` of their sums. The signature is sacrebleu's, prefixed by
the metric name, so a score can be checked against any sacrebleu run. Sentence-level BLEU uses
effective n-gram order (as sacrebleu recommends for single sentences).

Bootstrap resamples are scored from float32 sums, exactly as sacrebleu's paired test does, so our
bootstrap means and intervals are sacrebleu's; the corpus score itself comes from exact integer sums.

BLEU's parts: a BLEU score's ``extra`` holds its brevity penalty (``bp``), its n-gram precisions
(``precisions``, percent, as sacrebleu computes them, smoothed where an order has no match), the hypothesis
and reference lengths (``sys_len``, ``ref_len``) and their ``ratio`` (`BleuParts`). BLEU = BP x the geometric
mean of the precisions, so a difference of two BLEU scores splits exactly in log space
(`bleu_difference`): log BLEU_a - log BLEU_b = (log BP_a - log BP_b) + (mean log p_a - mean log p_b).
A difference is **mostly brevity penalty** when the BP part is more than half of the log difference (it
can be more than all of it, when the precisions move the other way).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric as SacreMetric

from mwemt.errors import MwemtError
from mwemt.evaluate.base import Metric, SentenceStats, Signature
from mwemt.evaluate.registry import MetricOptions, register_metric

RefStreams = Sequence[Sequence[str]]


def as_ref_streams(refs: Sequence[str] | RefStreams) -> list[list[str]]:
    """One reference per sentence (a list of str) or several streams (a list of lists)."""
    if refs and isinstance(refs[0], str):
        return [list(refs)]  # type: ignore[arg-type]
    return [list(stream) for stream in refs]  # type: ignore[union-attr]


class SacrebleuMetric(Metric):
    """Common code for sacrebleu-backed metrics; subclasses build the sacrebleu objects."""

    name = "sacrebleu"
    reads = frozenset({"lowercase"})

    def __init__(self) -> None:
        self._corpus = self._make(sentence=False)
        self._sentence = self._make(sentence=True)

    def _make(self, sentence: bool) -> SacreMetric:
        raise NotImplementedError

    def _columns(self) -> tuple[str, ...]:
        raise NotImplementedError

    @property
    def sacrebleu_metric(self) -> SacreMetric:
        """The corpus-level sacrebleu object."""
        return self._corpus

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[str] | RefStreams, **kwargs) -> SentenceStats:
        """sacrebleu's per-sentence n-gram statistics (integers)."""
        if isinstance(hyps, str) or isinstance(refs, str):
            raise MwemtError("sentence_stats takes sequences of sentences, not one string")
        streams = as_ref_streams(refs)
        for k, stream in enumerate(streams):
            if len(stream) != len(hyps):
                raise MwemtError(f"reference stream {k + 1} has {len(stream)} sentences, "
                                 f"hypotheses have {len(hyps)}")
        columns = self._columns()
        stats = self._corpus._extract_corpus_statistics(list(hyps), streams) if hyps else []
        self._sentence.num_refs = self._corpus.num_refs  # the sentence signature's nrefs
        rows = np.array(stats, dtype=np.int64).reshape(len(hyps), len(columns))
        return SentenceStats(rows, columns)

    def sentence_score(self, hyp: str, ref: str | Sequence[str], **kwargs) -> float:
        """One hypothesis against one reference or several (effective order for BLEU)."""
        refs = [ref] if isinstance(ref, str) else list(ref)
        return self.sentence_score_from_row(self.sentence_stats([hyp], [[r] for r in refs]).rows[0])

    def sacrebleu_score(self, totals: np.ndarray):
        """sacrebleu's score object (with its precisions, brevity penalty...) from exact totals."""
        return self._corpus._compute_score_from_stats([int(x) for x in totals])

    def score_from_totals(self, totals: np.ndarray) -> float:
        return float(self.sacrebleu_score(totals).score)

    def scores_from_totals(self, totals: np.ndarray) -> np.ndarray:
        # sacrebleu's paired test scores float32 sums, and keeps chrF's float32 scores: so do we
        as_sacrebleu = np.asarray(totals).astype(np.float32)
        return np.array([self._corpus._compute_score_from_stats(t).score for t in as_sacrebleu])

    def sentence_score_from_row(self, row: np.ndarray) -> float:
        return float(self._sentence._compute_score_from_stats([int(x) for x in row]).score)

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        return {"sacrebleu": str(self.sacrebleu_score(stats.totals()))}

    def _signature_of(self, obj: SacreMetric) -> Signature:
        if getattr(obj, "num_refs", 0) in (0, None):
            raise RuntimeError("sacrebleu signatures are known only once statistics have been extracted")
        return Signature.parse(f"{self.name}|{obj.get_signature().format()}")

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        return self._signature_of(self._corpus)

    def sentence_signature(self, stats: SentenceStats | None = None) -> Signature:
        return self._signature_of(self._sentence)


@register_metric("bleu")
class Bleu(SacrebleuMetric):
    """sacrebleu BLEU (13a tokenization, exp smoothing, case-sensitive unless ``lowercase``)."""

    key = "bleu"
    name = "BLEU"

    def __init__(self, lowercase: bool = False, tokenize: str | None = None) -> None:
        self.lowercase = lowercase
        self.tokenize = tokenize
        super().__init__()

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> Bleu:
        return cls(lowercase=options.lowercase)

    def _make(self, sentence: bool) -> SacreMetric:
        bleu = BLEU(lowercase=self.lowercase, tokenize=self.tokenize, effective_order=sentence)
        # sacrebleu's three-line "forgot to detokenize" log fires on the tokenized test sets mwemt itself ships and
        # builds (the demo's), during every score stage of a run; `mwemt score` says it once (`tokenized_periods`)
        bleu._force = True
        return bleu

    def _columns(self) -> tuple[str, ...]:
        orders = range(1, self._corpus.max_ngram_order + 1)
        return ("hyp_len", "ref_len", *(f"match{n}" for n in orders), *(f"total{n}" for n in orders))

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        """sacrebleu's summary line and the score's parts (`BleuParts`: brevity penalty, precisions, lengths)."""
        score = self.sacrebleu_score(stats.totals())
        parts = BleuParts(float(score.score), float(score.bp), tuple(float(p) for p in score.precisions),
                          int(score.sys_len), int(score.ref_len))
        return {"sacrebleu": str(score), **parts.to_extra()}


@dataclass(frozen=True)
class BleuParts:
    """A corpus BLEU score and what it is the product of: the brevity penalty ``bp`` and the n-gram
    ``precisions`` (percent), with the hypothesis and reference lengths. ``exact`` is False for parts read back
    from sacrebleu's summary line (`from_extra` of results written before the parts were kept), whose precisions
    are rounded to 0.1 and BP to 3 decimals; the BP is then recomputed from the exact lengths."""

    score: float
    bp: float
    precisions: tuple[float, ...]
    sys_len: int
    ref_len: int
    exact: bool = True

    @property
    def ratio(self) -> float | None:
        """Hypothesis length / reference length (None without a reference)."""
        return self.sys_len / self.ref_len if self.ref_len else None

    def to_extra(self) -> dict:
        return {"bp": self.bp, "precisions": list(self.precisions), "sys_len": self.sys_len, "ref_len": self.ref_len,
                "ratio": self.ratio}

    @classmethod
    def from_extra(cls, score: float | None, extra: Mapping | None) -> BleuParts | None:
        """The parts of a BLEU score from its ``extra`` (a score row of `mwemt score --json` or results.json);
        None when neither the parts nor sacrebleu's summary line are there."""
        if score is None or not extra:
            return None
        if "bp" in extra and "precisions" in extra:
            return cls(float(score), float(extra["bp"]), tuple(float(p) for p in extra["precisions"]),
                       int(extra["sys_len"]), int(extra["ref_len"]))
        m = _SUMMARY.search(str(extra.get("sacrebleu", "")))
        if m is None:
            return None
        sys_len, ref_len = int(m.group("hyp")), int(m.group("ref"))
        bp = brevity_penalty(sys_len, ref_len) if sys_len else float(m.group("bp"))
        return cls(float(score), bp, tuple(float(p) for p in m.group("prec").split("/")), sys_len, ref_len,
                   exact=False)


_SUMMARY = re.compile(r"= \S+ (?P<prec>[\d.]+(?:/[\d.]+)*) \(BP = (?P<bp>[\d.]+) ratio = [\d.]+ "
                      r"hyp_len = (?P<hyp>\d+) ref_len = (?P<ref>\d+)\)")


def brevity_penalty(sys_len: int, ref_len: int) -> float:
    """BLEU's brevity penalty, as sacrebleu computes it: exp(1 - ref/hyp) for a shorter hypothesis, else 1."""
    if sys_len >= ref_len:
        return 1.0
    return math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0


MOSTLY = 0.5   # a BLEU difference is mostly brevity penalty when the BP part is more than this share of it


def bleu_difference(system: BleuParts, baseline: BleuParts) -> dict | None:
    """How ``system``'s BLEU differs from ``baseline``'s, in log space: ``log_ratio`` = log BLEU_s - log BLEU_b
    = ``bp_part`` (log BP_s - log BP_b) + ``precision_part`` (the rest: the mean log precision's change);
    ``bp_share`` = bp_part / log_ratio (None for no difference); ``mostly_brevity``: the BP part is more than
    half of the difference (`MOSTLY`; a share above 1 when the precisions move the other way);
    ``precisions_fall`` / ``precisions_rise``: every n-gram precision is lower / higher. None when a score or a
    brevity penalty is 0 (no log)."""
    if min(system.score, baseline.score, system.bp, baseline.bp) <= 0:
        return None
    log_ratio = math.log(system.score) - math.log(baseline.score)
    bp_part = math.log(system.bp) - math.log(baseline.bp)
    pairs = list(zip(system.precisions, baseline.precisions))
    share = bp_part / log_ratio if abs(log_ratio) > 1e-12 else None
    return {"log_ratio": log_ratio, "bp_part": bp_part, "precision_part": log_ratio - bp_part, "bp_share": share,
            "mostly_brevity": share is not None and share > MOSTLY,
            "precisions_fall": bool(pairs) and all(a < b for a, b in pairs),
            "precisions_rise": bool(pairs) and all(a > b for a, b in pairs)}


@register_metric("chrf", "chrf++")
class Chrf(SacrebleuMetric):
    """sacrebleu chrF (character 6-grams, beta 2); ``word_order=2`` gives chrF++."""

    def __init__(self, word_order: int = 0, lowercase: bool = False) -> None:
        self.word_order = word_order
        self.lowercase = lowercase
        self.name = "chrF" + "+" * word_order
        self.key = self.name.lower()
        super().__init__()

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> Chrf:
        return cls(word_order=2 if key == "chrf++" else 0, lowercase=options.lowercase)

    def _make(self, sentence: bool) -> SacreMetric:
        return CHRF(word_order=self.word_order, lowercase=self.lowercase)

    def _columns(self) -> tuple[str, ...]:
        orders = [f"c{n}" for n in range(1, self._corpus.char_order + 1)]
        orders += [f"w{n}" for n in range(1, self.word_order + 1)]
        return tuple(f"{o}_{part}" for o in orders for part in ("hyp", "ref", "match"))


def tokenized_periods(hyps: Sequence[str]) -> int:
    """How many hypotheses end in a tokenized period (" ."): sacrebleu's sign of text not detokenized."""
    return sum(1 for h in hyps if h.endswith(" ."))
