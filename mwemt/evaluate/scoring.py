"""Scoring several systems at once with several metrics, the first system being the baseline.

Every metric goes the same way (`mwemt.evaluate.base`): build it by name from the registry,
extract each system's sentence statistics once, compute the corpus scores from them and, with a
paired bootstrap, resample the same statistics (`mwemt.evaluate.bootstrap`) with one seed and one
set of resampled indices for every metric and system, so every column of a table is tested the
same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from mwemt.errors import InputError
from mwemt.evaluate.base import Metric, MetricScore, SegmentError, SentenceStats
from mwemt.evaluate.bootstrap import BootstrapResult, BootstrapSettings, paired_bootstrap
from mwemt.evaluate.inputs import ScoreInputs, SystemOutput
from mwemt.evaluate.mwe_score import AlignmentError
from mwemt.evaluate.registry import MetricOptions, build_metric
from mwemt.evaluate.signature import Signature
from mwemt.fileio import NORMALIZATION


@dataclass
class MetricResults:
    """One metric over all systems: scores (with their statistics), signature, the paired test."""

    key: str
    scores: list[MetricScore]
    signature: str
    bootstrap: list[BootstrapResult] | None = None
    sentence_signature: str | None = None
    metric: Metric | None = field(default=None, repr=False)

    @property
    def stats(self) -> list[SentenceStats]:
        """Each system's sentence statistics, for further tests and reports."""
        return [s.stats for s in self.scores if s.stats is not None]


@dataclass
class ScoreRun:
    systems: list[str]
    metrics: list[MetricResults] = field(default_factory=list)
    n_sentences: int = 0
    bootstrap: dict | None = None
    sentence_level: bool = False
    segment_ids: list[str] = field(default_factory=list)


def system_stats(metric: Metric, system: SystemOutput, refs: Sequence, index: int = 0,
                 ref_path: str | None = None, sources: Sequence[str] | None = None,
                 references: Sequence[str] | None = None) -> SentenceStats:
    """One system's sentence statistics; a bad alignment or segment is reported with its file and
    line. A metric that uses alignments gets the system's given alignments (else it aligns to the test
    set's ``sources``), and always the sources and the test set's reference sentences (``references``): the
    MWE verdict reads the source for more than aligning (its appended-fragment and loop features), so
    given links must score as the links it would make itself."""
    kwargs: dict = {}
    if metric.uses_alignments:
        if system.alignments is not None:
            kwargs["alignments"] = system.alignments
        if sources is not None:
            kwargs["sources"] = sources
        if references is not None:
            kwargs["references"] = references
    try:
        return metric.sentence_stats(system.hyps, refs, **kwargs)
    except SegmentError as exc:
        path = system.path if exc.side == "hyp" else ref_path
        if path is None:
            raise
        raise InputError(exc.message, path, exc.sentence) from None
    except AlignmentError as exc:
        if system.alignment_path is None:
            exc.system = index
            raise
        line = None if exc.sentence is None else exc.sentence + getattr(system.alignments, "line_offset", 0)
        raise InputError(exc.message, system.alignment_path, line,
                         expected="hypothesis indices below the number of Moses tokens of the hypothesis") from None


def score_metric(metric: Metric, inputs: ScoreInputs, *, sentence_level: bool = False,
                 bootstrap: BootstrapSettings | None = None) -> MetricResults:
    """Every system of ``inputs`` with one metric; with ``bootstrap``, each tested against the first."""
    refs = inputs.references_for(metric)
    ref_path = inputs.sources.get("ref") or inputs.sources.get("testset")
    sources = [it.source for it in inputs.testset] if inputs.testset is not None else None
    references = [it.reference for it in inputs.testset] if inputs.testset is not None else None
    stats = [system_stats(metric, s, refs, k, ref_path, sources, references) for k, s in enumerate(inputs.systems)]
    scores = [metric.corpus_score_from_stats(s, sentence_level=sentence_level) for s in stats]
    results = None
    if bootstrap is not None:
        results = paired_bootstrap(metric, stats, bootstrap)
        for score in scores:
            score.signature = score.signature.with_bootstrap(bootstrap.samples, bootstrap.seed)
    sentence_signature = None
    if sentence_level and metric.sentence_signature(stats[0]) != metric.signature(stats[0]):
        sentence_signature = str(normalized_signature(metric.sentence_signature(stats[0]), inputs))
    for score in scores:
        score.signature = normalized_signature(score.signature, inputs)
    return MetricResults(metric.key, scores, _join_signatures([str(s.signature) for s in scores]), results,
                         sentence_signature, metric)


def normalized_signature(signature: Signature, inputs: ScoreInputs) -> Signature:
    """``signature`` with ``norm:nfc-zw`` when reading changed the text scored (`ScoreInputs.normalized`):
    a byte-order mark, a zero-width or a decomposed character. Such a score is not the one sacrebleu
    (or anything else) computes on the raw files, so it must not carry their signature."""
    if not any(role.startswith("hyp:") or role in ("ref", "testset") for role in inputs.normalized):
        return signature
    if signature.get("norm") is not None:
        return signature
    return replace(signature, settings=(*signature.settings, ("norm", NORMALIZATION)))


def score_systems(inputs: ScoreInputs, metrics: Sequence[str | Metric], options: MetricOptions | None = None, *,
                  sentence_level: bool = False, bootstrap: BootstrapSettings | None = None) -> ScoreRun:
    """Score every system with every metric (names are built from ``options`` and ``inputs``)."""
    run = ScoreRun([s.name for s in inputs.systems], n_sentences=inputs.n_sentences, sentence_level=sentence_level,
                   segment_ids=inputs.segment_ids)
    if bootstrap is not None:
        run.bootstrap = {"resamples": bootstrap.samples, "seed": bootstrap.seed, "baseline": run.systems[0]}
    built = [build_metric(m, options, inputs) if isinstance(m, str) else m for m in metrics]
    for metric in built:  # every metric and its references checked before any work
        inputs.references_for(metric)
    for metric in built:
        run.metrics.append(score_metric(metric, inputs, sentence_level=sentence_level, bootstrap=bootstrap))
    return run


def _join_signatures(signatures: Sequence[str]) -> str:
    """One signature per metric; systems scored with and without alignments differ in ``align``."""
    unique = list(dict.fromkeys(signatures))
    return unique[0] if len(unique) == 1 else " / ".join(unique)
