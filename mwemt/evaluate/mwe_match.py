"""How the MWE score compares one reference word with one hypothesis word: characters, and
optionally lemmas, synonyms, elided forms and a lighter weight for function words.

Why: the published score charges the character edit distance between a reference word and its
closest hypothesis word. That gives no credit to a correct synonym and little to another
inflection, and charges an elided article (*dell'*) against its full form (*della*) as a
different word. Each extension below is a switch of `MweMatching`, named in the signature, and
chosen by measurement against human verdicts (``scripts/mwe_score_human.py``):

- ``lemma``: a reference and a hypothesis word with the same lemma (simplemma, target language) are
  charged ``lemma_charge`` (a fraction of a miss, e.g. 0.5 for *sostenibile* vs *sostenibili*), or
  their character charge when that is lower;
- ``synonyms``: two words whose lemmas share a synset of the target-language wordnet (an Open
  Multilingual Wordnet ``.tab`` file, e.g. MultiWordNet for Italian) are charged ``synonym_charge``;
- ``elision``: an elided word (*dell'*, *l'*, *un'*) equals its full forms: the same letters
  followed by one vowel (*della*, *dello*, *la*, *una*), and the bare form without apostrophe;
- ``function_weight``: in the mean over an MWE's reference words, a function word (article,
  preposition, clitic...: `mwemt.evaluate.function_words`) weighs this much instead of 1. An MWE
  made only of function words keeps equal weights.

The charge of a reference word x against a hypothesis word y is ``min(d(x, y), len(x)) / len(x)``
(d = character Levenshtein distance), lowered by the switches above; x is charged its least charge
over the candidate hypothesis words, and 1 when there is none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from mwemt.evaluate.function_words import stop_list

VOWELS = frozenset("aeiouàèéìíòóù")
APOSTROPHES = ("'", "\u2019")


@dataclass(frozen=True)
class MweMatching:
    """The word-matching switches of the MWE score (module docstring)."""

    lemma: bool = False
    lemma_charge: float = 0.5
    synonyms: bool = False
    synonym_charge: float = 0.0
    elision: bool = False
    function_weight: float = 1.0

    def __post_init__(self) -> None:
        for name in ("lemma_charge", "synonym_charge"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {getattr(self, name)}")
        if not 0.0 <= self.function_weight <= 1.0:
            raise ValueError(f"function_weight must be in [0, 1], not {self.function_weight}")

    @property
    def characters_only(self) -> bool:
        return not (self.lemma or self.synonyms or self.elision) and self.function_weight == 1.0

    def signature_fields(self, lang: str, wordnet_name: str | None) -> dict[str, object]:
        """``match``: the switches on, e.g. ``char+lemma0.5+elision``; ``fw``: the function-word weight."""
        parts = ["char"]
        if self.lemma:
            parts.append(f"lemma{self.lemma_charge:g}")
        if self.synonyms:
            parts.append(f"syn{self.synonym_charge:g}[{wordnet_name or 'none'}]")
        if self.elision:
            parts.append("elision")
        fields: dict[str, object] = {"match": "+".join(parts)}
        fields["fw"] = f"{self.function_weight:g}" + ("" if self.function_weight == 1.0 else f"[{lang}]")
        return fields


def strip_elision(word: str) -> str | None:
    """The letters of an elided word (``dell'`` -> ``dell``), or None when it is not elided."""
    if len(word) > 1 and word.endswith(APOSTROPHES):
        return word[:-1]
    return None


def elision_equal(x: str, y: str) -> bool:
    """An elided word and its full form: ``dell'`` ~ ``della``/``dello``/``dell``, either way round."""
    for elided, other in ((x, y), (y, x)):
        stem = strip_elision(elided)
        if stem is None:
            continue
        if other == stem or (len(other) == len(stem) + 1 and other.startswith(stem) and other[-1] in VOWELS):
            return True
        if strip_elision(other) == stem:
            return True
    return False


class WordMatcher:
    """Charges of reference words against hypothesis words under one `MweMatching`.

    ``lemmatizer`` (a `mwemt.preprocess.lemmatize.Lemmatizer`) is needed for ``lemma`` and
    ``synonyms``; ``wordnet`` (anything with ``synsets(lemma)``) for ``synonyms``.
    """

    def __init__(self, matching: MweMatching, lang: str, lemmatizer=None, wordnet=None):
        if (matching.lemma or matching.synonyms) and lemmatizer is None:
            raise ValueError("lemma and synonym matching need a lemmatizer")
        if matching.synonyms and wordnet is None:
            raise ValueError("synonym matching needs a wordnet")
        self.matching = matching
        self.lang = lang
        self.lemmatizer = lemmatizer
        self.wordnet = wordnet
        self.function_words = stop_list(lang)
        self.lemma = lru_cache(maxsize=1 << 16)(self._lemma)
        self.synsets = lru_cache(maxsize=1 << 16)(self._synsets)

    def _lemma(self, word: str) -> str:
        return self.lemmatizer.lemma(word).lower()

    def _synsets(self, word: str) -> frozenset:
        return self.wordnet.synsets(self.lemma(word)) or self.wordnet.synsets(word)

    def weights(self, ref_words: Sequence[str]) -> np.ndarray:
        """The weight of each reference word in its MWE's mean."""
        w = np.ones(len(ref_words))
        fw = self.matching.function_weight
        if fw != 1.0 and self.function_words:
            is_function = np.array([x in self.function_words for x in ref_words], dtype=bool)
            if not is_function.all():
                w[is_function] = fw
        return w

    def charge_matrix(self, ref_words: Sequence[str], hyp_words: Sequence[str]) -> np.ndarray:
        """Charges in [0, 1], shape (reference words, hypothesis words)."""
        dist = cdist(list(ref_words), list(hyp_words), scorer=Levenshtein.distance, dtype=np.int32)
        lengths = np.array([len(x) for x in ref_words], dtype=np.float64)[:, None]
        charges = np.minimum(dist, lengths) / lengths
        m = self.matching
        if not (m.lemma or m.synonyms or m.elision):
            return charges
        for a, x in enumerate(ref_words):
            for b, y in enumerate(hyp_words):
                c = charges[a, b]
                if c == 0.0:
                    continue
                if m.elision and elision_equal(x, y):
                    charges[a, b] = 0.0
                    continue
                if m.lemma and m.lemma_charge < c and self.lemma(x) == self.lemma(y):
                    c = charges[a, b] = m.lemma_charge
                if m.synonyms and m.synonym_charge < c and self.synsets(x) & self.synsets(y):
                    charges[a, b] = m.synonym_charge
        return charges

    def best_charges(self, ref_words: Sequence[str], hyp_words: Sequence[str]) -> np.ndarray:
        """Each reference word's least charge over the hypothesis words (1 without any)."""
        if not hyp_words:
            return np.ones(len(ref_words))
        return self.charge_matrix(ref_words, hyp_words).min(axis=1)

    def score(self, ref_words: Sequence[str], hyp_words: Sequence[str]) -> float | None:
        """1 - weighted mean charge over the reference words (in [0, 1]); None without reference words."""
        if not ref_words:
            return None
        w = self.weights(ref_words)
        return float(1.0 - np.dot(w, self.best_charges(ref_words, hyp_words)) / w.sum())
