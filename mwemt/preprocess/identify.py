"""Find lexicon MWEs in lemmatized sentences, contiguous or with gaps.

Matching is on lemmas (lowercased), and, given the surface forms, a match must also agree with
them (`Lexicon.agreeing`: *white best* does not match *white goods* although both lemmatize to
*white good*). Components must appear in lexicon order; between two
consecutive components at most ``max_gap`` other tokens may stand. Overlapping candidates are
resolved deterministically: more tokens first, then the tighter span, then leftmost, then the
lexicon key, so the same input always gives the same MWEs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mwemt.preprocess.lexicon import END, Lexicon
from mwemt.records import LexiconEntry, Mwe

Accept = Callable[[LexiconEntry, tuple[int, ...]], "LexiconEntry | None"]


def _walk(lemmas: Sequence[str], start: int, node: dict, max_gap: int, out: list[Mwe], accept: Accept) -> None:
    """Every entry reachable from ``start`` through the trie, each at its tightest-leftmost match
    that ``accept`` agrees with (it names the entry to report, or None).

    The depth-first search tries the nearest next position first, so the first match found for
    an entry is its tightest, leftmost one; later matches of the same entry are ignored.
    """
    n = len(lemmas)
    if max_gap == 0:
        j = start + 1
        while True:
            entry = node.get(END)
            if entry is not None:
                indices = tuple(range(start, j))
                entry = accept(entry, indices)
                if entry is not None:
                    out.append(Mwe(indices, entry.key, entry.category))
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
            entry = accept(entry, tuple(path))
            if entry is not None:
                seen.add(node[END].key)
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
                    any_order: bool = False, forms: Sequence[str] | None = None) -> list[Mwe]:
    """Every lexicon match at every start position, before overlap resolution.

    ``any_order`` also matches the other word orders of each entry (`Lexicon.any_order_trie`).
    ``forms`` (the tokens as written): matches must agree with them (`Lexicon.agreeing`); None =
    lemmas only.
    """
    if forms is not None and len(forms) != len(lemmas):
        raise ValueError(f"{len(forms)} forms but {len(lemmas)} lemmas")
    out: list[Mwe] = []
    trie = lexicon.any_order_trie if any_order else lexicon.trie

    def accept(entry: LexiconEntry, indices: tuple[int, ...]) -> LexiconEntry | None:
        return lexicon.agreeing(entry, indices, forms)

    for i, lem in enumerate(lemmas):
        node = trie.get(lem)
        if node is not None:
            _walk(lemmas, i, node, max_gap, out, accept)
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


def identify(lemmas: Sequence[str], lexicon: Lexicon, max_gap: int = 0,
             forms: Sequence[str] | None = None) -> list[Mwe]:
    """The MWEs of one lemmatized sentence, non-overlapping, in sentence order (``forms``: the
    tokens as written, which matches must agree with)."""
    return resolve_overlaps(find_candidates(lemmas, lexicon, max_gap, forms=forms))
