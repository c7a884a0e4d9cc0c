"""An MWE-annotated test set (JSONL of `TestItem`) from the TED EN-IT MWE annotation.

The input is the flattened annotation table (one row per sentence, annotator and MWE: snt_id,
annotator, source_en, ref_it, mt_it, mwe_en, mwe_ref_it, ref_check, correct, mwe_mt_it, mt_check).
Only one annotator's rows are used, by default the adjudicated ``FINAL`` ones.

Annotators typed the MWEs by hand, so they are located in the tokenized source rather than
trusted: the MWE text is lowercased, ``...`` marks are dropped, it is split on spaces (and, as a
second try, tokenized by Moses like the source), and its tokens are matched in order, with gaps, each to an equal source token or else to a close one
(same simplemma lemma, or a character-level similarity of at least ``FUZZY_SIMILARITY`` for words
of 4+ letters, which covers typos such as "ammount" and inflections such as "put"/"puts"). The
match with the fewest approximate tokens, then the fewest ``...`` marks without a gap in the
source, then the fewest gap tokens, then the leftmost wins; an MWE typed twice for one sentence
takes two different occurrences. An MWE that cannot be located is
never dropped silently: it is listed in the report and in the item's ``meta["unlocated"]`` (or kept
with empty indices on request). An MWE whose reference translation is empty (the reference leaves it
untranslated) cannot be scored: it is counted in the report and kept in ``meta["no_reference"]``,
never in ``mwes``, which the test-set reader would refuse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines
from mwemt.preprocess.lemmatize import Lemmatizer, get_lemmatizer
from mwemt.preprocess.tokenize import tokenize
from mwemt.records import TestItem, TestMwe

PAIRS_COLUMNS = ("snt_id", "annotator", "source_en", "ref_it", "mt_it", "mwe_en", "mwe_ref_it", "ref_check",
                 "correct", "mwe_mt_it", "mt_check")
CHECK_COLUMNS = ("ref_check", "correct", "mwe_mt_it", "mt_check")
FUZZY_SIMILARITY = 0.75
DEFAULT_MAX_GAP = 10
_ELLIPSIS = re.compile(r"\.{2,}|\u2026")


@dataclass(frozen=True)
class PairRow:
    """One row of the TED pairs table, with the line it came from."""

    line: int
    snt_id: int
    annotator: str
    source_en: str
    ref_it: str
    mt_it: str
    mwe_en: str
    mwe_ref_it: str
    ref_check: str
    correct: str
    mwe_mt_it: str
    mt_check: str


def read_ted_pairs(path: str | Path, annotator: str | None = "FINAL") -> list[PairRow]:
    """Rows of the pairs TSV (only ``annotator``'s, unless None), checked column by column."""
    rows: list[PairRow] = []
    sources: dict[int, tuple[str, int]] = {}
    it = enumerate(iter_lines(path), 1)
    _, header = next(it, (1, ""))
    if tuple(header.split("\t")) != PAIRS_COLUMNS:
        raise InputError(f"header {header[:60]!r}", path, 1, expected="\t".join(PAIRS_COLUMNS))
    for lineno, line in it:
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != len(PAIRS_COLUMNS):
            raise InputError(f"{len(cols)} TAB-separated columns", path, lineno,
                             expected=f"{len(PAIRS_COLUMNS)} columns: " + " ".join(PAIRS_COLUMNS))
        if not cols[0].isdigit() or int(cols[0]) < 1:
            raise InputError(f"snt_id {cols[0]!r}", path, lineno, expected="a sentence number >= 1")
        row = PairRow(lineno, int(cols[0]), *(c.strip() for c in cols[1:]))
        if annotator is not None and row.annotator != annotator:
            continue
        if not row.source_en or not row.mwe_en:
            raise InputError("empty source_en or mwe_en", path, lineno, expected="a source sentence and its MWE")
        first = sources.setdefault(row.snt_id, (row.source_en, lineno))
        if first[0] != row.source_en:
            raise InputError(f"sentence {row.snt_id} has a different source_en than on line {first[1]}",
                             path, lineno, expected="one source sentence per snt_id")
        rows.append(row)
    if not rows:
        raise InputError(f"no rows for annotator {annotator!r}", path,
                         expected="rows whose annotator column is " + repr(annotator))
    return rows


@dataclass(frozen=True)
class Pattern:
    """MWE tokens to look for; ``gap_after`` holds k where the annotator wrote ``...`` after token k."""

    tokens: tuple[str, ...]
    gap_after: frozenset[int] = frozenset()


def mwe_patterns(text: str, lang: str = "en") -> list[Pattern]:
    """The token sequences to look for, lowercased, ``...`` marks remembered but not matched: the MWE
    split on spaces (annotators mostly typed it tokenized, as "let 's"), then tokenized by Moses."""
    segments = _ELLIPSIS.split(text.replace("\u2019", "'").lower())
    out: list[Pattern] = []
    for split in (str.split, lambda seg: tokenize(seg, lang)):
        tokens: list[str] = []
        marks: set[int] = set()
        for seg in segments:
            toks = split(seg)
            if tokens and toks:
                marks.add(len(tokens) - 1)
            tokens.extend(toks)
        pattern = Pattern(tuple(tokens), frozenset(marks if len(segments) > 1 else ()))
        if tokens and pattern not in out:
            out.append(pattern)
    return out


@dataclass(frozen=True)
class Location:
    indices: tuple[int, ...]
    approximate: int  # how many tokens matched only approximately
    gap_tokens: int
    missed_marks: int = 0  # '...' marks with no gap in the source

    @property
    def how(self) -> str:
        if self.approximate:
            return "fuzzy"
        return "gap" if self.gap_tokens else "exact"

    @property
    def cost(self) -> tuple:
        return self.approximate, self.missed_marks, self.gap_tokens, self.indices


class TokenMatcher:
    """Exact, then approximate token equality, with cached lemmas."""

    def __init__(self, lemmatizer: Lemmatizer | None = None, min_similarity: float = FUZZY_SIMILARITY):
        from rapidfuzz.distance import Levenshtein

        self._similarity = Levenshtein.normalized_similarity
        self.lemmatizer = lemmatizer or get_lemmatizer("simplemma", "en")
        self.min_similarity = min_similarity

    def level(self, source: str, pattern: str) -> int | None:
        """0 = equal, 1 = approximately equal, None = different."""
        s = source.lower()
        if s == pattern:
            return 0
        if self.lemmatizer.lemma(s) == self.lemmatizer.lemma(pattern):
            return 1
        if min(len(s), len(pattern)) >= 4 and self._similarity(s, pattern) >= self.min_similarity:
            return 1
        return None


def locate_mwe(source: Sequence[str], pattern: Pattern | Sequence[str], matcher: TokenMatcher, *,
               max_gap: int = DEFAULT_MAX_GAP, exclude: Iterable[tuple[int, ...]] = ()) -> Location | None:
    """The best in-order occurrence of ``pattern`` in ``source`` (see the module docstring)."""
    if not isinstance(pattern, Pattern):
        pattern = Pattern(tuple(pattern))
    tokens = pattern.tokens
    if not tokens:
        return None
    levels = [[matcher.level(s, p) for s in source] for p in tokens]
    excluded = set(exclude)
    best: Location | None = None

    def extend(k: int, path: list[int], approx: int) -> None:
        nonlocal best
        if best is not None and approx > best.approximate:
            return
        if k == len(tokens):
            gaps = path[-1] - path[0] + 1 - len(path)
            missed = sum(1 for i in pattern.gap_after if path[i + 1] == path[i] + 1)
            loc = Location(tuple(path), approx, gaps, missed)
            if loc.indices not in excluded and (best is None or loc.cost < best.cost):
                best = loc
            return
        start = 0 if not path else path[-1] + 1
        stop = len(source) if not path else min(len(source), path[-1] + 2 + max_gap)
        for j in range(start, stop):
            lv = levels[k][j]
            if lv is not None:
                path.append(j)
                extend(k + 1, path, approx + lv)
                path.pop()

    extend(0, [], 0)
    return best


def _check(value: str) -> bool | None:
    """Y/N judgments as booleans (None for anything else: blanks and free text)."""
    v = value.strip().upper()
    return True if v == "Y" else False if v == "N" else None


@dataclass
class TestsetReport:
    rows: int = 0
    sentences: int = 0
    sentences_with_mwes: int = 0
    located: dict[str, int] = field(default_factory=lambda: {"exact": 0, "gap": 0, "fuzzy": 0})
    unlocated: list[dict] = field(default_factory=list)
    empty_references: int = 0

    def to_dict(self) -> dict:
        return {"rows": self.rows, "sentences": self.sentences, "sentences_with_mwes": self.sentences_with_mwes,
                "located": dict(self.located), "unlocated": len(self.unlocated),
                "unlocated_mwes": self.unlocated, "empty_references": self.empty_references}

    def summary(self) -> str:
        loc = self.located
        return (f"{self.rows} MWE rows in {self.sentences_with_mwes} sentences ({self.sentences} written): "
                f"{loc['exact']} found verbatim, {loc['gap']} with gaps, {loc['fuzzy']} approximately, "
                f"{len(self.unlocated)} not found; {self.empty_references} without a reference translation (not scored; in meta.no_reference)")


def build_ted_testset(rows: Sequence[PairRow], *, ted_sources: Sequence[str] | None = None,
                      ted_references: Sequence[str] | None = None, all_sentences: bool = False,
                      keep_unlocated: bool = False, max_gap: int = DEFAULT_MAX_GAP,
                      matcher: TokenMatcher | None = None, lang: str = "en",
                      pairs_name: str = "<pairs>") -> tuple[list[TestItem], TestsetReport]:
    """Group rows by sentence, locate each MWE, and build `TestItem`s in sentence order.

    With ``all_sentences`` every line of ``ted_sources``/``ted_references`` (the full TED test set)
    becomes an item, with no MWEs where the table has none; the table's sentences must then agree
    with those lines.
    """
    if max_gap < 0:
        raise MwemtError(f"max_gap must be 0 or more, not {max_gap}")
    matcher = matcher or TokenMatcher()
    report = TestsetReport(rows=len(rows))
    by_sent: dict[int, list[PairRow]] = {}
    for r in rows:
        by_sent.setdefault(r.snt_id, []).append(r)
    report.sentences_with_mwes = len(by_sent)
    if ted_sources is not None:
        if ted_references is not None and len(ted_references) != len(ted_sources):
            raise InputError(f"{len(ted_sources)} source lines but {len(ted_references)} reference lines",
                             expected="a reference line per source line")
        for sid, group in by_sent.items():
            r = group[0]
            if sid > len(ted_sources):
                raise InputError(f"snt_id {sid} is past the {len(ted_sources)} lines of the TED source",
                                 pairs_name, r.line, expected="snt_id = line number in the TED files")
            if ted_sources[sid - 1].split() != r.source_en.split():
                raise InputError(f"source_en of sentence {sid} differs from line {sid} of the TED source",
                                 pairs_name, r.line, expected="snt_id = line number in the TED files")
            if ted_references is not None and ted_references[sid - 1].split() != r.ref_it.split():
                raise InputError(f"ref_it of sentence {sid} differs from line {sid} of the TED reference",
                                 pairs_name, r.line, expected="snt_id = line number in the TED files")
    if all_sentences:
        if ted_sources is None or ted_references is None:
            raise ValueError("all_sentences needs the TED source and reference lines")
        ids = list(range(1, len(ted_sources) + 1))
    else:
        ids = sorted(by_sent)

    items = []
    for sid in ids:
        group = by_sent.get(sid, [])
        if group:
            source, reference, mt = group[0].source_en, group[0].ref_it, group[0].mt_it
        else:
            source, reference, mt = ted_sources[sid - 1].strip(), ted_references[sid - 1].strip(), None
        tokens = source.split()
        mwes: list[TestMwe] = []
        checks: list[dict] = []
        unlocated: list[dict] = []
        no_reference: list[dict] = []
        used: dict[tuple[str, ...], list[tuple[int, ...]]] = {}
        for r in group:
            patterns = mwe_patterns(r.mwe_en, lang)
            if not patterns:
                raise InputError(f"MWE {r.mwe_en!r} has no words", pairs_name, r.line, expected="an MWE")
            key = patterns[0].tokens  # one MWE typed twice for a sentence takes two occurrences
            pattern, loc = patterns[0], None
            for pat in patterns:
                found = locate_mwe(tokens, pat, matcher, max_gap=max_gap, exclude=used.get(key, ()))
                if found is not None and (loc is None or found.cost[:3] < loc.cost[:3]):
                    pattern, loc = pat, found
            check = {"mwe_en": r.mwe_en, **{c: getattr(r, c) for c in CHECK_COLUMNS},
                     "ref_ok": _check(r.ref_check), "mt_ok": _check(r.mt_check), "line": r.line}
            if not r.mwe_ref_it:
                report.empty_references += 1
            if loc is None:
                report.unlocated.append({"snt_id": sid, "line": r.line, "mwe_en": r.mwe_en, "source_en": source})
                unlocated.append({**check, "reference": r.mwe_ref_it})
                if not keep_unlocated:
                    continue
                indices: tuple[int, ...] = ()
                lemma = " ".join(matcher.lemmatizer.lemmatize(list(pattern.tokens)))
                surface = r.mwe_en
                check["match"] = "none"
            else:
                used.setdefault(key, []).append(loc.indices)
                report.located[loc.how] += 1
                indices = loc.indices
                located = [tokens[i] for i in indices]
                lemma = " ".join(matcher.lemmatizer.lemmatize(located))
                surface = " ".join(located)
                check["match"] = loc.how
            if not r.mwe_ref_it:  # nothing to score a translation against: kept on record, not scored
                no_reference.append({**check, "indices": list(indices), "lemma": lemma})
                continue
            mwes.append(TestMwe(indices, lemma, r.mwe_ref_it, "", surface))
            checks.append(check)
        meta: dict = {"snt_id": sid}
        if mt is not None:
            meta["mt_it"] = mt
        if group:
            meta["mwe_checks"] = checks
        if unlocated:
            meta["unlocated"] = unlocated
        if no_reference:
            meta["no_reference"] = no_reference
        items.append(TestItem(str(sid), source, reference, mwes, meta))
    report.sentences = len(items)
    return items, report
