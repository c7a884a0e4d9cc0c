"""An MWE lexicon compiled for matching against lemmatized sentences.

Entries are normalized with the *same* tokenizer and lemmatizer as the text they will be
matched against, so "took care of" in text meets "take care of" in the lexicon whatever the
lemmatizer does to each word.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence

from mwemt.preprocess.lemmatize import Lemmatizer
from mwemt.preprocess.tokenize import tokenize
from mwemt.records import LexiconEntry

END = ""  # trie key marking a complete entry (never a lemma: lemmas are non-empty)


class Lexicon:
    """A set of MWE types with an index from first lemma to the entries starting with it."""

    def __init__(self, entries: Iterable[LexiconEntry], lemmatizer: Lemmatizer | None = None,
                 lang: str = "en", name: str = "lexicon", tokenize_entries: bool = True):
        self.name = name
        self.tokenize_entries = tokenize_entries
        self.lang = lang
        self.lemmatizer = lemmatizer
        self.entries: list[LexiconEntry] = []
        self.by_key: dict[str, LexiconEntry] = {}
        self.normalized: dict[tuple[str, ...], LexiconEntry] = {}
        self.index: dict[str, list[tuple[tuple[str, ...], LexiconEntry]]] = defaultdict(list)
        # a trie over normalized lemmas: each node maps a lemma to a child; END marks a complete entry
        self.trie: dict = {}
        self._build(entries)

    def _build(self, entries: Iterable[LexiconEntry]) -> None:
        self.entries, self.by_key, self.normalized, self.trie = [], {}, {}, {}
        self._any_order_trie: dict | None = None
        self.index = defaultdict(list)
        for e in entries:
            self.add(e)
        for bucket in self.index.values():
            bucket.sort(key=lambda pair: (-len(pair[0]), pair[0]))

    def set_lemmatizer(self, lemmatizer: Lemmatizer | None) -> None:
        """Re-normalize every entry with another lemmatizer (the one the text will be lemmatized with)."""
        if lemmatizer is not self.lemmatizer:
            self.lemmatizer = lemmatizer
            self._build(list(self.entries))

    def normalize(self, words: Sequence[str]) -> tuple[str, ...]:
        """Tokenize each component as text would be (unless told not to), then lemmatize (lowercased)."""
        if self.tokenize_entries:
            toks = [t for w in words for t in ((tokenize(w, self.lang) or [w]) if len(w) > 1 else [w])]
        else:
            toks = list(words)
        if self.lemmatizer is None:
            return tuple(t.lower() for t in toks)
        return tuple(self.lemmatizer.lemmatize(toks))

    def add(self, entry: LexiconEntry) -> None:
        if entry.key in self.by_key:
            old = self.by_key[entry.key]
            if entry.count:
                merged = LexiconEntry(old.lemmas, old.category or entry.category, old.pos or entry.pos,
                                      old.compositionality if old.compositionality is not None
                                      else entry.compositionality, old.count + entry.count,
                                      tuple(dict.fromkeys(old.translations + entry.translations)),
                                      old.source_line)
                self._replace(old, merged)
            return
        norm = self.normalize(entry.lemmas)
        self.entries.append(entry)
        self.by_key[entry.key] = entry
        if len(norm) < 2 or norm in self.normalized:
            return  # matching needs two tokens; a duplicate normal form matches as the first entry
        self.normalized[norm] = entry
        self.index[norm[0]].append((norm, entry))
        _insert(self.trie, norm, entry)
        self._any_order_trie = None

    @property
    def any_order_trie(self) -> dict:
        """The trie plus every other word order of each entry of 2-4 words (built on first use).

        A reordering that is not itself an entry ends in a derived entry whose lemmas are the
        entry's in that order (``alleare si`` from ``si alleare``), so a match says which order it
        found; `mwemt.preprocess.filters` decides whether an order never annotated is kept.
        """
        if self._any_order_trie is None:
            import itertools

            trie: dict = {}
            for norm, entry in self.normalized.items():
                _insert(trie, norm, entry)
            for norm, entry in list(self.normalized.items()):
                if not 2 <= len(norm) <= 4 or len(norm) != len(entry.lemmas):
                    continue
                for perm in itertools.permutations(range(len(norm))):
                    other = tuple(norm[i] for i in perm)
                    if other in self.normalized:
                        continue  # the identity, or an order that is an entry of its own
                    node = _insert(trie, other, None)
                    if END not in node:
                        node[END] = LexiconEntry(tuple(entry.lemmas[i] for i in perm), entry.category,
                                                 tuple(entry.pos[i] for i in perm) if entry.pos else None)
            self._any_order_trie = trie
        return self._any_order_trie

    def _replace(self, old: LexiconEntry, new: LexiconEntry) -> None:
        self._any_order_trie = None
        self.entries[self.entries.index(old)] = new
        self.by_key[new.key] = new
        for norm, e in list(self.normalized.items()):
            if e is old:
                self.normalized[norm] = new
                bucket = self.index[norm[0]]
                bucket[:] = [(n, new if x is old else x) for n, x in bucket]
                node = self.trie
                for lem in norm:
                    node = node[lem]
                node[END] = new

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: str) -> bool:
        return key in self.by_key

    @property
    def max_length(self) -> int:
        return max((len(n) for n in self.normalized), default=0)

    def fingerprint(self) -> str:
        """A short content hash, for signatures and caches."""
        h = hashlib.sha256()
        for e in sorted(self.entries, key=lambda e: e.key):
            h.update(e.key.encode("utf-8") + b"\t" + e.category.encode("utf-8") + b"\n")
        return h.hexdigest()[:12]


def _insert(trie: dict, lemmas: Sequence[str], entry: LexiconEntry | None) -> dict:
    """Walk (creating) the path of ``lemmas``; mark it with ``entry`` if given; the final node."""
    node = trie
    for lem in lemmas:
        node = node.setdefault(lem, {})
    if entry is not None:
        node[END] = entry
    return node
