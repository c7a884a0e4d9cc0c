"""How the MWE score compares one reference word with one hypothesis word: characters, and
optionally lemmas, synonyms, elided forms and a lighter weight for function words.

Why: the published score charges the character edit distance between a reference word and its
closest hypothesis word. That gives no credit to a correct synonym and little to another
inflection, and charges an elided article (*dell'*) against its full form (*della*) as a
different word. Each extension below is a switch of `MweMatching`, named in the signature, and
chosen by measurement against human verdicts (``studies/mwe-test-and-score/mwe_score_human.py``):

- ``lemma``: a reference and a hypothesis word with the same lemma (simplemma, target language) are
  charged ``lemma_charge`` (a fraction of a miss, e.g. 0.5 for *sostenibile* vs *sostenibili*), or
  their character charge when that is lower;
- ``synonyms``: two words whose lemmas share a synset of the target-language wordnet (an Open
  Multilingual Wordnet ``.tab`` file, e.g. MultiWordNet for Italian) are charged ``synonym_charge``;
- ``elision``: an elided word (*dell'*, *l'*, *un'*) equals its full forms: the same letters
  followed by one vowel (*della*, *dello*, *la*, *una*), and the bare form without apostrophe;
- ``function_weight``: in the mean over an MWE's reference words, a function word (article,
  preposition, clitic...: `mwemt.evaluate.function_words`) weighs this much instead of 1. An MWE
  made only of function words keeps equal weights;
- ``near_miss``: an inexact match is charged at least this much, so a wrong agreement ending
  (*sostenibile* for *sostenibili*: 1/11 by characters) is not almost a full match;
- ``order``: the MWE's score is multiplied by 1 - ``order`` x the fraction of its reference word
  pairs whose best-matching hypothesis words come in the other order (*spazio scienza* for
  *scienza spaziale*).

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
    near_miss: float = 0.0
    order: float = 0.0

    def __post_init__(self) -> None:
        for name in ("lemma_charge", "synonym_charge"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {getattr(self, name)}")
        for name in ("function_weight", "near_miss", "order"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {getattr(self, name)}")

    def active(self) -> list[tuple[str, float | None]]:
        """The options that are on, as (spec name, value or None), in spec order."""
        out: list[tuple[str, float | None]] = []
        if self.lemma:
            out.append(("lemma", self.lemma_charge))
        if self.synonyms:
            out.append(("synonyms", self.synonym_charge))
        if self.elision:
            out.append(("elision", None))
        if self.function_weight != 1.0:
            out.append(("fw", self.function_weight))
        if self.near_miss:
            out.append(("near-miss", self.near_miss))
        if self.order:
            out.append(("order", self.order))
        return out

    def signature_fields(self, lang: str, wordnet_name: str | None) -> dict[str, object]:
        """``match``: the switches on, e.g. ``char+lemma0.5+elision``; ``fw``: the function-word weight."""
        short = {"lemma": "lemma", "synonyms": "syn", "near-miss": "near", "order": "order"}
        parts = ["char"]
        for name, value in self.active():
            if name == "elision":
                parts.append(name)
            elif name in short:
                suffix = f"[{wordnet_name or 'none'}]" if name == "synonyms" else ""
                parts.append(f"{short[name]}{value:g}{suffix}")
        fw = f"{self.function_weight:g}" + ("" if self.function_weight == 1.0 else f"[{lang}]")
        return {"match": "+".join(parts), "fw": fw}


# name in a matching spec -> (MweMatching field that switches it on, field of its value, value when none is given)
SPEC_ITEMS = {
    "lemma": ("lemma", "lemma_charge", 0.5),
    "synonyms": ("synonyms", "synonym_charge", 0.0),
    "elision": ("elision", None, None),
    "fw": (None, "function_weight", 0.5),
    "near-miss": (None, "near_miss", 0.75),
    "order": (None, "order", 1.0),
}


def parse_matching(text: str) -> MweMatching:
    """A matching spec: ``char`` (characters only) or comma-separated ``NAME[=VALUE]`` items of
    `SPEC_ITEMS`, e.g. ``near-miss=0.75,order=1,lemma=0.5,elision``; raises ValueError."""
    fields: dict[str, object] = {}
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError("an empty matching spec; use 'char' for characters only")
    if items == ["char"]:
        return MweMatching()
    for item in items:
        name, sep, value = item.partition("=")
        if name not in SPEC_ITEMS:
            raise ValueError(f"unknown matching option {name!r}; choose 'char' or from {', '.join(SPEC_ITEMS)}")
        switch, number, default = SPEC_ITEMS[name]
        if switch is not None:
            fields[switch] = True
        if sep and number is None:
            raise ValueError(f"matching option {name!r} takes no value")
        if number is not None:
            try:
                fields[number] = float(value) if sep else default
            except ValueError:
                raise ValueError(f"matching option {name!r} needs a number, not {value!r}") from None
    return MweMatching(**fields)


def format_matching(m: MweMatching) -> str:
    """The spec `parse_matching` reads back."""
    return ",".join(name if value is None else f"{name}={value:g}" for name, value in m.active()) or "char"


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
            return self._near_miss(charges)
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
        return self._near_miss(charges)

    def _near_miss(self, charges: np.ndarray) -> np.ndarray:
        floor = self.matching.near_miss
        return np.where(charges > 0.0, np.maximum(charges, floor), 0.0) if floor else charges

    def best_charges(self, ref_words: Sequence[str], hyp_words: Sequence[str]) -> np.ndarray:
        """Each reference word's least charge over the hypothesis words (1 without any)."""
        if not hyp_words:
            return np.ones(len(ref_words))
        return self.charge_matrix(ref_words, hyp_words).min(axis=1)

    def score(self, ref_words: Sequence[str], hyp_words: Sequence[str]) -> float | None:
        """1 - weighted mean charge over the reference words (in [0, 1]), times the order factor;
        None without reference words. ``hyp_words`` are in hypothesis order."""
        if not ref_words:
            return None
        if not hyp_words:
            return 0.0
        w = self.weights(ref_words)
        charges = self.charge_matrix(ref_words, hyp_words)
        value = float(1.0 - np.dot(w, charges.min(axis=1)) / w.sum())
        if self.matching.order and len(ref_words) > 1:
            value *= 1.0 - self.matching.order * discordant_fraction(ordered_best(charges))
        return value


def ordered_best(charges: np.ndarray) -> np.ndarray:
    """For each reference word (row), the position of a least-charged hypothesis word; among equally
    charged ones the first at or after the previous word's choice, so that a repeated word (*di*
    ... *di*) does not count as out of order when an in-order choice exists."""
    chosen = []
    previous = -1
    for row in charges:
        ties = np.flatnonzero(row == row.min())
        later = ties[ties >= previous]
        previous = int(later[0] if len(later) else ties[0])
        chosen.append(previous)
    return np.array(chosen)


def discordant_fraction(positions: np.ndarray) -> float:
    """The fraction of pairs a < b with positions[a] > positions[b] (0 = same order, 1 = reversed)."""
    n = len(positions)
    if n < 2:
        return 0.0
    pos = np.asarray(positions)
    discordant = int(np.triu(pos[:, None] > pos[None, :], k=1).sum())
    return discordant / (n * (n - 1) / 2)
