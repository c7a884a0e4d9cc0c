"""The MWE translation table: for each source MWE type, its attested translations with counts.

One table serves every part of mwemt that needs "how can this MWE be translated": the MWE score's
alternatives (`mwemt score --mwe-alternatives table`), test sets that carry them (`mwemt testset
build --table`), term use and LiTER (`mwemt.evaluate.term_use`, `mwemt.evaluate.liter`), and later
dictionary augmentation, inline target hints and constrained decoding. It sits in `preprocess`, so
`evaluate`, `augment` and `nmt` may all import it.

Where translations come from (`TableEntry.sources`):

- ``aligned``: read off a word alignment of parallel text (`build_from_alignment`), with the same
  span rule and filters as `mwemt testset build` (`mwemt.testsets.aligned`): every
  occurrence of an MWE in the source whose translation passes the filters counts once;
- ``dictionary``: a bilingual dictionary's translations of the MWE (`add_dictionary`, e.g. the
  MultiWordNet EN-IT synsets, read by `read_dictionary`); a dictionary entry has no count of its own.

Keys are MWE *types*: the lexicon form, casefolded (`type_key`, the key test-set selection caps
on and `mwe_type` gives for a test MWE). Translations are tuples of casefolded Moses tokens of the
target language; ``...`` (`GAP`) marks a gap, as in test-set references ("ha ... vinto").

API (stable; new keyword arguments only ever get defaults)::

    from mwemt.testsets.mwe_table import MweTranslationTable, TableEntry, read_dictionary

    table = MweTranslationTable.build_from_alignment(sentences, tgt_tokens, alignments)
    table.add_dictionary(read_dictionary("en-ita.multiwordnet.tsv"), lang="it")
    table.translations("keep in touch")            # -> (TableEntry, ...) by count, highest first
    table.translations(key, min_count=2, sources={"aligned"})
    table.best("keep in touch")                    # -> TableEntry | None
    "keep in touch" in table; table.keys(); len(table)
    merged = table.merge(other)                    # a new table; counts add, sources unite
    table.write("table.jsonl"); MweTranslationTable.read("table.jsonl")

File format (JSONL, written atomically): a header line ``{"format": "mwemt-mwe-table", "version":
1, "signature": ..., "provenance": {...}}`` (provenance: input hashes, aligner settings, counts,
as the builder recorded them), then one line per key, keys sorted: ``{"key": "keep in touch",
"translations": [{"tokens": ["restare", "in", "contatto"], "count": 3, "sources": ["aligned",
"dictionary"]}, ...]}``. `read` checks every line and names file and line on error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.records import AnnotatedSentence, Mwe, TestMwe
from mwemt.testsets.aligned import ReferenceFilters, SpanRules, aligned_reference, filter_reason
from mwemt.testsets.select import type_key as _select_type_key

GAP = "..."
SOURCES = ("aligned", "dictionary")
TABLE_FORMAT = "mwemt-mwe-table"
TABLE_VERSION = 1
PLACEHOLDERS = frozenset({"GAP!", "PSEUDOGAP!"})  # MultiWordNet's marks for lexical gaps


def type_key(form: str) -> str:
    """The key of an MWE type: its lexicon form with spaces collapsed, then
    `mwemt.testsets.select.type_key` (casefolded): "Keep  in touch" -> "keep in touch"."""
    return _select_type_key(" ".join(form.split()))


def mwe_key(mwe: TestMwe) -> str:
    """The table key of a test-set MWE: its lexicon form (``name``), else its lemma."""
    return type_key(mwe.name or mwe.lemma)


def translation_tokens(text: str, lang: str) -> tuple[str, ...]:
    """A translation as the table stores it: Moses tokens (``lang``), casefolded; ``...`` kept."""
    from mwemt.preprocess.tokenize import tokenize

    out: list[str] = []
    for k, part in enumerate(text.split(GAP)):
        if k:
            out.append(GAP)
        out.extend(t.casefold() for t in tokenize(part.strip(), lang) if t.strip())
    while out and out[0] == GAP:
        out.pop(0)
    while out and out[-1] == GAP:
        out.pop()
    return tuple(out)


@dataclass(frozen=True, order=True)
class TableEntry:
    """One translation of an MWE type: its tokens, how often alignment attested it (0 = only
    listed by a dictionary) and where it comes from (a subset of `SOURCES`)."""

    translation: tuple[str, ...]
    count: int
    sources: frozenset[str]

    def __post_init__(self) -> None:
        if not self.translation or not all(isinstance(t, str) and t and not t.isspace() for t in self.translation):
            raise ValueError(f"a translation needs non-empty tokens, not {self.translation!r}")
        if self.count < 0:
            raise ValueError(f"a translation count must be >= 0, not {self.count}")
        if not self.sources or not self.sources <= set(SOURCES):
            raise ValueError(f"translation sources must be a non-empty subset of {SOURCES}, not {sorted(self.sources)}")

    @property
    def text(self) -> str:
        """The tokens joined by spaces: "restare in contatto", "ha ... vinto"."""
        return " ".join(self.translation)


def _order(entry: TableEntry) -> tuple:
    # highest count first; among equal counts, dictionary-attested first; then by the tokens
    return (-entry.count, "dictionary" not in entry.sources, entry.translation)


class MweTranslationTable:
    """MWE type key -> its translations (`TableEntry`), highest count first. See the module docstring.

    ``provenance``: what the table was built from (input hashes, aligner settings, counts); it is
    written in the file's header and read back. A table is built with `add`, `add_dictionary` and
    `build_from_alignment`; `merge` returns a new table.
    """

    def __init__(self, entries: Mapping[str, Iterable[TableEntry]] | None = None, *,
                 provenance: Mapping | None = None) -> None:
        self._data: dict[str, dict[tuple[str, ...], TableEntry]] = {}
        self.provenance: dict = dict(provenance or {})
        for key, items in (entries or {}).items():
            for e in items:
                self._add_entry(type_key(key), e)

    # -- reading
    def translations(self, key: str, *, min_count: int = 1,
                     sources: Iterable[str] | None = None) -> tuple[TableEntry, ...]:
        """The translations of ``key`` (a lexicon form; casefolded here), highest count first.

        ``min_count``: the least alignment count of an entry that only alignment attests (dictionary
        entries always pass). ``sources``: keep entries attested by at least one of these."""
        wanted = None if sources is None else frozenset(sources)
        if wanted is not None and not wanted <= set(SOURCES):
            raise MwemtError(f"unknown translation source(s) {sorted(wanted - set(SOURCES))}; choose from {SOURCES}")
        found = self._data.get(type_key(key), {})
        out = [e for e in found.values()
               if (e.count >= min_count or "dictionary" in e.sources) and (wanted is None or e.sources & wanted)]
        return tuple(sorted(out, key=_order))

    def best(self, key: str) -> TableEntry | None:
        """The most frequent translation of ``key`` (dictionary first among equals), or None."""
        found = self.translations(key, min_count=0)
        return found[0] if found else None

    def keys(self) -> list[str]:
        """Every MWE type key, sorted."""
        return sorted(self._data)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and type_key(key) in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MweTranslationTable) and self._data == other._data

    def n_translations(self) -> int:
        return sum(len(v) for v in self._data.values())

    # -- building
    def _add_entry(self, key: str, entry: TableEntry) -> None:
        bucket = self._data.setdefault(key, {})
        old = bucket.get(entry.translation)
        if old is not None:
            entry = TableEntry(entry.translation, old.count + entry.count, old.sources | entry.sources)
        bucket[entry.translation] = entry

    def add(self, key: str, translation: Sequence[str], count: int = 1, source: str = "aligned") -> None:
        """Count ``count`` more observations of ``translation`` (tokens) for the MWE type ``key``."""
        tokens = tuple(t.casefold() for t in translation)
        self._add_entry(type_key(key), TableEntry(tokens, count, frozenset({source})))

    def add_dictionary(self, pairs: Iterable[tuple[str, str]], *, lang: str = "it",
                       keys: Iterable[str] | None = None) -> int:
        """Add a bilingual dictionary's (source MWE, translation) pairs, translations tokenized in
        ``lang``; ``keys``: only these MWE types (e.g. those of a test set). Returns how many
        (key, translation) entries the dictionary gave (new or already attested)."""
        only = None if keys is None else {type_key(k) for k in keys}
        n = 0
        for source, target in pairs:
            if source in PLACEHOLDERS or target in PLACEHOLDERS:
                continue
            key = type_key(source)
            if not key or (only is not None and key not in only):
                continue
            tokens = translation_tokens(target, lang)
            if tokens:
                self._add_entry(key, TableEntry(tokens, 0, frozenset({"dictionary"})))
                n += 1
        return n

    def merge(self, other: MweTranslationTable) -> MweTranslationTable:
        """A new table with the entries of both: counts of the same translation add up, sources
        unite. Provenance: both, under ``merged``."""
        out = MweTranslationTable(provenance={"merged": [self.provenance, other.provenance]})
        for table in (self, other):
            for key, bucket in table._data.items():
                for e in bucket.values():
                    out._add_entry(key, e)
        return out

    @classmethod
    def build_from_alignment(cls, sentences: Sequence[AnnotatedSentence], tgt_tokens: Sequence[Sequence[str]],
                             alignments: Sequence, *, filters=None, rules=None,
                             key: Callable[[str], str] = type_key,
                             provenance: Mapping | None = None,
                             observe: Callable[[str, tuple[str, ...], int, Mwe], None] | None = None
                             ) -> tuple[MweTranslationTable, dict]:
        """The translations alignment attests: every MWE of ``sentences[k]`` (annotated source),
        translated by `mwemt.testsets.aligned.aligned_reference` under ``alignments[k]``
        into ``tgt_tokens[k]``, counted once per occurrence unless a filter drops it.

        ``filters`` (`ReferenceFilters`) and ``rules`` (`SpanRules`) default to the test builder's.
        ``observe(key, translation, k, mwe)``, when given, hears every counted occurrence (``k``: the
        index of its sentence), e.g. to keep the source contexts of each translation (`mwemt.testsets.senses`).
        Returns the table and counts (occurrences seen, kept, and dropped by filter reason)."""
        filters = filters or ReferenceFilters()
        rules = rules or SpanRules()
        if not (len(sentences) == len(tgt_tokens) == len(alignments)):
            raise MwemtError("build_from_alignment: sentences, targets and alignments must have the same length")
        table = cls(provenance=provenance)
        counts: dict = {"occurrences": 0, "kept": 0, "dropped": {}}
        for n_sent, (sent, tgt, links) in enumerate(zip(sentences, tgt_tokens, alignments)):
            for m in sent.mwes:
                counts["occurrences"] += 1
                ref = aligned_reference(m.indices, links, tgt, src_tokens=sent.tokens, rules=rules)
                reason = filter_reason(ref, m.length, filters, src_tokens=[sent.tokens[i] for i in m.indices])
                if reason is not None:
                    counts["dropped"][reason] = counts["dropped"].get(reason, 0) + 1
                    continue
                assert ref is not None
                tokens = []
                for k, run in enumerate(ref.runs):
                    if k:
                        tokens.append(GAP)
                    tokens.extend(run)
                table.add(key(m.lemma), tokens, 1, "aligned")
                counts["kept"] += 1
                if observe is not None:
                    observe(key(m.lemma), tuple(t.casefold() for t in tokens), n_sent, m)
        return table, counts

    # -- files
    def signature(self) -> str:
        """``mwe-table|keys:N|translations:M|sources:aligned+dictionary``: what a score names."""
        used = sorted({s for b in self._data.values() for e in b.values() for s in e.sources})
        return f"mwe-table|keys:{len(self)}|translations:{self.n_translations()}|sources:{'+'.join(used) or 'none'}"

    def write(self, path: str | Path) -> None:
        """Write the table (JSONL, header first; atomically)."""
        from mwemt.fileio import atomic_write

        with atomic_write(path) as fh:
            fh.write(json.dumps({"format": TABLE_FORMAT, "version": TABLE_VERSION, "signature": self.signature(),
                                 "provenance": self.provenance}, ensure_ascii=False) + "\n")
            for key in self.keys():
                entries = [{"tokens": list(e.translation), "count": e.count, "sources": sorted(e.sources)}
                           for e in self.translations(key, min_count=0)]
                fh.write(json.dumps({"key": key, "translations": entries}, ensure_ascii=False) + "\n")

    @classmethod
    def read(cls, path: str | Path) -> MweTranslationTable:
        """Read a table `write` wrote; a bad line raises `InputError` naming file and line."""
        from mwemt.fileio import iter_lines

        expected_header = f'{{"format": "{TABLE_FORMAT}", "version": {TABLE_VERSION}, "provenance": {{...}}}}'
        expected_row = '{"key": MWE, "translations": [{"tokens": [...], "count": N, "sources": ["aligned"|"dictionary"]}]}'
        table: MweTranslationTable | None = None
        for lineno, line in enumerate(iter_lines(path), 1):
            if table is None:
                try:
                    head = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(f"not JSON: {exc}", path, lineno, expected=expected_header) from None
                if not isinstance(head, dict) or head.get("format") != TABLE_FORMAT:
                    raise InputError("not an MWE translation table header", path, lineno, expected=expected_header)
                if head.get("version") != TABLE_VERSION:
                    raise InputError(f"table version {head.get('version')!r}", path, lineno,
                                     expected=f"version {TABLE_VERSION}")
                table = cls(provenance=head.get("provenance") or {})
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict) or not isinstance(row.get("key"), str) or not row["key"].strip():
                    raise ValueError("no MWE key")
                key = type_key(row["key"])
                if key in table._data:
                    raise ValueError(f"key {key!r} is listed twice")
                entries = row.get("translations")
                if not isinstance(entries, list) or not entries:
                    raise ValueError("no translations")
                for e in entries:
                    if not isinstance(e, dict):
                        raise ValueError("a translation is not an object")
                    tokens, count, sources = e.get("tokens"), e.get("count"), e.get("sources")
                    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                        raise ValueError(f"tokens {tokens!r} are not a list of strings")
                    spaced = next((t for t in tokens if t.strip() and any(ch.isspace() for ch in t)), None)
                    if spaced is not None:   # one token is one word: decoding and scoring split on whitespace
                        raise ValueError(f"token {spaced!r} contains whitespace (a token is one word: write "
                                         f"{spaced.split()!r} as separate tokens)")
                    if not isinstance(count, int) or isinstance(count, bool):
                        raise ValueError(f"count {count!r} is not an integer")
                    if not isinstance(sources, list):
                        raise ValueError(f"sources {sources!r} are not a list")
                    table._add_entry(key, TableEntry(tuple(tokens), count, frozenset(sources)))
            except (json.JSONDecodeError, ValueError) as exc:
                raise InputError(f"bad table row: {exc}", path, lineno, expected=expected_row) from None
        if table is None:
            raise InputError("empty file", path, expected=expected_header)
        return table


def read_dictionary(path: str | Path, fmt: str = "auto", dict_side: str = "source",
                    min_words: int = 1, *, placeholders: bool = False,
                    with_lines: bool = False) -> list[tuple[str, str]] | list[tuple[str, str, int]]:
    """A bilingual dictionary as (source, translation) pairs, one per synonym pair: a ``bilingual``
    file (``source<TAB>t1; t2``; ``;``-separated sources too) or an EN-xx WordNet-aligned TSV
    (``wn-aligned``, e.g. ``en-ita.multiwordnet.tsv``: every English lemma of a synset with every
    Italian one). ``dict_side``: which column is the corpus source language. ``min_words``: the
    least words of a source entry (1 = single words too, as LiTER needs). MultiWordNet's
    lexical-gap marks are dropped (``placeholders=True`` keeps them, for a reader that counts them).
    ``with_lines``: (source, translation, dictionary line) triples instead. The one dictionary
    reader of mwemt: `mwemt augment dictionary` reads through it too."""
    from mwemt.formats import detect_lexicon_format, read_lexicon_entries

    if fmt == "auto":
        fmt = "wn-aligned" if detect_lexicon_format(path) == "wn-aligned" else "bilingual"
    if fmt not in ("bilingual", "wn-aligned"):
        raise MwemtError(f"unknown dictionary format {fmt!r}; choose auto, bilingual or wn-aligned")
    if dict_side not in ("source", "target"):
        raise MwemtError(f"dict_side must be source or target, not {dict_side!r}")
    side = dict_side if fmt == "wn-aligned" else "source"
    swap = fmt == "bilingual" and dict_side == "target"
    pairs: list = []
    for e in read_lexicon_entries(path, fmt, side=side, min_words=min_words):
        sources = [s.strip() for s in e.key.split(";")] if fmt == "bilingual" else [e.key]
        for s in sources:
            for t in e.translations:
                if s and t and (placeholders or (s not in PLACEHOLDERS and t not in PLACEHOLDERS)):
                    pair = (t, s) if swap else (s, t)
                    pairs.append((*pair, e.source_line or 0) if with_lines else pair)
    return pairs


def build_table(rows: Sequence[tuple[int, str, str]], annotator, *, tgt_lang: str = "it", pretokenized: bool = False,
                filters=None, rules=None, align_config=None, symmetrization: str = "grow-diag-final-and",
                extra: tuple[Sequence, Sequence] | None = None, cache_dir=None,
                progress: Callable[[str], None] = lambda _msg: None) -> tuple[MweTranslationTable, dict]:
    """`mwemt testset table` as one call: annotate the source side of ``rows`` = (line, source,
    target) with ``annotator`` (the `Annotator` of `mwemt annotate`), align the pairs (eflomal,
    cached; ``extra`` parallel text for the statistics only) and count each MWE's translations
    (`MweTranslationTable.build_from_alignment`). Returns the table (its ``provenance`` holds the
    aligner signature, cache key and counts) and the counts."""
    from mwemt.testsets.align import AlignConfig, align_directional, signature, tokenize_side

    config = align_config or AlignConfig()
    kept = [r for r in rows if r[1].strip() and r[2].strip()]
    progress(f"annotating {len(kept):,} source sentences")
    sentences = [annotator.annotate_text(s) for _, s, _ in kept]
    tgt = tokenize_side([t for _, _, t in kept], tgt_lang, pretokenized)
    src = [s.tokens for s in sentences]
    progress(f"aligning {len(kept):,} pairs" + (f" with {len(extra[0]):,} extra pairs" if extra else ""))
    aligned = align_directional(src, tgt, extra=extra, config=config, cache_dir=cache_dir)
    links = aligned.symmetrized(src, tgt, symmetrization)
    table, counts = MweTranslationTable.build_from_alignment(sentences, tgt, links, filters=filters, rules=rules)
    counts = {"pairs": len(rows), "empty_pairs": len(rows) - len(kept), "not_aligned_pairs": len(aligned.skipped),
              **counts}
    table.provenance.update({
        "alignment": signature(config, symmetrization, len(extra[0]) if extra else 0),
        "alignment_cache_key": aligned.key, "annotator": getattr(annotator, "signature", ""),
        "span_rules": (rules.describe() if rules is not None else "default"), "counts": counts})
    return table, counts
