"""The MWE occurrences of a test set as one table, and the dimensions that bucket them.

An occurrence is one MWE of one test sentence (the unit the MWE score scores); a type is every
occurrence with the same lemma (lower-cased). Attributes come from the test set where it has
them and from the optional inputs otherwise:

- frequency: how often the annotator finds the type in the training source: the test MWEs are
  the lexicon, text and lexicon are tokenized and lemmatized alike (`mwemt.preprocess.annotate`),
  components may be ``max_gap`` tokens apart, and every match counts;
- contiguous vs gapped: from the occurrence's source token indices;
- category (or POS pattern when the test set gives no category);
- compositionality: the test MWE's ``compositionality`` field if the test set has one, else the
  ``mwe<TAB>score`` table, looked up by lemma, display name and surface form; cut into tertiles
  over types (`mwemt.evaluate.compare.buckets`);
- dictionary: whether the augmentation dictionary has the type (compared after the same
  lemmatization as the text).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from mwemt.evaluate.compare import buckets as B
from mwemt.formats import normalize_mwe
from mwemt.records import LexiconEntry, TestItem, TestMwe

MAX_CATEGORIES = 12   # more category/POS buckets than this are pooled as "other"
NO_CATEGORY = "(none)"


def type_key(mwe: TestMwe) -> str:
    """The type an occurrence belongs to: its lemma, lower-cased, single-spaced."""
    return normalize_mwe(mwe.lemma)


def display_name(mwe: TestMwe) -> str:
    """The MWE as people read it: the test set's display name if it has one, else the lemma."""
    return mwe.name or mwe.lemma


def category_of(mwe: TestMwe) -> str:
    """The category, else the POS pattern (a test set may give either), else "(none)"."""
    pos = getattr(mwe, "pos", None)
    if mwe.category:
        return mwe.category
    if pos:
        return pos if isinstance(pos, str) else " ".join(pos)
    return NO_CATEGORY


@dataclass
class MweType:
    key: str
    name: str
    category: str
    occurrences: int = 0
    train_count: int | None = None
    compositionality: float | None = None
    in_dictionary: bool | None = None


@dataclass
class MweTable:
    """Every MWE occurrence of a test set in test-set order (the order of the MWE score's
    ``mwe_scores``), with its sentence, its type and its occurrence-level attributes."""

    mwes: list[TestMwe]
    sentence: np.ndarray      # (N,) sentence index of each occurrence
    type_index: np.ndarray    # (N,) index into ``types``
    types: list[MweType]
    gapped: np.ndarray        # (N,) bool
    n_sentences: int
    sources: dict[str, str] = field(default_factory=dict)   # attribute -> where it came from

    def __len__(self) -> int:
        return len(self.mwes)

    @property
    def type_keys(self) -> list[str]:
        return [t.key for t in self.types]


def build_mwe_table(items: Sequence[TestItem]) -> MweTable:
    mwes: list[TestMwe] = []
    sentence: list[int] = []
    index: dict[str, int] = {}
    types: list[MweType] = []
    type_index: list[int] = []
    for i, item in enumerate(items):
        for m in item.mwes:
            key = type_key(m)
            t = index.get(key)
            if t is None:
                t = index[key] = len(types)
                types.append(MweType(key, display_name(m), category_of(m)))
            types[t].occurrences += 1
            mwes.append(m)
            sentence.append(i)
            type_index.append(t)
    gapped = np.array([B.is_gapped(m.indices) for m in mwes], dtype=bool)
    table = MweTable(mwes, np.array(sentence, dtype=np.int64), np.array(type_index, dtype=np.int64), types,
                     gapped, len(items))
    _compositionality_from_testset(table)
    return table


def _compositionality_from_testset(table: MweTable) -> None:
    """Types take the ``compositionality`` the test set gives their occurrences (if it gives one)."""
    found = False
    for m, t in zip(table.mwes, table.type_index):
        value = getattr(m, "compositionality", None)
        if value is not None and table.types[t].compositionality is None:
            table.types[t].compositionality = float(value)
            found = True
    if found:
        table.sources["compositionality"] = "test set"


def add_compositionality(table: MweTable, values: Mapping[str, float], source: str) -> int:
    """Fill the types the test set gave no compositionality from a table keyed by normalized MWE
    (lemma, display name or a surface form); returns how many types got a value."""
    surfaces: dict[int, list[str]] = {}
    for m, t in zip(table.mwes, table.type_index):
        if m.surface:
            surfaces.setdefault(int(t), []).append(m.surface)
    n = 0
    for t, typ in enumerate(table.types):
        if typ.compositionality is not None:
            continue
        for name in (typ.key, typ.name, *surfaces.get(t, [])):
            value = values.get(normalize_mwe(name))
            if value is not None:
                typ.compositionality = float(value)
                n += 1
                break
    table.sources["compositionality"] = " + ".join(filter(None, [table.sources.get("compositionality"), source]))
    return n


def count_in_corpus(keys: Sequence[str], lines: Iterable[str], *, lang: str, max_gap: int,
                    lemmatizer: str = "simplemma", progress: bool = False, total: int | None = None) -> Counter:
    """How often the annotator finds each MWE type (``keys``: lemmas) in ``lines``."""
    from tqdm import tqdm

    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator

    entries = [LexiconEntry(tuple(k.split())) for k in keys if len(k.split()) >= 2]
    annotator = build_annotator(AnnotatorConfig(lang, lemmatizer=lemmatizer, max_gap=max_gap, filters="none"), entries)
    counts: Counter = Counter()
    for line in tqdm(lines, desc="MWEs in training data", unit="line", total=total, file=sys.stderr,
                     disable=not progress):
        for m in annotator.annotate_text(line).mwes:
            counts[m.lemma] += 1
    return counts


def add_train_counts(table: MweTable, counts: Mapping[str, int], source: str) -> None:
    for typ in table.types:
        typ.train_count = int(counts.get(typ.key, 0))
    table.sources["frequency"] = source


def add_dictionary(table: MweTable, lexicon, source: str) -> None:
    """Mark each type covered or not by ``lexicon`` (a compiled `mwemt.preprocess.lexicon.Lexicon`)."""
    for typ in table.types:
        words = typ.key.split()
        typ.in_dictionary = typ.key in lexicon.by_key or lexicon.normalize(words) in lexicon.normalized
    table.sources["dictionary"] = source


# ---------------------------------------------------------------- dimensions


@dataclass
class Dimension:
    """One way of bucketing the occurrences: a label per bucket and each occurrence's bucket
    (-1: in none, e.g. an MWE without a compositionality value)."""

    key: str
    title: str
    description: str
    labels: list[str]
    assignment: np.ndarray


@dataclass
class SkippedDimension:
    key: str
    title: str
    reason: str


def _per_type(table: MweTable, values: Sequence[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)[table.type_index]


def frequency_dimension(table: MweTable, cutoffs: Sequence[int]) -> Dimension | SkippedDimension:
    title = "Frequency in the training data"
    if "frequency" not in table.sources:
        return SkippedDimension("frequency", title, "no training source given")
    counts = [t.train_count or 0 for t in table.types]
    return Dimension("frequency", title,
                     f"How often the annotator finds the MWE type in {table.sources['frequency']}.",
                     B.frequency_labels(cutoffs), _per_type(table, B.frequency_bucket(counts, cutoffs)))


def contiguity_dimension(table: MweTable) -> Dimension:
    return Dimension("contiguity", "Contiguous vs gapped",
                     "Gapped: another source token stands between two of the MWE's tokens.",
                     [B.CONTIGUOUS, B.GAPPED], table.gapped.astype(np.int64))


def category_dimension(table: MweTable) -> Dimension:
    cats = [table.types[t].category for t in table.type_index]
    counts = Counter(cats)
    ranked = sorted(counts, key=lambda c: (c == NO_CATEGORY, -counts[c], c))
    labels = ranked[:MAX_CATEGORIES]
    if len(ranked) > MAX_CATEGORIES:
        labels.append("other")
    where = {c: k for k, c in enumerate(labels)}
    other = where.get("other", -1)
    return Dimension("category", "Category or POS pattern",
                     "The MWE category (or POS pattern) of the test set; at most "
                     f"{MAX_CATEGORIES} buckets, the rarest pooled as \"other\".",
                     labels, np.array([where.get(c, other) for c in cats], dtype=np.int64))


def compositionality_dimension(table: MweTable) -> Dimension | SkippedDimension:
    title = "Compositionality tertile"
    values = [t.compositionality for t in table.types]
    cuts = B.tertile_cuts([v for v in values if v is not None])
    if cuts is None:
        return SkippedDimension("compositionality", title,
                                "no compositionality: the test set has none and no table was given")
    per_type = [B.tertile(v, cuts) for v in values]
    known = sum(v is not None for v in values)
    return Dimension("compositionality", title,
                     f"Tertiles of compositionality (1 = compositional) over the {known} MWE types that have a "
                     f"value ({table.sources['compositionality']}); {len(values) - known} types have none.",
                     B.tertile_labels(cuts), _per_type(table, per_type))


def dictionary_dimension(table: MweTable) -> Dimension | SkippedDimension:
    title = "Covered by the augmentation dictionary"
    if "dictionary" not in table.sources:
        return SkippedDimension("dictionary", title, "no augmentation dictionary given")
    return Dimension("dictionary", title, f"Whether {table.sources['dictionary']} has the MWE type.",
                     ["in dictionary", "not in dictionary"],
                     _per_type(table, [0 if t.in_dictionary else 1 for t in table.types]))


def dimensions(table: MweTable, freq_cutoffs: Sequence[int]) -> list[Dimension | SkippedDimension]:
    return [frequency_dimension(table, freq_cutoffs), contiguity_dimension(table), category_dimension(table),
            compositionality_dimension(table), dictionary_dimension(table)]


def finite_or_none(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)
