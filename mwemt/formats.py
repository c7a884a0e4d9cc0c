"""Readers and writers for the formats of the field, with errors that name file and line.

- plain tokenized text: one sentence per line, tokens separated by single spaces;
- Moses factored lines: ``w|f1|f2 ...`` (``|`` inside a factor escaped as ``&#124;``);
- PARSEME ``.cupt`` (see the cupt section below);
- MWE lexicons: ``list`` (one MWE per line, optional TAB columns category, POS pattern,
  compositionality, count), ``bilingual`` (``source<TAB>target1; target2``), ``cupt`` (extracted from
  annotated training files), ``oewn`` (the OEWN MWE TSV), ``wn-aligned`` (the EN-xx
  synset-aligned TSVs) and the idiom resources ``lidioms`` and ``epie`` (`mwemt.idiom_lexicons`);
- MWE-annotated test sets (JSONL).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from mwemt.errors import InputError
from mwemt.fileio import atomic_write, iter_lines, normalize_text
from mwemt.idiom_lexicons import EPIE_LIST, read_epie, read_lidioms
from mwemt.records import LexiconEntry, Mwe, TestItem, TestMwe

FACTOR_SEP = "|"   # between the factors of a token: surface|lemma|tag

# ---------------------------------------------------------------- plain and factored text


def read_tokenized(path: str | Path, *, allow_empty: bool = False) -> Iterator[list[str]]:
    for line in iter_lines(path, allow_empty=allow_empty):
        yield line.split()


def parse_factored(line: str, n_factors: int | None = None, *, path: str | Path = "<input>",
                   lineno: int | None = None) -> list[list[str]]:
    """Split a factored line into tokens of factors, checking every token has ``n_factors``."""
    rows = [tok.split(FACTOR_SEP) for tok in line.split()]
    if n_factors is None and rows:
        n_factors = len(rows[0])
    for k, row in enumerate(rows, 1):
        if len(row) != n_factors:
            raise InputError(f"token {k} {FACTOR_SEP.join(row)!r} has {len(row)} factors", path, lineno,
                             expected=f"{n_factors} factors separated by '{FACTOR_SEP}'")
        if any(f == "" for f in row):
            raise InputError(f"token {k} {FACTOR_SEP.join(row)!r} has an empty factor", path, lineno,
                             expected="non-empty factors")
    return rows


def format_factored(rows: Iterable[Iterable[str]]) -> str:
    return " ".join(FACTOR_SEP.join(r) for r in rows)


def read_factored(path: str | Path, n_factors: int | None = None) -> Iterator[list[list[str]]]:
    for lineno, line in enumerate(iter_lines(path, allow_empty=False), 1):
        rows = parse_factored(line, n_factors, path=path, lineno=lineno)
        if n_factors is None:
            n_factors = len(rows[0])
        yield rows


def split_factors(rows: list[list[str]]) -> list[list[str]]:
    """Token-major rows -> factor-major streams (one list per factor)."""
    if not rows:
        return []
    return [list(col) for col in zip(*rows)]


# ---------------------------------------------------------------- lexicons

LEXICON_FORMATS = ("auto", "list", "bilingual", "oewn", "wn-aligned", "cupt", "lidioms", "epie")
LEXICON_SIDES = ("source", "target")   # which language column of a two-language lexicon to read
OEWN_HEADER = "lemma\tpos\tlexfile\tn_tokens\tsynsets"
_TURTLE_START = ("@prefix", "@base", "prefix ", "base ")


def _split_mwe(text: str) -> tuple[str, ...]:
    text = text.strip()
    parts = text.split() if " " in text else text.split("_")
    return tuple(p for p in parts if p)


def _sniff_lexicon_format(path: str | Path) -> str | None:
    """The format a lexicon's name or first lines give away, None for plain lines (list or bilingual)."""
    p = Path(path)
    if p.is_dir() or EPIE_LIST.match(p.name):
        return "epie"
    if p.suffix == ".cupt":
        return "cupt"
    if p.suffix == ".ttl":
        return "lidioms"
    first, content = _first_lines(p)
    if first.startswith("# global.columns"):
        return "cupt"
    if content.lower().startswith(_TURTLE_START):
        return "lidioms"
    if content.startswith("lemma\tpos\tlexfile"):
        return "oewn"
    if content.startswith("pwn30_synset\t"):
        return "wn-aligned"
    return None


def _first_lines(path: Path) -> tuple[str, str]:
    """The first line, and the first line that is neither blank nor a ``#`` comment."""
    lines = iter_lines(path)
    try:
        first = content = next(lines, "")
        while content is not None and (content.startswith("#") or not content.strip()):
            content = next(lines, None)
        return first, content or ""
    finally:
        lines.close()


def detect_lexicon_format(path: str | Path) -> str:
    """A lexicon's format from its extension, name or header; ``list`` for plain lines."""
    return _sniff_lexicon_format(path) or "list"


def read_lexicon_entries(path: str | Path, fmt: str = "auto", *, side: str = "source", lang: str | None = None,
                         min_words: int = 2) -> list[LexiconEntry]:
    """Read a lexicon file as entries. ``side`` picks the language of ``wn-aligned`` files, ``lang``
    the language of ``lidioms`` files (needed when one holds several).

    A lexicon without any entry of ``min_words`` words or more is an error: it would silently
    annotate nothing. So is a format the file's name or header contradicts.
    """
    if fmt not in LEXICON_FORMATS:
        raise InputError(f"unknown lexicon format {fmt!r}", path, expected=", ".join(LEXICON_FORMATS))
    sniffed = _sniff_lexicon_format(path)
    if fmt == "auto":
        fmt = sniffed or "list"
    elif sniffed is not None and sniffed != fmt:
        raise InputError(f"this looks like a {sniffed} lexicon, not {fmt}", path,
                         expected=f"the format it is in (formats: {', '.join(LEXICON_FORMATS)}; auto detects "
                                  "them by extension, name and header)")
    if fmt == "lidioms":
        entries = list(read_lidioms(path, lang, min_words))
    elif fmt == "epie":
        entries = list(read_epie(path, min_words))
    elif fmt == "list":
        entries = list(_read_list(path, min_words))
    elif fmt == "bilingual":
        entries = list(_read_bilingual(path, min_words))
    elif fmt == "oewn":
        entries = list(_read_oewn(path, min_words))
    elif fmt == "wn-aligned":
        entries = list(_read_wn_aligned(path, side, min_words))
    else:
        entries = extract_cupt_lexicon([path], min_words=min_words)
    if not entries:
        raise InputError(f"no lexicon entries (format {fmt})", path,
                         expected=f"at least one entry of {min_words} or more words")
    return entries


def _read_list(path, min_words: int) -> Iterator[LexiconEntry]:
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) > 5:
            raise InputError(f"{len(cols)} columns", path, lineno,
                             expected="MWE[<TAB>category[<TAB>POS pattern[<TAB>compositionality[<TAB>count]]]]")
        lemmas = _split_mwe(cols[0])
        if len(lemmas) < min_words:
            raise InputError(f"{cols[0]!r} is a single word", path, lineno,
                             expected=f"an MWE of at least {min_words} words")
        category = cols[1].strip() if len(cols) > 1 else ""
        pos = None
        if len(cols) > 2 and cols[2].strip():
            pos = tuple(cols[2].split())
            if len(pos) != len(lemmas):
                raise InputError(f"POS pattern {cols[2]!r} has {len(pos)} tags for {len(lemmas)} words",
                                 path, lineno, expected="one POS tag per word")
        comp = None
        if len(cols) > 3 and cols[3].strip():
            try:
                comp = float(cols[3])
            except ValueError:
                raise InputError(f"compositionality {cols[3]!r} is not a number", path, lineno,
                                 expected="a number in [0, 1]") from None
            if not 0.0 <= comp <= 1.0:
                raise InputError(f"compositionality {comp} out of range", path, lineno,
                                 expected="a number in [0, 1]")
        count = 0
        if len(cols) > 4 and cols[4].strip():
            if not cols[4].strip().isdigit():
                raise InputError(f"count {cols[4]!r} is not a whole number", path, lineno,
                                 expected="a count >= 0 in column 5")
            count = int(cols[4])
        yield LexiconEntry(lemmas, category, pos, comp, count=count, source_line=lineno)


def format_list_entry(entry: LexiconEntry) -> str:
    """One line of the ``list`` format; empty trailing columns are dropped."""
    cols = [" ".join(entry.lemmas), entry.category, " ".join(entry.pos or ()),
            "" if entry.compositionality is None else f"{entry.compositionality:g}",
            str(entry.count) if entry.count else ""]
    for c in cols:
        if "\t" in c or "\n" in c:
            raise ValueError(f"lexicon entry {entry.key!r} has a TAB or newline in a column")
    while cols and not cols[-1]:
        cols.pop()
    return "\t".join(cols)


def write_list_lexicon(path: str | Path, entries: Iterable[LexiconEntry], header: str | None = None) -> int:
    """Write entries in the ``list`` format atomically (``header`` as leading ``#`` comment lines)."""
    n = 0
    with atomic_write(path) as fh:
        if header:
            for line in header.splitlines():
                fh.write(f"# {line}\n")
        for e in entries:
            fh.write(format_list_entry(e) + "\n")
            n += 1
    return n


def _read_bilingual(path, min_words: int) -> Iterator[LexiconEntry]:
    for lineno, source, targets in read_bilingual_pairs(path):
        lemmas = tuple(source.split())
        if len(lemmas) < min_words:
            continue  # single-word entries are legal in a dictionary; MWE-only users filter them
        yield LexiconEntry(lemmas, translations=tuple(targets), source_line=lineno)


def read_bilingual_pairs(path: str | Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line number, source, [targets]) for every row of a bilingual dictionary, MWE or not."""
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
            raise InputError(f"{len(cols)} column(s) or an empty side", path, lineno,
                             expected="source<TAB>target1; target2")
        targets = [t.strip() for t in cols[1].split(";") if t.strip()]
        if not targets:
            raise InputError("no target after splitting on ';'", path, lineno,
                             expected="source<TAB>target1; target2")
        yield lineno, cols[0].strip(), targets


def _read_oewn(path, min_words: int) -> Iterator[LexiconEntry]:
    it = enumerate(iter_lines(path), 1)
    _, header = next(it, (0, ""))
    if not header.startswith("lemma\tpos"):
        raise InputError(f"header {header[:40]!r}", path, 1, expected=OEWN_HEADER)
    for lineno, line in it:
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 5:
            raise InputError(f"{len(cols)} columns", path, lineno, expected=OEWN_HEADER)
        lemmas = tuple(cols[0].split())
        if len(lemmas) < min_words:
            continue
        yield LexiconEntry(lemmas, category=cols[2], pos=None, source_line=lineno)


def _read_wn_aligned(path, side: str, min_words: int) -> Iterator[LexiconEntry]:
    it = enumerate(iter_lines(path), 1)
    _, header = next(it, (0, ""))
    cols_h = header.split("\t")
    if not header.startswith("pwn30_synset") or len(cols_h) < 7:
        raise InputError(f"header {header[:40]!r}", path, 1,
                         expected="pwn30_synset<TAB>ili<TAB>oewn_synset<TAB>pos<TAB>lexfile<TAB>english_lemmas<TAB>xx_lemmas...")
    src_col, tgt_col = (5, 6) if side == "source" else (6, 5)
    for lineno, line in it:
        cols = line.split("\t")
        if len(cols) != len(cols_h):
            raise InputError(f"{len(cols)} columns", path, lineno, expected=f"{len(cols_h)} columns")
        targets = tuple(t.strip() for t in cols[tgt_col].split("|") if t.strip())
        for lemma in cols[src_col].split("|"):
            words = tuple(lemma.split())
            if len(words) >= min_words:
                yield LexiconEntry(words, category=cols[4], translations=targets, source_line=lineno)


# ---------------------------------------------------------------- cupt (PARSEME)
# The PARSEME .cupt format is CoNLL-U plus an 11th column, PARSEME:MWE. A word's MWE code is
# ``*`` (in no MWE), ``_`` (not annotated / underspecified), or ``;``-separated parts ``ID`` or
# ``ID:CATEGORY``; an MWE's category is given on its first word, later words repeat the bare ID.
# Multiword-token ranges (``3-4``) and empty nodes (``5.1``) are rows but not words: MWE indices
# count words only, so index i is the word whose ID is i + 1.

CUPT_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC", "PARSEME:MWE")
CUPT_HEADER = "# global.columns = " + " ".join(CUPT_COLUMNS)
_MWE_CODE_EXPECTED = "'*', '_' or ';'-separated MWE codes 'ID:CATEGORY' / 'ID' (e.g. '1:VID;2')"
_CATEGORY_FORBIDDEN = set(":;*\t\n ")


@dataclass
class CuptToken:
    """One row of a .cupt sentence: the eleven raw column strings (``_`` where empty)."""

    id: str
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: str
    deprel: str
    deps: str
    misc: str
    mwe: str

    @property
    def is_range(self) -> bool:
        return "-" in self.id

    @property
    def is_empty_node(self) -> bool:
        return "." in self.id

    @property
    def is_word(self) -> bool:
        return not (self.is_range or self.is_empty_node)

    def columns(self) -> list[str]:
        return [self.id, self.form, self.lemma, self.upos, self.xpos, self.feats, self.head, self.deprel,
                self.deps, self.misc, self.mwe]


def parse_mwe_code(code: str) -> list[tuple[int, str | None]]:
    """``'1:VID;2'`` -> ``[(1, 'VID'), (2, None)]``; ``*`` and ``_`` -> ``[]``. Raises ValueError."""
    if code in ("*", "_"):
        return []
    parts: list[tuple[int, str | None]] = []
    for part in code.split(";"):
        ident, sep, category = part.partition(":")
        if not ident.isdigit() or int(ident) < 1 or (sep and not category):
            raise ValueError(f"bad MWE code {code!r}")
        if sep and _CATEGORY_FORBIDDEN & set(category):
            raise ValueError(f"bad MWE category in {code!r}")
        parts.append((int(ident), category if sep else None))
    if len({i for i, _ in parts}) != len(parts):
        raise ValueError(f"MWE code {code!r} repeats an ID")
    return parts


@dataclass
class CuptSentence:
    """A .cupt sentence: its comment lines (without the global.columns header) and all its rows."""

    comments: list[str]
    tokens: list[CuptToken]
    source: str = ""
    start_line: int | None = None

    @property
    def words(self) -> list[CuptToken]:
        return [t for t in self.tokens if t.is_word]

    def comment(self, key: str) -> str | None:
        """The value of a ``# key = value`` comment, e.g. ``sent_id`` or ``text``."""
        prefix = f"# {key} ="
        for c in self.comments:
            if c.startswith(prefix):
                return c[len(prefix):].strip()
        return None

    @property
    def sent_id(self) -> str | None:
        return self.comment("sent_id") or self.comment("source_sent_id")

    def describe(self) -> str:
        """Where this sentence is, for error messages."""
        where = f"{self.source}:{self.start_line}" if self.source and self.start_line else "sentence"
        sid = self.sent_id
        return where + (f" ({sid})" if sid else "")

    def mwes(self) -> list[Mwe]:
        """The annotated MWEs, indices into `words`; lemma = member lemmas in word order, lowercased."""
        members: dict[int, list[int]] = {}
        categories: dict[int, str] = {}
        for k, w in enumerate(self.words):
            for ident, category in parse_mwe_code(w.mwe):
                members.setdefault(ident, []).append(k)
                if category is not None:
                    categories.setdefault(ident, category)
        out = []
        words = self.words
        for ident, idx in members.items():
            lemma = " ".join((words[i].lemma if words[i].lemma != "_" else words[i].form).lower() for i in idx)
            out.append(Mwe(tuple(idx), lemma, categories.get(ident, "")))
        out.sort(key=lambda m: (m.indices, m.category))
        return out

    def with_mwes(self, mwes: Iterable[Mwe], default_category: str = "MWE") -> CuptSentence:
        """A copy whose PARSEME:MWE column holds exactly ``mwes`` (numbered 1.. in sentence order).

        Every word not in an MWE gets ``*``; range and empty-node rows keep their code. An MWE
        without a category is written with ``default_category`` so the file stays valid .cupt.
        """
        words = self.words
        codes: list[list[str]] = [[] for _ in words]
        for ident, m in enumerate(sorted(mwes, key=lambda m: (m.indices, m.category)), 1):
            if m.indices[-1] >= len(words):
                raise ValueError(f"MWE {m.lemma!r} index {m.indices[-1]} is past the {len(words)} words "
                                 f"of {self.describe()}")
            category = m.category or default_category
            if not category or _CATEGORY_FORBIDDEN & set(category):
                raise ValueError(f"MWE category {category!r} cannot be written to .cupt")
            codes[m.indices[0]].append(f"{ident}:{category}")
            for i in m.indices[1:]:
                codes[i].append(str(ident))
        new_words = iter(codes)
        tokens = [replace(t, mwe=";".join(next(new_words)) or "*") if t.is_word else replace(t)
                  for t in self.tokens]
        return CuptSentence(list(self.comments), tokens, self.source, self.start_line)


def _check_cupt_sentence(path: str, lines: list[tuple[int, str]], comments: list[str],
                         start: int) -> CuptSentence:
    tokens: list[CuptToken] = []
    n_words = 0
    range_end = 0  # the last word of the latest multiword-token range
    last_range: tuple[int, str] = (0, "")  # its line and ID
    opened: dict[int, int] = {}  # MWE id -> line where its category was given
    continued: dict[int, int] = {}  # MWE id -> first line continuing it
    for lineno, line in lines:
        cols = line.split("\t")
        if len(cols) != 11:
            raise InputError(f"{len(cols)} TAB-separated columns", path, lineno,
                             expected="11 columns: " + " ".join(CUPT_COLUMNS))
        if any(c == "" for c in cols):
            raise InputError(f"empty column {cols.index('') + 1}", path, lineno, expected="'_' for an empty value")
        tok = CuptToken(*cols)
        if tok.is_range:
            a, _, b = tok.id.partition("-")
            if not (a.isdigit() and b.isdigit() and int(a) == n_words + 1 and int(b) > int(a)):
                raise InputError(f"multiword-token range {tok.id!r} out of place", path, lineno,
                                 expected=f"a range starting at the next word ID {n_words + 1}")
            if int(a) <= range_end:
                raise InputError(f"multiword-token range {tok.id!r} overlaps range {last_range[1]!r} of line "
                                 f"{last_range[0]}", path, lineno, expected=f"a range starting after word {range_end}")
            range_end, last_range = int(b), (lineno, tok.id)
        elif tok.is_empty_node:
            a, _, b = tok.id.partition(".")
            if not (a.isdigit() and b.isdigit() and int(a) == n_words):
                raise InputError(f"empty node {tok.id!r} out of place", path, lineno,
                                 expected=f"an empty node ID '{n_words}.N' after word {n_words}")
        else:
            if not tok.id.isdigit() or int(tok.id) != n_words + 1:
                raise InputError(f"word ID {tok.id!r}", path, lineno,
                                 expected=f"consecutive word IDs: {n_words + 1}")
            n_words += 1
        try:
            parts = parse_mwe_code(tok.mwe)
        except ValueError:
            raise InputError(f"bad PARSEME:MWE code {tok.mwe!r}", path, lineno,
                             expected=_MWE_CODE_EXPECTED) from None
        if parts and not tok.is_word:
            raise InputError(f"MWE code {tok.mwe!r} on a {'range' if tok.is_range else 'empty-node'} row",
                             path, lineno, expected="'*' or '_': MWE codes go on word rows")
        for ident, category in parts:
            if category is not None:
                if ident in opened:
                    raise InputError(f"MWE {ident} is given a category again", path, lineno,
                                     expected=f"the category only on the first word of MWE {ident} "
                                              f"(line {opened[ident]})")
                if ident in continued:
                    raise InputError(f"MWE {ident} is continued before its category is given",
                                     path, continued[ident],
                                     expected=f"'{ident}:CATEGORY' on the first word of MWE {ident}")
                opened[ident] = lineno
            elif ident not in opened:
                continued.setdefault(ident, lineno)
        tokens.append(tok)
    for ident, lineno in continued.items():
        if ident not in opened:
            raise InputError(f"MWE {ident} is continued but never opened with a category", path, lineno,
                             expected=f"'{ident}:CATEGORY' on the first word of MWE {ident}")
    if n_words == 0:
        raise InputError("sentence without words", path, start, expected="at least one word row")
    if range_end > n_words:
        raise InputError(f"multiword-token range {last_range[1]!r} ends after the last word {n_words}", path,
                         last_range[0], expected=f"a range within the sentence's words 1-{n_words}")
    return CuptSentence(comments, tokens, path, start)


def read_cupt(path: str | Path) -> Iterator[CuptSentence]:
    """Read and validate a .cupt file sentence by sentence; bad input -> `InputError` with the line."""
    label = "<stdin>" if str(path) == "-" else str(path)
    comments: list[str] = []
    rows: list[tuple[int, str]] = []
    start = 0
    seen_any = False
    for lineno, line in enumerate(iter_lines(path), 1):
        if lineno == 1:
            if line.startswith("# global.columns"):
                cols = line.partition("=")[2].split()
                if tuple(cols) != CUPT_COLUMNS:
                    raise InputError(f"columns {' '.join(cols)!r}", label, 1, expected=CUPT_HEADER)
                continue
        if not line.strip():
            if rows:
                seen_any = True
                yield _check_cupt_sentence(label, rows, comments, start)
            elif comments:
                raise InputError("comments without a sentence", label, lineno - 1, expected="word rows")
            comments, rows = [], []
            continue
        if not comments and not rows:
            start = lineno
        if line.startswith("#"):
            if rows:
                raise InputError("comment inside a sentence", label, lineno,
                                 expected="comments before the first row of a sentence")
            comments.append(line)
        else:
            rows.append((lineno, line))
    if rows:
        seen_any = True
        yield _check_cupt_sentence(label, rows, comments, start)
    elif comments:
        raise InputError("comments without a sentence at the end of the file", label, start,
                         expected="word rows")
    if not seen_any:
        raise InputError("no sentences", label, expected=".cupt sentences separated by blank lines")


def write_cupt(path: str | Path, sentences: Iterable[CuptSentence]) -> int:
    """Write sentences as .cupt (with the global.columns header) atomically; returns how many."""
    n = 0
    with atomic_write(path) as fh:
        fh.write(CUPT_HEADER + "\n")
        for s in sentences:
            for c in s.comments:
                if "\n" in c or not c.startswith("#"):
                    raise ValueError(f"sentence {n + 1}: comment {c!r} must be one line starting with '#'")
                if not c.startswith("# global.columns"):
                    fh.write(c + "\n")
            for t in s.tokens:
                cols = t.columns()
                if any(not c or "\t" in c or "\n" in c for c in cols):
                    raise ValueError(f"sentence {n + 1}: row {cols!r} has an empty column or a TAB/newline")
                fh.write("\t".join(cols) + "\n")
            fh.write("\n")
            n += 1
    return n


def lexicon_from_sentences(sentences: Iterable[CuptSentence]) -> list[LexiconEntry]:
    """MWE types of annotated sentences: lemmas in word order, occurrence count, most frequent
    category and UPOS pattern; in order of first occurrence."""
    counts: dict[tuple[str, ...], int] = {}
    cats: dict[tuple[str, ...], Counter] = {}
    pos: dict[tuple[str, ...], Counter] = {}
    for s in sentences:
        words = s.words
        for m in s.mwes():
            key = tuple(m.lemma.split())
            counts[key] = counts.get(key, 0) + 1
            cats.setdefault(key, Counter())[m.category] += 1
            pos.setdefault(key, Counter())[tuple(words[i].upos for i in m.indices)] += 1
    entries = []
    for key, n in counts.items():
        pattern = pos[key].most_common(1)[0][0]
        entries.append(LexiconEntry(key, cats[key].most_common(1)[0][0],
                                    None if "_" in pattern or len(pattern) != len(key) else pattern,
                                    count=n))
    return entries


def extract_cupt_lexicon(paths: Iterable[str | Path], min_words: int = 1) -> list[LexiconEntry]:
    """The MWE types annotated in one or more .cupt files (see `lexicon_from_sentences`).

    PARSEME also annotates single-token MWEs (e.g. a hyphenated compound); ``min_words=2`` leaves
    them out, as a lexicon for matching needs.
    """
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    entries = lexicon_from_sentences(s for p in paths for s in read_cupt(p))
    return [e for e in entries if e.length >= min_words]


# ---------------------------------------------------------------- MWE-annotated test sets


_TESTSET_EXPECTED = '{"id", "source", "reference", "mwes": [{"indices", "lemma", "reference"}]}'


def _test_mwe(m, n_tokens: int, n_ref_tokens: int | None = None) -> TestMwe:
    """One MWE of a test-set record, checked: indices must point into ``source.split()`` and
    reference_indices into ``reference.split()``."""
    if not isinstance(m, dict):
        raise ValueError(f"an MWE is {type(m).__name__}, not an object")
    indices = m["indices"]
    if not isinstance(indices, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        raise ValueError(f"MWE indices {indices!r} are not a list of token numbers")
    if indices != sorted(set(indices)) or any(not 0 <= i < n_tokens for i in indices):
        raise ValueError(f"MWE indices {indices} are not increasing token indices of the {n_tokens}-token source")
    for key in ("lemma", "reference"):
        if not isinstance(m[key], str):
            raise ValueError(f"MWE {key} {m[key]!r} is not a string")
    if not m["reference"].strip():  # it would be skipped, and the MWEs left would decide the score
        raise ValueError(f"MWE {m['lemma']!r} has an empty reference translation")
    ref_indices = m.get("reference_indices", [])
    limit = n_ref_tokens if n_ref_tokens is not None else float("inf")
    if (not isinstance(ref_indices, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ref_indices)
            or ref_indices != sorted(set(ref_indices)) or any(not 0 <= i < limit for i in ref_indices)):
        raise ValueError(f"MWE reference_indices {ref_indices!r} are not increasing token indices of the "
                         f"{n_ref_tokens}-token reference")
    scores = {key: _unit_score(m.get(key), key) for key in ("confidence", "compositionality")}
    part = m.get("part", "")
    if part not in TEST_PARTS:
        raise ValueError(f"MWE part {part!r} is not one of {', '.join(map(repr, TEST_PARTS))}")
    alternatives = m.get("alternatives", [])
    if not isinstance(alternatives, list) or not all(isinstance(a, str) and a.strip() for a in alternatives):
        raise ValueError(f"MWE alternatives {alternatives!r} are not a list of non-empty strings")
    return TestMwe(tuple(indices), m["lemma"], m["reference"], m.get("category", ""), m.get("surface", ""),
                   m.get("name", ""), tuple(ref_indices), scores["confidence"], scores["compositionality"], part,
                   tuple(alternatives))


TEST_PARTS = ("", "idiomatic", "literal")


def _unit_score(value, key: str) -> float | None:
    """A 0-1 score of a test MWE, or None when absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"MWE {key} {value!r} is not a number in [0, 1]")
    return float(value)


def read_testset(path: str | Path, *, changed: list[int] | None = None) -> list[TestItem]:
    """Read an MWE test set (JSONL); every record and MWE is checked, errors name the line.

    Source and reference are normalized as every text line is (`mwemt.fileio.normalize_text`), also
    where JSON escapes spell the characters; the numbers of the lines that changed go to ``changed``."""
    items: list[TestItem] = []
    for lineno, line in enumerate(iter_lines(path, changed=changed), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError(f"the line is a JSON {type(obj).__name__}, not an object")
            if not isinstance(obj["source"], str) or not isinstance(obj["reference"], str):
                raise ValueError("source and reference must be strings")
            for key in ("source", "reference"):
                text = normalize_text(obj[key])
                if text != obj[key]:
                    obj[key] = text
                    if changed is not None and (not changed or changed[-1] != lineno):
                        changed.append(lineno)
            if not isinstance(obj.get("mwes", []), list):
                raise ValueError("mwes must be a list")
            n_tokens = len(obj["source"].split())
            n_ref = len(obj["reference"].split())
            mwes = [_test_mwe(m, n_tokens, n_ref) for m in obj.get("mwes", [])]
            items.append(TestItem(str(obj["id"]), obj["source"], obj["reference"], mwes, obj.get("meta", {})))
        except KeyError as exc:
            raise InputError(f"bad test-set record: no {exc} field", path, lineno, expected=_TESTSET_EXPECTED) from None
        except (json.JSONDecodeError, TypeError, ValueError) as exc:
            raise InputError(f"bad test-set record: {exc}", path, lineno, expected=_TESTSET_EXPECTED) from None
    if not items:
        raise InputError("test set is empty", path, expected="one JSON object per line")
    return items


def testitem_to_json(item: TestItem) -> str:
    obj = {"id": item.id, "source": item.source, "reference": item.reference,
           "mwes": [{"indices": list(m.indices), "lemma": m.lemma, "reference": m.reference,
                     **({"category": m.category} if m.category else {}),
                     **({"surface": m.surface} if m.surface else {}),
                     **({"name": m.name} if m.name else {}),
                     **({"reference_indices": list(m.reference_indices)} if m.reference_indices else {}),
                     **({"confidence": m.confidence} if m.confidence is not None else {}),
                     **({"compositionality": m.compositionality} if m.compositionality is not None else {}),
                     **({"part": m.part} if m.part else {}),
                     **({"alternatives": list(m.alternatives)} if m.alternatives else {})}
                    for m in item.mwes]}
    if item.meta:
        obj["meta"] = item.meta
    return json.dumps(obj, ensure_ascii=False)


def write_testset(path: str | Path, items: Iterable[TestItem]) -> int:
    n = 0
    with atomic_write(path) as fh:
        for item in items:
            fh.write(testitem_to_json(item) + "\n")
            n += 1
    return n


# ---------------------------------------------------------------- compositionality scores
# One file format, written by `mwemt compositionality predict` and read by the TESLA-like metric:
# a header ``mwe<TAB>compositionality`` then ``mwe<TAB>score`` with scores in [0, 1], 1 = compositional.

COMPOSITIONALITY_HEADER = "mwe\tcompositionality"


MISSING_COMPOSITIONALITY = ("na", "none", "nan")  # an MWE known to have no prediction


def iter_compositionality(path: str | Path, *, header: list[tuple[int, str]] | None = None
                          ) -> Iterator[tuple[str, float | None, int]]:
    """Yield ``(mwe, score, line)`` from ``mwe<TAB>score`` lines (score in [0, 1], 1 = compositional).

    An optional header (``mwe<TAB>compositionality``, or any first line whose score is not a
    number) is skipped, as are blank lines and ``#`` comments; extra columns are ignored. MWEs are
    lowercased space-separated lemmas; an underscore-joined form (``ivory_tower``) is accepted.
    A score ``NA`` says the MWE is known but has no prediction: the score is None. The line and
    score of a skipped header go to ``header``.
    """
    first = True
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            raise InputError("no tab-separated score", path, lineno,
                             expected="mwe<TAB>score with a score in [0, 1]")
        mwe, raw = normalize_mwe(cols[0]), cols[1].strip()
        if raw.lower() in MISSING_COMPOSITIONALITY:
            first = False
            if not mwe:
                raise InputError("empty MWE", path, lineno, expected="mwe<TAB>score")
            yield mwe, None, lineno
            continue
        try:
            value = float(raw)
        except ValueError:
            if first:
                first = False
                if header is not None:
                    header.append((lineno, raw))
                continue
            raise InputError(f"score {raw!r} is not a number", path, lineno,
                             expected="a score in [0, 1] (1 = compositional), or NA") from None
        first = False
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise InputError(f"score {raw} is outside [0, 1]", path, lineno,
                             expected="a score in [0, 1] (1 = compositional); rescale 0-5 datasets first")
        if not mwe:
            raise InputError("empty MWE", path, lineno, expected="mwe<TAB>score")
        yield mwe, value, lineno


def read_compositionality(path: str | Path, *, keep_missing: bool = False) -> dict[str, float | None]:
    """A compositionality score file as MWE -> score; an MWE given two different scores is an error.

    ``NA`` lines (MWEs without a prediction) are left out, or kept as None with ``keep_missing``.
    """
    out: dict[str, float | None] = {}
    header: list[tuple[int, str]] = []
    for mwe, value, lineno in iter_compositionality(path, header=header):
        if mwe in out and out[mwe] != value:
            raise InputError(f"{mwe!r} appears twice with different scores ({out[mwe]} and {value})",
                             path, lineno, expected="one score per MWE")
        out[mwe] = value
    if not any(v is not None for v in out.values()) and not (keep_missing and out):
        if header and header[0][1] != COMPOSITIONALITY_HEADER.split("\t")[1]:  # a bad score, not a header
            lineno, raw = header[0]
            raise InputError(f"no compositionality scores: the score {raw!r} is not a number (the line was read "
                             "as a header)", path, lineno, expected="mwe<TAB>score lines with a score in [0, 1]")
        raise InputError("no compositionality scores", path, expected="mwe<TAB>score lines")
    return out if keep_missing else {k: v for k, v in out.items() if v is not None}


def normalize_mwe(text: str) -> str:
    words = text.strip().lower().split()
    if len(words) == 1 and "_" in words[0].strip("_"):
        words = [w for w in words[0].split("_") if w]
    return " ".join(words)


def write_compositionality(path: str | Path, scores: Iterable[tuple[str, float]]) -> int:
    """Write a score file atomically (header first); returns the number of MWEs written."""
    n = 0
    with atomic_write(path) as fh:
        fh.write(COMPOSITIONALITY_HEADER + "\n")
        for mwe, score in scores:
            if not 0.0 <= score <= 1.0:
                raise ValueError(f"score {score} of {mwe!r} is outside [0, 1]")
            fh.write(f"{' '.join(mwe.split())}\t{score:.6f}\n")
            n += 1
    return n
