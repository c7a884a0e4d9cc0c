"""The comparison itself: one function from inputs to the report (a JSON-able dictionary that
the HTML and Markdown pages render and report.json stores).

Everything is computed from statistics extracted once: `score_systems` turns each system into
sentence statistics per metric (corpus scores and their paired bootstrap); the MWE score's
statistics keep every MWE's own score (``info["mwe_scores"]``), which decides the hits; bucket
rates, per-MWE rates and word accuracies are sums of per-sentence counts, resampled with the same
sentence draws as the aggregate scores (`mwemt.evaluate.compare.resample`).

What a hit is (it is in the report's signature): an MWE occurrence is translated when its MWE
score is at least ``hit_threshold`` (default 1: every word of the MWE's reference translation
occurs in the hypothesis, case-insensitive; the MWE score is Zaninello & Birch's: 1 - the mean,
over those words, of the character edit distance to the closest hypothesis word, capped by the
word's length and divided by it).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mwemt.evaluate import degenerate as D
from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.compare import buckets as B
from mwemt.evaluate.compare import examples as E
from mwemt.evaluate.compare import mwes as M
from mwemt.evaluate.compare.inputs import CompareInputs
from mwemt.evaluate.compare.resample import paired_ratio_bootstrap, resample_weights
from mwemt.evaluate.compare.word_accuracy import TOKENIZE, corpus_counts, word_counts, word_tokenizer
from mwemt.evaluate.mwe_score import MweScore
from mwemt.evaluate.registry import MetricOptions, build_metric
from mwemt.evaluate.report import undefined_reason
from mwemt.evaluate.sacrebleu_metrics import BleuParts, bleu_difference
from mwemt.evaluate.scoring import ScoreRun, score_systems
from mwemt.evaluate.signature import Signature

REPORT_FORMAT = 1
MWE_METRIC = "mwe"


@dataclass(frozen=True)
class CompareSettings:
    """How the comparison is computed (all of it goes into the report's signature)."""

    hit_threshold: float = 1.0
    mwe_freq_cutoffs: tuple[int, ...] = B.MWE_FREQ_CUTOFFS
    word_freq_cutoffs: tuple[int, ...] = B.WORD_FREQ_CUTOFFS
    max_gap: int = 3                       # MWE matches in the training source
    examples: int = 8                      # per system and direction
    bootstrap: BootstrapSettings = field(default_factory=BootstrapSettings)
    src_lang: str = "en"
    lemmatizer: str = "simplemma"

    def __post_init__(self) -> None:
        if not 0.0 < self.hit_threshold <= 1.0:
            raise ValueError(f"the hit threshold must be in (0, 1], not {self.hit_threshold}")
        if self.max_gap < 0:
            raise ValueError(f"max_gap must be 0 or more, not {self.max_gap}")
        if self.examples < 0:
            raise ValueError(f"the number of examples must be 0 or more, not {self.examples}")
        B.check_cutoffs(self.mwe_freq_cutoffs, "MWE frequency cutoffs")
        B.check_cutoffs(self.word_freq_cutoffs, "word frequency cutoffs")


def default_metrics(inputs: CompareInputs) -> list[str]:
    """BLEU and chrF; the MWE score with a test set; TESLA variants whose data is given."""
    metrics = ["bleu", "chrf"]
    if inputs.score.testset is not None:
        metrics.append(MWE_METRIC)
    if inputs.score.compositionality is not None:
        metrics.append("tesla-comp")
    if inputs.score.lexicon is not None:
        metrics.append("tesla-01")
    return metrics


def hit_definition(threshold: float) -> str:
    every = (" (every word of the MWE's reference translation occurs, case-insensitive, among the hypothesis words "
             "it is compared with)") if threshold >= 1.0 else ""
    return (f"an MWE occurrence is a hit when its MWE score is at least {threshold:g}{every}; the MWE score "
            "(after Zaninello & Birch 2020) is 1 minus the mean, over the words of the MWE's reference translation, "
            "of the character edit distance to the closest hypothesis word, capped by and divided by the word's "
            "length; by default only the hypothesis words aligned to the MWE's source words and their neighbors "
            "count, an inexact match costs at least 0.75 and words out of order cost (the MWE signature says which)")


def _num(x) -> float | None:
    """A JSON number: None for NaN."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def compare_systems(inputs: CompareInputs, metrics: Sequence[str] | None = None,
                    options: MetricOptions | None = None, settings: CompareSettings = CompareSettings(), *,
                    run: ScoreRun | None = None, progress: bool = False, provenance: dict | None = None) -> dict:
    """The whole report as a dictionary. ``run``: scores already computed on the same inputs with a
    paired bootstrap (the MWE score among them when there is a test set); else they are computed."""
    options = options or MetricOptions()
    metrics = list(metrics) if metrics is not None else default_metrics(inputs)
    if inputs.score.testset is not None and MWE_METRIC not in metrics:
        metrics.append(MWE_METRIC)   # the MWE analysis reads its statistics
    if run is None:
        _say(progress, f"scoring {len(inputs.system_names)} systems: {', '.join(metrics)}")
        run = score_systems(inputs.score, metrics, options, bootstrap=settings.bootstrap)
    names = inputs.system_names
    weights = resample_weights(inputs.score.n_sentences, settings.bootstrap)
    report: dict = {
        "format": REPORT_FORMAT,
        "systems": names,
        "baseline": names[0],
        "n_sentences": inputs.score.n_sentences,
        "aggregate": _aggregate(run),
        "bleu_parts": _bleu_parts(run),
        "hit_definition": hit_definition(settings.hit_threshold),
    }
    mwe_metric = None
    if inputs.score.testset is not None:
        result = next(r for r in run.metrics if r.key == MWE_METRIC)
        mwe_metric = result.metric if isinstance(result.metric, MweScore) else build_metric(MWE_METRIC, options)
        report["mwe"] = _mwe_analysis(inputs, [s.info["mwe_scores"] for s in result.stats], mwe_metric,
                                      settings, weights, progress)
    else:
        report["mwe"] = {"skipped": "no MWE test set given"}
    _say(progress, "word accuracy by frequency bucket")
    report["word_accuracy"] = _word_accuracy(inputs, settings, weights)
    report["degenerate"] = _degenerate(inputs, settings)
    report["signature"] = str(_signature(settings, report, options))
    report["inputs"] = {**inputs.score.sources}
    if provenance is not None:
        report["provenance"] = provenance
    return report


def _say(progress: bool, text: str) -> None:
    if progress:
        print(f"mwemt compare: {text}", file=sys.stderr)


def _signature(settings: CompareSettings, report: dict, options: MetricOptions) -> Signature:
    wa = report["word_accuracy"]
    fields = {"hit": f"mwe>={settings.hit_threshold:g}",
              "mwefreq": ",".join(map(str, settings.mwe_freq_cutoffs)),
              "gap": settings.max_gap, "lemma": settings.lemmatizer,
              "wordfreq": ",".join(map(str, settings.word_freq_cutoffs)),
              "wordfreqsrc": wa["frequency_source_key"], "wordtok": TOKENIZE, "wordcase": "mixed",
              "ci": "percentile95"}
    return Signature.of("compare", fields).with_bootstrap(settings.bootstrap.samples, settings.bootstrap.seed)


def _aggregate(run: ScoreRun) -> list[dict]:
    """Each metric's scores, differences from the baseline and paired tests; an undefined score is
    None (null), and so is its difference, and the metric says why in ``undefined``."""
    out = []
    for r in run.metrics:
        rows = {}
        base = r.scores[0].score
        for k, name in enumerate(run.systems):
            score = r.scores[k].score
            row = {"score": score, "delta": score - base if k and score is not None and base is not None else None}
            if r.bootstrap is not None:
                b = r.bootstrap[k]
                row.update({"bs_mean": b.mean, "bs_ci95": b.ci, "p_value": b.p_value})
            rows[name] = row
        entry = {"key": r.key, "name": r.scores[0].name, "signature": r.signature, "systems": rows}
        reason = undefined_reason(r)
        if reason is not None:
            entry["undefined"] = reason
        out.append(entry)
    return out


DEGENERATE_EXAMPLES = 3   # at most, per system and flag


def _degenerate(inputs: CompareInputs, settings: CompareSettings) -> dict:
    """Degenerate lines per system (`mwemt.evaluate.degenerate`: loops, over-long outputs, appended fragments),
    judged against the source text (the test set's, else the source file; loops only without either), with
    examples: the first lines (at most `DEGENERATE_EXAMPLES`, and ``settings.examples``) of each flag that the
    baseline's line does not have."""
    sources = inputs.sources or None
    names = inputs.system_names
    counter = D.DegenerateCounter.for_test(sources, inputs.score.refs)
    stats = {s.name: counter.sentence_stats(sources, s.hyps) for s in inputs.score.systems}
    hyps = {s.name: s.hyps for s in inputs.score.systems}
    base = stats[names[0]].rows
    limit = min(settings.examples, DEGENERATE_EXAMPLES)
    systems = {}
    for name in names:
        rows = stats[name].rows
        shown = []
        for k, flag in enumerate(D.FLAGS):
            new = rows[:, k] if name == names[0] else rows[:, k] & (1 - base[:, k])
            for i in np.flatnonzero(new)[:limit]:
                shown.append({"flag": flag, "sentence": int(i) + 1, "source": sources[i] if sources else None,
                              "hypothesis": hyps[name][i], "baseline": hyps[names[0]][i]})
        systems[name] = {**counter.counts(stats[name]), "examples": shown}
    return {"signature": str(counter.signature()), "expected_ratio": counter.expected_ratio,
            "with_source": sources is not None, "note": D.flag_note(sources is not None), "systems": systems}


def _bleu_parts(run: ScoreRun) -> dict | None:
    """BLEU's parts per system (brevity penalty, precisions, lengths) and each system's difference from the
    baseline split into the brevity penalty's part and the precisions' (`bleu_difference`)."""
    result = next((r for r in run.metrics if r.key == "bleu"), None)
    if result is None:
        return None
    parts = [BleuParts.from_extra(sc.score, sc.extra) for sc in result.scores]
    if any(p is None for p in parts):
        return None
    out = {}
    for k, (name, p) in enumerate(zip(run.systems, parts)):
        row = {"score": p.score, **p.to_extra()}
        if k:
            row["vs_baseline"] = bleu_difference(p, parts[0])
        out[name] = row
    return out


# ---------------------------------------------------------------- MWEs


def _mwe_analysis(inputs: CompareInputs, per_mwe: Sequence[np.ndarray], metric: MweScore,
                  settings: CompareSettings, weights: np.ndarray, progress: bool) -> dict:
    items = inputs.score.testset
    assert items is not None
    table = M.build_mwe_table(items)
    if not len(table):
        return {"skipped": "the test set has no MWEs"}
    scores = np.vstack([np.asarray(s, dtype=np.float64) for s in per_mwe])          # (systems, N)
    if scores.shape[1] != len(table):
        raise ValueError(f"the MWE score has {scores.shape[1]} MWE scores for {len(table)} test-set MWEs")
    hits = np.nan_to_num(scores, nan=0.0) >= settings.hit_threshold - 1e-12
    _add_attributes(table, inputs, settings, progress)
    names = inputs.system_names
    dims = [M.Dimension("all", "All MWEs", "Every MWE occurrence of the test set.", ["all"],
                        np.zeros(len(table), dtype=np.int64)), *M.dimensions(table, settings.mwe_freq_cutoffs)]
    buckets, skipped = [], []
    for dim in dims:
        if isinstance(dim, M.SkippedDimension):
            skipped.append({"key": dim.key, "title": dim.title, "reason": dim.reason})
        else:
            buckets.append(_bucket_rates(dim, table, hits, names, weights))
    return {
        "n_mwes": len(table), "n_types": len(table.types),
        "n_sentences_with_mwes": int(len(np.unique(table.sentence))),
        "attribute_sources": dict(table.sources),
        "buckets": buckets, "skipped": skipped,
        "types": _per_type(table, hits, scores, names),
        "examples": _examples(inputs, table, hits, scores, metric, settings),
    }


def _add_attributes(table: M.MweTable, inputs: CompareInputs, settings: CompareSettings, progress: bool) -> None:
    from mwemt.fileio import count_lines, iter_lines

    if inputs.train_src is not None:
        _say(progress, f"counting test MWEs in {inputs.train_src}")
        counts = M.count_in_corpus(table.type_keys, iter_lines(inputs.train_src), lang=settings.src_lang,
                                   max_gap=settings.max_gap, lemmatizer=settings.lemmatizer, progress=progress,
                                   total=count_lines(inputs.train_src) if progress else None)
        M.add_train_counts(table, counts, inputs.labels.get("train_src", inputs.train_src))
    if inputs.mwe_compositionality is not None:
        M.add_compositionality(table, {M.normalize_mwe(k): v for k, v in inputs.mwe_compositionality.items()},
                               inputs.labels.get("mwe_compositionality", "compositionality table"))
    if inputs.dictionary is not None:
        M.add_dictionary(table, inputs.dictionary, inputs.labels.get("dictionary", "the dictionary"))


def _bucket_counts(assignment: np.ndarray, sentence: np.ndarray, n_sentences: int, n_buckets: int,
                   values: np.ndarray) -> np.ndarray:
    """(sentences, buckets) sums of ``values`` over the occurrences of each sentence and bucket."""
    out = np.zeros((n_sentences, n_buckets), dtype=np.float64)
    ok = assignment >= 0
    np.add.at(out, (sentence[ok], assignment[ok]), values[ok])
    return out


def _bucket_rates(dim: M.Dimension, table: M.MweTable, hits: np.ndarray, names: list[str],
                  weights: np.ndarray) -> dict:
    k = len(dim.labels)
    ones = np.ones(len(table))
    den = _bucket_counts(dim.assignment, table.sentence, table.n_sentences, k, ones)
    nums = [_bucket_counts(dim.assignment, table.sentence, table.n_sentences, k, h.astype(np.float64)) for h in hits]
    estimates = paired_ratio_bootstrap(nums, [den] * len(nums), weights)
    rows = []
    for b, label in enumerate(dim.labels):
        in_bucket = dim.assignment == b
        systems = {}
        for s, name in enumerate(names):
            e = estimates[s]
            systems[name] = {"hits": int(nums[s][:, b].sum()), "rate": _num(e.value[b]), "lo": _num(e.lo[b]),
                             "hi": _num(e.hi[b]),
                             "delta": _num(e.value[b] - estimates[0].value[b]) if s else None,
                             "p_value": _num(e.p_value[b]) if e.p_value is not None else None}
        rows.append({"label": label, "mwes": int(in_bucket.sum()),
                     "types": int(len(np.unique(table.type_index[in_bucket]))), "systems": systems})
    unassigned = int((dim.assignment < 0).sum())
    return {"key": dim.key, "title": dim.title, "description": dim.description, "buckets": rows,
            "unassigned": unassigned}


def _per_type(table: M.MweTable, hits: np.ndarray, scores: np.ndarray, names: list[str]) -> list[dict]:
    n_types = len(table.types)
    occ = np.bincount(table.type_index, minlength=n_types)
    gapped = np.bincount(table.type_index, weights=table.gapped.astype(np.float64), minlength=n_types)
    filled = np.nan_to_num(scores, nan=0.0)
    type_hits = [np.bincount(table.type_index, weights=h.astype(np.float64), minlength=n_types) for h in hits]
    type_scores = [np.bincount(table.type_index, weights=sc, minlength=n_types) for sc in filled]
    rows = []
    for t, typ in enumerate(table.types):
        systems = {}
        for s, name in enumerate(names):
            rate = 100.0 * type_hits[s][t] / occ[t]
            systems[name] = {"hits": int(type_hits[s][t]), "rate": rate,
                             "mean_score": 100.0 * type_scores[s][t] / occ[t],
                             "delta": rate - 100.0 * type_hits[0][t] / occ[t] if s else None}
        rows.append({"key": typ.key, "name": typ.name, "category": typ.category, "occurrences": int(occ[t]),
                     "gapped": int(gapped[t]), "train_count": typ.train_count,
                     "compositionality": _num(typ.compositionality), "in_dictionary": typ.in_dictionary,
                     "systems": systems})
    return rows


def _examples(inputs: CompareInputs, table: M.MweTable, hits: np.ndarray, scores: np.ndarray, metric: MweScore,
              settings: CompareSettings) -> list[dict]:
    items = inputs.score.testset
    assert items is not None
    names = inputs.system_names
    groups = []
    for choice in E.select_examples(hits, scores, table.type_index, settings.examples):
        shown = []
        for occ in choice.occurrences:
            i = int(table.sentence[occ])
            item, mwe = items[i], table.mwes[occ]
            hyps = []
            for s, system in enumerate(inputs.score.systems):
                text = system.hyps[i]
                hyps.append({"system": names[s], "text": text, "hit": bool(hits[s, occ]),
                             "score": _num(100.0 * scores[s, occ]),
                             "spans": E.matched_spans(text, mwe.reference, metric)})
            shown.append({"sentence": i + 1, "id": item.id, "mwe": table.types[table.type_index[occ]].name,
                          "mwe_reference": mwe.reference,
                          "source": {"text": item.source, "spans": E.source_spans(item, mwe)},
                          "reference": {"text": inputs.score.refs[i], "spans": _reference_spans(inputs, i, mwe, metric)},
                          "hypotheses": hyps})
        groups.append({"system": names[choice.system], "baseline": names[0], "direction": choice.direction,
                       "available": int((hits[choice.system] & ~hits[0]).sum() if choice.direction == "win"
                                        else (hits[0] & ~hits[choice.system]).sum()),
                       "items": shown})
    return groups


def _reference_spans(inputs: CompareInputs, i: int, mwe, metric: MweScore) -> list:
    items = inputs.score.testset
    assert items is not None and inputs.score.refs is not None
    if items[i].reference == inputs.score.refs[i]:
        return E.reference_spans(items[i], mwe, metric)
    return E.matched_spans(inputs.score.refs[i], mwe.reference, metric, exact_only=True)


# ---------------------------------------------------------------- words


def _word_accuracy(inputs: CompareInputs, settings: CompareSettings, weights: np.ndarray) -> dict:
    from mwemt.fileio import iter_lines

    tokenize = word_tokenizer()
    refs_tok = [tokenize(r) for r in inputs.score.refs or []]
    if inputs.train_tgt is not None:
        frequency = corpus_counts(iter_lines(inputs.train_tgt))
        source, key = f"the training target text {inputs.labels.get('train_tgt', inputs.train_tgt)}", "train"
    else:
        frequency = corpus_counts(inputs.score.refs or [])
        source, key = "the references (no training target text given)", "ref"
    counts = [word_counts(refs_tok, [tokenize(h) for h in s.hyps], frequency, settings.word_freq_cutoffs)
              for s in inputs.score.systems]
    f = paired_ratio_bootstrap([2 * c.matched for c in counts], [c.ref + c.hyp for c in counts], weights)
    labels = B.frequency_labels(settings.word_freq_cutoffs)
    ref_words = counts[0].ref.sum(axis=0)
    systems = {}
    for s, name in enumerate(inputs.system_names):
        c = counts[s]
        matched, hyp = c.matched.sum(axis=0), c.hyp.sum(axis=0)
        systems[name] = {
            "f": [_num(x) for x in f[s].value], "lo": [_num(x) for x in f[s].lo], "hi": [_num(x) for x in f[s].hi],
            "p_value": [_num(x) for x in f[s].p_value] if f[s].p_value is not None else None,
            "precision": [_num(100 * m / h) if h else None for m, h in zip(matched, hyp)],
            "recall": [_num(100 * m / r) if r else None for m, r in zip(matched, ref_words)],
            "hyp_words": [int(x) for x in hyp], "matched": [int(x) for x in matched]}
    return {"frequency_source": source, "frequency_source_key": key, "tokenize": TOKENIZE, "labels": labels,
            "ref_words": [int(x) for x in ref_words], "systems": systems}
