"""Rendering of score runs and meta-evaluations: plain-text tables for people, dictionaries for JSON.

Scores are printed on a 0-100 scale. With a paired bootstrap a cell reads like sacrebleu's:
``score (mean ± 95% half-width)`` and, for every system but the baseline, the p-value against it
with ``*`` when p < 0.05.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mwemt.evaluate.meta_eval import MetaEvalResult
from mwemt.evaluate.scoring import MetricResults, ScoreRun


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths)))
    return [fmt(header), "  ".join("-" * w for w in widths), *[fmt(r) for r in rows]]


def _cell(run: ScoreRun, m: int, k: int, width: int) -> str:
    res = run.metrics[m]
    text = f"{res.scores[k].score:.{width}f}"
    if res.bootstrap is not None:
        b = res.bootstrap[k]
        text += f" ({b.mean:.{width}f} ± {b.ci:.{width}f})"
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
    for r in run.metrics:
        lines.append(f"{r.scores[0].name} signature: {r.signature}")
        if r.sentence_signature:
            lines.append(f"{r.scores[0].name} sentence-level signature: {r.sentence_signature}")
    return "\n".join(lines) + "\n"


def score_run_dict(run: ScoreRun) -> dict:
    out: dict = {"systems": run.systems, "n_sentences": run.n_sentences, "scale": "0-100", "metrics": {}}
    if run.bootstrap:
        out["paired_bootstrap"] = run.bootstrap
    for r in run.metrics:
        entry: dict = {"name": r.scores[0].name, "signature": r.signature, "systems": {}}
        if r.sentence_signature:
            entry["sentence_signature"] = r.sentence_signature
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


def _f(x: float, width: int = 3) -> str:
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{width}f}"


def _ci(res: MetaEvalResult, key: str) -> str:
    value = getattr(res, key)
    if key not in res.ci:
        return _f(value)
    lo, hi = res.ci[key]
    return f"{_f(value)} [{_f(lo)}, {_f(hi)}]"


def format_meta_table(results: Sequence[MetaEvalResult]) -> str:
    header = ["Metric", "tau WMT13", "tau WMT14", "Pearson seg", "Pearson sys", "Kendall sys",
              "C", "D", "T(metric)"]
    rows = [[r.metric, _ci(r, "tau_wmt13"), _ci(r, "tau_wmt14"), _ci(r, "pearson_seg"), _ci(r, "pearson_sys"),
             _ci(r, "kendall_sys"), str(r.concordant), str(r.discordant), str(r.metric_ties)] for r in results]
    lines = _table(header, rows)
    if results:
        r0 = results[0]
        lines.append("")
        lines.append(f"{r0.n_segments} segments, {r0.n_systems} systems, {r0.n_items} judged items; "
                     f"{r0.human_ties} pairs tied by the humans are left out of tau.")
        for r in results:
            if r.human_items_without_metric:
                lines.append(f"{r.metric}: {r.human_items_without_metric} judged items have no metric score "
                             "and are left out.")
        if r0.bootstrap:
            lines.append(f"[lo, hi]: 95% percentile bootstrap interval, {r0.bootstrap['resamples']} resamples of "
                         f"segments, seed {r0.bootstrap['seed']}.")
    return "\n".join(lines) + "\n"
