"""Example sentences where two systems differ on an MWE, with the MWE marked in every text.

Selection: for each system against the baseline, the occurrences it hits and the baseline misses
("wins") and the reverse ("losses"), the largest differences in MWE score first, one example per
MWE type before any type gets a second one, ties in test-set order. Deterministic.

Marking: in the source, the MWE's tokens (its test-set indices into ``source.split()``). In the
reference, the tokens the test set says the MWE translation came from (``reference_indices``)
when it has them, else the words of the MWE's reference translation found there. In a
hypothesis, for each word of the MWE's reference translation, the closest hypothesis word (the
match the MWE score charges): exact when it is the same word, partial when it is merely close
(at most half of the word's characters edited: "partecipa" for "partecipano"). Spans are character offsets into the text as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from mwemt.evaluate.mwe_score import MweScore
from mwemt.records import TestItem, TestMwe

EXACT, PARTIAL = "exact", "partial"
Span = tuple[int, int, str]   # start, end, kind


def whitespace_token_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def token_spans(text: str, tokens: Sequence[str]) -> list[tuple[int, int]] | None:
    """Character offsets of tokens found in order in ``text``; None if one is not found (the
    tokenizer changed it)."""
    spans = []
    pos = 0
    for tok in tokens:
        start = text.find(tok, pos)
        if start < 0:
            return None
        spans.append((start, start + len(tok)))
        pos = start + len(tok)
    return spans


def merge_adjacent(text: str, spans: Sequence[Span]) -> list[Span]:
    """Spans of one kind separated only by spaces become one ("**Fa attenzione**", not two marks)."""
    out: list[Span] = []
    for start, end, kind in sorted(spans):
        if out and out[-1][2] == kind and out[-1][1] <= start and not text[out[-1][1]:start].strip():
            out[-1] = (out[-1][0], end, kind)
        else:
            out.append((start, end, kind))
    return out


def source_spans(item: TestItem, mwe: TestMwe) -> list[Span]:
    spans = whitespace_token_spans(item.source)
    return merge_adjacent(item.source, [(*spans[i], EXACT) for i in mwe.indices if i < len(spans)])


def matched_spans(text: str, reference: str, metric: MweScore, *, exact_only: bool = False) -> list[Span]:
    """Spans of the words of ``text`` closest to each word of the MWE reference translation."""
    ref_words = metric.ref_words(reference)
    hw = metric.hyp_words(text)
    if not ref_words or not hw.words:
        return []
    tokens = metric.moses_tokens(text)
    spans = token_spans(text, tokens)
    if spans is None:
        return []
    dist = cdist(list(ref_words), list(hw.words), scorer=Levenshtein.distance, dtype=np.int32)
    out: dict[int, str] = {}
    for r, word in enumerate(ref_words):
        j = int(dist[r].argmin())
        d = int(dist[r, j])
        if d == 0:
            out[hw.token_index[j]] = EXACT
        elif 2 * d <= len(word) and not exact_only:
            out.setdefault(hw.token_index[j], PARTIAL)
    return merge_adjacent(text, [(*spans[t], kind) for t, kind in sorted(out.items())])


def reference_spans(item: TestItem, mwe: TestMwe, metric: MweScore) -> list[Span]:
    indices = mwe.reference_indices
    if indices:
        spans = whitespace_token_spans(item.reference)
        return merge_adjacent(item.reference, [(*spans[i], EXACT) for i in indices if i < len(spans)])
    return matched_spans(item.reference, mwe.reference, metric, exact_only=True)


@dataclass(frozen=True)
class ExampleChoice:
    system: int
    direction: str        # "win": the system hits, the baseline misses; "loss": the reverse
    occurrences: tuple[int, ...]


def select_examples(hits: np.ndarray, scores: np.ndarray, type_index: np.ndarray, per_direction: int,
                    baseline: int = 0) -> list[ExampleChoice]:
    """Occurrences to show for every system against the baseline, both directions (module docstring).

    ``hits`` and ``scores``: (systems, occurrences); NaN scores count as 0 for the ordering."""
    out = []
    filled = np.nan_to_num(scores, nan=0.0)
    for k in range(hits.shape[0]):
        if k == baseline:
            continue
        for direction, mask in (("win", hits[k] & ~hits[baseline]), ("loss", hits[baseline] & ~hits[k])):
            candidates = np.flatnonzero(mask)
            gap = np.abs(filled[k, candidates] - filled[baseline, candidates])
            ordered = candidates[np.lexsort((candidates, -gap))]
            out.append(ExampleChoice(k, direction, tuple(_diverse(ordered, type_index, per_direction))))
    return out


def _diverse(ordered: np.ndarray, type_index: np.ndarray, limit: int) -> list[int]:
    """The first ``limit`` of ``ordered``, new types first."""
    seen: set[int] = set()
    first, rest = [], []
    for occ in ordered:
        t = int(type_index[occ])
        (rest if t in seen else first).append(int(occ))
        seen.add(t)
        if len(first) >= limit:
            break
    return (first + rest)[:limit]
