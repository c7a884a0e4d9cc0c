"""Choosing the sentences of an MWE test set: many MWE types, few repeats, nothing seen in training.

A test built from every lexicon match in random text is dominated by a handful of frequent,
mostly literal verb+preposition pairs ("go to", "talk to"), which a model translates word by word.
Such a test cannot show what MWE-aware methods do. So `mwemt testset build` selects:

- **a cap per type**: at most ``max_per_type`` occurrences of each MWE type (its lexicon form);
  MWEs over the cap are dropped from their sentence (listed in the item's ``meta.capped``), and a
  sentence left without MWEs is not selected;
- **coverage first**: candidate sentences are visited in a seeded random order, level by level: the
  first pass takes the sentences that bring an MWE type not yet in the test, the second pass those
  that bring a type's second occurrence, and so on up to the cap; selection stops once
  ``target_mwes`` MWEs are in (0: as many as the pool gives);
- **disjointness from training**: a candidate whose near-duplicate key (`near_duplicate_key`:
  casefolded words, punctuation and spacing ignored) or whose reference's key occurs in the training
  text (either side), or whose source repeats a candidate taken before it, is never selected.

Each kept MWE can then be put in a test *part* (`assign_parts`): "idiomatic" when its predicted
compositionality is low or identification is confident it is idiomatic, "literal" otherwise, so a
scorer reports the literal look-alikes apart from the MWEs the methods are meant for.

Everything here is pure and deterministic for a given seed.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from mwemt.errors import MwemtError
from mwemt.records import TestItem, TestMwe

_WORD = re.compile(r"\w+")


def near_duplicate_key(text: str) -> str:
    """The key two sentences share when they differ only in case, punctuation or spacing
    ("Tom is here!" and "tom is here .")."""
    return " ".join(_WORD.findall(text.casefold()))


def type_key(lexicon_form: str) -> str:
    """The key of an MWE type: its lexicon form, casefolded."""
    return lexicon_form.casefold()


def mwe_type(mwe: TestMwe) -> str:
    """What the cap counts: the MWE's lexicon form, so "has got" and "had got" are one type."""
    return type_key(mwe.name or mwe.lemma)


@dataclass(frozen=True)
class SelectionConfig:
    """How many MWEs to select and how often one type may occur (0 = no limit)."""

    max_per_type: int = 3
    target_mwes: int = 0
    seed: int = 1

    def __post_init__(self) -> None:
        if self.max_per_type < 0 or self.target_mwes < 0:
            raise MwemtError("selection needs max_per_type >= 0 and target_mwes >= 0")


@dataclass
class SelectionReport:
    """What selection did, for the test set's manifest."""

    candidates: int = 0                 # pool items with at least one MWE
    excluded_training_duplicates: int = 0
    excluded_pool_duplicates: int = 0
    mwes_in_pool: int = 0
    types_in_pool: int = 0
    selected_items: int = 0
    selected_mwes: int = 0
    selected_types: int = 0
    capped_mwes: int = 0               # dropped from selected sentences by the cap
    target_reached: bool = True
    selected_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {k: v for k, v in vars(self).items()}

    def summary(self) -> str:
        return (f"Selected {self.selected_mwes} MWEs of {self.selected_types} types in {self.selected_items} "
                f"sentences from {self.candidates} candidates ({self.mwes_in_pool} MWEs of {self.types_in_pool} "
                f"types); {self.excluded_training_duplicates} candidates left out as near-duplicates of training "
                f"text, {self.excluded_pool_duplicates} as repeats in the pool; {self.capped_mwes} MWEs over the "
                f"per-type cap dropped" + ("" if self.target_reached else "; the target was NOT reached"))


def select_testset(items: Sequence[TestItem], config: SelectionConfig = SelectionConfig(),
                   exclude_keys: Iterable[str] = ()) -> tuple[list[TestItem], SelectionReport]:
    """The selected items (in pool order, MWEs over the cap removed) and a report; see the module
    docstring. ``exclude_keys`` are `near_duplicate_key` values of the training text (source and
    target sentences alike: a test pair is left out when either of its sides is among them)."""
    excluded = set(exclude_keys)
    report = SelectionReport()
    pool: list[int] = []
    seen_keys: set[str] = set()
    types_in_pool: set[str] = set()
    for k, item in enumerate(items):
        if not item.mwes:
            continue
        report.candidates += 1
        key = near_duplicate_key(_raw_source(item))
        if key in excluded or near_duplicate_key(item.meta.get("raw_reference") or item.reference) in excluded:
            report.excluded_training_duplicates += 1
            continue
        if key in seen_keys:
            report.excluded_pool_duplicates += 1
            continue
        seen_keys.add(key)
        pool.append(k)
        report.mwes_in_pool += len(item.mwes)
        types_in_pool.update(mwe_type(m) for m in item.mwes)
    report.types_in_pool = len(types_in_pool)
    chosen = _choose(items, pool, config, report)
    selected = [_capped(items[k], keep) for k, keep in sorted(chosen.items())]
    report.selected_items = len(selected)
    report.selected_mwes = sum(len(it.mwes) for it in selected)
    report.capped_mwes = sum(len(it.meta.get("capped", [])) for it in selected)
    report.selected_types = len({mwe_type(m) for it in selected for m in it.mwes})
    report.selected_ids = [it.id for it in selected]
    report.target_reached = not config.target_mwes or report.selected_mwes >= config.target_mwes
    return selected, report


def _raw_source(item: TestItem) -> str:
    return item.meta.get("raw_source") or item.source


def _choose(items: Sequence[TestItem], pool: list[int], config: SelectionConfig,
            report: SelectionReport) -> dict[int, frozenset[int]]:
    """Pool index -> the positions of its MWEs that are kept, chosen level by level."""
    order = list(pool)
    random.Random(config.seed).shuffle(order)
    counts: Counter[str] = Counter()
    chosen: dict[int, frozenset[int]] = {}
    total = 0
    levels = range(1, config.max_per_type + 1) if config.max_per_type else [None]
    for level in levels:
        before = len(chosen)
        for k in order:
            if k in chosen:
                continue
            keep = _keepable(items[k].mwes, counts, level, config.max_per_type)
            if keep is None:
                continue
            chosen[k] = keep
            for pos in keep:
                counts[mwe_type(items[k].mwes[pos])] += 1
            total += len(keep)
            if config.target_mwes and total >= config.target_mwes:
                return chosen
        # a level above every count that chose nothing: each sentence left passed the level test and was
        # refused by the cap, and counts no longer change, so no higher level chooses one (a cap of 10**20
        # would otherwise loop that many times)
        if len(chosen) == len(order) or (len(chosen) == before and level > max(counts.values(), default=0)):
            break
    return chosen


def _keepable(mwes: Sequence[TestMwe], counts: Counter, level: int | None, cap: int) -> frozenset[int] | None:
    """The MWEs a sentence would add, or None when it adds nothing at this level: at level L a
    sentence must bring some type that has fewer than L occurrences so far."""
    if level is not None and not any(counts[mwe_type(m)] < level for m in mwes):
        return None
    keep: list[int] = []
    added: Counter[str] = Counter()
    for pos, m in enumerate(mwes):
        t = mwe_type(m)
        if not cap or counts[t] + added[t] < cap:
            keep.append(pos)
            added[t] += 1
    return frozenset(keep) if keep else None


def _capped(item: TestItem, keep: frozenset[int]) -> TestItem:
    dropped = [{"indices": list(m.indices), "name": m.display_name} for p, m in enumerate(item.mwes) if p not in keep]
    meta = dict(item.meta)
    if dropped:
        meta["capped"] = dropped
    return replace(item, mwes=[m for p, m in enumerate(item.mwes) if p in keep], meta=meta)


# ---------------------------------------------------------------- parts


@dataclass(frozen=True)
class PartRule:
    """When a test MWE counts as idiomatic: predicted compositionality at most
    ``max_compositionality``, or identification confidence at least ``min_confidence``. None turns
    a criterion off; an MWE with neither score known is put in no part."""

    max_compositionality: float | None = None
    min_confidence: float | None = 0.5

    def part(self, mwe: TestMwe) -> str:
        comp, conf = mwe.compositionality, mwe.confidence
        known = False
        if self.max_compositionality is not None and comp is not None:
            known = True
            if comp <= self.max_compositionality:
                return "idiomatic"
        if self.min_confidence is not None and conf is not None:
            known = True
            if conf >= self.min_confidence:
                return "idiomatic"
        return "literal" if known else ""


def lower_tertile(values: Iterable[float]) -> float | None:
    """The largest value of the lowest third (the default compositionality threshold), None if empty."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(0, len(ordered) // 3 - 1)]


def with_scores(items: Sequence[TestItem], compositionality: Mapping[str, float | None]) -> list[TestItem]:
    """Items whose MWEs carry their type's predicted compositionality, looked up by lexicon form,
    then lemma, casefolded (each occurrence's identification confidence comes with it already)."""
    table = {type_key(k): v for k, v in compositionality.items()}
    out = []
    for it in items:
        mwes = [replace(m, compositionality=table.get(mwe_type(m), table.get(type_key(m.lemma)))) for m in it.mwes]
        out.append(replace(it, mwes=mwes))
    return out


def assign_parts(items: Sequence[TestItem], rule: PartRule) -> list[TestItem]:
    """Items whose MWEs carry their part under ``rule``."""
    return [replace(it, mwes=[replace(m, part=rule.part(m)) for m in it.mwes]) for it in items]
