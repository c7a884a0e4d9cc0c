"""An MWE lexicon compiled for matching against lemmatised sentences.

Entries are normalised with the *same* tokeniser and lemmatiser as the text they will be
matched against, so "took care of" in text meets "take care of" in the lexicon whatever the
lemmatiser does to each word.
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
        self.normalised: dict[tuple[str, ...], LexiconEntry] = {}
        self.index: dict[str, list[tuple[tuple[str, ...], LexiconEntry]]] = defaultdict(list)
        # a trie over normalised lemmas: each node maps a lemma to a child; END marks a complete entry
        self.trie: dict = {}
        self._build(entries)

    def _build(self, entries: Iterable[LexiconEntry]) -> None:
        self.entries, self.by_key, self.normalised, self.trie = [], {}, {}, {}
        self._any_order_trie: dict | None = None
        self.index = defaultdict(list)
        for e in entries:
            self.add(e)
        for bucket in self.index.values():
            bucket.sort(key=lambda pair: (-len(pair[0]), pair[0]))

    def set_lemmatizer(self, lemmatizer: Lemmatizer | None) -> None:
        """Re-normalise every entry with another lemmatiser (the one the text will be lemmatised with)."""
        if lemmatizer is not self.lemmatizer:
            self.lemmatizer = lemmatizer
            self._build(list(self.entries))

    def normalise(self, words: Sequence[str]) -> tuple[str, ...]:
        """Tokenise each component as text would be (unless told not to), then lemmatise (lowercased)."""
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
        norm = self.normalise(entry.lemmas)
        self.entries.append(entry)
        self.by_key[entry.key] = entry
        if len(norm) < 2 or norm in self.normalised:
            return  # matching needs two tokens; a duplicate normal form matches as the first entry
        self.normalised[norm] = entry
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
            for norm, entry in self.normalised.items():
                _insert(trie, norm, entry)
            for norm, entry in list(self.normalised.items()):
                if not 2 <= len(norm) <= 4 or len(norm) != len(entry.lemmas):
                    continue
                for perm in itertools.permutations(range(len(norm))):
                    other = tuple(norm[i] for i in perm)
                    if other in self.normalised:
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
        for norm, e in list(self.normalised.items()):
            if e is old:
                self.normalised[norm] = new
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
        return max((len(n) for n in self.normalised), default=0)

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


def load_lexicon(path, fmt: str = "auto", *, lang: str = "en", lemmatizer: str | Lemmatizer = "simplemma",
                 side: str = "source", tokenize_entries: bool = True) -> Lexicon:
    """Read a lexicon file in any supported format and compile it for ``lang``."""
    from pathlib import Path

    from mwemt.formats import read_lexicon_entries
    from mwemt.preprocess.lemmatize import get_lemmatizer

    lem = get_lemmatizer(lemmatizer, lang) if isinstance(lemmatizer, str) else lemmatizer
    entries = read_lexicon_entries(path, fmt, side=side, lang=lang)
    return Lexicon(entries, lem, lang=lang, name=Path(str(path)).name, tokenize_entries=tokenize_entries)
