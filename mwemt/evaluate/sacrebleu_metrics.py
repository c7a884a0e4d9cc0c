"""BLEU and chrF through sacrebleu, so our numbers are sacrebleu's numbers.

Both score detokenized, case-sensitive text by default (sacrebleu's 13a tokenizer for BLEU,
characters for chrF). The wrappers adapt sacrebleu to our `Metric` shape: the sentence statistics
are sacrebleu's own (`_extract_corpus_statistics`: n-gram counts per sentence), and every score
is sacrebleu's `_compute_score_from_stats` of their sums. The signature is sacrebleu's, prefixed by
the metric name, so a score can be checked against any sacrebleu run. Sentence-level BLEU uses
effective n-gram order (as sacrebleu recommends for single sentences).

Bootstrap resamples are scored from float32 sums, exactly as sacrebleu's paired test does, so our
bootstrap means and intervals are sacrebleu's; the corpus score itself comes from exact integer sums.
"""

from __future__ import annotations

from collections.abc import Sequence

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
