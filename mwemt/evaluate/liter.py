"""LiTER: how often a system translates an idiom word for word (after Baziotis et al. 2023,
"Automatic Evaluation and Analysis of Idioms in Neural Machine Translation", EACL; their LitTER).

For each idiomatic source MWE, a *blocklist* holds the bilingual dictionary's single-word
translations of its content words (``keep an eye on``: *tenere*, *mantenere*, *occhio*...), minus
every word of the reference sentence (a word the reference uses is no evidence of a literal
rendering). The MWE is translated *literally* when the hypothesis holds a blocklisted word. LiTER
is the percentage of idiomatic MWEs translated literally: **lower is better**.

Details, each a documented choice:

- which MWEs: those of the test set's ``idiomatic`` part (`mwemt testset build --compositionality`);
  when no MWE of the test has a part, every MWE counts (``info["idiomatic_only"]`` says which);
- source words: the MWE's tokens (``surface``, else its lemma), lowercased, with their simplemma
  lemma, English function words left out (`mwemt.evaluate.function_words`); an MWE without a
  content word, or none of whose words the dictionary knows, has no blocklist and is not counted
  (``info["mwes_without_blocklist"]``);
- matching: hypothesis and reference are Moses-tokenized, split after elisions and lowercased;
  a hypothesis word matches a blocklisted word by form or by simplemma lemma (target language), so
  *occhi* matches *occhio*; the reference's words are removed by form and by lemma;
- the reference sentence is the test item's ``reference`` when the metric is built for a test set
  (`mwemt score`), else (library use without ``references=``) the MWE's reference translation.

Statistics per sentence: literal MWEs, counted MWEs. The corpus score is 100 x sum / sum.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from mwemt.errors import MwemtError
from mwemt.evaluate.base import REFERENCE_MWES, RatioMetric, SentenceStats, Signature
from mwemt.evaluate.function_words import stop_list
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.records import TestMwe

STATS_COLUMNS = ("literal", "mwes")


def word_dictionary(pairs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Source word (lowercased) -> its single-word translations (lowercased), from (source,
    translation) dictionary pairs; multiword entries on either side are left out."""
    out: dict[str, set[str]] = {}
    for source, target in pairs:
        s, t = source.strip().lower(), target.strip().lower()
        if s and t and len(s.split()) == 1 and len(t.split()) == 1:
            out.setdefault(s, set()).add(t)
    return {k: frozenset(v) for k, v in out.items()}


@register_metric("liter")
class Liter(RatioMetric):
    """LiTER (module docstring): the percentage of idiomatic MWEs whose hypothesis holds a
    word-for-word translation of the MWE's words. Lower is better."""

    key = "liter"
    name = "LiTER"
    undefined_reason = "no MWE of the test set has a blocklist (dictionary translations of its content words)"
    reference_kind = REFERENCE_MWES
    reads = frozenset({"dictionary", "dictionary_format"})

    def __init__(self, dictionary: dict[str, frozenset[str]], lang: str = "it", src_lang: str = "en", *,
                 lemmatizer: str = "simplemma", dictionary_name: str = "",
                 references: Sequence[str] | None = None) -> None:
        if not dictionary:
            raise MwemtError("LiTER needs a bilingual dictionary with single-word entries (--dictionary)")
        from mwemt.preprocess.lemmatize import get_lemmatizer

        self.dictionary = dictionary
        self.lang, self.src_lang = lang, src_lang
        self.dictionary_name = dictionary_name
        self.src_lemmatizer = get_lemmatizer(lemmatizer, src_lang)
        self.tgt_lemmatizer = get_lemmatizer(lemmatizer, lang)
        self.lemmatizer_name = lemmatizer
        self.src_function = stop_list(src_lang)
        self.references = references
        self._lemma_cache: dict[str, str] = {}

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> Liter:
        if not options.dictionary:
            raise MwemtError("metric 'liter' needs a bilingual dictionary (--dictionary, e.g. en-ita.multiwordnet.tsv)")
        from pathlib import Path

        from mwemt.testsets.mwe_table import read_dictionary

        refs = [it.reference for it in inputs.testset] if inputs is not None and inputs.testset is not None else None
        return cls(word_dictionary(read_dictionary(options.dictionary, options.dictionary_format, min_words=1)), options.lang,
                   dictionary_name=Path(options.dictionary).name, references=refs)

    def _tgt_lemma(self, word: str) -> str:
        lemma = self._lemma_cache.get(word)
        if lemma is None:
            lemma = self._lemma_cache[word] = self.tgt_lemmatizer.lemma(word).lower()
        return lemma

    def words(self, text: str) -> list[str]:
        """Moses tokens split after elisions, lowercased, punctuation dropped."""
        from mwemt.evaluate.mwe_score import word_pieces
        from mwemt.preprocess.tokenize import tokenize

        return word_pieces(tokenize(text, self.lang), case_sensitive=False)[0]

    def blocklist(self, mwe: TestMwe, reference: str) -> frozenset[str]:
        """The dictionary's translations of the MWE's content words, minus the reference's words
        (by form and by lemma)."""
        source = (mwe.surface or mwe.lemma).lower().split()
        found: set[str] = set()
        for word in source:
            if word in self.src_function or not any(ch.isalpha() for ch in word):
                continue
            for form in {word, self.src_lemmatizer.lemma(word).lower()}:
                found |= self.dictionary.get(form, frozenset())
        ref = set(self.words(reference))
        ref_lemmas = {self._tgt_lemma(w) for w in ref}
        return frozenset(t for t in found if t not in ref and self._tgt_lemma(t) not in ref_lemmas)

    def is_literal(self, hyp_words: Sequence[str], blocklist: frozenset[str]) -> bool:
        block_lemmas = {self._tgt_lemma(t) for t in blocklist}
        return any(w in blocklist or self._tgt_lemma(w) in block_lemmas for w in hyp_words)

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe]], *,
                       references: Sequence[str] | None = None, **kwargs) -> SentenceStats:
        """One row per sentence (literal MWEs, counted MWEs); ``refs`` holds each sentence's MWEs
        and ``references`` the reference sentences (default: those the metric was built with)."""
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} test-set sentences")
        references = references if references is not None else self.references
        if references is not None and len(references) != len(hyps):
            references = None  # built for another test set: fall back to the MWE translations
        idiomatic_only = any(m.part for ms in refs for m in ms)
        rows, flags = [], []
        without = 0
        for k, (hyp, mwes) in enumerate(zip(hyps, refs)):
            hyp_words = self.words(hyp)
            literal = counted = 0
            for m in mwes:
                if idiomatic_only and m.part != "idiomatic":
                    continue
                block = self.blocklist(m, references[k] if references is not None else m.reference)
                if not block:
                    without += 1
                    continue
                hit = self.is_literal(hyp_words, block)
                literal += hit
                counted += 1
                flags.append(float(hit))
            rows.append((float(literal), float(counted)))
        info = {"idiomatic_only": idiomatic_only, "mwes_without_blocklist": without,
                "literal_flags": np.array(flags, dtype=np.float64),
                "reference": "sentence" if references is not None else "mwe"}
        return SentenceStats(np.array(rows, dtype=np.float64).reshape(-1, 2), STATS_COLUMNS, info)

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        t = stats.totals()
        return {"literal_mwes": int(t[0]), "mwes": int(t[1]), "idiomatic_only": bool(stats.info["idiomatic_only"]),
                "mwes_without_blocklist": int(stats.info["mwes_without_blocklist"])}

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        fields = {"mwes": "idiomatic" if stats is None or stats.info.get("idiomatic_only") else "all",
                  "dict": self.dictionary_name or "given", "minus": "ref-" + (
                      stats.info.get("reference", "sentence") if stats is not None else "sentence"),
                  "tok": f"moses-{self.lang}+apos", "match": f"form+lemma:{self.lemmatizer_name}",
                  "src_fw": self.src_lang, "lower": "better"}
        return Signature.of(self.name, fields)
