"""What a score run reads: system outputs, references, the MWE test set, the target-language MWE
lexicon and the compositionality table, loaded by ONE function (`load_score_inputs`) that `mwemt
score` and the experiment runner's score stage both call, so they check the same things and fail
with the same located messages.

`ScoreInputs` is plain data: build it directly from lists to score text held in memory; its checks
(equal lengths, non-empty) name the file a system came from when it came from one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.base import REFERENCE_MWES, Metric
from mwemt.evaluate.compositionality_table import CompositionalityTable
from mwemt.evaluate.mwe_score import Alignment, read_alignments
from mwemt.records import TestItem, TestMwe

if TYPE_CHECKING:
    from mwemt.preprocess.lexicon import Lexicon

PathLike = str | Path


class MissingInputError(MwemtError):
    """A metric needs an input the score run does not have; ``needs`` names the `load_score_inputs`
    argument that provides it (``ref`` or ``testset``), so a front end can name its own option."""

    def __init__(self, metric: str, needs: str, what: str):
        self.metric = metric
        self.needs = needs
        super().__init__(f"metric {metric!r} needs {what} ({needs})")


@dataclass(frozen=True)
class SystemOutput:
    """One system's hypotheses (one per test sentence), optionally with word alignments
    source -> hypothesis (for the MWE score), and where they were read from."""

    name: str
    hyps: Sequence[str]
    alignments: Sequence[Alignment] | None = None
    path: str | None = None
    alignment_path: str | None = None


@dataclass(frozen=True)
class ScoreInputs:
    """Everything a score run scores with. The first system is the baseline of paired tests.

    ``sources`` maps a role (``hyp:NAME``, ``ref``, ``testset``, ``ids``, ``align:NAME``, ``lexicon``,
    ``compositionality``) to the file it was read from: the inputs of a provenance manifest.
    ``ids``: one segment id per sentence (what sentence scores are written with), when the test
    set does not carry them or they come from elsewhere (``ids.txt`` of `mwemt meta-eval extract`).
    ``normalized``: per role whose text `mwemt.fileio.normalize_text` changed (a byte-order mark,
    zero-width or decomposed characters), the numbers of the changed lines. Scores of such a run
    are not those of the raw files: their signatures say ``norm:nfc-zw`` (`mwemt.evaluate.scoring`).
    """

    systems: Sequence[SystemOutput]
    refs: Sequence[str] | None = None
    testset: Sequence[TestItem] | None = None
    lexicon: Lexicon | None = None
    compositionality: CompositionalityTable | None = None
    sources: dict[str, str] = field(default_factory=dict)
    ids: Sequence[str] | None = None
    normalized: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_lengths(self)

    @property
    def n_sentences(self) -> int:
        return len(self.systems[0].hyps)

    @property
    def segment_ids(self) -> list[str]:
        """The given ids, else the test set's sentence ids, else line numbers 1..n."""
        if self.ids is not None:
            return list(self.ids)
        if self.testset is not None:
            return [it.id for it in self.testset]
        return [str(i) for i in range(1, self.n_sentences + 1)]

    @property
    def ids_from(self) -> str:
        """Where `segment_ids` come from, in words."""
        if self.ids is not None:
            return self.sources.get("ids", "the given ids")
        return "the test set" if self.testset is not None else "line numbers"

    @property
    def mwes(self) -> list[list[TestMwe]] | None:
        return None if self.testset is None else [list(it.mwes) for it in self.testset]

    def references_for(self, metric: Metric) -> Sequence:
        """What ``metric`` compares hypotheses with; `MissingInputError` when the run lacks it."""
        if metric.reference_kind == REFERENCE_MWES:
            if self.testset is None:
                raise MissingInputError(metric.key, "testset", "a test set with MWE reference translations")
            return self.mwes  # type: ignore[return-value]
        if self.refs is None:
            raise MissingInputError(metric.key, "ref", "reference translations")
        return self.refs


def check_lengths(inputs: ScoreInputs) -> None:
    """Every system, reference and alignment file has one line per test sentence."""
    if not inputs.systems:
        raise MwemtError("no systems to score")
    names = [s.name for s in inputs.systems]
    if len(set(names)) != len(names):
        raise MwemtError(f"two systems share a name: {', '.join(names)}")
    ref_source = inputs.sources.get("ref") or inputs.sources.get("testset") or "the reference"
    n = None
    if inputs.testset is not None:
        n = len(inputs.testset)
        if inputs.refs is not None and len(inputs.refs) != n:
            raise InputError(f"{len(inputs.refs)} reference lines but the test set has {n} sentences",
                             inputs.sources.get("ref"), expected="one reference line per test-set sentence")
    elif inputs.refs is not None:
        n = len(inputs.refs)
    if n == 0:
        raise InputError("no sentences", inputs.sources.get("ref") or inputs.sources.get("testset"),
                         expected="one reference sentence per line")
    for system in inputs.systems:
        if n is not None and len(system.hyps) != n:
            raise _system_error(system, f"{len(system.hyps)} lines but {ref_source} has {n} sentences",
                                "one hypothesis line per reference sentence")
        if not system.hyps:
            raise _system_error(system, "no sentences", "one hypothesis per line")
        n = len(system.hyps)
        if system.alignments is not None and len(system.alignments) != n:
            raise InputError(f"{len(system.alignments)} alignment lines but {n} hypotheses", system.alignment_path,
                             expected="one alignment line per hypothesis")
        if system.alignments is not None and inputs.testset is not None:
            check_alignment_sources(system, inputs.testset)
    if inputs.ids is not None:
        check_ids(inputs.ids, n, inputs.sources.get("ids"))
        if inputs.testset is not None:
            for k, (given, item) in enumerate(zip(inputs.ids, inputs.testset), 1):
                if given != item.id:
                    raise InputError(f"segment id {given!r}, but sentence {k} of the test set has id {item.id!r}",
                                     inputs.sources.get("ids"), k, expected="the test set's ids, or no test set")


def check_alignment_sources(system: SystemOutput, testset: Sequence[TestItem]) -> None:
    """Every alignment's source index points into its test-set source (whitespace tokens, as the
    MWE indices count them); the hypothesis side is checked against each hypothesis when scored."""
    offset = getattr(system.alignments, "line_offset", 0)   # an aligner header line (`read_alignments`)
    for lineno, (links, item) in enumerate(zip(system.alignments or (), testset), 1 + offset):
        n_src = len(item.source.split())
        bad = next((i for i, _ in links or () if i >= n_src), None)   # None: a sentence the aligner skipped
        if bad is not None:
            raise InputError(f"alignment points to source token {bad}, but the test-set source has {n_src} tokens",
                             system.alignment_path or f"alignments of system {system.name!r}", lineno,
                             expected="source indices below the number of tokens of the test-set source")


def check_ids(ids: Sequence[str], n: int | None, path: str | None) -> None:
    """One non-empty, unique id per sentence; errors name the line."""
    if n is not None and len(ids) != n:
        raise InputError(f"{len(ids)} segment ids for {n} sentences", path, expected="one id per sentence")
    seen: dict[str, int] = {}
    for k, seg in enumerate(ids, 1):
        if not seg.strip() or seg != seg.strip() or "\t" in seg:
            raise InputError(f"segment id {seg!r}", path, k, expected="a non-empty id without spaces around it or TABs")
        if seg in seen:
            raise InputError(f"duplicate segment id {seg!r} (also line {seen[seg]})", path, k,
                             expected="one id per sentence, each unique")
        seen[seg] = k


def check_sentence_score_keys(inputs: ScoreInputs) -> None:
    """Before scoring: the ``system<TAB>seg_id<TAB>score`` rows of sentence scores must read back as
    written (`mwemt.judgements.read_score_tsv`, which `mwemt meta-eval` uses): no system name with a
    TAB, a line break, spaces around it or a leading ``#`` (a comment there), and unique, clean segment
    ids, whether they come from ``--ids`` or from the test set."""
    for system in inputs.systems:
        name = system.name
        bad = ("a TAB" if "\t" in name else "a line break" if "\n" in name or "\r" in name
               else "spaces around it" if name != name.strip() else "a leading '#'" if name.startswith("#") else None)
        if bad:
            where = f" (--hyp {system.path})" if system.path else ""
            raise MwemtError(f"system name {name!r}{where} has {bad}: sentence scores are written as "
                             "system<TAB>seg_id<TAB>score lines, which could not be read back (expected a name "
                             "without TABs, line breaks, surrounding spaces or a leading '#'; give NAME=PATH)")
    if inputs.ids is None and inputs.testset is not None:
        check_ids([it.id for it in inputs.testset], None, inputs.sources.get("testset"))


def _system_error(system: SystemOutput, message: str, expected: str) -> MwemtError:
    if system.path is not None:
        return InputError(message, system.path, expected=expected)
    return MwemtError(f"system {system.name!r}: {message} (expected {expected})")


def load_score_inputs(hyps: Sequence[tuple[str, PathLike]], *, ref: PathLike | None = None,
                      testset: PathLike | None = None, alignments: Sequence[PathLike] | None = None,
                      lexicon: PathLike | None = None, lexicon_format: str = "auto",
                      compositionality: PathLike | None = None, lang: str = "en",
                      ids: PathLike | None = None) -> ScoreInputs:
    """Read everything a score run needs.

    ``hyps``: (system name, file) pairs, the baseline first. ``ref``: one reference per line (default:
    the test set's references). ``testset``: the MWE test set (JSONL). ``alignments``: one Pharaoh
    file per system, in order. ``lexicon``: the target-language MWE lexicon (any
    `mwemt.preprocess.annotate.load_lexicon` format; the target side of bilingual ones), compiled
    for ``lang``. ``compositionality``: a ``mwe<TAB>score`` table. ``ids``: one segment id per line
    (default: the test set's ids, else line numbers).
    """
    from mwemt.fileio import read_lines
    from mwemt.formats import read_testset

    if alignments is not None and len(alignments) != len(hyps):
        raise MwemtError(f"{len(alignments)} alignment files for {len(hyps)} systems; give one per system")
    sources: dict[str, str] = {f"hyp:{name}": str(path) for name, path in hyps}
    changes: dict[str, list[int]] = {}

    def read(role: str, path: PathLike, reader=read_lines) -> list:
        changed: list[int] = []
        out = reader(path, changed=changed)
        if changed:
            changes[role] = changed
        return out

    items = read("testset", testset, read_testset) if testset is not None else None
    refs = read("ref", ref) if ref is not None else [it.reference for it in items] if items is not None else None
    if ref is not None:
        sources["ref"] = str(ref)
    if testset is not None:
        sources["testset"] = str(testset)
    systems = []
    for k, (name, path) in enumerate(hyps):
        align_path = alignments[k] if alignments is not None else None
        if align_path is not None:
            sources[f"align:{name}"] = str(align_path)
        systems.append(SystemOutput(name, read(f"hyp:{name}", path),
                                    read_alignments(align_path) if align_path else None,
                                    str(path), str(align_path) if align_path else None))
    lex = table = None
    if lexicon is not None:
        from mwemt.preprocess.annotate import load_lexicon

        lex = load_lexicon(lexicon, lexicon_format, lang=lang, side="target")
        sources["lexicon"] = str(lexicon)
    if compositionality is not None:
        table = CompositionalityTable.from_file(compositionality)
        sources["compositionality"] = str(compositionality)
    segment_ids = None
    if ids is not None:
        segment_ids = read_lines(ids)
        sources["ids"] = str(ids)
    return ScoreInputs(systems, refs, items, lex, table, sources, segment_ids, changes)
