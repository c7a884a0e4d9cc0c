"""Literal-reading estimates for lexicons without training data, from a raw corpus.

A lexicon such as OEWN says which lemma sequences can be MWEs, not how often a co-occurrence of
them is one. Without annotated text the closest signal is how the components behave in a raw
corpus, compared with chance:

- **association**, for a candidate in the lexicon's configuration (contiguous, lexicon order):
  the share of that configuration's corpus occurrences beyond what independent words would give,
  ``max(0, 1 - (E + 1) / (f + 1))`` with f the count and E = positions x the product of the
  components' relative frequencies (pointwise mutual information in another guise, 1 - 2^-PMI,
  add-one smoothed so that a single occurrence says little);
- **variability**, for a gapped candidate: the same share for gapped co-occurrences (lexicon
  order, up to ``max_gap`` tokens between components). An entry whose components meet across a
  gap no more often than chance is rigid: its gapped co-occurrences are most likely literal or
  accidental (*they went on a trip* for *go on*), and are removed.

That share is each occurrence's **confidence**; candidates below ``min_association`` /
``min_variability`` are removed (the filters ``association`` and ``variability``). Entries never
seen in the corpus are kept with no confidence: nothing can be said about them. The thresholds
are not learned (there is nothing annotated to learn them on): the defaults below were chosen
on the DiMSUM training set with the OEWN lexicon and 100k lines of the English Wikipedia sample
(`studies/identification/dimsum_identify.py`, docs/identification.md): max_gap 2, variability >= 0.75, and no
association threshold, which did not help there at any value (association still gives contiguous
candidates their confidence).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.preprocess.filters import JudgingModel
from mwemt.preprocess.identify import find_candidates
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.tokenize import tokenize
from mwemt.records import Mwe

CORPUS_FILTERS = ("association", "variability")
KIND = "mwemt-corpus-filters"
VERSION = 1


@dataclass(frozen=True)
class CorpusThresholds:
    """Look-up gap and the two thresholds; 0.0 turns a filter off."""

    max_gap: int = 2
    min_association: float = 0.0
    min_variability: float = 0.75

    def off(self, names: Iterable[str]) -> CorpusThresholds:
        names = set(names)
        unknown = names - set(CORPUS_FILTERS)
        if unknown:
            raise MwemtError(f"unknown filter(s) {', '.join(sorted(unknown))} for raw-corpus estimates; "
                             f"known: {', '.join(CORPUS_FILTERS)}")
        return replace(self, min_association=0.0 if "association" in names else self.min_association,
                       min_variability=0.0 if "variability" in names else self.min_variability)

    @property
    def active(self) -> tuple[str, ...]:
        return tuple(n for n, v in (("association", self.min_association), ("variability", self.min_variability))
                     if v > 0)

    def describe(self) -> str:
        parts = [f"max_gap={self.max_gap}"]
        if self.min_association > 0:
            parts.append(f"association>={self.min_association:g}")
        if self.min_variability > 0:
            parts.append(f"gapped share beyond chance>={self.min_variability:g}")
        return ", ".join(parts)


@dataclass
class CorpusStats:
    """Corpus counts of one entry: contiguous and gapped co-occurrences, and what chance predicts."""

    fixed: int = 0
    gapped: int = 0
    expected_fixed: float = 0.0
    expected_gapped: float = 0.0

    @property
    def association(self) -> float | None:
        return excess(self.fixed, self.expected_fixed) if self.fixed or self.gapped else None

    @property
    def variability(self) -> float | None:
        return excess(self.gapped, self.expected_gapped) if self.fixed or self.gapped else None

    def to_json(self) -> list:
        return [self.fixed, self.gapped, round(self.expected_fixed, 6), round(self.expected_gapped, 6)]

    @classmethod
    def from_json(cls, v: list) -> CorpusStats:
        return cls(int(v[0]), int(v[1]), float(v[2]), float(v[3]))


def excess(observed: int, expected: float) -> float:
    """The share of ``observed`` beyond ``expected``, both add-one smoothed so that one or two
    occurrences say little: max(0, 1 - (expected + 1) / (observed + 1)); 0 if unobserved."""
    return max(0.0, 1.0 - (expected + 1.0) / (observed + 1.0))


class CorpusFilterModel(JudgingModel):
    """Corpus statistics per entry and two thresholds; judged like a learned `FilterModel`."""

    KIND = KIND
    VERSION = VERSION
    SIGNATURE = "corpus-filters"
    any_order = False

    def __init__(self, entries: dict[str, CorpusStats], thresholds: CorpusThresholds, meta: dict | None = None):
        self.entries = entries
        self.thresholds = thresholds
        self.meta = meta or {}

    def without(self, names: Iterable[str]) -> CorpusFilterModel:
        return CorpusFilterModel(self.entries, self.thresholds.off(names), self.meta)

    def judge(self, m: Mwe, forms: Sequence[str] = (), lemmas: Sequence[str] = (),
              heads: Sequence[int] | None = None) -> tuple[str | None, float | None]:
        st = self.entries.get(m.lemma)
        if st is None or not (st.fixed or st.gapped):
            return None, None  # never seen in the corpus: nothing to estimate from
        if m.contiguous:
            conf = st.association
            return ("association" if conf < self.thresholds.min_association else None), conf
        conf = st.variability
        return ("variability" if conf < self.thresholds.min_variability else None), conf

    @classmethod
    def load(cls, path: str | Path) -> CorpusFilterModel:
        obj = cls.read_json(path, "corpus filter model")
        try:
            thresholds = CorpusThresholds(**obj["thresholds"])
            entries = {str(k): CorpusStats.from_json(v) for k, v in obj["entries"].items()}
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InputError(f"malformed corpus filter model ({type(exc).__name__}: {exc})", path) from None
        return cls(entries, thresholds, {k: v for k, v in obj.items()
                                         if k not in ("kind", "version", "thresholds", "entries")})

    def describe(self) -> dict:
        seen = sum(1 for s in self.entries.values() if s.fixed or s.gapped)
        return {"signature": self.signature, "settings": self.thresholds.describe(),
                "active": list(self.thresholds.active), "entries": len(self.entries),
                "entries_seen_in_corpus": seen, **{k: v for k, v in self.meta.items() if k in ("source",)}}


def count_corpus(lexicon, sentences: Iterable[str], max_gaps: Sequence[int], *, lang: str = "en",
                 lemmatizer: str = "simplemma", pretokenized: bool = False) -> tuple[dict, Counter, int, int]:
    """Per max_gap: contiguous and gapped look-up matches per entry of ``lexicon``; and lemma
    frequencies, tokens, sentences. Each line is tokenized and lemmatized once (as `mwemt annotate`
    does: `mwemt.preprocess.tokenize`, then the lemmatizer), whatever the number of gaps.
    """
    lem = get_lemmatizer(lemmatizer, lang)
    if lexicon.lemmatizer is None:
        lexicon.set_lemmatizer(lem)  # entries must be normalized like the text
    counts: dict[int, dict[str, list[int]]] = {g: {} for g in max_gaps}
    freq: Counter = Counter()
    n_tokens = n_sents = 0
    for line in sentences:
        tokens = line.split() if pretokenized else tokenize(line, lang)
        if not tokens:
            continue
        lemmas = lem.lemmatize(tokens)
        n_sents += 1
        n_tokens += len(lemmas)
        freq.update(lemmas)
        for g in max_gaps:
            for m in find_candidates(lemmas, lexicon, g, forms=tokens):
                pair = counts[g].setdefault(m.lemma, [0, 0])
                pair[0 if m.contiguous else 1] += 1
    return counts, freq, n_tokens, n_sents


def expected_counts(norm: Sequence[str], freq: Counter, n_tokens: int, n_sents: int, max_gap: int) -> tuple[float, float]:
    """Chance co-occurrences of ``norm`` (lemmas in order): contiguous, and gapped up to ``max_gap``."""
    if n_tokens == 0:
        return 0.0, 0.0
    n = len(norm)
    p = math.prod(freq.get(w, 0) / n_tokens for w in norm)
    positions = max(0, n_tokens - n_sents * (n - 1))  # windows that fit inside a sentence
    return positions * p, positions * p * ((max_gap + 1) ** (n - 1) - 1)


def estimate_from_corpus(lexicon, corpus: str | Path, *, lang: str = "en", lemmatizer: str = "simplemma",
                         thresholds: CorpusThresholds | None = None, max_lines: int = 0,
                         pretokenized: bool = False) -> CorpusFilterModel:
    """Count every lexicon entry in a raw corpus (one sentence per line) and estimate chance."""
    t = thresholds or CorpusThresholds()
    return estimate_for_gaps(lexicon, corpus, [t.max_gap], lang=lang, lemmatizer=lemmatizer, thresholds=t,
                             max_lines=max_lines, pretokenized=pretokenized)[t.max_gap]


def estimate_for_gaps(lexicon, corpus: str | Path, max_gaps: Sequence[int], *, lang: str = "en",
                      lemmatizer: str = "simplemma", thresholds: CorpusThresholds | None = None,
                      max_lines: int = 0, pretokenized: bool = False) -> dict[int, CorpusFilterModel]:
    """`estimate_from_corpus` for several look-up gaps in one pass over the corpus."""
    import itertools

    from mwemt.fileio import iter_lines, sha256_file
    from mwemt.provenance import versions

    t = thresholds or CorpusThresholds()
    lines = iter_lines(corpus, allow_empty=True)
    if max_lines:
        lines = itertools.islice(lines, max_lines)
    counts, freq, n_tokens, n_sents = count_corpus(lexicon, lines, max_gaps, lang=lang, lemmatizer=lemmatizer,
                                                   pretokenized=pretokenized)
    if n_tokens == 0:
        raise InputError("the raw corpus has no tokens", corpus, expected="plain text, one sentence per line")
    source = {"path": str(corpus), "sha256": sha256_file(corpus), "sentences": n_sents, "tokens": n_tokens,
              "max_lines": max_lines, "lang": lang, "lemmatizer": lemmatizer,
              "lexicon": f"{lexicon.name}@{lexicon.fingerprint()}"}
    models = {}
    for g in max_gaps:
        entries = {}
        for norm, entry in lexicon.normalized_entries():
            f = counts[g].get(entry.key, [0, 0])
            e_fixed, e_gapped = expected_counts(norm, freq, n_tokens, n_sents, g)
            entries[entry.key] = CorpusStats(f[0], f[1], e_fixed, e_gapped)
        models[g] = CorpusFilterModel(entries, replace(t, max_gap=g), {"source": source, "versions": versions()})
    return models
