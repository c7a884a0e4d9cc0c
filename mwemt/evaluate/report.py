"""Rendering of score runs and meta-evaluations: plain-text tables for people, dictionaries for JSON.

Scores are printed on a 0-100 scale. With a paired bootstrap a cell reads like sacrebleu's:
``score (mean ± 95% half-width)`` and, for every system but the baseline, the p-value against it
with ``*`` when p < 0.05. An undefined score (`mwemt.evaluate.base`: e.g. the MWE score of a test
set without MWEs) reads ``n/a``, with no interval or p-value, and a note under the table says why;
in JSON it is ``null`` and its metric says why in ``undefined``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mwemt.evaluate.base import Metric, format_score, undefined_note
from mwemt.evaluate.meta_compare import MetaComparison
from mwemt.evaluate.meta_eval import MetaEvalResult
from mwemt.evaluate.scoring import MetricResults, ScoreRun


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    return [fmt(header), "  ".join("-" * w for w in widths), *[fmt(r) for r in rows]]


def _cell(run: ScoreRun, m: int, k: int, width: int) -> str:
    res = run.metrics[m]
    text = format_score(res.scores[k].score, width)
    if res.scores[k].score is None:
        return text   # undefined: no interval, no test
    if res.bootstrap is not None:
        b = res.bootstrap[k]
        text += f" ({format_score(b.mean, width)} ± {format_score(b.ci, width)})"
        if b.p_value is not None:
            text += f" p={b.p_value:.4f}{'*' if b.p_value < 0.05 else ' '}"
        else:
            text += " " * 9
    return text


def format_score_table(run: ScoreRun, width: int = 1) -> str:
    header = ["System", *[r.scores[0].name for r in run.metrics]]
    rows = [[name, *[_cell(run, m, k, width) for m in range(len(run.metrics))]]
            for k, name in enumerate(run.systems)]
    lines = _table(header, rows)
    lines.append("")
    lines.append(f"Scores on a 0-100 scale; {run.n_sentences} sentences.")
    if run.bootstrap:
        lines.append(f"Paired bootstrap: {run.bootstrap['resamples']} resamples, seed {run.bootstrap['seed']}, "
                     f"baseline {run.bootstrap['baseline']!r}; cells are score (bootstrap mean ± 95% CI), "
                     "p against the baseline, * p < 0.05.")
    lines += undefined_lines(run)
    coverage = [line for r in run.metrics for line in mwe_coverage_lines(run, r)]
    lines += coverage + ([""] if coverage else [])
    for r in run.metrics:
        lines.append(f"{r.scores[0].name} signature: {r.signature}")
        if r.sentence_signature:
            lines.append(f"{r.scores[0].name} sentence-level signature: {r.sentence_signature}")
    return "\n".join(lines) + "\n"


def undefined_reason(result: MetricResults) -> str | None:
    """Why some system's score of ``result`` is undefined; None when every score is defined."""
    if all(s.score is not None for s in result.scores):
        return None
    return (result.metric or Metric).undefined_reason


def undefined_lines(run: ScoreRun) -> list[str]:
    """One note per metric with an undefined score: what n/a means there."""
    return [undefined_note(r.scores[0].name, reason) for r in run.metrics if (reason := undefined_reason(r)) is not None]


def mwe_coverage_lines(run: ScoreRun, result: MetricResults) -> list[str]:
    """What a TESLA MWE variant did per system: reference MWEs found, matched in the hypothesis,
    and how the unmatched ones were weighted (by a prediction or by the default). Nothing else."""
    extras = [s.extra for s in result.scores]
    if not extras or "ref_mwes" not in extras[0]:
        return []
    name = result.scores[0].name
    comp = "unmatched_without_compositionality" in extras[0]
    if comp:
        default = extras[0].get("default_rule") or f"{extras[0].get('default_compositionality'):g}"
        header = ["System", "ref MWEs", "in hyp", "unmatched: predicted", f"default {default}"]
        rows = [[sys_, str(e["ref_mwes"]), str(e["ref_mwes_matched"]), str(e["unmatched_with_compositionality"]),
                 str(e["unmatched_without_compositionality"])] for sys_, e in zip(run.systems, extras)]
        note = (f"{name}: reference MWEs the hypothesis lacks weigh their predicted compositionality, or the default "
                f"{default} without a prediction.")
    else:
        header = ["System", "ref MWEs", "in hyp", "unmatched (weight 0)"]
        rows = [[sys_, str(e["ref_mwes"]), str(e["ref_mwes_matched"]), str(e["ref_mwes_unmatched"])]
                for sys_, e in zip(run.systems, extras)]
        note = f"{name}: reference MWEs the hypothesis lacks earn nothing."
    ignored = extras[0].get("table_single_words_ignored")
    if ignored:
        note += f" {ignored} single-word entries of the compositionality table are not MWEs and were ignored."
    return ["", f"{name}: reference MWEs per system", *_table(header, rows), note]


def score_run_dict(run: ScoreRun) -> dict:
    out: dict = {"systems": run.systems, "n_sentences": run.n_sentences, "scale": "0-100", "metrics": {}}
    if run.bootstrap:
        out["paired_bootstrap"] = run.bootstrap
    for r in run.metrics:
        entry: dict = {"name": r.scores[0].name, "signature": r.signature, "systems": {}}
        if r.sentence_signature:
            entry["sentence_signature"] = r.sentence_signature
        reason = undefined_reason(r)
        if reason is not None:
            entry["undefined"] = reason   # why a score below is null
        for k, name in enumerate(run.systems):
            s = r.scores[k]
            row: dict = {"score": s.score}
            if s.extra:
                row["extra"] = s.extra
            if run.sentence_level:
                row["sentence_scores"] = s.sentence_scores
            if r.bootstrap is not None:
                b = r.bootstrap[k]
                row.update({"bs_mean": b.mean, "bs_ci95": b.ci, "p_value": b.p_value})
            entry["systems"][name] = row
        out["metrics"][r.key] = entry
    return out


def sentence_score_rows(run: ScoreRun, result: MetricResults) -> list[str]:
    """``system<TAB>seg_id<TAB>score`` lines (with a header; ``None`` = nothing to score), the input
    format of `mwemt meta-eval`."""
    rows = ["system\tseg_id\tscore"]
    for name, score in zip(run.systems, result.scores):
        for seg, s in zip(run.segment_ids, score.sentence_scores or []):
            rows.append(f"{name}\t{seg}\t{'None' if s is None else f'{s:.6f}'}")
    return rows


def _f(x: float | None, width: int = 3, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    return f"{x:+.{width}f}" if sign else f"{x:.{width}f}"


def _ci(res: MetaEvalResult, key: str) -> str:
    value = res.values[key]
    if key not in res.ci:
        return _f(value)
    lo, hi = res.ci[key]
    return f"{_f(value)} [{_f(lo)}, {_f(hi)}]"


SEGMENT_STATISTICS = ("tau_wmt13", "tau_wmt14", "acc_eq", "pearson_seg", "pearson_item", "kendall_item")
SYSTEM_STATISTICS = ("pairwise_acc_sys", "pearson_sys", "kendall_sys")
SHORT_LABELS = {"tau_wmt13": "tau13", "tau_wmt14": "tau14", "acc_eq": "acc-eq", "pearson_seg": "Pearson",
                "pearson_item": "Pearson/item", "kendall_item": "Kendall/item", "pairwise_acc_sys": "sys acc",
                "pearson_sys": "sys Pearson", "kendall_sys": "sys Kendall"}


def format_meta_table(results: Sequence[MetaEvalResult]) -> str:
    """The segment-level and system-level tables of every metric, with their footnotes."""
    seg_header = ["Metric", *[SHORT_LABELS[k] for k in SEGMENT_STATISTICS[:3]], "eps",
                  *[SHORT_LABELS[k] for k in SEGMENT_STATISTICS[3:]]]
    seg_rows = [[r.metric, *[_ci(r, k) for k in SEGMENT_STATISTICS[:3]], f"{r.acc_eq_epsilon:.3g}",
                 *[_ci(r, k) for k in SEGMENT_STATISTICS[3:]]] for r in results]
    sys_header = ["Metric", "pairwise acc", "Pearson", "Kendall"]
    sys_rows = [[r.metric, *[_ci(r, k) for k in SYSTEM_STATISTICS]] for r in results]
    lines = ["Segment level"] + _table(seg_header, seg_rows) + ["", "System level (mean scores per system)"]
    lines += _table(sys_header, sys_rows)
    if results:
        r0 = results[0]
        lines.append("")
        lines.append(f"{r0.n_segments} segments, {r0.n_systems} systems, {r0.n_items} judged items; "
                     f"{r0.human_ties} pairs tied by the humans are left out of tau, and count in acc-eq.")
        lines.append("Pairs within segments (concordant C / discordant D / tied by the metric T): " + "; ".join(
            f"{r.metric} {r.concordant}/{r.discordant}/{r.metric_ties}" for r in results) + ".")
        defined = {r.metric: (r.segments_defined.get("pearson_item", 0), r.segments_defined.get("kendall_item", 0))
                   for r in results}
        counts = {f"{p} / {k}" for p, k in defined.values()}
        where = (f"the {counts.pop()} segments" if len(counts) == 1 else
                 "the segments (" + "; ".join(f"{m} {p} / {k}" for m, (p, k) in defined.items()) + ")")
        lines.append("acc-eq: pairwise accuracy with ties, grouped by segment, at the tie threshold eps (in metric "
                     "units) that maximizes it; Pearson/item, Kendall/item: per-segment r and tau-b averaged over "
                     f"{where} where both sides vary.")
        floor = r0.acc_eq_all_ties
        tying = [r.metric for r in results if r.values.get("acc_eq", -1.0) <= floor + 1e-9]
        lines.append(f"A metric that ties every pair scores acc-eq {floor:.3f} here (the share of human ties)"
                     + (f"; calibrated, {', '.join(tying)} do no better than that, so acc-eq cannot rank "
                        "them on these judgments." if tying else "."))
        for r in results:
            if r.human_items_without_metric:
                lines.append(f"{r.metric}: {r.human_items_without_metric} judged items have no metric score "
                             "and are left out.")
        if r0.bootstrap:
            lines.append(f"[lo, hi]: 95% percentile bootstrap interval, {r0.bootstrap['resamples']} resamples of "
                         f"segments, seed {r0.bootstrap['seed']}.")
    return "\n".join(lines) + "\n"


def format_paired_table(comparison: MetaComparison) -> str:
    """Every compared pair and statistic: values, difference, paired CI, permutation p."""
    header = ["A", "B", "statistic", "A", "B", "A - B", "95% CI", "p"]
    rows = []
    for p in comparison.pairs:
        lo, hi = p.ci
        pv = "nan" if p.p_value is None else f"{p.p_value:.3f}{'*' if p.p_value < 0.05 else ' '}"
        rows.append([p.a, p.b, SHORT_LABELS.get(p.statistic, p.statistic), _f(p.a_value), _f(p.b_value),
                     _f(p.delta, sign=True), f"[{_f(lo, sign=True)}, {_f(hi, sign=True)}]", pv])
    settings = comparison.settings
    boot, perm = settings.get("bootstrap", {}), settings.get("permutation", {})
    lines = ["Paired comparisons"] + _table(header, rows)
    lines.append("")
    lines.append(f"95% CI: paired bootstrap, {boot.get('resamples')} resamples of segments drawn once for both "
                 f"metrics; p: permutation test, {perm.get('permutations')} random swaps of the two metrics' "
                 f"(z-normalized) scores per segment; * p < 0.05; seed {boot.get('seed')}.")
    return "\n".join(lines) + "\n"


def format_clusters(comparison: MetaComparison) -> str:
    """Rank of every metric per statistic (1 = not significantly worse than the best)."""
    if not comparison.clusters:
        return ""
    keys = [k for k in (*SEGMENT_STATISTICS, *SYSTEM_STATISTICS) if k in comparison.clusters]
    names = [r.metric for r in comparison.results]
    rows = [[n, *[str(comparison.clusters[k][n]) for k in keys]] for n in names]
    lines = ["Significance clusters"] + _table(["Metric", *[SHORT_LABELS[k] for k in keys]], rows)
    lines.append("")
    lines.append("Rank 1: the best metric and every metric not significantly worse than it (permutation p >= "
                 "0.05); rank 2: the same among the rest; and so on.")
    return "\n".join(lines) + "\n"
