"""`mwemt testset build` as one library call: annotate, align, take references, select, score, report.

The command line (`mwemt.cli.testset`) and the experiment runner (a ``tests.NAME.build`` section)
both build MWE test sets here, so a test built by hand and one built inside `mwemt run` are the
same for the same inputs. Steps, each in its own module:

1. annotate the source with the `Annotator` (lexicon MWEs; identification filters, when the
   annotator has them, give each occurrence a confidence);
2. align source and target with eflomal (`mwemt.testsets.align`, cached by input hash) and take
   each MWE's reference translation from the links (`mwemt.testsets.aligned`);
3. optionally select a diverse, training-disjoint subset (`mwemt.testsets.select`);
4. attach predicted compositionality and put each MWE in the idiomatic or literal part;
5. describe the result (`mwemt.testsets.report`), with training frequencies when the
   training text is given.

Reading files and writing outputs stays with the caller.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from mwemt.errors import MwemtError
from mwemt.records import TestItem
from mwemt.testsets.align import AlignConfig, align_directional, signature, tokenize_side
from mwemt.testsets.aligned import BuildReport, ReferenceFilters, build_aligned_testset
from mwemt.testsets.report import describe_testset
from mwemt.testsets.select import (
    PartRule,
    SelectionConfig,
    SelectionReport,
    assign_parts,
    lower_tertile,
    near_duplicate_key,
    select_testset,
    type_key,
    with_scores,
)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class TestsetBuildConfig:
    """Every setting of a test-set build besides the annotator's and the input files.

    ``idiomatic_below``: predicted compositionality at or under which an MWE is idiomatic; None =
    the lowest tertile of the test's own predictions. ``idiomatic_confidence``: identification
    confidence at or above which an occurrence is idiomatic (None: confidence is not used).
    """

    __test__ = False  # not a pytest class

    tgt_lang: str = "it"
    pretokenized: bool = False
    filters: ReferenceFilters = ReferenceFilters()
    all_sentences: bool = False
    symmetrization: str = "grow-diag-final-and"
    align: AlignConfig = AlignConfig()
    selection: SelectionConfig | None = None
    idiomatic_below: float | None = None
    idiomatic_confidence: float | None = 0.5
    sample: int = 20


@dataclass
class BuiltTestset:
    """The items and everything that describes how they were made."""

    items: list[TestItem]
    report: BuildReport
    selection: SelectionReport | None
    stats: dict
    alignment_signature: str
    alignment_key: str
    alignment_cached: bool
    part_rule: PartRule
    # look-up matches the annotator's identification filters removed, by filter (e.g. "mwe-context":
    # below the MWE-in-context threshold), and the filters used
    identification: dict = field(default_factory=dict)

    def manifest_fields(self) -> dict:
        return {"alignment": self.alignment_signature, "alignment_cache_key": self.alignment_key,
                **self.report.to_dict(), "selection": self.selection.to_dict() if self.selection else None,
                "part_rule": asdict(self.part_rule), "stats": self.stats, "identification": self.identification}


def mwe_type_counts(annotator, lines: Iterable[str]) -> dict[str, int]:
    """How often each MWE type (`type_key` of its lexicon form) occurs in ``lines``."""
    counts: Counter[str] = Counter()
    for line in lines:
        for m in annotator.annotate_text(line).mwes:
            counts[type_key(m.lemma)] += 1
    return dict(counts)


def build_testset(rows: Sequence[tuple[int, str, str]], annotator, config: TestsetBuildConfig = TestsetBuildConfig(),
                  *, extra: tuple[Sequence, Sequence] | None = None, cache_dir=None,
                  compositionality: Mapping[str, float | None] | None = None,
                  training_source: Sequence[str] | None = None, training_target: Iterable[str] = (),
                  progress: Progress = lambda _msg: None, table=None) -> BuiltTestset:
    """Build an MWE test set from ``rows`` = (line number, source, target) (see the module docstring).

    ``training_source``: the training corpus's source sentences; a selection never picks one of them
    or a near-duplicate, and the report counts each MWE type's occurrences in them.
    ``training_target``: target-side training text (e.g. the sentences back-translation adds); a test
    pair whose reference is one of them (or a near-duplicate) is not selected either.
    ``table``: an MWE translation table (`mwemt.testsets.mwe_table`): span candidates and each
    MWE's alternatives (`build_aligned_testset`).
    """
    kept = [r for r in rows if r[1].strip() and r[2].strip()]
    progress(f"annotating {len(kept):,} source sentences")
    sentences = [annotator.annotate_text(s) for _, s, _ in kept]
    identification = _identification(annotator, sentences)
    tgt = tokenize_side([t for _, _, t in kept], config.tgt_lang, config.pretokenized)
    src = [s.tokens for s in sentences]
    progress(f"aligning {len(kept):,} pairs" + (f" with {len(extra[0]):,} extra pairs" if extra else ""))
    aligned = align_directional(src, tgt, extra=extra, config=config.align, cache_dir=cache_dir)
    links = aligned.symmetrized(src, tgt, config.symmetrization)
    items, report = build_aligned_testset(
        sentences, tgt, links, [k for k, _, _ in kept], tgt_lang=config.tgt_lang, filters=config.filters,
        all_sentences=config.all_sentences and config.selection is None,
        raw=None if config.pretokenized else [(s, t) for _, s, t in kept], unaligned_pairs=aligned.skipped,
        table=table)
    report.pairs = len(rows)
    report.empty_pairs = len(rows) - len(kept)
    selection = None
    if config.selection is not None:
        exclude = {near_duplicate_key(s) for s in training_source or ()}
        exclude.update(near_duplicate_key(t) for t in training_target)
        items, selection = select_testset(items, config.selection, exclude)
        progress(selection.summary())
    if not any(item.mwes for item in items):
        removed = ", ".join(f"{n} by {reason}" for reason, n in identification["removed"].items())
        why = report.summary() + (f"; identification removed {removed}" if removed else "") \
            + (f"; {selection.summary()}" if selection is not None else "")
        raise MwemtError(f"no MWE test item could be built: {why}; nothing was written (expected pairs whose source "
                         "has a lexicon MWE with an aligned translation: check the lexicon, its format and the "
                         "language codes)")
    if compositionality is not None:
        items = with_scores(items, compositionality)
    rule = _part_rule(items, config, annotator)
    items = assign_parts(items, rule)
    counts = None
    if training_source is not None:
        progress(f"counting MWE types in {len(training_source):,} training sentences")
        counts = mwe_type_counts(annotator, training_source)
    stats = describe_testset(items, counts, sample=config.sample,
                          seed=config.selection.seed if config.selection else 1)
    sig = signature(config.align, config.symmetrization, len(extra[0]) if extra else 0)
    return BuiltTestset(items, report, selection, stats, sig, aligned.key, aligned.cached, rule, identification)


def _identification(annotator, sentences) -> dict:
    """What identification kept and removed: only matches its filters keep become test MWEs."""
    from mwemt.preprocess.annotate import describe_filters

    removed = Counter(reason for s in sentences for _, reason in s.rejected)
    return {"filters": describe_filters(annotator.filters), "kept": sum(len(s.mwes) for s in sentences),
            "removed": dict(sorted(removed.items()))}


def _part_rule(items: Sequence[TestItem], config: TestsetBuildConfig, annotator=None) -> PartRule:
    """Compositionality, and identification confidence only where the filters' confidence estimates
    idiomaticity (the MWE-in-context model's P(MWE reading) does not: a literal-but-real MWE such as
    *high school* gets a high one)."""
    threshold = config.idiomatic_below
    if threshold is None:
        threshold = lower_tertile(m.compositionality for it in items for m in it.mwes
                                  if m.compositionality is not None)
    filters = getattr(annotator, "filters", None)
    idiomaticity = getattr(filters, "CONFIDENCE", "idiomatic") == "idiomatic"
    return PartRule(max_compositionality=threshold,
                    min_confidence=config.idiomatic_confidence if idiomaticity else None)

