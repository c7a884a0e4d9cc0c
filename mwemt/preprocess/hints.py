"""Inline target hints (Dinu et al. 2019): the target translation written after the source MWE.

A source sentence with hints is a factored line ``word|F``: the factor is ``0`` for a plain word,
``1`` for a word of an MWE that has a hint, ``2`` for a hint word, and the hint's words follow the
MWE's last word. "She took care of the dog" with the hint *prendersi cura di* for *take care of*::

    She|0 took|1 care|1 of|1 prendersi|2 cura|2 di|2 the|0 dog|0

The hint comes from the MWE translation table (`mwemt.testsets.mwe_table`: translations attested
by alignment of the training data, plus a bilingual dictionary's), looked up by the MWE's type key:

- **training** (`HintInserter.training_hints`): a seeded share of the sentences (``rate``, about
  10%, `choose_hinted`) gets hints, and an MWE gets one only when a translation of its table entry
  *matches the reference approximately* (`phrase_match`), so the model learns that a hint is to be
  used; the first such translation in table order (most frequent first) is the hint;
- **translation** (`HintInserter.test_hints`): every MWE whose type the table lists gets its best
  translation (most frequent; `min_count` and `sources` as configured). The reference is never
  read: nothing here takes one.

**Version 2** (``HintConfig.version = 2``: hints the model learns to copy). An audit of version 1
found that its training hints almost all come from alignment (the table's translations attested in
the training pairs themselves), while at translation time many hints are dictionary translations of
MWE types never seen in training, which the model then rarely copies. Version 2 changes training
only (translation-time hints are the same):

- denser: a seeded share ``matched_rate`` (about half) of the sentences *with a matching hint*
  gets hints (version 1's ``rate`` is a share of all sentences, and is not read);
- dictionary translations first: an MWE's hint is the first of its table translations that the
  dictionary lists and that matches the reference (`phrase_match`, lemma-aware), else the first
  matching one of alignment, so that hints of the kind unseen types get at translation time occur
  in training;
- ``plain_copy``: every hinted training pair also appears once plain (all ``0``), so the model
  learns the sentence with and without hints (`hint_training_lines` with ``plain_copies``; the
  grid does it for the training split only).

`HintReport` counts the hints by the table source of their translation (aligned, dictionary, or
both) and the duplicated pairs.

The target-lemma variant (Bergmanis & Pinnis 2021, ``form="lemma"``, the ``hints-lemma``
encoding) writes the hint's lemmas (the target language's lemmatizer), which suits an inflected
target such as Italian: the model learns to inflect the hint.

**Approximate matching** (`words_match`): a hint word matches a reference word when, casefolded,
they are equal, or they have the same lemma (the target language's lemmatizer, when one is given:
*alzarsi*/*alzi*, *prendersi*/*prenditi*, *arrendersi*/*arreso*), or both are longer than 3
characters and share a prefix of at least ``max(4, len(hint word) - 3)`` characters: the hint
word less an inflectional ending (*occhio*/*occhi*, *prendere*/*prende*; not *avanzare*/*avanti*,
not *di*/*del*). A hint matches a reference (`phrase_match`) when its content words (longer than 3
characters) match reference words in order, each within ``MAX_SKIP`` tokens of the previous one;
its short words (articles, prepositions: *di* vs *del*) are not required. A hint of short words only
must occur exactly, as a contiguous run. Gap marks (``...``) of table translations are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from mwemt.errors import MwemtError
from mwemt.formats import FACTOR_SEP
from mwemt.preprocess.encode import (  # noqa: F401 (the hint encoding, re-exported)
    GAP,
    HINT,
    HINT_ENCODINGS,
    PLAIN,
    SOURCE_MWE,
    escape,
    insert_hints,
    plain_factored,
)
from mwemt.records import AnnotatedSentence
from mwemt.sampling import sample_indices
from mwemt.schema import setting

# encoding name -> hint form: the table's words (Dinu et al. 2019) or their lemmas (Bergmanis & Pinnis 2021)
HINT_FORMS = ("surface", "lemma")
TABLE_SOURCES = ("aligned", "dictionary")
HINT_VERSIONS = (1, 2)
SHORT = 3          # words of at most this many characters are function-like: exact match only
MIN_PREFIX = 4     # the least shared prefix of two matching words
MAX_SUFFIX = 3     # a matching word may differ from the hint word after its first len - MAX_SUFFIX characters
MAX_SKIP = 3       # reference tokens allowed between two matched content words of a hint


@dataclass(frozen=True)
class HintConfig:
    """Inline target hints (`mwemt.preprocess.hints`): how many training sentences get them and
    which table translations may be hints. Version 2 makes hints the model learns to copy (denser,
    dictionary translations first, each hinted pair also plain), e.g. a system
    `inline-hints-v2: {encoding: hints, hints: {version: 2, matched_rate: 0.5}}` (docs/nmt.md)."""

    rate: float = setting(0.10, minimum=0.0, maximum=1.0,
                          help="version 1: share of all the training sentences annotated with hints (a seeded "
                               "sample of those with a hint that matches the reference); version 2 reads "
                               "matched_rate instead")
    min_count: int = setting(1, minimum=0, help="least alignment count of a table translation used as a hint "
                                                "(dictionary translations always qualify)")
    sources: tuple[str, ...] = setting(TABLE_SOURCES, choices=TABLE_SOURCES,
                                       help="table translations used as hints: attested by alignment, listed "
                                            "by the dictionary, or both")
    version: int = setting(1, minimum=1, maximum=2, omit_default=True,
                           help="1: Dinu et al.'s sampling (rate of all sentences, table order); 2: hints the "
                                "model learns to copy: matched_rate of the sentences with a matching hint, "
                                "dictionary translations first, each hinted pair also once plain (plain_copy). "
                                "Translation-time hints are the same (docs/nmt.md, inline target hints)")
    matched_rate: float = setting(0.5, minimum=0.0, maximum=1.0, omit_default=True,
                                  help="version 2: share of the training sentences WITH a hint that matches the "
                                       "reference that get hints (a seeded sample; version 1 reads rate)")
    plain_copy: bool = setting(True, omit_default=True,
                               help="version 2: every hinted training pair also appears once without hints (the "
                                    "training split only; version 1 never copies)")

    @property
    def v2(self) -> bool:
        return self.version >= 2


def is_hint_encoding(encoding: str) -> bool:
    return encoding in HINT_ENCODINGS


def word_lemma(lemmatizer) -> Callable[[str], str] | None:
    """A cached one-word lemma function of a `Lemmatizer` (None for None): `words_match`'s ``lemma``."""
    if lemmatizer is None:
        return None
    return lru_cache(maxsize=200_000)(lambda w: lemmatizer.lemma(w))


# ---------------------------------------------------------------- approximate matching

def words_match(hint: str, word: str, lemma: Callable[[str], str] | None = None) -> bool:
    """Does the reference ``word`` match the ``hint`` word? Equal when casefolded, the same lemma
    (``lemma``: a target-language lemmatizer's one-word function), or (both longer than `SHORT`) a
    shared prefix of at least ``max(MIN_PREFIX, len(hint) - MAX_SUFFIX)`` characters."""
    a, b = hint.casefold(), word.casefold()
    if a == b:
        return True
    if len(a) <= SHORT or len(b) <= SHORT:
        return False
    p = 0
    for x, y in zip(a, b):
        if x != y:
            break
        p += 1
    if p >= max(MIN_PREFIX, len(a) - MAX_SUFFIX):
        return True
    return lemma is not None and lemma(a) == lemma(b)


def _is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


def phrase_match(hint: Sequence[str], reference: Sequence[str],
                 lemma: Callable[[str], str] | None = None) -> tuple[int, int] | None:
    """Where ``hint`` (tokens) approximately occurs in ``reference`` (tokens): the first and last
    matched reference index, or None (rules in the module docstring; ``lemma`` as in `words_match`)."""
    words = [t for t in hint if t != GAP and _is_word(t)]
    if not words or not reference:
        return None
    content = [w for w in words if len(w) > SHORT]
    if not content:   # short words only: an exact contiguous run
        n = len(words)
        low = [w.casefold() for w in words]
        for i in range(len(reference) - n + 1):
            if [r.casefold() for r in reference[i:i + n]] == low:
                return i, i + n - 1
        return None
    for start, r in enumerate(reference):
        if not words_match(content[0], r, lemma):
            continue
        pos, last = start, start
        for w in content[1:]:
            nxt = next((j for j in range(pos + 1, min(len(reference), pos + 2 + MAX_SKIP))
                        if words_match(w, reference[j], lemma)), None)
            if nxt is None:
                break
            pos = last = nxt
        else:
            return start, last
    return None


# ---------------------------------------------------------------- the factored line

def hint_stream(line: str) -> list[str]:
    """The factor stream of a factored hint line (``0``/``1``/``2`` per token): for tests and reports."""
    return [tok.rsplit(FACTOR_SEP, 1)[1] for tok in line.split()]


# ---------------------------------------------------------------- choosing hints

def choose_hinted(eligible: Sequence[int], n_sentences: int, rate: float, seed: int) -> set[int]:
    """The sentences that get hints: a seeded sample of ``round(rate * n_sentences)`` of the
    ``eligible`` ones (those with at least one matching hint; all of them when there are fewer)."""
    if not 0.0 <= rate <= 1.0:
        raise MwemtError(f"the hint rate must be in [0, 1], not {rate}")
    want = int(rate * n_sentences + 0.5)
    return {eligible[i] for i in sample_indices(len(eligible), want, seed)}


class HintInserter:
    """Hints from an MWE translation table (`mwemt.testsets.mwe_table.MweTranslationTable`).

    ``form``: ``surface`` (the table's words) or ``lemma`` (their lemmas by ``lemmatizer``, a
    target-language `Lemmatizer`, needed then). With a ``lemmatizer``, approximate matching also
    accepts words of the same lemma (`words_match`)."""

    def __init__(self, table, config: HintConfig = HintConfig(), *, form: str = "surface", lemmatizer=None):
        if form not in HINT_FORMS:
            raise MwemtError(f"hint form {form!r}: choose one of {', '.join(HINT_FORMS)}")
        if form == "lemma" and lemmatizer is None:
            raise MwemtError("lemma hints need the target language's lemmatizer")
        bad = [s for s in config.sources if s not in TABLE_SOURCES]
        if bad or not config.sources:
            raise MwemtError(f"hint sources {list(config.sources)}: choose from {', '.join(TABLE_SOURCES)}")
        self.table = table
        self.config = config
        self.form = form
        self.lemmatizer = lemmatizer
        self._entries: dict[str, list[tuple[tuple[str, ...], frozenset[str]]]] = {}   # MWE form -> its hints
        self.lemma = word_lemma(lemmatizer)

    def _written(self, tokens: Sequence[str]) -> tuple[str, ...]:
        words = [t for t in tokens if t != GAP]
        if self.form == "lemma":
            return tuple(self.lemmatizer.lemmatize(words))
        return tuple(words)

    def entries(self, lemma: str) -> list[tuple[tuple[str, ...], frozenset[str]]]:
        """The table's translations of an MWE (its lexicon form), best first, as hints would be written,
        each with its table sources (those of every entry written the same way)."""
        from mwemt.testsets.mwe_table import type_key

        found = self._entries.get(lemma)
        if found is not None:
            return found
        entries = self.table.translations(type_key(lemma), min_count=self.config.min_count,
                                          sources=set(self.config.sources))
        merged: dict[tuple[str, ...], frozenset[str]] = {}
        for e in entries:
            written = self._written(e.translation)
            if written:
                merged[written] = merged.get(written, frozenset()) | e.sources
        out = list(merged.items())
        self._entries[lemma] = out
        return out

    def candidates(self, lemma: str) -> list[tuple[str, ...]]:
        """The table's translations of an MWE (its lexicon form), best first, as hints would be written."""
        return [written for written, _ in self.entries(lemma)]

    def test_hints(self, sent: AnnotatedSentence) -> dict[int, tuple[str, ...]]:
        """At translation time: each MWE the table knows gets its best translation. No reference."""
        hints = {}
        for k, m in enumerate(sent.mwes):
            found = self.entries(m.lemma)
            if found:
                hints[k] = found[0][0]
        return hints

    def training_hints(self, sent: AnnotatedSentence, reference: Sequence[str]) -> dict[int, tuple[str, ...]]:
        """For training: each MWE gets the first table translation that matches the reference
        (tokens) approximately (`phrase_match`); MWEs without one get no hint. Version 2 tries the
        translations the dictionary lists first (`training_hint_sources`)."""
        return {k: hint for k, (hint, _) in self.training_hint_sources(sent, reference).items()}

    def training_hint_sources(self, sent: AnnotatedSentence, reference: Sequence[str]
                              ) -> dict[int, tuple[tuple[str, ...], frozenset[str]]]:
        """`training_hints` with the table sources of each hint's translation."""
        hints = {}
        for k, m in enumerate(sent.mwes):
            found = self.entries(m.lemma)
            if self.config.v2:   # dictionary translations first, each group in table order
                found = sorted(found, key=lambda entry: "dictionary" not in entry[1])
            for cand, sources in found:
                if phrase_match(cand, reference, self.lemma) is not None:
                    hints[k] = (cand, sources)
                    break
        return hints

    def describe(self) -> dict:
        sig = self.table.signature() if hasattr(self.table, "signature") else None
        out = {"form": self.form, "version": self.config.version}
        out.update({"matched_rate": self.config.matched_rate, "plain_copy": self.config.plain_copy}
                   if self.config.v2 else {"rate": self.config.rate})
        out.update({"min_count": self.config.min_count, "sources": list(self.config.sources), "table": sig,
                    "lemmatizer": getattr(self.lemmatizer, "signature", None)})   # lemma hints, and matching
        return out


def source_label(sources: Iterable[str]) -> str:
    """``aligned``, ``dictionary`` or ``aligned+dictionary``: where a hint's table translation comes from."""
    return "+".join(s for s in TABLE_SOURCES if s in set(sources))


@dataclass
class HintReport:
    """What training annotation did: sentences, those with a matching hint, those hinted, MWEs hinted."""

    sentences: int = 0
    sentences_with_mwe: int = 0
    eligible: int = 0
    hinted_sentences: int = 0
    mwes: int = 0
    mwes_in_table: int = 0
    mwes_matched: int = 0
    hinted_mwes: int = 0
    hint_sources: dict[str, int] = field(default_factory=dict)   # hinted MWEs by `source_label`
    copied: list[int] = field(default_factory=list)              # hinted pairs also written plain (version 2)
    examples: list[str] = field(default_factory=list)

    @property
    def plain_copies(self) -> int:
        """Hinted pairs also written plain (version 2's ``plain_copy``)."""
        return len(self.copied)

    def as_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("sentences", "sentences_with_mwe", "eligible", "hinted_sentences", "mwes",
                                           "mwes_in_table", "mwes_matched", "hinted_mwes")}
        d["hinted_share"] = round(self.hinted_sentences / self.sentences, 4) if self.sentences else 0.0
        d["hinted_share_of_eligible"] = round(self.hinted_sentences / self.eligible, 4) if self.eligible else 0.0
        d["hint_sources"] = {label: self.hint_sources.get(label, 0)
                             for label in ("aligned", "dictionary", "aligned+dictionary")}
        d["plain_copies"] = self.plain_copies
        d["lines"] = self.sentences + self.plain_copies
        d["examples"] = list(self.examples)
        return d


def hint_training_lines(sentences: Sequence[AnnotatedSentence], references: Sequence[Sequence[str]],
                        inserter: HintInserter, seed: int, examples: int = 10,
                        plain_copies: bool = False) -> tuple[list[str], HintReport]:
    """The factored source lines of a training corpus: a seeded share of the sentences carries the
    hints that match their reference (`choose_hinted`: version 1 ``rate`` of all sentences, version 2
    ``matched_rate`` of those with a matching hint), the others are plain (all ``0``).
    ``plain_copies`` (version 2's ``plain_copy``, on the training split): each hinted line is
    followed by the same sentence plain, so there are ``report.plain_copies`` more lines than
    sentences (``report.copied``: which sentences; the caller repeats their targets)."""
    if len(sentences) != len(references):
        raise MwemtError(f"{len(sentences)} source sentences but {len(references)} references")
    config = inserter.config
    report = HintReport(sentences=len(sentences))
    found: list[dict[int, tuple[tuple[str, ...], frozenset[str]]]] = []
    for sent, ref in zip(sentences, references):
        hints = inserter.training_hint_sources(sent, ref) if sent.mwes else {}
        found.append(hints)
        if sent.mwes:
            report.sentences_with_mwe += 1
            report.mwes += len(sent.mwes)
            report.mwes_in_table += sum(1 for m in sent.mwes if inserter.entries(m.lemma))
            report.mwes_matched += len(hints)
    eligible = [k for k, h in enumerate(found) if h]
    report.eligible = len(eligible)
    if config.v2:
        chosen = choose_hinted(eligible, len(eligible), config.matched_rate, seed)
    else:
        chosen = choose_hinted(eligible, len(sentences), config.rate, seed)
    copy = plain_copies and config.v2 and config.plain_copy
    lines = []
    for k, (sent, hints) in enumerate(zip(sentences, found)):
        use = {m: hint for m, (hint, _) in hints.items()} if k in chosen else {}
        line = " ".join(insert_hints(sent, use))
        lines.append(line)
        if use:
            report.hinted_sentences += 1
            report.hinted_mwes += len(use)
            for _, sources in hints.values():
                label = source_label(sources)
                report.hint_sources[label] = report.hint_sources.get(label, 0) + 1
            if len(report.examples) < examples:
                report.examples.append(line)
            if copy:
                lines.append(" ".join(insert_hints(sent, {})))
                report.copied.append(k)
    return lines, report


def annotate_hint_pairs(annotator, pairs: Iterable[tuple[str, str]], tgt_lang: str, inserter: HintInserter,
                        seed: int, examples: int = 10, plain_copies: bool = False):
    """`mwemt.preprocess.annotate.annotate_pairs` for a hint encoding: the sources annotated with
    ``annotator``, a seeded share of them given the hints that match their reference
    (`hint_training_lines`), the targets tokenized. The same pairs are dropped (a side without a
    token). ``plain_copies``: version 2's hinted pairs also once plain (the target repeated after its
    hinted pair). Returns the `AnnotatedPairs` and the `HintReport`."""
    from mwemt.preprocess.annotate import AnnotatedPairs, AnnotationReport
    from mwemt.preprocess.tokenize import tokenize

    out = AnnotatedPairs([], [], AnnotationReport())
    sentences, references = [], []
    for src, tgt in pairs:
        sent = annotator.annotate_text(src)
        tgt_tokens = tgt.split() if annotator.pretokenized else tokenize(tgt, tgt_lang)
        if not sent.tokens or not tgt_tokens:
            out.dropped_empty += 1
            continue
        out.report.add(sent)
        sentences.append(sent)
        references.append(tgt_tokens)
        out.target.append(" ".join(tgt_tokens))
    out.source, report = hint_training_lines(sentences, references, inserter, seed, examples, plain_copies)
    if report.copied:   # each copied pair's target again, right after it (as its plain source line is)
        copied, target = set(report.copied), []
        for k, line in enumerate(out.target):
            target += [line, line] if k in copied else [line]
        out.target = target
    return out, report


def read_table(path):
    """An MWE translation table file (`MweTranslationTable.read`)."""
    from mwemt.testsets.mwe_table import MweTranslationTable

    return MweTranslationTable.read(path)


def hint_inserter(table_path, encoding: str, config: HintConfig, *, tgt_lang: str,
                  lemmatizer: str = "simplemma") -> HintInserter:
    """The `HintInserter` of a hint encoding (``hints`` or ``hints-lemma``) with the table in ``table_path``."""
    from mwemt.preprocess.lemmatize import get_lemmatizer

    if encoding not in HINT_ENCODINGS:
        raise MwemtError(f"{encoding!r} is not a hint encoding ({', '.join(HINT_ENCODINGS)})")
    return HintInserter(read_table(table_path), config, form=HINT_ENCODINGS[encoding],
                        lemmatizer=get_lemmatizer(lemmatizer, tgt_lang))
