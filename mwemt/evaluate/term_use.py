"""Term use: the share of given MWE translations that a system's output uses (after Dinu et al.
2019, "Training Neural Machine Translation to Apply Terminology Constraints", ACL: term usage rate).

Each source MWE of the test set has *given translations*: those of an MWE translation table
(`mwemt.testsets.mwe_table`, `mwemt testset table`; every entry attested at least
``min_count`` times, dictionary entries always) or of a terms file (``source<TAB>target`` lines,
one per translation). The MWE's term is *used* when the hypothesis contains one of its given
translations; term use is the percentage of MWEs (with at least one given translation) whose term
is used. MWEs whose type has no given translation are not counted (``info["mwes_without_terms"]``).

Matching (``match``):

- ``exact``: the translation's tokens appear contiguously in the hypothesis (Moses tokens, split
  after elisions, lowercased); a ``...`` in a translation lets up to 3 tokens come between its parts;
- ``lemma``: the same, comparing simplemma lemmas (target language), so an inflected form counts
  (*restiamo in contatto* uses *restare in contatto*).

Statistics per sentence: terms used, MWEs with terms. The corpus score is 100 x sum / sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.base import REFERENCE_MWES, RatioMetric, SentenceStats, Signature
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.records import TestMwe

TERM_MATCHES = ("exact", "lemma")
STATS_COLUMNS = ("used", "mwes")
GAP = "..."
MAX_GAP = 3


def read_terms(path: str | Path, lang: str = "it", min_count: int = 1) -> dict[str, tuple[tuple[str, ...], ...]]:
    """MWE type key -> its given translations (token tuples), from an MWE translation table (JSONL,
    recognized by its header) or a ``source<TAB>target`` terms file (errors name file and line)."""
    from mwemt.fileio import iter_lines
    from mwemt.testsets.mwe_table import TABLE_FORMAT, MweTranslationTable, translation_tokens, type_key

    first = next(iter(iter_lines(path)), "")
    if first.lstrip().startswith("{") and TABLE_FORMAT in first:
        table = MweTranslationTable.read(path)
        return {k: tuple(e.translation for e in table.translations(k, min_count=min_count)) for k in table.keys()}
    out: dict[str, list[tuple[str, ...]]] = {}
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
            raise InputError(f"{len(cols)} columns", path, lineno, expected="source MWE<TAB>target translation")
        tokens = translation_tokens(cols[1], lang)
        if tokens:
            out.setdefault(type_key(cols[0]), []).append(tokens)
    if not out:
        raise InputError("no terms", path, expected="source MWE<TAB>target translation lines, or an MWE table")
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


@register_metric("term-use")
class TermUse(RatioMetric):
    """Term use (module docstring): the percentage of MWEs whose given translation the output uses."""

    key = "term-use"
    name = "TermUse"
    undefined_reason = "no MWE of the test set has a given translation (--terms, --mwe-table)"
    reference_kind = REFERENCE_MWES
    reads = frozenset({"terms", "term_match", "mwe_table", "mwe_table_min_count"})

    def __init__(self, terms: Mapping[str, Sequence[Sequence[str]]], lang: str = "it", *, match: str = "exact",
                 lemmatizer: str = "simplemma", terms_name: str = "", min_count: int = 1) -> None:
        if match not in TERM_MATCHES:
            raise MwemtError(f"term matching must be one of {', '.join(TERM_MATCHES)}, not {match!r}")
        from mwemt.testsets.mwe_table import type_key

        self.terms = {type_key(k): tuple(tuple(t.lower() for t in v) for v in vs) for k, vs in terms.items()}
        self.lang, self.match = lang, match
        self.terms_name, self.min_count = terms_name, min_count
        self.lemmatizer_name = lemmatizer
        self.lemmatizer = None
        if match == "lemma":
            from mwemt.preprocess.lemmatize import get_lemmatizer

            self.lemmatizer = get_lemmatizer(lemmatizer, lang)
        self._lemma_cache: dict[str, str] = {}

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> TermUse:
        path = options.terms or (options.mwe_table if options.mwe_table else None)
        if not path:
            raise MwemtError("metric 'term-use' needs given translations: --terms FILE (an MWE table of `mwemt "
                             "testset table`, or source<TAB>target lines)")
        return cls(read_terms(path, options.lang, options.mwe_table_min_count), options.lang,
                   match=options.term_match, terms_name=Path(path).name, min_count=options.mwe_table_min_count)

    def _norm(self, word: str) -> str:
        if self.lemmatizer is None:
            return word
        lemma = self._lemma_cache.get(word)
        if lemma is None:
            lemma = self._lemma_cache[word] = self.lemmatizer.lemma(word).lower()
        return lemma

    def words(self, text: str) -> list[str]:
        from mwemt.evaluate.mwe_score import word_pieces
        from mwemt.preprocess.tokenize import tokenize

        return word_pieces(tokenize(text, self.lang), case_sensitive=False)[0]

    def term_words(self, term: Sequence[str]) -> list[list[str]]:
        """A translation's parts (split at ``...``), each as the words `words` would give."""
        from mwemt.preprocess.tokenize import split_apostrophes

        parts: list[list[str]] = [[]]
        for tok in term:
            if tok == GAP:
                parts.append([])
            else:
                parts[-1].extend(p.lower() for p in split_apostrophes([tok]) if any(ch.isalnum() for ch in p))
        return [[self._norm(w) for w in p] for p in parts if p]

    def uses(self, hyp_words: Sequence[str], term: Sequence[str]) -> bool:
        """Whether the hypothesis words contain the term (its parts in order, gaps of at most 3)."""
        hyp = [self._norm(w) for w in hyp_words]
        parts = self.term_words(term)
        if not parts:
            return False

        def find(part: list[str], lo: int, hi: int) -> int | None:
            for s in range(lo, min(hi, len(hyp) - len(part)) + 1):
                if hyp[s:s + len(part)] == part:
                    return s
            return None

        for start in range(len(hyp)):
            s = find(parts[0], start, start)
            if s is None:
                continue
            pos, ok = s + len(parts[0]), True
            for part in parts[1:]:
                s = find(part, pos, pos + MAX_GAP)
                if s is None:
                    ok = False
                    break
                pos = s + len(part)
            if ok:
                return True
        return False

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe]], **kwargs) -> SentenceStats:
        """One row per sentence (terms used, MWEs with terms)."""
        from mwemt.testsets.mwe_table import mwe_key

        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} test-set sentences")
        rows, flags = [], []
        without = 0
        for hyp, mwes in zip(hyps, refs):
            words = self.words(hyp)
            used = counted = 0
            for m in mwes:
                terms = self.terms.get(mwe_key(m), ())
                if not terms:
                    without += 1
                    continue
                hit = any(self.uses(words, t) for t in terms)
                used += hit
                counted += 1
                flags.append(float(hit))
            rows.append((float(used), float(counted)))
        info = {"mwes_without_terms": without, "used_flags": np.array(flags, dtype=np.float64)}
        return SentenceStats(np.array(rows, dtype=np.float64).reshape(-1, 2), STATS_COLUMNS, info)

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        t = stats.totals()
        return {"terms_used": int(t[0]), "mwes": int(t[1]), "mwes_without_terms": int(stats.info["mwes_without_terms"])}

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        match = "exact" if self.match == "exact" else f"lemma:{self.lemmatizer_name}"
        return Signature.of(self.name, {"terms": self.terms_name or "given", "min": self.min_count, "match": match,
                                        "tok": f"moses-{self.lang}+apos", "gap": MAX_GAP})
