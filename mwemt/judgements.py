"""Human judgement files of MT evaluation campaigns, read as they are published.

Why a module of its own: a meta-evaluation should start from the files the field publishes, not
from a hand conversion, and every format should come out as the same typed records so that the
statistics never see a format. Turning MQM error rows into segment scores is a choice of weights
and lives in `mwemt.evaluate.human_scores`; this module only reads, checks and joins.

Formats (`HUMAN_FORMATS`), told apart by their first line (`detect_human_format`):

- ``tsv``: ``system<TAB>seg_id<TAB>score``, an optional header starting with ``system``; ``None``
  marks an item without a judgement. The file does not say which way its scores point: the
  reader is told (``lower_better``).
- ``wmt-mqm-avg``: the ``*.avg_seg_scores.tsv`` files of google/wmt-mqm-human-evaluation. Header
  ``system mqm_avg_score seg_id`` (spaces), rows ``system<TAB>score seg_id`` (TED) or with spaces
  only (newstest2020). The score is already negated (−MQM, 0 = no error, higher is better).
- ``wmt-mqm-errors``: the per-error files of the same release (Freitag et al. 2021), one row per
  annotated error or ``No-error`` mark: ``system doc doc_id seg_id rater source target category
  severity`` (and a ``comment`` column in some files).
- ``marot-sxs``: Marot data files, as the WMT23 side-by-side MQM exports: ``system doc docSegId
  globalSegId rater source target category severity metadata``, the header carrying an extra
  ``# Documentation: URL`` column. Rows with an empty rater carry metadata only; severity
  ``HOTW-test`` rows record attention checks (an injected error found or missed), not ratings.
  Both skip.

In both MQM formats error spans are marked ``<v>…</v>`` in the source (omissions) or the target;
the marks are removed from the texts. Segment ids are ``seg_id`` and ``globalSegId``, unique over
the whole test set.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines, write_lines
from mwemt.formats import write_testset
from mwemt.records import TestItem

HUMAN_FORMATS = ("tsv", "wmt-mqm-avg", "wmt-mqm-errors", "marot-sxs")
MQM_FORMATS = ("wmt-mqm-errors", "marot-sxs")  # per-error rows with texts
HIGHER_BETTER = "higher-better"
LOWER_BETTER = "lower-better"

TSV_EXPECTED = "system<TAB>seg_id<TAB>score"
WMT_MQM_AVG_HEADER = ("system", "mqm_avg_score", "seg_id")
WMT_MQM_ERRORS_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
MAROT_COLUMNS = ("system", "doc", "docSegId", "globalSegId", "rater", "source", "target", "category", "severity",
                 "metadata")
HOTW_SEVERITY = "HOTW-test"  # Marot: "hands on the wheel" attention checks, not ratings
_MARK = re.compile(r"</?v>")
# the segment MQM inside a Marot row's metadata JSON: ..."metrics":{"MQM":10.366666666666667}...
_PUBLISHED_MQM = re.compile(r'"metrics":\{[^{}]*?"MQM":(-?[0-9][0-9.eE+-]*)')
_MISSING = ("", "none", "nan", "na")


@dataclass(frozen=True)
class SegmentScore:
    """One judged item: a system's translation of one segment, its score and which way it points.

    ``score`` is as the file (or the MQM weighting) gives it; `oriented` is the same value turned
    higher-is-better, which is what every correlation is computed on. ``None`` = not judged.
    """

    system: str
    segment: str
    score: float | None
    orientation: str = HIGHER_BETTER

    def __post_init__(self) -> None:
        if self.orientation not in (HIGHER_BETTER, LOWER_BETTER):
            raise ValueError(f"orientation {self.orientation!r} is not {HIGHER_BETTER} or {LOWER_BETTER}")

    @property
    def key(self) -> tuple[str, str]:
        return (self.system, self.segment)

    def oriented(self) -> float | None:
        if self.score is None or self.orientation == HIGHER_BETTER:
            return self.score
        return -self.score


@dataclass(frozen=True)
class MqmRating:
    """One row of an MQM annotation file: an error a rater marked, or their ``No-error`` mark.

    ``source`` and ``target`` have the ``<v>`` span marks removed; ``line`` is the row's line in
    the file, for error messages. ``source_spans`` and ``target_spans``: where the marks stood, as
    (start, end) offsets counted in non-whitespace characters of the unmarked text (`marked_spans`), so
    that they hold on every whitespace variant of the text that raters of one item saw.
    """

    system: str
    doc: str
    doc_segment: str
    segment: str
    rater: str
    source: str
    target: str
    category: str
    severity: str
    line: int
    source_spans: tuple[tuple[int, int], ...] = ()
    target_spans: tuple[tuple[int, int], ...] = ()


def marked_spans(text: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The text without its ``<v>``/``</v>`` marks, and each marked span as (start, end) offsets counted
    in non-whitespace characters (end exclusive). A ``<v>`` left open runs to the end of the text; a
    ``</v>`` without its ``<v>`` is dropped."""
    spans: list[tuple[int, int]] = []
    clean: list[str] = []
    count = 0  # non-whitespace characters so far
    start: int | None = None
    pos = 0
    for m in _MARK.finditer(text):
        piece = text[pos:m.start()]
        clean.append(piece)
        count += sum(1 for ch in piece if not ch.isspace())
        if m.group() == "<v>":
            start = count if start is None else start
        elif start is not None:
            spans.append((start, count))
            start = None
        pos = m.end()
    piece = text[pos:]
    clean.append(piece)
    count += sum(1 for ch in piece if not ch.isspace())
    if start is not None:
        spans.append((start, count))
    return "".join(clean), tuple(spans)


# ---------------------------------------------------------------- detection


def detect_human_format(path: str | Path) -> str:
    """The format of a judgement file, from its first line; ``tsv`` unless a known header says otherwise."""
    first = next(iter_lines(path), "")
    cols = first.split("\t")
    if tuple(first.split()) == WMT_MQM_AVG_HEADER:
        return "wmt-mqm-avg"
    if tuple(cols[:len(WMT_MQM_ERRORS_COLUMNS)]) == WMT_MQM_ERRORS_COLUMNS:
        return "wmt-mqm-errors"
    if tuple(cols[:len(MAROT_COLUMNS)]) == MAROT_COLUMNS or (len(cols) == 10 and cols[9].startswith("{")):
        return "marot-sxs"  # Marot's header is optional; its last column is a JSON object
    return "tsv"


def _format_mismatch(path, fmt: str, found: str, lineno: int = 1) -> InputError:
    return InputError(f"this is not a {fmt} file: its first line looks like {found}", path, lineno,
                      expected=f"one of the human score formats {', '.join(HUMAN_FORMATS)} "
                               "(leave the format out to detect it from the header)")


def check_human_format(path: str | Path, fmt: str) -> str:
    """``fmt`` itself, or the detected format for ``auto``; a known header of another format is an error."""
    if fmt != "auto" and fmt not in HUMAN_FORMATS:
        raise InputError(f"unknown human score format {fmt!r}", path,
                         expected=f"auto or one of {', '.join(HUMAN_FORMATS)}")
    detected = detect_human_format(path)
    if fmt == "auto":
        return detected
    if detected != "tsv" and detected != fmt:
        raise _format_mismatch(path, fmt, f"the header of a {detected} file")
    return fmt


# ---------------------------------------------------------------- score files


def _parse_score(raw: str, path, lineno: int) -> float | None:
    if raw.strip().lower() in _MISSING:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"score {raw!r} is not a number", path, lineno,
                         expected="a number, or None for a missing judgement") from None
    if math.isnan(value) or math.isinf(value):
        raise InputError(f"score {raw!r} is not finite", path, lineno, expected="a finite number")
    return value


def _no_duplicates(scores: Iterable[SegmentScore], path, lines: Sequence[int]) -> list[SegmentScore]:
    seen: set[tuple[str, str]] = set()
    out = []
    for s, lineno in zip(scores, lines):
        if s.key in seen:
            raise InputError(f"duplicate score for system {s.system!r} segment {s.segment!r}", path, lineno,
                             expected="one score per (system, segment)")
        seen.add(s.key)
        out.append(s)
    if not out:
        raise InputError("no scores", path, expected=f"{TSV_EXPECTED} lines")
    return out


def read_score_tsv(path: str | Path, *, lower_better: bool = False) -> list[SegmentScore]:
    """Read ``system<TAB>seg_id<TAB>score`` lines (the format `mwemt score --sentence-scores` writes)."""
    orientation = LOWER_BETTER if lower_better else HIGHER_BETTER
    scores, lines = [], []
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.startswith("#") or (lineno == 1 and line.lower().startswith("system\t")):
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            other = detect_human_format(path) if lineno == 1 else "tsv"
            if other != "tsv":
                raise _format_mismatch(path, "tsv", f"the header of a {other} file")
            raise InputError(f"{len(cols)} TAB-separated columns", path, lineno, expected=TSV_EXPECTED)
        system, seg, raw = (c.strip() for c in cols)
        scores.append(SegmentScore(system, seg, _parse_score(raw, path, lineno), orientation))
        lines.append(lineno)
    return _no_duplicates(scores, path, lines)


def read_wmt_mqm_avg(path: str | Path) -> list[SegmentScore]:
    """Read a WMT ``*.avg_seg_scores.tsv`` file: −MQM per (system, segment), higher is better."""
    scores, lines = [], []
    for lineno, line in enumerate(iter_lines(path, allow_empty_file=False), 1):
        if lineno == 1:
            if tuple(line.split()) != WMT_MQM_AVG_HEADER:
                raise InputError(f"header {line[:60]!r}", path, 1, expected=" ".join(WMT_MQM_AVG_HEADER))
            continue
        if not line.strip():
            continue
        cols = line.split()
        if len(cols) != 3:
            raise InputError(f"{len(cols)} fields", path, lineno, expected="system, score and seg_id")
        system, raw, seg = cols
        scores.append(SegmentScore(system, seg, _parse_score(raw, path, lineno), HIGHER_BETTER))
        lines.append(lineno)
    return _no_duplicates(scores, path, lines)


# ---------------------------------------------------------------- MQM error rows


def read_mqm_ratings(path: str | Path, fmt: str = "auto") -> Iterator[MqmRating]:
    """The ratings of a ``wmt-mqm-errors`` or ``marot-sxs`` file, one per row, checked row by row."""
    fmt = check_human_format(path, fmt)
    if fmt not in MQM_FORMATS:
        raise InputError(f"a {fmt} file has no MQM error rows", path,
                         expected=f"a file in one of the formats {', '.join(MQM_FORMATS)}")
    columns = WMT_MQM_ERRORS_COLUMNS if fmt == "wmt-mqm-errors" else MAROT_COLUMNS
    widths: tuple[int, ...] = (len(columns), len(columns) - 1)  # Marot's metadata column is optional
    n_rows = 0
    for lineno, line in enumerate(iter_lines(path, allow_empty_file=False), 1):
        cols = line.split("\t")
        if lineno == 1:
            if tuple(cols[:len(columns)]) == columns:
                # extra header columns: WMT's ``comment`` (rows have it too), Marot's ``# Documentation`` (rows don't)
                widths = (len(cols),) if fmt == "wmt-mqm-errors" else widths
                continue
            if fmt == "wmt-mqm-errors":
                raise InputError(f"header {cols[:len(columns)]}", path, 1, expected=" ".join(columns))
        if not line.strip():
            continue
        if len(cols) not in widths:
            raise InputError(f"{len(cols)} columns", path, lineno,
                             expected=f"{widths[0]} TAB-separated columns: {' '.join(columns)}")
        system, doc, doc_seg, seg, rater, source, target, category, severity = cols[:9]
        if fmt == "marot-sxs" and (not rater or severity == HOTW_SEVERITY):
            continue  # a metadata-only row, or an attention check
        if not system or not seg or not rater:
            raise InputError("empty system, segment id or rater", path, lineno, expected=" ".join(columns))
        n_rows += 1
        source, source_spans = marked_spans(source)
        target, target_spans = marked_spans(target)
        yield MqmRating(system, doc, doc_seg, seg, rater, source, target, category, severity, lineno,
                        source_spans, target_spans)
    if not n_rows:
        raise InputError("no ratings", path, expected=f"rows of {' '.join(columns)}")


def read_published_mqm(path: str | Path) -> dict[tuple[str, str], float]:
    """(system, globalSegId) -> the segment MQM a Marot export stores in its rows' metadata
    (``segment.metrics.MQM``, any row of the item, attention checks included); empty for files
    without it. The first value of an item wins."""
    if check_human_format(path, "auto") != "marot-sxs":
        return {}
    out: dict[tuple[str, str], float] = {}
    for lineno, line in enumerate(iter_lines(path, allow_empty_file=False), 1):
        cols = line.split("\t")
        if lineno == 1 or len(cols) < len(MAROT_COLUMNS):
            continue
        found = _PUBLISHED_MQM.search(cols[9])
        if found:
            try:
                out.setdefault((cols[0], cols[3]), float(found.group(1)))
            except ValueError:
                raise InputError(f"metadata MQM {found.group(1)!r} is not a number", path, lineno) from None
    return out


@dataclass
class SegmentTexts:
    """The texts an MQM file carries: one source per segment, one translation per (system, segment).

    ``ids`` are the segment ids in order (numeric ids numerically). Raters of one item sometimes
    saw texts that differ in whitespace only (an export artefact around marked spans): the most
    frequent variant is kept and ``whitespace_variants`` counts such items.
    """

    ids: list[str]
    sources: dict[str, str]
    documents: dict[str, tuple[str, str]]  # segment id -> (doc, id of the segment in the doc)
    targets: dict[tuple[str, str], str]
    whitespace_variants: int = 0
    systems: list[str] = field(default_factory=list)


def natural_key(seg: str) -> tuple:
    """Sort key putting numeric ids in numeric order, before any other id."""
    return (0, int(seg), "") if seg.isdigit() else (1, 0, seg)


def _squash(text: str) -> str:
    return "".join(text.split())


def _pick(variants: Counter, first_line: dict[str, int], what: str, path) -> tuple[str, bool]:
    """The most frequent text among variants that differ in whitespace only; else an error."""
    texts = list(variants)
    if len({_squash(t) for t in texts}) > 1:
        later = max(texts, key=lambda t: first_line[t])
        raise InputError(f"two different {what}", path, first_line[later],
                         expected="the same text in every row of an item (whitespace aside)")
    best = max(texts, key=lambda t: (variants[t], -first_line[t]))
    return best, len(texts) > 1


def collect_texts(ratings: Iterable[MqmRating], path: str | Path = "<ratings>") -> SegmentTexts:
    """Gather the source and translations of every rated segment, checking raters saw the same text."""
    src: dict[str, Counter] = defaultdict(Counter)
    tgt: dict[tuple[str, str], Counter] = defaultdict(Counter)
    first_src: dict[str, dict[str, int]] = defaultdict(dict)
    first_tgt: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    docs: dict[str, tuple[str, str]] = {}
    for r in ratings:
        src[r.segment][r.source] += 1
        first_src[r.segment].setdefault(r.source, r.line)
        tgt[(r.system, r.segment)][r.target] += 1
        first_tgt[(r.system, r.segment)].setdefault(r.target, r.line)
        docs.setdefault(r.segment, (r.doc, r.doc_segment))
    sources = {seg: _pick(v, first_src[seg], f"sources for segment {seg!r}", path)[0] for seg, v in src.items()}
    targets, variants = {}, 0
    for key, v in tgt.items():
        targets[key], varied = _pick(v, first_tgt[key], f"translations for {key}", path)
        variants += varied
    return SegmentTexts(sorted(sources, key=natural_key), sources, docs, targets, variants,
                        sorted({s for s, _ in targets}))


# ---------------------------------------------------------------- joining segments to text files


@dataclass
class LineMatch:
    """Where each segment's source stands in a one-segment-per-line text file (0-based lines)."""

    lines: dict[str, int]
    exact: int
    whitespace: int  # matched once whitespace is ignored
    by_document: int  # the source occurs on several lines; the document's other segments chose one


def match_source_lines(texts: SegmentTexts, lines: Sequence[str], path: str | Path) -> LineMatch:
    """Find each segment's line in a source text file by its text, as the WMT23 MQM ids are not line numbers.

    A source is looked up exactly, then ignoring whitespace. A source found on several lines (a
    lone quotation mark, a repeated caption) takes the line its document's neighbors point to:
    segment k of a document whose segment j stands on line l is expected on line l + k - j.
    """
    exact_idx: dict[str, list[int]] = defaultdict(list)
    squash_idx: dict[str, list[int]] = defaultdict(list)
    for i, line in enumerate(lines):
        exact_idx[line].append(i)
        squash_idx[_squash(line)].append(i)
    found: dict[str, int] = {}
    ambiguous: dict[str, list[int]] = {}
    n_exact = n_ws = 0
    for seg in texts.ids:
        s = texts.sources[seg]
        cands = exact_idx.get(s) or squash_idx.get(_squash(s)) or []
        if not cands:
            raise InputError(f"the source of segment {seg!r} (document {texts.documents[seg][0]!r}) is on no line",
                             path, expected=f"a line equal to {s[:80]!r} (whitespace aside)")
        if s in exact_idx:
            n_exact += 1
        else:
            n_ws += 1
        if len(cands) == 1:
            found[seg] = cands[0]
        else:
            ambiguous[seg] = cands
    for seg, cands in ambiguous.items():
        found[seg] = _by_document(seg, cands, texts, found, path)
    return LineMatch(found, n_exact, n_ws, len(ambiguous))


def _by_document(seg: str, cands: list[int], texts: SegmentTexts, found: dict[str, int], path) -> int:
    doc, pos = texts.documents[seg]
    guesses = []
    for other, line in found.items():
        odoc, opos = texts.documents[other]
        if odoc == doc and opos.isdigit() and pos.isdigit():
            guesses.append((abs(int(opos) - int(pos)), line + int(pos) - int(opos)))
    if not guesses:
        raise InputError(f"the source of segment {seg!r} is on {len(cands)} lines ({', '.join(str(c + 1) for c in cands[:5])}) "
                         f"and no other segment of document {doc!r} says which", path,
                         expected="a source text that occurs once, or a document with other rated segments")
    expected = min(guesses)[1]
    return min(cands, key=lambda c: (abs(c - expected), c))


# ---------------------------------------------------------------- MQM weights files

WEIGHTS_EXPECTED = "severity<TAB>category<TAB>weight ('*' matches any text)"


def read_mqm_weight_rules(path: str | Path) -> list[tuple[str, str, float]]:
    """Rules ``(severity, category, weight)`` of an MQM weights file, in file order (first match wins)."""
    rules = []
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = [c.strip() for c in line.split("\t")]
        if len(cols) != 3 or not cols[0] or not cols[1]:
            raise InputError(f"{len(cols)} TAB-separated columns", path, lineno, expected=WEIGHTS_EXPECTED)
        try:
            weight = float(cols[2])
        except ValueError:
            raise InputError(f"weight {cols[2]!r} is not a number", path, lineno, expected=WEIGHTS_EXPECTED) from None
        if not math.isfinite(weight) or weight < 0:
            raise InputError(f"weight {cols[2]!r} is not a finite number >= 0", path, lineno,
                             expected=WEIGHTS_EXPECTED)
        rules.append((cols[0], cols[1], weight))
    if not rules:
        raise InputError("no weight rules", path, expected=WEIGHTS_EXPECTED)
    return rules


# ---------------------------------------------------------------- extraction for `mwemt score`

REFERENCE_SYSTEM = re.compile(r"(?i)^ref(erence)?([-._ ]?[a-z0-9])?$")  # ref, ref-A, refA, ref.B, reference


@dataclass
class Extract:
    """Line-aligned texts of the segments every system was rated on: one line per segment id."""

    ids: list[str]
    sources: list[str]
    documents: list[tuple[str, str]]
    hypotheses: dict[str, list[str]]
    references: list[str] | None = None
    reference_from: str = "none"
    text_lines: list[int] | None = None  # 1-based line of each segment in the source text file
    left_out: dict[str, list[str]] = field(default_factory=dict)  # segment id -> systems without a translation


def guess_reference_system(systems: Iterable[str]) -> str | None:
    """The one system named like a human reference (``ref``, ``ref-A``, ``refB``...), if exactly one is."""
    refs = [s for s in systems if REFERENCE_SYSTEM.match(s)]
    return refs[0] if len(refs) == 1 else None


def build_extract(texts: SegmentTexts, *, reference_system: str | None = None,
                  reference_lines: Sequence[str] | None = None, line_match: LineMatch | None = None) -> Extract:
    """Align the texts of an MQM file for scoring.

    The reference is either a rated system's translation (``reference_system``: its rows are then
    not a system to score) or a text file's line (``reference_lines``, joined through
    ``line_match``). Segments some system (or the reference) lacks are left out and listed.
    """
    systems = [s for s in texts.systems if s != reference_system]
    if reference_system is not None and reference_system not in texts.systems:
        raise MwemtError(f"no system {reference_system!r} to take references from; systems: {', '.join(texts.systems)}")
    if reference_lines is not None and line_match is None:
        raise MwemtError("references from a text file need the segments matched to its lines (line_match)")
    ids, left_out = [], {}
    for seg in texts.ids:
        missing = [s for s in [*systems, *([reference_system] if reference_system else [])]
                   if (s, seg) not in texts.targets]
        if missing:
            left_out[seg] = missing
        else:
            ids.append(seg)
    if not ids:
        raise MwemtError(f"no segment has a translation by every system ({len(texts.ids)} segments, "
                         f"{len(systems)} systems)")
    out = Extract(ids, [texts.sources[g] for g in ids], [texts.documents[g] for g in ids],
                  {s: [texts.targets[(s, g)] for g in ids] for s in systems}, left_out=left_out)
    if line_match is not None:
        out.text_lines = [line_match.lines[g] + 1 for g in ids]
    if reference_system is not None:
        out.references = [texts.targets[(reference_system, g)] for g in ids]
        out.reference_from = f"system {reference_system}"
    elif reference_lines is not None:
        assert out.text_lines is not None
        if max(out.text_lines) > len(reference_lines):
            raise MwemtError(f"the reference text has {len(reference_lines)} lines but a segment is on source "
                             f"line {max(out.text_lines)}: the two files are not parallel")
        out.references = [reference_lines[n - 1] for n in out.text_lines]
        out.reference_from = "text file"
    return out


def system_file_names(systems: Iterable[str]) -> dict[str, str]:
    """A safe, distinct file name per system (``hyp/<name>.txt``)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for s in systems:
        base = re.sub(r"[^A-Za-z0-9._+-]", "_", s).lstrip(".") or "system"
        name, k = base, 1
        while name.lower() in taken:
            k += 1
            name = f"{base}_{k}"
        taken.add(name.lower())
        names[s] = f"{name}.txt"
    return names


def write_extract(out_dir: str | Path, extract: Extract) -> dict[str, Path]:
    """Write ids, sources, references, one hypothesis file per system, a segment table and (with
    references) a test set for `mwemt score --testset`; every file has one line per segment id.

    Returns the paths written, by role (``hyp:SYSTEM`` for hypotheses).
    """
    out = Path(out_dir)
    paths = {"ids": out / "ids.txt", "source": out / "source.txt", "segments": out / "segments.tsv"}
    write_lines(paths["ids"], extract.ids)
    write_lines(paths["source"], [_one_line(t) for t in extract.sources])
    if extract.references is not None:
        paths["reference"] = out / "reference.txt"
        write_lines(paths["reference"], [_one_line(t) for t in extract.references])
        paths["testset"] = out / "testset.jsonl"
        write_testset(paths["testset"], [TestItem(g, _one_line(s), _one_line(r)) for g, s, r in
                                         zip(extract.ids, extract.sources, extract.references)])
    for system, name in system_file_names(extract.hypotheses).items():
        paths[f"hyp:{system}"] = out / "hyp" / name
        write_lines(paths[f"hyp:{system}"], [_one_line(t) for t in extract.hypotheses[system]])
    header = "seg_id\tdoc\tdoc_seg_id" + ("\tsource_line" if extract.text_lines else "")
    rows = [f"{g}\t{d}\t{p}" + (f"\t{extract.text_lines[k]}" if extract.text_lines else "")
            for k, (g, (d, p)) in enumerate(zip(extract.ids, extract.documents))]
    write_lines(paths["segments"], [header, *rows])
    return paths


def _one_line(text: str) -> str:
    """Texts become lines: a line break inside a segment (rare in exports) becomes a space."""
    return re.sub(r"\r\n|\r|\n", " ", text)
