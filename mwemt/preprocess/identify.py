"""Find lexicon MWEs in lemmatized sentences, contiguous or with gaps.

Matching is on lemmas (lowercased). Components must appear in lexicon order; between two
consecutive components at most ``max_gap`` other tokens may stand. Overlapping candidates are
resolved deterministically: more tokens first, then the tighter span, then leftmost, then the
lexicon key, so the same input always gives the same MWEs.
"""

from __future__ import annotations

from collections.abc import Sequence

from mwemt.preprocess.lexicon import END, Lexicon
from mwemt.records import Mwe


def _walk(lemmas: Sequence[str], start: int, node: dict, max_gap: int, out: list[Mwe]) -> None:
    """Every entry reachable from ``start`` through the trie, each at its tightest-leftmost match.

    The depth-first search tries the nearest next position first, so the first match found for
    an entry is its tightest, leftmost one; later matches of the same entry are ignored.
    """
    n = len(lemmas)
    if max_gap == 0:
        j = start + 1
        while True:
            entry = node.get(END)
            if entry is not None:
                out.append(Mwe(tuple(range(start, j)), entry.key, entry.category))
            if j >= n:
                return
            node = node.get(lemmas[j])
            if node is None:
                return
            j += 1
    seen: set[str] = set()
    path = [start]

    def visit(node: dict) -> None:
        entry = node.get(END)
        if entry is not None and entry.key not in seen:
            seen.add(entry.key)
            out.append(Mwe(tuple(path), entry.key, entry.category))
        prev = path[-1]
        for j in range(prev + 1, min(n, prev + 2 + max_gap)):
            child = node.get(lemmas[j])
            if child is not None:
                path.append(j)
                visit(child)
                path.pop()

    visit(node)


def find_candidates(lemmas: Sequence[str], lexicon: Lexicon, max_gap: int = 0, *,
                    any_order: bool = False) -> list[Mwe]:
    """Every lexicon match at every start position, before overlap resolution.

    ``any_order`` also matches the other word orders of each entry (`Lexicon.any_order_trie`).
    """
    out: list[Mwe] = []
    trie = lexicon.any_order_trie if any_order else lexicon.trie
    for i, lem in enumerate(lemmas):
        node = trie.get(lem)
        if node is not None:
            _walk(lemmas, i, node, max_gap, out)
    return out


def resolve_overlaps(candidates: Sequence[Mwe], by_confidence: bool = False) -> list[Mwe]:
    """Keep a non-overlapping subset: longest first, then tighter, then leftmost; sorted by position.

    ``by_confidence``: the most confident candidate first (confidence None counts as 0), then as above.
    """
    if by_confidence:
        order = sorted(candidates, key=lambda m: (-(m.confidence or 0.0), -m.length, m.span[1] - m.span[0],
                                                  m.span[0], m.lemma))
    else:
        order = sorted(candidates, key=lambda m: (-m.length, m.span[1] - m.span[0], m.span[0], m.lemma))
    taken: set[int] = set()
    kept: list[Mwe] = []
    for m in order:
        if taken.isdisjoint(m.indices):
            kept.append(m)
            taken.update(m.indices)
    kept.sort(key=lambda m: m.indices)
    return kept


def identify(lemmas: Sequence[str], lexicon: Lexicon, max_gap: int = 0) -> list[Mwe]:
    """The MWEs of one lemmatized sentence, non-overlapping, in sentence order."""
    return resolve_overlaps(find_candidates(lemmas, lexicon, max_gap))
