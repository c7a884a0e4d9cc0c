"""Sense from context: rank an MWE's candidate translations by how well they fit the line's source.

The MWE translation table (`mwemt.testsets.mwe_table`) says how often alignment attested each
translation of an MWE type in the training pairs, and which translations a bilingual dictionary lists.
Ranked by count alone, every line gets the type's most frequent translation (*turn out* -> *risultare*
also where a light is turned out); ranked by target frequency, an unseen type gets a frequent wrong sense
(*turn out* -> *spegnere* for "it turned out well"). This module ranks by the line's source context:

- **attested translations** (`SenseContexts.translations`): while the table is built
  (`MweTranslationTable.build_from_alignment(observe=...)`, `SenseContextBuilder.observe`), the source
  sentence of every counted occurrence gives its context words (its lemmas outside the MWE, each once) to
  the translation it was aligned to. A candidate's score is the cosine of the line's context and the
  candidate's (tf-idf over the training sources) plus ``prior`` times a smoothed log share of its count
  (`SenseWeights`); ``prior`` is chosen by leave-one-out on the training occurrences themselves
  (`SenseContextBuilder.tune`), never on a test set;
- **dictionary translations** (a type never attested, or a translation alignment never gave): the
  dictionary's senses are WordNet synsets (`DictionarySenses`, the EN-IT wn-aligned TSV). A sense's
  evidence is its English gloss and its other English members (as words), and the training contexts of
  its members: the source sentences whose target has one of its Italian members, and the source sentences
  with one of its other English members (`SenseContexts.target_words`, `source_words`). A candidate
  scores as its best sense: ``gloss`` x cosine(line, gloss) + ``members`` x cosine(line, members'
  contexts), with its own frequency in the training target as a small tie-break (``frequency``), never
  frequency alone.

Nothing here reads a test reference: the ranking is a function of the training pairs, the dictionary and
the line's source (`tests/test_senses.py` checks that changing the references changes nothing).

The contexts are stored beside the table (`SenseContexts.write`: JSONL, gzip when the name ends in .gz;
header ``{"format": "mwemt-sense-contexts", ...}`` with the document frequencies and the tuned weights,
then one row per MWE type, per target word, per source word and per dictionary sense of the table's keys).

API::

    builder = SenseContextBuilder([s.lemmas for s in sentences])
    table, counts = MweTranslationTable.build_from_alignment(sentences, tgt, links, observe=builder.observe)
    senses = DictionarySenses.read("en-ita.multiwordnet.tsv", keys=table.keys())
    contexts = builder.build(target_lemmas, senses)          # tuned on the training occurrences
    contexts.write("senses.jsonl.gz")
    ranker = SenseRanker(SenseContexts.read("senses.jsonl.gz"))     # the dictionary senses are stored there too
    ranker.rank("turn out", table.translations("turn out"), lemmas, mwe_indices)   # -> [Ranked, ...]
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.testsets.mwe_table import GAP, TableEntry, translation_tokens, type_key

SENSES_FORMAT = "mwemt-sense-contexts"
SENSES_VERSION = 1
# the most context words a target or source word keeps (by count x idf): bounds the file
WORD_FEATURES = 64
# the most occurrences of one MWE type that count in leave-one-out tuning at full weight (the MWE test caps
# each type at 3 occurrences; a frequent type must not decide the weights alone)
TUNE_CAP = 3
PRIOR_GRID = (0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 1.0, 2.0, 1000.0)     # the last: count alone
SHRINK_GRID = (0.0, 1.0, 2.0, 4.0, 8.0)
GLOSS_GRID = (0.0, 0.5, 1.0)
MEMBERS_GRID = (0.0, 0.5, 1.0, 2.0)
FREQUENCY_GRID = (0.0, 0.01, 0.03, 0.1, 1000.0)                             # the last: frequency alone
DICTIONARY_TUNE_ROWS = 1000
DICTIONARY_TUNE_SEED = 1
_MIN_CONTENT = 3


def context_words(lemmas: Sequence[str], exclude: Iterable[int] = ()) -> tuple[str, ...]:
    """A sentence's context words: its lemmas outside ``exclude`` (the MWE's positions) that have a letter,
    casefolded, each once, in order."""
    skip = set(exclude)
    seen: dict[str, None] = {}
    for i, w in enumerate(lemmas):
        if i not in skip and any(c.isalpha() for c in w):
            seen.setdefault(w.casefold(), None)
    return tuple(seen)


def content_lemmas(tokens: Sequence[str], lemmatizer) -> tuple[str, ...]:
    """The lemmas of a translation's words of at least 3 letters (all its words' when none is), gap left out."""
    words = [t.casefold() for t in tokens if t != GAP and any(c.isalpha() for c in t)]
    lemmas = [x.casefold() for x in lemmatizer.lemmatize(words)] if words else []
    content = [lem for w, lem in zip(words, lemmas) if len(w) >= _MIN_CONTENT]
    return tuple(content or lemmas)


# Italian words that carry no sense of their own in a translation (auxiliaries, negation, clitics as `lemma_key`
# writes them): "mi sono sbarazzato di" and "sbarazzarsi di" are one sense
_NO_SENSE = frozenset({"essere", "avere", "stare", "si", "non", "ne"})


def sense_key(tokens: Sequence[str], lemmatizer) -> tuple[str, ...]:
    """The sense a translation names: the `mwemt.testsets.forms.lemma_key` of its words of 3 letters or more
    that are no auxiliary, negation or clitic (all its lemmas when none is left): its inflected forms share it."""
    from mwemt.testsets.forms import lemma_key

    words = [t.casefold() for t in tokens if t != GAP]
    keys = lemma_key(words, lemmatizer=lemmatizer) if words else ()
    content = tuple(k for w, k in zip(words, keys) if len(w) >= _MIN_CONTENT and k not in _NO_SENSE
                    and any(c.isalpha() for c in w))
    return content or tuple(keys)


@dataclass(frozen=True)
class SenseWeights:
    """How the evidence combines (`SenseRanker`). ``prior``: weight of an attested sense's smoothed log count
    share beside its context cosine (0: context alone; very large: count alone); ``smoothing``: the
    pseudo-count of that share; ``shrink``: the cosine of a sense attested n times counts n / (n + shrink)
    (one sentence is thin evidence). Dictionary senses: ``gloss`` and ``members`` weigh the two cosines,
    ``frequency`` the candidate's log frequency in the training target. The builder tunes all but
    ``smoothing`` on the training data (`SenseContextBuilder.tune`, `tune_dictionary`)."""

    prior: float = 0.2
    smoothing: float = 1.0
    shrink: float = 1.0
    gloss: float = 0.5
    members: float = 2.0
    frequency: float = 0.03

    def __post_init__(self) -> None:
        for name in ("prior", "smoothing", "shrink", "gloss", "members", "frequency"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise MwemtError(f"sense weight {name} must be a finite number >= 0, not {v!r}")
        if self.smoothing <= 0:
            raise MwemtError(f"sense weight smoothing must be > 0, not {self.smoothing}")


# ---------------------------------------------------------------- the dictionary's senses


@dataclass(frozen=True)
class Sense:
    """One synset of a bilingual WordNet-aligned dictionary: its English and target members and gloss."""

    synset: str
    english: tuple[str, ...]
    target: tuple[tuple[str, ...], ...]     # members as the table stores translations (casefolded tokens)
    gloss: str


class DictionarySenses:
    """MWE type key -> its senses (`Sense`), from an EN-xx wn-aligned TSV (``pwn30_synset, ili, oewn_synset,
    pos, lexfile, english_lemmas, xx_lemmas, ..., english_definition``; the file `read_dictionary` reads)."""

    def __init__(self, senses: Mapping[str, Sequence[Sense]], source: str = ""):
        self.by_key = {type_key(k): tuple(v) for k, v in senses.items()}
        self.source = source

    @classmethod
    def read(cls, path: str | Path, *, lang: str = "it", keys: Iterable[str] | None = None) -> DictionarySenses:
        """The senses of ``keys`` (every multi-word English member when None)."""
        from mwemt.fileio import iter_lines
        from mwemt.testsets.mwe_table import PLACEHOLDERS

        only = None if keys is None else {type_key(k) for k in keys}
        out: dict[str, list[Sense]] = {}
        lines = iter_lines(path)
        header = next(lines, "")
        cols = header.split("\t")
        if not header.startswith("pwn30_synset") or "english_definition" not in cols or len(cols) < 7:
            raise InputError(f"header {header[:40]!r}", path, 1,
                             expected="pwn30_synset<TAB>ili<TAB>oewn_synset<TAB>pos<TAB>lexfile<TAB>english_lemmas"
                                      "<TAB>xx_lemmas<TAB>...<TAB>english_definition")
        gloss_col = cols.index("english_definition")
        for lineno, line in enumerate(lines, 2):
            row = line.split("\t")
            if len(row) != len(cols):
                raise InputError(f"{len(row)} columns", path, lineno, expected=f"{len(cols)} columns")
            english = tuple(e.strip() for e in row[5].split("|") if e.strip() and e.strip() not in PLACEHOLDERS)
            wanted = [type_key(e) for e in english if len(e.split()) >= 2]
            wanted = [k for k in wanted if only is None or k in only]
            if not wanted:
                continue
            target = tuple(t for t in (translation_tokens(x.strip(), lang) for x in row[6].split("|")
                                       if x.strip() and x.strip() not in PLACEHOLDERS) if t)
            if not target:
                continue
            sense = Sense(row[0], english, target, row[gloss_col].strip())
            for k in dict.fromkeys(wanted):
                out.setdefault(k, []).append(sense)
        return cls(out, source=Path(path).name)

    def of(self, key: str) -> tuple[Sense, ...]:
        return self.by_key.get(type_key(key), ())

    def words(self, lemmatize_target, lemmatize_source) -> tuple[set[str], set[str]]:
        """The target content lemmas and the English single-word members of every sense: the words whose
        training contexts `SenseContextBuilder.build` keeps."""
        tgt: set[str] = set()
        src: set[str] = set()
        for senses in self.by_key.values():
            for s in senses:
                for t in s.target:
                    tgt.update(lemmatize_target(t))
                src.update(e.casefold() for e in s.english if len(e.split()) == 1)
        return tgt, src


# ---------------------------------------------------------------- the contexts


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b.get(w, 0.0) for w, v in a.items())
    if not dot:
        return 0.0
    na = math.sqrt(sum(v * v for v in a.values()))
    nb = math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb)


class SenseContexts:
    """The training evidence of the ranking: document frequencies of source context words, each
    attested (MWE type, translation)'s count and context counts, and the contexts of target and source
    words (for dictionary senses); the tuned `SenseWeights`."""

    def __init__(self, documents: int, df: Mapping[str, int],
                 translations: Mapping[str, Mapping[tuple[str, ...], tuple[int, Mapping[str, int]]]],
                 target_words: Mapping[str, tuple[int, Mapping[str, int]]],
                 source_words: Mapping[str, tuple[int, Mapping[str, int]]],
                 weights: SenseWeights = SenseWeights(), provenance: Mapping | None = None,
                 dictionary: DictionarySenses | None = None):
        self.dictionary = dictionary   # the senses of the table's keys, stored with the contexts
        self.documents, self.df = documents, dict(df)
        self.translations = {k: dict(v) for k, v in translations.items()}
        self.target_words, self.source_words = dict(target_words), dict(source_words)
        self.weights = weights
        self.provenance = dict(provenance or {})

    def idf(self, word: str) -> float:
        return math.log((self.documents + 1) / (self.df.get(word, 0) + 1)) + 1.0

    def line_vector(self, words: Iterable[str]) -> dict[str, float]:
        return {w: self.idf(w) for w in words}

    def vector(self, counts: Mapping[str, int]) -> dict[str, float]:
        return {w: c * self.idf(w) for w, c in counts.items()}

    def signature(self) -> str:
        w = self.weights
        return (f"senses|docs:{self.documents}|types:{len(self.translations)}|words:{len(self.target_words)}+"
                f"{len(self.source_words)}|prior:{w.prior:g}|gloss:{w.gloss:g}|members:{w.members:g}")

    # -- files
    def write(self, path: str | Path) -> None:
        """JSONL (gzip-compressed when ``path`` ends in .gz), header first, written atomically."""
        from mwemt.fileio import write_text

        rows = [{"format": SENSES_FORMAT, "version": SENSES_VERSION, "signature": self.signature(),
                 "documents": self.documents, "weights": asdict(self.weights), "provenance": self.provenance,
                 "df": dict(sorted(self.df.items()))}]
        for key in sorted(self.translations):
            rows.append({"key": key, "translations": [
                {"tokens": list(t), "count": n, "context": dict(sorted(c.items()))}
                for t, (n, c) in sorted(self.translations[key].items())]})
        for kind, words in (("target", self.target_words), ("source", self.source_words)):
            for w in sorted(words):
                n, c = words[w]
                rows.append({kind: w, "count": n, "context": dict(sorted(c.items()))})
        if self.dictionary is not None:
            keys_of: dict[str, list[str]] = {}
            by_id: dict[str, Sense] = {}
            for key, senses in sorted(self.dictionary.by_key.items()):
                for sense in senses:
                    keys_of.setdefault(sense.synset, []).append(key)
                    by_id[sense.synset] = sense
            for sid in sorted(by_id):
                sense = by_id[sid]
                rows.append({"sense": sid, "keys": keys_of[sid], "english": list(sense.english),
                             "target": [list(t) for t in sense.target], "gloss": sense.gloss})
        write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))

    @classmethod
    def read(cls, path: str | Path) -> SenseContexts:
        """Read what `write` wrote; a bad line raises `InputError` naming file and line."""
        from mwemt.fileio import iter_lines

        expected = f'{{"format": "{SENSES_FORMAT}", "version": {SENSES_VERSION}, "documents": N, "df": {{...}}}}'
        head = None
        translations: dict = {}
        words: dict[str, dict] = {"target": {}, "source": {}}
        dictionary: dict[str, list[Sense]] = {}
        for lineno, line in enumerate(iter_lines(path), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc}", path, lineno, expected=expected) from None
            if head is None:
                if not isinstance(row, dict) or row.get("format") != SENSES_FORMAT:
                    raise InputError("not a sense-contexts header", path, lineno, expected=expected)
                if row.get("version") != SENSES_VERSION:
                    raise InputError(f"version {row.get('version')!r}", path, lineno,
                                     expected=f"version {SENSES_VERSION}")
                head = row
                continue
            try:
                if not isinstance(row, dict):
                    raise ValueError("not an object")
                if "sense" in row:
                    sense = Sense(str(row["sense"]), tuple(str(e) for e in row["english"]),
                                  tuple(tuple(str(w) for w in t) for t in row["target"]), str(row["gloss"]))
                    for key in row["keys"]:
                        dictionary.setdefault(str(key), []).append(sense)
                elif "key" in row:
                    translations[type_key(row["key"])] = {
                        tuple(t["tokens"]): (int(t["count"]), {str(w): int(c) for w, c in t["context"].items()})
                        for t in row["translations"]}
                else:
                    kind = "target" if "target" in row else "source"
                    words[kind][str(row[kind])] = (int(row["count"]),
                                                   {str(w): int(c) for w, c in row["context"].items()})
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise InputError(f"bad row ({type(exc).__name__}: {exc})", path, lineno,
                                 expected='{"key": MWE, "translations": [{"tokens": [...], "count": N, "context": '
                                          '{WORD: N}}]} or {"target"|"source": WORD, "count": N, "context": {...}}'
                                 ) from None
        if head is None:
            raise InputError("empty file", path, expected=expected)
        try:
            weights = SenseWeights(**head.get("weights", {}))
            df = {str(w): int(c) for w, c in head["df"].items()}
            documents = int(head["documents"])
        except (KeyError, TypeError, ValueError, AttributeError, MwemtError) as exc:
            raise InputError(f"bad header ({exc})", path, 1, expected=expected) from None
        return cls(documents, df, translations, words["target"], words["source"], weights, head.get("provenance"),
                   DictionarySenses(dictionary, source=str((head.get("provenance") or {}).get("dictionary_name", "")))
                   if dictionary else None)


class SenseContextBuilder:
    """Collects the evidence of `SenseContexts` while the table is built, then tunes the weights on the
    training occurrences (leave-one-out). ``source_lemmas``: the lemmas of every training source sentence
    (the annotator's), in the order `build_from_alignment` reads them."""

    def __init__(self, source_lemmas: Sequence[Sequence[str]]):
        self.source_lemmas = source_lemmas
        self.occurrences: list[tuple[str, tuple[str, ...], int, tuple[int, ...]]] = []
        self.df: Counter = Counter()
        for lemmas in source_lemmas:
            self.df.update(context_words(lemmas))

    def observe(self, key: str, translation: tuple[str, ...], k: int, mwe) -> None:
        """`MweTranslationTable.build_from_alignment`'s ``observe`` hook: one counted occurrence."""
        self.occurrences.append((type_key(key), tuple(translation), k, tuple(mwe.indices)))

    def _bag(self, k: int, indices: Sequence[int]) -> tuple[str, ...]:
        return context_words(self.source_lemmas[k], indices)

    def build(self, target_lemmas: Sequence[Sequence[str]] | None = None, senses: DictionarySenses | None = None,
              *, target_lemmatizer=None, tune: bool = True, provenance: Mapping | None = None,
              weights: SenseWeights | None = None) -> SenseContexts:
        """The contexts. With ``senses`` and ``target_lemmas`` (lemmas of every training target sentence,
        casefolded) also the contexts of the senses' target and source words. ``tune``: choose the weights on
        the training occurrences (`tune`, `tune_dictionary`)."""
        from mwemt.preprocess.lemmatize import get_lemmatizer

        lem_t = target_lemmatizer or get_lemmatizer("simplemma", "it")
        translations: dict[str, dict[tuple[str, ...], list]] = {}
        for key, t, k, idx in self.occurrences:
            slot = translations.setdefault(key, {}).setdefault(t, [0, Counter()])
            slot[0] += 1
            slot[1].update(self._bag(k, idx))
        documents = len(self.source_lemmas)
        base = SenseContexts(documents, self.df, {k: {t: (n, dict(c)) for t, (n, c) in v.items()}
                                                  for k, v in translations.items()}, {}, {},
                             weights or SenseWeights(), provenance)
        prov = dict(provenance or {})
        if tune:
            (prior, shrink), prov["tuning"] = self.tune(base, lem_t)
            base.weights = replace(base.weights, prior=prior, shrink=shrink)
        tgt_words: dict[str, tuple[int, dict[str, int]]] = {}
        src_words: dict[str, tuple[int, dict[str, int]]] = {}
        if senses is not None and target_lemmas is not None:
            if len(target_lemmas) != documents:
                raise MwemtError(f"{len(target_lemmas)} target sentences for {documents} source sentences")
            wanted_t, wanted_s = senses.words(lambda toks: content_lemmas(toks, lem_t), lambda toks: toks)
            t_present = [set(x) & wanted_t for x in target_lemmas]
            s_present = [set(context_words(x)) & wanted_s for x in self.source_lemmas]
            full_t = self._word_contexts(t_present, exclude_self=False)
            full_s = self._word_contexts(s_present, exclude_self=True)
            if tune:
                found, prov["dictionary_tuning"] = self.tune_dictionary(base, senses, lem_t, full_t, full_s,
                                                                         target_lemmas)
                base.weights = replace(base.weights, **found)
            tgt_words = {w: (n, _strongest(c, base)) for w, (n, c) in full_t.items()}
            src_words = {w: (n, _strongest(c, base)) for w, (n, c) in full_s.items()}
        if senses is not None:
            prov["dictionary_name"] = senses.source
        return SenseContexts(documents, self.df, base.translations, tgt_words, src_words, base.weights, prov,
                             senses)

    def _word_contexts(self, present: Sequence[set[str]], exclude_self: bool) -> dict[str, tuple[int, Counter]]:
        """word -> (sentences with it, the context words of the training source sentences of the pairs where
        ``present[k]`` has the word); ``exclude_self``: the word is no context of itself."""
        out: dict[str, tuple[int, Counter]] = {}
        for k, words in enumerate(present):
            if not words:
                continue
            bag = context_words(self.source_lemmas[k])
            for w in words:
                n, c = out.get(w, (0, Counter()))
                c.update(x for x in bag if not (exclude_self and x == w))
                out[w] = (n + 1, c)
        return out

    def tune(self, base: SenseContexts, lemmatizer) -> tuple[tuple[float, float], dict]:
        """``prior`` and ``shrink`` by leave-one-out over the training occurrences of types with 2+ attested
        senses (`sense_key`; a type's translations pooled by sense, as `SenseRanker` ranks them): each
        occurrence is ranked with its own context and count taken out of its sense's, and the point of
        `PRIOR_GRID` x `SHRINK_GRID` whose top sense is most often the aligned translation's wins (a type's
        occurrences weigh at most `TUNE_CAP` in all; ties go to the smaller prior, then the smaller shrink).
        Returns it and the curve."""
        per_key = Counter(key for key, *_ in self.occurrences)
        pooled = {key: pool_senses(v, lemmatizer) for key, v in base.translations.items()}
        vectors = {key: {u: base.vector(c) for u, (_, c) in v.items()} for key, v in pooled.items()}
        norms = {key: {u: sum(x * x for x in vec.values()) for u, vec in v.items()} for key, v in vectors.items()}
        rows = []   # (weight, [(cos, count) per sense], index of the aligned one)
        for key, t, k, idx in self.occurrences:
            if len(pooled[key]) < 2:
                continue
            gold_sense = sense_key(t, lemmatizer)
            bag = self._bag(k, idx)
            line = base.line_vector(bag)
            ln = math.sqrt(sum(v * v for v in line.values()))
            cands = []
            gold = -1
            for j, (u, (n, _)) in enumerate(sorted(pooled[key].items())):
                vec, nn = vectors[key][u], norms[key][u]
                dot = sum(v * vec.get(w, 0.0) for w, v in line.items())
                if u == gold_sense:   # leave this occurrence out: its own bag once less, its count once less
                    n -= 1
                    for w in bag:
                        old = vec.get(w, 0.0)
                        new = old - base.idf(w)
                        nn += new * new - old * old
                        dot += line[w] * (new - old)
                    gold = j
                cos = dot / (ln * math.sqrt(nn)) if dot > 1e-9 and nn > 1e-9 and ln else 0.0
                if n > 0:   # a sense only this occurrence attests is no candidate once it is left out
                    cands.append((cos, n, j))
            if cands:
                rows.append((min(1.0, TUNE_CAP / per_key[key]), cands, gold))
        curve = []
        for prior in PRIOR_GRID:
            for shrink in SHRINK_GRID:
                hit = total = 0.0
                for weight, cands, gold in rows:
                    total_n = sum(n for _, n, _ in cands)
                    top = max(cands, key=lambda c: (
                        round(c[0] * c[1] / (c[1] + shrink)
                              + prior * _log_share(c[1], total_n, len(cands), base.weights.smoothing), 9),
                        c[1], -c[2]))
                    hit += weight * (top[2] == gold)
                    total += weight
                curve.append((prior, shrink, hit / total if total else 0.0))
        best = max(curve, key=lambda c: (round(c[2], 9), -c[0], -c[1]))
        return (best[0], best[1]), {
            "rule": "leave-one-out top-1 sense on training occurrences of types with 2+ senses "
                    f"(a type weighs at most {TUNE_CAP})",
            "occurrences": len(rows), "prior": best[0], "shrink": best[1], "accuracy": round(best[2], 4),
            "count_only": round(next(a for p, k, a in curve if p == PRIOR_GRID[-1] and k == 0.0), 4),
            "context_only": round(max(a for p, k, a in curve if p == 0.0), 4),
            "curve": [[p, k, round(a, 4)] for p, k, a in curve]}

    def tune_dictionary(self, base: SenseContexts, senses: DictionarySenses, lemmatizer,
                        full_t: Mapping[str, tuple[int, Counter]], full_s: Mapping[str, tuple[int, Counter]],
                        target_lemmas: Sequence[Sequence[str]]) -> tuple[dict, dict]:
        """``gloss``, ``members`` and ``frequency`` on training occurrences as if their type were unseen: a
        seeded sample (`DICTIONARY_TUNE_ROWS`) of the occurrences of types with 2+ dictionary translations of
        which some but not all are the aligned translation's (every content lemma of the candidate among its
        lemmas); the candidates are ranked by dictionary evidence only, every member's context without the
        occurrence's own pair, and the grid point whose top candidate is right most often wins (ties: table
        order, i.e. the candidates' tokens). Returns the weights and the record."""
        import random

        from mwemt.testsets.forms import lemma_key

        per_key = Counter(key for key, *_ in self.occurrences)
        order = list(range(len(self.occurrences)))
        random.Random(DICTIONARY_TUNE_SEED).shuffle(order)
        ranker = SenseRanker(base, senses, target_lemmatizer=lemmatizer)
        units: dict[tuple[str, str], dict[str, float]] = {}
        plain: dict[str, Counter] = {}

        def unit_t(w: str) -> dict[str, float]:
            if ("t", w) not in units:
                units["t", w] = _unit(full_t[w][1], base)
            return units["t", w]

        def unit_s(w: str) -> dict[str, float]:
            if ("s", w) not in units:
                units["s", w] = _unit(full_s[w][1], base)
            return units["s", w]

        t_sets = {}
        rows = []
        for o in order:
            key, t, k, idx = self.occurrences[o]
            cands = sorted({c for s in senses.of(key) for c in s.target})
            if len(cands) < 2:
                continue
            gold = set(lemma_key(t, lemmatizer=lemmatizer))
            ok = [set(content_lemmas(c, lemmatizer)) <= gold for c in cands]
            if not any(ok) or all(ok):
                continue
            if k not in t_sets:
                t_sets[k] = {x.casefold() for x in target_lemmas[k]}
            own = Counter(context_words(self.source_lemmas[k]))
            line = base.line_vector(self._bag(k, idx))
            feats = []
            for c, good in zip(cands, ok):
                best = None
                for sense in senses.of(key):
                    if c not in sense.target:
                        continue
                    gloss = ranker._gloss_vector(key, sense)
                    t_words = [w for m in sense.target for w in content_lemmas(m, lemmatizer) if w in full_t]
                    s_words = [e.casefold() for e in sense.english if len(e.split()) == 1 and e.casefold() in full_s]
                    if any(w in t_sets[k] for w in t_words) or any(w in own for w in s_words):
                        members: Counter = Counter()   # this pair's own contexts left out
                        for w in t_words:
                            members.update(_unit(full_t[w][1] - own, base) if w in t_sets[k] else unit_t(w))
                        for w in s_words:
                            members.update(_unit(full_s[w][1] - Counter({x: 1 for x in own if x != w}), base)
                                           if w in own else unit_s(w))
                    else:
                        if sense.synset not in plain:
                            plain[sense.synset] = Counter()
                            for w in t_words:
                                plain[sense.synset].update(unit_t(w))
                            for w in s_words:
                                plain[sense.synset].update(unit_s(w))
                        members = plain[sense.synset]
                    f = (_cosine(line, gloss), _cosine(line, members))
                    best = f if best is None or sum(f) > sum(best) else best
                freq = [full_t.get(w, (0, None))[0] - (w in t_sets[k]) for w in content_lemmas(c, lemmatizer)]
                feats.append((best or (0.0, 0.0), min(freq) if freq else 0, good))
            rows.append((min(1.0, TUNE_CAP / per_key[key]), feats))
            if len(rows) >= DICTIONARY_TUNE_ROWS:
                break
        curve = []
        for g in GLOSS_GRID:
            for m in MEMBERS_GRID:
                for f in FREQUENCY_GRID:
                    hit = total = 0.0
                    for weight, feats in rows:
                        top = max(range(len(feats)), key=lambda j: (
                            round(g * feats[j][0][0] + m * feats[j][0][1] + f * math.log1p(feats[j][1]), 9), -j))
                        hit += weight * feats[top][2]
                        total += weight
                    curve.append(((g, m, f), hit / total if total else 0.0))
        (g, m, f), acc = max(curve, key=lambda c: (round(c[1], 9), -c[0][2], -c[0][0], -c[0][1]))
        freq_only = next(a for w, a in curve if w == (0.0, 0.0, FREQUENCY_GRID[-1]))
        return {"gloss": g, "members": m, "frequency": f}, {
            "rule": "top-1 on training occurrences ranked as if their type were unseen (dictionary evidence only, "
                    "each member's context without the occurrence's own pair)",
            "occurrences": len(rows), "gloss": g, "members": m, "frequency": f, "accuracy": round(acc, 4),
            "frequency_only": round(freq_only, 4),
            "curve": [[*w, round(a, 4)] for w, a in curve]}


def _unit(counts: Mapping[str, int], contexts: SenseContexts) -> dict[str, float]:
    vec = {w: c * contexts.idf(w) for w, c in counts.items() if c > 0}
    norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
    return {w: v / norm for w, v in vec.items()}


def _strongest(counts: Mapping[str, int], contexts: SenseContexts) -> dict[str, int]:
    """The `WORD_FEATURES` context words of the largest count x idf."""
    return dict(sorted(counts.items(), key=lambda wc: (-wc[1] * contexts.idf(wc[0]), wc[0]))[:WORD_FEATURES])


def pool_senses(translations: Mapping[tuple[str, ...], tuple[int, Mapping[str, int]]],
                lemmatizer) -> dict[tuple[str, ...], tuple[int, Counter]]:
    """A type's attested translations pooled by `sense_key`: sense -> (count, context counts)."""
    out: dict[tuple[str, ...], tuple[int, Counter]] = {}
    for t, (n, c) in translations.items():
        u = sense_key(t, lemmatizer)
        m, pooled = out.get(u, (0, Counter()))
        pooled.update(c)
        out[u] = (m + n, pooled)
    return out


def _log_share(n: int, total: int, k: int, smoothing: float) -> float:
    return math.log((max(n, 0) + smoothing) / (total + smoothing * k))


# ---------------------------------------------------------------- the ranking


@dataclass(frozen=True)
class Ranked:
    """A candidate translation with its score and where the score came from (``attested`` or ``dictionary``)."""

    entry: TableEntry
    score: float
    evidence: str
    detail: dict = field(default_factory=dict, compare=False)


class SenseRanker:
    """Ranks an MWE's table translations by the line's source context (module docstring). Attested
    translations come first, by context and count; then dictionary-only ones, by their senses' fit."""

    def __init__(self, contexts: SenseContexts, senses: DictionarySenses | None = None, *,
                 target_lemmatizer=None, weights: SenseWeights | None = None):
        from mwemt.preprocess.lemmatize import get_lemmatizer

        self.contexts, self.senses = contexts, senses if senses is not None else contexts.dictionary
        self.weights = weights or contexts.weights
        self.lem_t = target_lemmatizer or get_lemmatizer("simplemma", "it")
        self.lem_s = get_lemmatizer("simplemma", "en")
        self._vectors: dict[str, tuple] = {}
        self._glosses: dict[tuple[str, str], dict[str, float]] = {}
        self._members: dict[str, dict[str, float]] = {}

    def signature(self) -> str:
        w = self.weights
        return (f"{self.contexts.signature()}|weights:prior={w.prior:g},shrink={w.shrink:g},gloss={w.gloss:g},"
                f"members={w.members:g},frequency={w.frequency:g}|dictionary:"
                f"{self.senses.source if self.senses else 'none'}")

    def _attested(self, key: str) -> tuple[dict, dict[tuple[str, ...], dict[str, float]]]:
        """A type's attested senses (`pool_senses`) and their context vectors."""
        if key not in self._vectors:
            pooled = pool_senses(self.contexts.translations.get(key, {}), self.lem_t)
            self._vectors[key] = (pooled, {u: self.contexts.vector(c) for u, (_, c) in pooled.items()})
        return self._vectors[key]

    def _gloss_vector(self, key: str, sense: Sense) -> dict[str, float]:
        """A sense's gloss and its other English members, as words (idf-weighted)."""
        if (key, sense.synset) not in self._glosses:
            from mwemt.preprocess.tokenize import tokenize

            words = tokenize(sense.gloss, "en") + [w for e in sense.english if type_key(e) != key for w in e.split()]
            self._glosses[key, sense.synset] = {w: self.contexts.idf(w)
                                                for w in context_words(self.lem_s.lemmatize(words))}
        return self._glosses[key, sense.synset]

    def _members_vector(self, sense: Sense) -> dict[str, float]:
        """The training contexts of a sense's target members and English single-word members, each a unit vector."""
        if sense.synset not in self._members:
            members: Counter = Counter()
            for t in sense.target:
                for w in content_lemmas(t, self.lem_t):
                    if w in self.contexts.target_words:
                        members.update(_unit(self.contexts.target_words[w][1], self.contexts))
            for e in sense.english:
                w = e.casefold()
                if len(e.split()) == 1 and w in self.contexts.source_words:
                    members.update(_unit(self.contexts.source_words[w][1], self.contexts))
            self._members[sense.synset] = dict(members)
        return self._members[sense.synset]

    def target_frequency(self, tokens: Sequence[str]) -> int:
        """How many training target sentences have the translation's rarest content lemma (0: none)."""
        found = [self.contexts.target_words.get(w, (0, {}))[0] for w in content_lemmas(tokens, self.lem_t)]
        return min(found) if found else 0

    def rank(self, key: str, entries: Sequence[TableEntry], lemmas: Sequence[str],
             indices: Sequence[int]) -> list[Ranked]:
        """``entries`` (the table's translations of ``key``) ranked for the sentence with ``lemmas`` whose MWE
        is at ``indices``: best first; ties keep the table's order (count, then the tokens)."""
        key = type_key(key)
        w = self.weights
        line = self.contexts.line_vector(context_words(lemmas, indices))
        attested = self.contexts.translations.get(key, {})
        pooled, vectors = self._attested(key)
        total = sum(n for n, _ in pooled.values())
        ranked: list[tuple[tuple, Ranked]] = []
        cosines: dict[tuple[str, ...], float] = {}
        for order, e in enumerate(entries):
            if e.translation in attested:
                u = sense_key(e.translation, self.lem_t)
                if u not in cosines:
                    cosines[u] = _cosine(line, vectors[u])
                n = pooled[u][0]
                score = cosines[u] * n / (n + w.shrink) + w.prior * _log_share(n, total, len(pooled), w.smoothing)
                ranked.append(((0, -score, -attested[e.translation][0], order),
                               Ranked(e, score, "attested", {"sense": " ".join(u), "cosine": round(cosines[u], 4),
                                                             "sense_count": n, "count": attested[e.translation][0]})))
            else:
                score, detail = self._dictionary_score(key, e, line)
                ranked.append(((1, -score, 0, order), Ranked(e, score, "dictionary", detail)))
        ranked.sort(key=lambda r: r[0])
        return [r for _, r in ranked]

    def best(self, key: str, entries: Sequence[TableEntry], lemmas: Sequence[str], indices: Sequence[int],
             n: int) -> list[Ranked]:
        """The ``n`` best of `rank`, one per sense (`sense_key`): the others are forms of a sense already
        chosen, which `mwemt.testsets.forms` offers instead."""
        out: list[Ranked] = []
        seen: set[tuple[str, ...]] = set()
        for r in self.rank(key, entries, lemmas, indices):
            u = sense_key(r.entry.translation, self.lem_t)
            if u not in seen:
                seen.add(u)
                out.append(r)
                if len(out) == n:
                    break
        return out

    def _dictionary_score(self, key: str, entry: TableEntry, line: Mapping[str, float]) -> tuple[float, dict]:
        w = self.weights
        freq = self.target_frequency(entry.translation)
        best, best_detail = 0.0, {"sense": None}
        for sense in (self.senses.of(key) if self.senses is not None else ()):
            if entry.translation not in sense.target:
                continue
            g, m = _cosine(line, self._gloss_vector(key, sense)), _cosine(line, self._members_vector(sense))
            s = w.gloss * g + w.members * m
            if best_detail["sense"] is None or s > best:
                best, best_detail = s, {"sense": sense.synset, "gloss": round(g, 4), "members": round(m, 4)}
        best_detail["frequency"] = freq
        return best + w.frequency * math.log1p(freq), best_detail


def rank_items(items, table, ranker: SenseRanker, n: int, *, min_count: int = 1,
               sources: Sequence[str] = ("aligned", "dictionary"), lang: str = "en") -> list[tuple]:
    """The ``n`` best candidates (`SenseRanker.best`) of every MWE of test ``items`` (`mwemt.records.TestItem`):
    (item id, MWE indices, candidate texts) rows. Reads each item's source and MWE spans only, never its
    references."""
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.mwe_table import mwe_key

    lem = get_lemmatizer("simplemma", lang)
    rows = []
    for it in items:
        lemmas = lem.lemmatize(it.source.split())
        for m in it.mwes:
            key = mwe_key(m)
            entries = table.translations(key, min_count=min_count, sources=sources)
            best = ranker.best(key, entries, lemmas, m.indices, n)
            rows.append((it.id, tuple(m.indices), [r.entry.text for r in best]))
    return rows
