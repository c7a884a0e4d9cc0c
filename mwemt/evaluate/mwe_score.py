"""The MWE score of Zaninello & Birch (2020): how close a hypothesis comes to the reference
translation of each source MWE, by character edit distance.

For each word x of an MWE's reference translation we take the hypothesis word y with the least
Levenshtein distance d(x, y) and charge ``min(d, len(x)) / len(x)``; the MWE scores 1 minus the
mean charge over its words. A sentence scores the mean over its MWEs and the corpus the mean over
sentences that have MWEs (``average="mwe"`` instead pools all MWEs, as the published scorer does).
Scores are reported on a 0-100 scale.

Words on both sides come from the same tokenization: Moses tokens (`mwemt.preprocess.tokenize`)
with elisions split after the apostrophe (``dell'acqua`` -> ``dell'`` ``acqua``); tokens without
any letter or digit (punctuation, the ``...`` that marks a gap in a discontinuous reference) are
dropped. Matching is case-insensitive unless ``case_sensitive=True``. A hypothesis with no words
(empty, or only punctuation) scores 0, never NaN. With word alignments (source token -> hypothesis
Moses token), the search for each MWE is restricted to the hypothesis words aligned to the MWE's
source tokens; an MWE with no aligned word scores 0.

Deliberate differences from the authors' scorer (azaninello/MWE_NMT, scripts/score_mwe.py):
- it replaces every ASCII punctuation character by a space, so elided articles lose their
  apostrophe (``dell'`` -> ``dell``) and hyphenated words split in two; we tokenize with Moses,
  keep the apostrophe on the elided word, and keep hyphenated words whole;
- it lowercases the hypothesis only; we lowercase both sides (or neither);
- it averages over all MWEs of the corpus (micro); we average per sentence first (``average``
  selects either);
- an empty hypothesis makes its ``min`` over no words fail, the exception is swallowed and the
  MWE gets NaN (which turns the corpus mean into NaN); we score it 0;
- it has no alignment option.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from mwemt.errors import InputError
from mwemt.evaluate.base import REFERENCE_MWES, RatioMetric, SentenceStats, Signature
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.fileio import iter_lines
from mwemt.preprocess.tokenize import split_apostrophes, tokenize
from mwemt.records import TestMwe

AVERAGES = ("sentence", "mwe")
Alignment = Sequence[tuple[int, int]]


class AlignmentError(ValueError):
    """An alignment that does not fit its hypothesis; ``sentence`` is 1-based once known and
    ``system`` the index of the system whose alignments failed (set by multi-system scoring)."""

    def __init__(self, message: str, sentence: int | None = None):
        super().__init__(message)
        self.message = message
        self.sentence = sentence
        self.system: int | None = None


def is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


@dataclass(frozen=True)
class HypWords:
    """The words of one hypothesis, each with the index of the Moses token it came from."""

    words: tuple[str, ...]
    token_index: tuple[int, ...]
    n_tokens: int

    def restricted_to(self, tokens: set[int]) -> list[str]:
        return [w for w, t in zip(self.words, self.token_index) if t in tokens]


def word_pieces(tokens: Sequence[str], case_sensitive: bool) -> tuple[list[str], list[int]]:
    """Apostrophe-split, punctuation-free, optionally lowercased pieces with their token index."""
    words: list[str] = []
    origin: list[int] = []
    for k, tok in enumerate(tokens):
        for piece in split_apostrophes([tok]):
            if is_word(piece):
                words.append(piece if case_sensitive else piece.lower())
                origin.append(k)
    return words, origin


def word_charges(ref_words: Sequence[str], hyp_words: Sequence[str]) -> list[float]:
    """For each reference word, ``min(distance to the closest hypothesis word, len) / len``."""
    if not ref_words:
        return []
    if not hyp_words:
        return [1.0] * len(ref_words)
    dist = cdist(list(ref_words), list(hyp_words), scorer=Levenshtein.distance, dtype=np.int32)
    best = dist.min(axis=1)
    return [min(int(d), len(x)) / len(x) for d, x in zip(best, ref_words)]


def mwe_match_score(ref_words: Sequence[str], hyp_words: Sequence[str]) -> float | None:
    """1 - mean charge over the reference words (in [0, 1]); None for a reference without words."""
    charges = word_charges(ref_words, hyp_words)
    if not charges:
        return None
    return 1.0 - sum(charges) / len(charges)


@dataclass
class SentenceMweScores:
    """The per-MWE scores (0-1, None if the reference had no word) of one sentence."""

    mwe_scores: list[float | None]

    @property
    def scored(self) -> list[float]:
        return [s for s in self.mwe_scores if s is not None]

    @property
    def sentence(self) -> float | None:
        s = self.scored
        return sum(s) / len(s) if s else None

    def stats_row(self) -> tuple[float, float, float, float]:
        """(sum of MWE scores, scored MWEs, sentence mean, 1 if the sentence has a scored MWE)."""
        scored = self.scored
        sent = self.sentence
        return float(sum(scored)), float(len(scored)), (0.0 if sent is None else sent), float(sent is not None)


STATS_COLUMNS = ("mwe_sum", "mwes", "sentence_mean", "sentences")


@register_metric("mwe")
class MweScore(RatioMetric):
    """Zaninello & Birch (2020) MWE translation score (see the module docstring for the details).

    Statistics per sentence: the sum of its MWE scores, the number of scored MWEs, the sentence
    mean and whether it has one, so one extraction serves both averages and the counts.
    """

    key = "mwe"
    name = "MWE"
    reference_kind = REFERENCE_MWES
    uses_alignments = True

    def __init__(self, lang: str = "it", *, case_sensitive: bool = False, average: str = "sentence",
                 pretokenized: bool = False) -> None:
        if average not in AVERAGES:
            raise ValueError(f"average must be one of {', '.join(AVERAGES)}, not {average!r}")
        self.lang = lang
        self.case_sensitive = case_sensitive
        self.average = average
        self.pretokenized = pretokenized
        self._ref_cache: dict[str, list[str]] = {}

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> MweScore:
        return cls(options.lang, case_sensitive=options.mwe_case_sensitive, average=options.mwe_average,
                   pretokenized=options.mwe_pretokenized)

    # -- tokenization
    def moses_tokens(self, text: str) -> list[str]:
        return text.split() if self.pretokenized else tokenize(text, self.lang)

    def hyp_words(self, hyp: str) -> HypWords:
        tokens = self.moses_tokens(hyp)
        words, origin = word_pieces(tokens, self.case_sensitive)
        return HypWords(tuple(words), tuple(origin), len(tokens))

    def ref_words(self, reference: str) -> list[str]:
        # MWE references are short phrases typed by annotators: always tokenize them. Cached, since
        # every system is scored against the same references.
        words = self._ref_cache.get(reference)
        if words is None:
            words = self._ref_cache[reference] = word_pieces(tokenize(reference, self.lang), self.case_sensitive)[0]
        return words

    # -- scoring
    def score_sentence(self, hyp: str, mwes: Sequence[TestMwe | str],
                       alignment: Alignment | None = None) -> SentenceMweScores:
        """Every MWE of one sentence scored (0-1): the detail behind one row of statistics."""
        hw = self.hyp_words(hyp)
        if alignment is not None:
            for _, j in alignment:
                if not 0 <= j < hw.n_tokens:
                    raise AlignmentError(f"alignment points to hypothesis token {j}, "
                                         f"but the hypothesis has {hw.n_tokens} tokens")
        scores: list[float | None] = []
        for mwe in mwes:
            reference = mwe if isinstance(mwe, str) else mwe.reference
            candidates: Sequence[str] = hw.words
            if alignment is not None:
                if isinstance(mwe, str):
                    raise TypeError("alignments need TestMwe objects (with source token indices)")
                src = set(mwe.indices)
                candidates = hw.restricted_to({j for i, j in alignment if i in src})
            scores.append(mwe_match_score(self.ref_words(reference), candidates))
        return SentenceMweScores(scores)

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe | str]],
                       alignments: Sequence[Alignment] | None = None, **kwargs) -> SentenceStats:
        """One row per sentence (`STATS_COLUMNS`); ``refs`` holds each sentence's MWEs.

        ``info["mwe_scores"]`` keeps the score (0-1) of every MWE, sentence by sentence in test-set
        order (NaN for a reference without words), so per-MWE analyses (`mwemt compare`) read them
        from the one extraction instead of scoring again."""
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} test-set sentences")
        if alignments is not None and len(alignments) != len(hyps):
            raise ValueError(f"{len(alignments)} alignment lines but {len(hyps)} hypotheses")
        rows = []
        per_mwe: list[float] = []
        for i, (h, r) in enumerate(zip(hyps, refs)):
            try:
                scored = self.score_sentence(h, r, alignments[i] if alignments is not None else None)
            except AlignmentError as exc:
                raise AlignmentError(exc.message, sentence=i + 1) from None
            rows.append(scored.stats_row())
            per_mwe.extend(math.nan if s is None else s for s in scored.mwe_scores)
        return SentenceStats(np.array(rows, dtype=np.float64).reshape(-1, len(STATS_COLUMNS)), STATS_COLUMNS,
                             {"aligned": alignments is not None, "mwe_scores": np.array(per_mwe, dtype=np.float64)})

    def sentence_score(self, hyp: str, ref: Sequence[TestMwe | str], alignment: Alignment | None = None,
                       **kwargs) -> float | None:
        """0-100, or None when the sentence has no MWE with a scorable reference."""
        row = self.sentence_stats([hyp], [ref], None if alignment is None else [alignment]).rows[0]
        return self.sentence_score_from_row(row)

    def ratio_columns(self) -> tuple[int, int]:
        return (0, 1) if self.average == "mwe" else (2, 3)

    def sentence_score_from_row(self, row: np.ndarray) -> float | None:
        """The sentence's mean MWE score (0-100) under either average; None without MWEs."""
        return None if row[3] <= 0 else self.scale * row[2] / row[3]

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        totals = stats.totals()
        return {"mwes": int(totals[1]), "sentences_with_mwes": int(totals[3])}

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        tok = "none" if self.pretokenized else f"moses-{self.lang}"
        aligned = stats is not None and bool(stats.info.get("aligned"))
        return Signature.of(self.name, {
            "tok": f"{tok}+apos", "punct": "drop", "case": "mixed" if self.case_sensitive else "lc",
            "avg": self.average, "align": aligned, "dist": "levenshtein-char", "cap": "len",
        })


def parse_alignment(line: str) -> list[tuple[int, int]]:
    """Pharaoh ``i-j`` pairs (source token i, hypothesis token j); raises AlignmentError if malformed."""
    pairs = []
    for item in line.split():
        left, sep, right = item.partition("-")
        if not sep or not left.isdigit() or not right.isdigit():
            raise AlignmentError(f"bad alignment pair {item!r}")
        pairs.append((int(left), int(right)))
    return pairs


def read_alignments(path: str | Path) -> list[list[tuple[int, int]]]:
    """One line of Pharaoh pairs per hypothesis. Hypothesis indices count the Moses tokens of the
    hypothesis (before apostrophe splitting), as an aligner run on Moses-tokenized text produces."""
    out = []
    for lineno, line in enumerate(iter_lines(path), 1):
        try:
            out.append(parse_alignment(line))
        except AlignmentError as exc:
            raise InputError(exc.message, path, lineno, expected="space-separated i-j pairs") from None
    return out
