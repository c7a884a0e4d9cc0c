"""An MWE lexicon compiled for matching against lemmatized sentences.

Entries are normalized with the *same* tokenizer and lemmatizer as the text they will be
matched against, so "took care of" in text meets "take care of" in the lexicon whatever the
lemmatizer does to each word.

**Surface agreement.** Lemmatizing an entry must not create a key that other words match: the
lemmatizer maps *goods* and *best* to *good*, so the key of *white goods* would match "white best".
For lexicons written in citation form (every format but ``.cupt``, whose entries are lemma
sequences matched against a LEMMA column) each entry word therefore carries a rule
(`word_rules`) that a match must also satisfy on the text's surface forms:

- a word the entry does not give in its lemma form (*goods*, *being*, *tasting*, *abandoned*,
  *fours*) matches only that surface form;
- a word the entry gives in its lemma form matches any form with that lemma only where the MWE
  inflects: the verb of a verbal entry (*took care of*, *gave up*), the head noun of a nominal
  one (*ivory towers*, *points of view*: English nouns are headed by their last word, or by the
  word before a preposition), and every word of an entry given as lemmas with a part of speech
  per word (lexicons extracted from annotated data). Elsewhere the surface must be the entry's
  (*love apple* does not match "loves apples"). Adjectival and adverbial entries do not inflect;
- a noun may only take forms that begin like the lemma (*men* for *man*), never a suppletive
  form of another lexeme that the lemmatizer happens to merge with it (*best* for *good*).

The part of speech comes from the entry's per-word POS, else from a WordNet lexicographer file
in its category (``noun.artifact``, ``verb.motion``: the OEWN reader puts it there); without
either, every word in lemma form may inflect. The name shown for a match is always the entry as
the lexicon writes it (`Mwe.lemma` = `LexiconEntry.key`).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from mwemt.preprocess.lemmatize import Lemmatizer
from mwemt.preprocess.tokenize import tokenize
from mwemt.records import LexiconEntry

END = ""  # trie key marking a complete entry (never a lemma: lemmas are non-empty)

# how a text word may differ from the entry word it matches (the lemmas are equal already)
EXACT = 0    # the same surface form (case aside)
NOMINAL = 1  # any form with the entry word's lemma that begins with the same letter (plurals)
VERBAL = 2   # any form with the entry word's lemma (went/go, was/be)
_WORDNET_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_VERB_TAGS = frozenset({"VERB", "AUX", "V", "v"})
# words after which an English nominal MWE's head stands (point of view, mother in law)
_EN_NOMINAL_LINKS = frozenset({"of", "in", "on", "at", "for", "to", "from", "with", "by", "under", "over",
                               "about", "into", "de", "du", "la", "le", "-", "'s"})


def entry_pos_class(entry: LexiconEntry) -> str | None:
    """'n', 'v', 'a' or 'r' from a WordNet lexicographer file in the category (``noun.artifact``), else None."""
    head = entry.category.split(".", 1)[0] if "." in entry.category else ""
    return _WORDNET_POS.get(head)


def word_rules(entry: LexiconEntry, tokens: Sequence[str], lang: str = "en") -> tuple[int, ...]:
    """Per entry token, how far a text word may differ from it: EXACT, NOMINAL or VERBAL (see the
    module docstring). ``tokens`` are the entry's words as the text tokenizer splits them. Whether
    the entry word is in lemma form is checked when matching (`Lexicon.agrees`)."""
    n = len(tokens)
    if entry.pos and len(entry.pos) == n:
        return tuple(VERBAL if p in _VERB_TAGS else NOMINAL for p in entry.pos)
    pos = entry_pos_class(entry)
    if pos == "v":
        return (VERBAL,) + (EXACT,) * (n - 1)
    if pos in ("a", "r"):
        return (EXACT,) * n
    if pos == "n" and lang == "en":
        head = n - 1
        for i in range(1, n - 1):
            if tokens[i].lower() in _EN_NOMINAL_LINKS:
                head = i - 1
                break
        return tuple(NOMINAL if i == head else EXACT for i in range(n))
    return (NOMINAL,) * n


class Lexicon:
    """A set of MWE types with an index from first lemma to the entries starting with it."""

    def __init__(self, entries: Iterable[LexiconEntry], lemmatizer: Lemmatizer | None = None,
                 lang: str = "en", name: str = "lexicon", tokenize_entries: bool = True,
                 surface_agreement: bool | None = None):
        self.name = name
        self.tokenize_entries = tokenize_entries
        # entries in citation form must agree with the text's surface (module docstring); lemma
        # sequences (.cupt lexicons, not tokenized) are matched on lemmas alone
        self.surface_agreement = tokenize_entries if surface_agreement is None else surface_agreement
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
        # per entry key: its tokens (lowercased) and their rules; other entries with the same key
        self.rules: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {}
        self.same_key: dict[tuple[str, ...], list[LexiconEntry]] = defaultdict(list)
        self._lemma_form: dict[str, bool] = {}
        self._norm_of: dict[str, tuple[str, ...]] = {}
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

    def tokens(self, words: Sequence[str]) -> list[str]:
        """The components as the text tokenizer splits them (unless entries are not tokenized)."""
        if self.tokenize_entries:
            return [t for w in words for t in ((tokenize(w, self.lang) or [w]) if len(w) > 1 else [w])]
        return list(words)

    def normalize(self, words: Sequence[str]) -> tuple[str, ...]:
        """Tokenize each component as text would be (unless told not to), then lemmatize (lowercased)."""
        return self._lemmas(self.tokens(words))

    def _lemmas(self, toks: Sequence[str]) -> tuple[str, ...]:
        if self.lemmatizer is None:
            return tuple(t.lower() for t in toks)
        return tuple(self.lemmatizer.lemmatize(toks))

    def _is_lemma_form(self, word: str) -> bool:
        low = word.lower()
        known = self._lemma_form.get(low)
        if known is None:
            known = self._lemma_form[low] = self.lemmatizer is None or self.lemmatizer.lemma(word) == low
        return known

    def _rules_of(self, entry: LexiconEntry, toks: Sequence[str] | None = None
                  ) -> tuple[tuple[str, ...], tuple[int, ...]]:
        toks = self.tokens(entry.lemmas) if toks is None else toks
        rules = word_rules(entry, toks, self.lang)
        # a word not in lemma form keeps its surface, whatever the part of speech
        return tuple(t.lower() for t in toks), tuple(r if self._is_lemma_form(t) else EXACT
                                                     for t, r in zip(toks, rules))

    def agrees(self, entry: LexiconEntry, indices: Sequence[int], forms: Sequence[str]) -> bool:
        """Do the text's surface ``forms`` at ``indices`` agree with ``entry`` (module docstring)?
        Entries without rules (surface agreement off, derived word orders) always agree."""
        rule = self.rules.get(entry.key) if self.surface_agreement else None
        if rule is None or len(rule[0]) != len(indices):
            return True
        for word, how, i in zip(rule[0], rule[1], indices):
            form = forms[i].lower()
            if form == word or how == VERBAL or (how == NOMINAL and form[:1] == word[:1]):
                continue
            return False
        return True

    def agreeing(self, entry: LexiconEntry, indices: Sequence[int], forms: Sequence[str] | None
                 ) -> LexiconEntry | None:
        """The first entry with ``entry``'s normalized form that the surface agrees with (None: none);
        ``forms`` None: no surface to check, ``entry`` itself."""
        if forms is None or not self.surface_agreement:
            return entry
        if self.agrees(entry, indices, forms):
            return entry
        for other in self.same_key.get(self._norm_of.get(entry.key, ()), ()):
            if self.agrees(other, indices, forms):
                return other
        return None

    def add(self, entry: LexiconEntry) -> None:
        if entry.key in self.by_key:
            old = self.by_key[entry.key]
            if self.surface_agreement and entry.key in self.rules:
                # the same words under another part of speech: each word inflects if either lets it
                toks, rules = self.rules[entry.key]
                other = self._rules_of(entry)[1]
                if len(other) == len(rules):
                    self.rules[entry.key] = (toks, tuple(max(a, b) for a, b in zip(rules, other)))
            if entry.count:
                merged = LexiconEntry(old.lemmas, old.category or entry.category, old.pos or entry.pos,
                                      old.compositionality if old.compositionality is not None
                                      else entry.compositionality, old.count + entry.count,
                                      tuple(dict.fromkeys(old.translations + entry.translations)),
                                      old.source_line)
                self._replace(old, merged)
            return
        toks = self.tokens(entry.lemmas)
        norm = self._lemmas(toks)
        self.entries.append(entry)
        self.by_key[entry.key] = entry
        if self.surface_agreement:
            self.rules[entry.key] = self._rules_of(entry, toks)
            self._norm_of[entry.key] = norm
        if len(norm) < 2:
            return  # matching needs two tokens
        if norm in self.normalized:
            # a duplicate normal form matches as the first entry, or as this one where only this
            # one agrees with the surface (`agreeing`)
            self.same_key[norm].append(entry)
            return
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

    def normalized_entries(self) -> Iterator[tuple[tuple[str, ...], LexiconEntry]]:
        """(normalized form, entry) of every matchable entry, those sharing a form with another included."""
        for norm, entry in self.normalized.items():
            yield norm, entry
            for other in self.same_key.get(norm, ()):
                yield norm, other

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
