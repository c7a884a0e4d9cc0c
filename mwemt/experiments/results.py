"""The results of an experiment grid: results.json / .csv / .md and a plot (results.png).

Input is one `score_run_dict` (mwemt.evaluate.report) per test set, all scored with the same
systems in the same order, baseline first. The markdown table has one row per system and one column
per (test set, metric); a cell is ``score ±95% CI half-width`` from the paired bootstrap with ``*``
when the system differs from the baseline at p < 0.05. Under the table a short "findings" list
compares every system with the baseline on the MWE-focused columns, stated as measured; test sets
scored with a ``mwe_compositionality`` table add the MWE score per compositionality tertile.

An undefined score (``null`` in a `score_run_dict`: e.g. the MWE score of a test set without MWEs)
stays ``null`` in results.json, reads ``n/a`` in results.md and results.csv, gets no bar in
results.png, and is left out of the findings and the seed section.

What a gain is made of (docs/experiments.md, "Reading results.md"):

- BLEU's parts: each BLEU score row keeps its brevity penalty, n-gram precisions and lengths (``extra``;
  `mwemt.evaluate.sacrebleu_metrics.BleuParts`); results.md tabulates them per test and says, in a note per
  test, which BLEU differences against the baseline are mostly brevity penalty (`bleu_difference`).
- Degenerate outputs: loops, over-long outputs and appended fragments per system and test
  (`mwemt.evaluate.degenerate`; results.json ``degenerate``).
- A test the baseline cannot translate (`untranslatable_tests`: baseline BLEU below 5, or outputs under 60% of
  the reference length) is marked with a dagger, and its MWE differences are left out of the findings and of
  the seed section's real differences: they are not evidence.
- The seed section judges a group against the baseline's own seed spread, with significance on every seed, and
  says when every seed lies above (or below) every seed of the baseline.

`rewrite_published` writes results.json / .md / .csv / .png of a published directory again, with all of the
above, from its published files alone (no training, no decoding, no MWE scoring):
``python scripts/rewrite_results.py DIR``.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mwemt.evaluate.base import UNDEFINED, format_score, undefined_note
from mwemt.evaluate.breakdown import format_breakdown
from mwemt.evaluate.degenerate import ANY, FLAGS, count_test, flag_note
from mwemt.evaluate.sacrebleu_metrics import BleuParts, bleu_difference
from mwemt.fileio import atomic_write, write_text
from mwemt.provenance import portable_path, write_json

ALPHA = 0.05
MWE_METRICS = ("mwe", "mwe-alts", "mwe-verdict", "tesla-comp", "tesla-01", "liter", "term-use")   # MWE columns even on a general test
FINDING_METRICS = ("mwe", "mwe-alts")   # the MWE scores (single reference, with alternatives) of the findings
# the seed section: the findings' MWE scores, LiTER (lower is better), and BLEU and chrF of every test set
SEED_METRICS = ("bleu", "chrf", *FINDING_METRICS, "mwe-p", "mwe-verdict", "liter")   # mwe-p: precision-aware
# a test the baseline cannot translate: its BLEU below this, or its outputs shorter than this share of the reference
UNTRANSLATABLE_BLEU = 5.0
UNTRANSLATABLE_LENGTH = 0.6
DAGGER = "\u2020"


@dataclass
class SetScores:
    """One test set's scores: ``run`` is a `score_run_dict`; ``role`` is ``general`` or ``mwe``."""

    name: str
    role: str
    run: dict


def recorded_path(path: str | Path, start: str | Path | None = None) -> str:
    """A path as results and manifests record it: never absolute (a published result must not name the
    machine that ran it). An absolute ``path`` becomes relative to ``start`` (default: the working
    directory, the repository root where `mwemt run` is started); a relative one is kept as given."""
    return portable_path(path, start)


def build_results(tests: Sequence[SetScores], *, name: str, baseline: str, meta: dict | None = None,
                  reports: dict[str, str] | None = None, seed_groups: dict[str, list[str]] | None = None,
                  seed_baselines: dict[str, str | None] | None = None, constraints: dict | None = None,
                  degenerate: dict[str, dict] | None = None) -> dict:
    """One JSON-able dictionary with every score, signature and p-value, and the column order;
    ``reports``: test name -> its comparison report's page, relative to the run directory; ``seed_groups``:
    group name -> the systems that differ only in their training seed (`ExperimentConfig.seed_groups`);
    ``seed_baselines``: each member of a group other than the baseline's -> the baseline's member trained with
    its seed, or None (`ExperimentConfig.seed_baselines`); ``constraints``: system -> test -> the counts of its
    constrained decoding (`constraint_counts`); ``degenerate``: test -> its degenerate lines per system
    (`count_degenerate`). The derived ``bleu_differences`` and ``untranslatable`` are added (`add_analysis`)."""
    systems = tests[0].run["systems"] if tests else []
    for t in tests:
        if t.run["systems"] != systems:
            raise ValueError(f"test {t.name} was scored on systems {t.run['systems']}, expected {systems}")
    columns = []
    for t in tests:
        for key, m in t.run["metrics"].items():
            role = "mwe" if t.role == "mwe" or key in MWE_METRICS else "general"
            column = {"id": f"{t.name}/{key}", "test": t.name, "role": role, "metric": key,
                      "label": f"{t.name} {m['name']}", "signature": m["signature"], "n_sentences": t.run["n_sentences"]}
            if m.get("undefined"):
                column["undefined"] = m["undefined"]   # why some score of the column is null
            columns.append(column)
    scores = {s: {} for s in systems}
    for t in tests:
        for key, m in t.run["metrics"].items():
            for s in systems:
                scores[s][f"{t.name}/{key}"] = m["systems"][s]
    bootstrap = next((t.run.get("paired_bootstrap") for t in tests if t.run.get("paired_bootstrap")), None)
    breakdowns = {t.name: t.run["compositionality_breakdown"] for t in tests
                  if t.run.get("compositionality_breakdown")}
    results = {"name": name, "baseline": baseline, "systems": systems, "columns": columns, "scores": scores,
               "paired_bootstrap": bootstrap, "compositionality_breakdown": breakdowns, "reports": dict(reports or {}),
               "seed_groups": {g: list(m) for g, m in (seed_groups or {}).items() if all(x in scores for x in m)},
               "seed_baselines": {s: b for s, b in (seed_baselines or {}).items()
                                  if s in scores and b in (None, *scores)},
               "constraints": {s: dict(t) for s, t in (constraints or {}).items() if s in scores},
               "degenerate": {t: d for t, d in (degenerate or {}).items()},
               "meta": meta or {}}
    return add_analysis(results)


def add_analysis(results: dict) -> dict:
    """Store in ``results`` what results.md derives from the scores, for readers of results.json:
    ``bleu_differences`` (`bleu_differences`) and ``untranslatable`` (`untranslatable_tests`). Returns it."""
    results["bleu_differences"] = bleu_differences(results)
    results["untranslatable"] = untranslatable_tests(results)
    return results


def count_degenerate(source: str | Path | None, reference: str | Path, hyps: dict[str, str | Path],
                     examples: int = 0) -> dict:
    """One test's degenerate lines per system (`mwemt.evaluate.degenerate.count_test`), from its files:
    ``source`` (None: loops only), the references and each system's hypotheses (plain text or gzip)."""
    from mwemt.fileio import read_lines

    return count_test(read_lines(source) if source is not None else None, read_lines(reference),
                      {s: read_lines(p) for s, p in hyps.items()}, examples=examples)


# ---------------------------------------------------------------- what a gain is made of

def is_mwe_column(column: dict) -> bool:
    """A column that measures MWEs: every column of an MWE test set, and the MWE metrics of any test."""
    return column["role"] == "mwe" or column["metric"] in MWE_METRICS or column["metric"].startswith("mwe")


def _bleu_column(results: dict, test: str) -> dict | None:
    return next((c for c in results["columns"] if c["test"] == test and c["metric"] == "bleu"), None)


def bleu_parts(results: dict, system: str, test: str) -> BleuParts | None:
    """The BLEU parts (brevity penalty, precisions, lengths) of ``system`` on ``test``; None without BLEU."""
    column = _bleu_column(results, test)
    if column is None:
        return None
    row = results["scores"][system][column["id"]]
    return BleuParts.from_extra(row.get("score"), row.get("extra"))


def _tests(results: dict) -> list[str]:
    return list(dict.fromkeys(c["test"] for c in results["columns"]))


def bleu_differences(results: dict, against: dict[str, str] | None = None) -> dict[str, dict[str, dict]]:
    """test -> system -> how its BLEU differs from the baseline's (`bleu_difference`: the log difference split
    into the brevity penalty's part and the precisions'), for every test with BLEU parts; ``against``: system ->
    the system it is compared with instead of the baseline."""
    out: dict[str, dict[str, dict]] = {}
    base = results["baseline"]
    for test in _tests(results):
        rows = {}
        for s in results["systems"]:
            other = (against or {}).get(s, base)
            if s == other or other is None:
                continue
            mine, theirs = bleu_parts(results, s, test), bleu_parts(results, other, test)
            if mine is None or theirs is None:
                continue
            diff = bleu_difference(mine, theirs)
            if diff is not None:
                rows[s] = {"against": other, "bleu_diff": mine.score - theirs.score, **diff}
        if rows:
            out[test] = rows
    return out


def _baseline_members(results: dict) -> list[str]:
    """The baseline and, where the grid trains it with several seeds, its seed group."""
    base = results["baseline"]
    return next((list(m) for m in (results.get("seed_groups") or {}).values() if base in m), [base])


def untranslatable_tests(results: dict) -> dict[str, dict]:
    """test -> why the baseline cannot translate it: its BLEU is below `UNTRANSLATABLE_BLEU` or its outputs are
    shorter than `UNTRANSLATABLE_LENGTH` x the reference (hypothesis/reference length of BLEU's tokens). The
    baseline's numbers are the means over its seeds where the grid has a baseline seed group. Tests without
    BLEU cannot be judged and are not listed."""
    out = {}
    members = _baseline_members(results)
    for test in _tests(results):
        column = _bleu_column(results, test)
        if column is None:
            continue
        scores = [results["scores"][m][column["id"]]["score"] for m in members]
        if any(x is None for x in scores):
            continue
        bleu = sum(scores) / len(scores)
        parts = [bleu_parts(results, m, test) for m in members]
        ratios = [p.ratio for p in parts if p is not None and p.ratio is not None]
        ratio = sum(ratios) / len(ratios) if len(ratios) == len(members) else None
        reasons = []
        if bleu < UNTRANSLATABLE_BLEU:
            reasons.append(f"BLEU {bleu:.1f} < {UNTRANSLATABLE_BLEU:g}")
        if ratio is not None and ratio < UNTRANSLATABLE_LENGTH:
            reasons.append(f"outputs {100 * ratio:.0f}% of the reference length < {100 * UNTRANSLATABLE_LENGTH:.0f}%")
        if reasons:
            out[test] = {"baseline": members, "bleu": bleu, "length_ratio": ratio, "reasons": reasons}
    return out


def _evidence(results: dict, column: dict, untranslatable: dict | None = None) -> bool:
    """False for an MWE column of a test the baseline cannot translate."""
    bad = untranslatable if untranslatable is not None else untranslatable_tests(results)
    return not (column["test"] in bad and is_mwe_column(column))


def _labels(results: dict) -> dict[str, str]:
    """Column labels, with the dagger of a test the baseline cannot translate."""
    bad = untranslatable_tests(results)
    return {c["id"]: c["label"] + (f" {DAGGER}" if c["test"] in bad else "") for c in results["columns"]}


def format_untranslatable_section(results: dict) -> list[str]:
    bad = untranslatable_tests(results)
    if not bad:
        return []
    lines = [f"## {DAGGER} Tests the baseline cannot translate", "",
             f"A test is marked {DAGGER} when the baseline's BLEU on it is below {UNTRANSLATABLE_BLEU:g} or its outputs "
             f"are shorter than {100 * UNTRANSLATABLE_LENGTH:.0f}% of the reference (BLEU's tokens; the mean over the "
             "baseline's seeds). Its MWE differences are **not evidence** that a method translates MWEs better: "
             "where the baseline does not translate the sentences, an MWE score measures words that happen to be "
             "there, and a method that writes more words, loops or appended fragments gains without translating "
             "better. They are left out of the findings and of the seed section's real differences.", ""]
    for test, why in bad.items():
        mwe_cols = [c["label"] for c in results["columns"] if c["test"] == test and is_mwe_column(c)]
        what = f" MWE columns not counted as evidence: {', '.join(mwe_cols)}." if mwe_cols else ""
        lines.append(f"- **{test}** {DAGGER}: baseline ({', '.join(why['baseline'])}) " + "; ".join(why["reasons"])
                     + "." + what)
    return lines + [""]


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def format_bleu_section(results: dict, width: int = 1) -> list[str]:
    """Per test: every system's BLEU, brevity penalty, length ratio and n-gram precisions, its difference from
    the baseline split in log space, and a note naming the differences that are mostly brevity penalty."""
    diffs = bleu_differences(results)
    tests = [t for t in _tests(results) if all(bleu_parts(results, s, t) is not None for s in results["systems"])]
    if not tests:
        return []
    base = results["baseline"]
    lines = ["## BLEU: brevity penalty and n-gram precisions", "",
             "BLEU = BP x the geometric mean of the n-gram precisions p1-p4, so the difference of a system's BLEU from "
             "the baseline's splits exactly in log space: log BLEU - log BLEU(baseline) = **BP part** (log BP - log "
             "BP(baseline)) + **precision part** (the change of the mean log precision). A difference is **mostly "
             "brevity penalty** when the BP part is more than half of it (more than all of it when the precisions "
             "move the other way). length: hypothesis / reference length (BLEU's tokens).", ""]
    for test in tests:
        d = diffs.get(test, {})
        label = test + (f" {DAGGER}" if test in untranslatable_tests(results) else "")
        lines += [f"### {label}", "", "| system | BLEU | BP | length | p1 | p2 | p3 | p4 | Δ BLEU | Δ log BLEU "
                  "| BP part | precision part | BP share |", "|---|" + "---:|" * 12]
        approx = False
        for s in results["systems"]:
            p = bleu_parts(results, s, test)
            approx = approx or not p.exact
            precs = list(p.precisions[:4]) + [None] * (4 - len(p.precisions[:4]))
            cells = [f"{p.score:.{width}f}", f"{p.bp:.3f}", "n/a" if p.ratio is None else f"{p.ratio:.3f}",
                     *["" if x is None else f"{x:.1f}" for x in precs]]
            if s in d:
                x = d[s]
                cells += [f"{x['bleu_diff']:+.{width}f}", f"{x['log_ratio']:+.3f}", f"{x['bp_part']:+.3f}",
                          f"{x['precision_part']:+.3f}", _share(x["bp_share"])]
            else:
                cells += ["", "", "", "", ""]
            name = f"{s} (baseline)" if s == base and s != "baseline" else s
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
        if approx:
            lines += ["Precisions read back from sacrebleu's rounded summary line (results written before the parts "
                      "were kept); BP and the split are exact (from the lengths and the scores).", ""]
        mostly = [(s, x) for s, x in d.items() if x["mostly_brevity"] and abs(x["bleu_diff"]) >= 0.05]
        column = _bleu_column(results, test)
        if mostly:
            parts = []
            for s, x in mostly:
                p = results["scores"][s][column["id"]].get("p_value")
                sig = "" if p is None else (", p < 0.05" if p < ALPHA else ", not significant")
                fall = "; every n-gram precision falls" if x["precisions_fall"] else (
                    "; every n-gram precision rises" if x["precisions_rise"] else "")
                parts.append(f"{s} ({x['bleu_diff']:+.{width}f}{sig}: BP part {_share(x['bp_share'])} of the log "
                             f"difference{fall})")
            lines += [f"**Note ({test}):** the BLEU difference from the baseline is mostly brevity penalty for "
                      + "; ".join(parts) + ". Such a difference says that the outputs are longer (or shorter), not "
                      "that more of them is right.", ""]
        else:
            lines += [f"**Note ({test}):** no BLEU difference from the baseline is mostly brevity penalty.", ""]
    return lines


def format_degenerate_section(results: dict) -> list[str]:
    counts = results.get("degenerate") or {}
    if not counts:
        return []
    base = results["baseline"]
    lines = ["## Degenerate outputs: loops, over-long outputs, appended fragments", "",
             "Lines flagged per system and test (share of the test's lines); any: lines with at least one flag; "
             "Δ any: minus the baseline's. " + flag_note(), ""]
    for test, d in counts.items():
        label = test + (f" {DAGGER}" if test in untranslatable_tests(results) else "")
        lines += [f"### {label}", "", f"Expected target/source ratio (median over the references): "
                  f"{d['expected_ratio']:.3f}. Signature: `{d['signature']}`"
                  + ("" if d.get("with_source", True) else ". No source text: only loops are counted") + ".", "",
                  "| system | " + " | ".join(FLAGS) + f" | {ANY} | Δ {ANY} |", "|---|" + "---:|" * (len(FLAGS) + 2)]
        b = d["systems"].get(base)
        for s, row in d["systems"].items():
            n = row["lines"] or 1
            cells = ["n/a" if row[f] is None else f"{row[f]} ({100 * row[f] / n:.1f}%)" for f in (*FLAGS, ANY)]
            delta = "" if s == base or b is None or row[ANY] is None else f"{row[ANY] - b[ANY]:+d}"
            lines.append(f"| {s} | " + " | ".join(cells) + f" | {delta} |")
        lines.append("")
    return lines


CONSTRAINT_COUNTS = ("mode", "lines", "lines_with_mwes", "constrained_lines", "accepted", "rejected", "threshold")


def constraint_counts(report: dict) -> dict:
    """The counts of one translate stage's constraints.json that results report (a forced mode has no
    judgement: nothing rejected, no threshold)."""
    return {k: report.get(k) for k in CONSTRAINT_COUNTS}


def format_constraint_section(results: dict) -> list[str]:
    """Per system with constraints and per test: the lines constrained, accepted and rejected."""
    rows = [(s, t, c) for s, tests in (results.get("constraints") or {}).items() for t, c in tests.items()]
    if not rows:
        return []
    lines = ["## Constrained decoding: lines constrained, accepted and rejected", "",
             "Judged constraints decode a line with its MWEs' candidates only where an MWE is identified in context "
             "and the first pass lacks every candidate (constrained), and keep the output only within the tuned "
             "score drop (accepted); forced constraints constrain every line with a table MWE and reject none.", "",
             "| system | test | mode | lines | with MWEs (judged) | constrained | accepted | rejected | threshold |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for s, t, c in rows:
        cell = ["" if c.get(k) is None else (f"{c[k]:.3f}" if isinstance(c[k], float) else str(c[k]))
                for k in CONSTRAINT_COUNTS]
        lines.append(f"| {s} | {t} | " + " | ".join(cell) + " |")
    return lines + [""]


def _cell(row: dict, width: int = 1) -> str:
    text = format_score(row["score"], width)
    if row["score"] is None:
        return text   # undefined: no interval, no test
    if row.get("bs_ci95") is not None:
        text += f" ±{row['bs_ci95']:.{width}f}"
    p = row.get("p_value")
    if p is not None and p < ALPHA:
        text += "*"
    return text


def findings(results: dict) -> list[str]:
    """Each system against the baseline on the MWE score and on BLEU of the MWE test sets, as measured; the MWE
    columns of a test the baseline cannot translate are left out (`untranslatable_tests`)."""
    base = results["baseline"]
    out = []
    bad = untranslatable_tests(results)
    mwe_cols = [c for c in results["columns"]
                if (c["metric"] in FINDING_METRICS or (c["role"] == "mwe" and c["metric"] == "bleu"))
                and _evidence(results, c, bad)]   # a test the baseline cannot translate is no evidence
    for s in results["systems"]:
        if s == base:
            continue
        parts = []
        for c in mwe_cols:
            row, brow = results["scores"][s][c["id"]], results["scores"][base][c["id"]]
            if row["score"] is None or brow["score"] is None:
                continue   # undefined on this test: nothing to compare
            diff = row["score"] - brow["score"]
            p = row.get("p_value")
            verdict = "≥ baseline" if diff >= 0 else "< baseline"
            sig = "" if p is None else (f", p={p:.3f}" + (" significant" if p < ALPHA else " not significant"))
            parts.append(f"{c['label']} {row['score']:.1f} vs {brow['score']:.1f} ({diff:+.1f}{sig}): {verdict}")
        if parts:
            out.append(f"- **{s}**: " + "; ".join(parts))
    return out


def _seed_columns(results: dict) -> list[dict]:
    """The columns the seed section reads (`SEED_METRICS`): BLEU and chrF of every test (an MWE method must not
    cost general quality), the findings' MWE scores and LiTER, where every system has a score."""
    return [c for c in results["columns"] if c["metric"] in SEED_METRICS
            and all(results["scores"][s][c["id"]]["score"] is not None for s in results["systems"])]


def same_seed_baseline(results: dict, system: str) -> str | None:
    """The system ``system`` is tested against in the seed section: the baseline trained with its seed
    (results.json ``seed_baselines``; None when the baseline's group has no such seed); the baseline itself in
    results written before the pairing was recorded."""
    pairs = results.get("seed_baselines")
    if pairs is None:
        return results["baseline"]
    return pairs.get(system, results["baseline"])


def _same_seed_test(results: dict, system: str, column: str) -> tuple[str | None, float | None, float | None]:
    """(same-seed baseline, system - that baseline, p-value of the paired bootstrap against it) in ``column``;
    the p-value is None where the score stage did not test the pair (results of an mwemt before same-seed
    tests: `mwemt.experiments.stages` writes ``seed_p_value`` only for grids with seed groups)."""
    baseline = same_seed_baseline(results, system)
    if baseline is None:
        return None, None, None
    row = results["scores"][system][column]
    diff = row["score"] - results["scores"][baseline][column]["score"]
    if baseline == results["baseline"]:
        return baseline, diff, row.get("p_value")
    return baseline, diff, row.get("seed_p_value") if row.get("seed_baseline") == baseline else None


def seed_summary(results: dict) -> dict:
    """Each seed group's mean and spread (max - min over its seeds) per column, the baseline group's spread (the
    seed spread every difference is judged against: how far the baseline moves by its seed alone), and each
    group's verdict against the baseline's group. A difference of the means is called real only when it is
    larger than the baseline's seed spread AND every seed of the group differs at p < ALPHA, in that direction,
    from the baseline trained with the same seed (`same_seed_baseline`; the paired bootstrap of the table, with
    that baseline first). A seed without a same-seed baseline, or without its p-value, is not significant.
    ``separated``: ``above`` when every seed of the group scores higher than every seed of the baseline,
    ``below`` when lower, else None. ``evidence``: False for an MWE column of a test the baseline cannot
    translate (`untranslatable_tests`), whose differences are never called real. BLEU columns add ``bleu``: the
    seeds' mean log difference from their same-seed baselines, its brevity-penalty part and whether it is
    mostly brevity penalty. Empty when the grid has no baseline group."""
    groups = results.get("seed_groups") or {}
    base = next((g for g, m in groups.items() if results["baseline"] in m), None)
    if base is None:
        return {}
    cols = _seed_columns(results)
    bad = untranslatable_tests(results)
    stats = {}
    for g, members in groups.items():
        stats[g] = {}
        for c in cols:
            vals = [results["scores"][m][c["id"]]["score"] for m in members]
            stats[g][c["id"]] = {"mean": sum(vals) / len(vals), "spread": max(vals) - min(vals), "seeds": vals}
    spread = {c["id"]: stats[base][c["id"]]["spread"] for c in cols}
    largest = {c["id"]: max(stats[g][c["id"]]["spread"] for g in groups) for c in cols}
    verdicts = {}
    for g, members in groups.items():
        if g == base:
            continue
        verdicts[g] = {}
        for c in cols:
            diff = stats[g][c["id"]]["mean"] - stats[base][c["id"]]["mean"]
            tests = [_same_seed_test(results, m, c["id"]) for m in members]
            ps = [p for _, _, p in tests]
            significant = all(p is not None and p < ALPHA for p in ps) and all(
                d is not None and d * diff > 0 for _, d, _ in tests)
            beyond = abs(diff) > spread[c["id"]]
            evidence = _evidence(results, c, bad)
            mine, theirs = stats[g][c["id"]]["seeds"], stats[base][c["id"]]["seeds"]
            separated = "above" if min(mine) > max(theirs) else "below" if max(mine) < min(theirs) else None
            verdict = {"diff": diff, "baselines": [b for b, _, _ in tests],
                       "seed_diffs": [d for _, d, _ in tests], "p_values": ps,
                       "significant_every_seed": significant, "beyond_spread": beyond, "separated": separated,
                       "evidence": evidence, "real": significant and beyond and evidence}
            if c["metric"] == "bleu":
                verdict["bleu"] = _seed_bleu_split(results, members, [b for b, _, _ in tests], c["test"])
            verdicts[g][c["id"]] = verdict
    return {"baseline_group": base, "columns": [c["id"] for c in cols], "groups": stats, "spread": spread,
            "largest_spread": largest, "verdicts": verdicts}


def _seed_bleu_split(results: dict, members: list[str], baselines: list[str | None], test: str) -> dict | None:
    """The mean over a group's seeds of the log BLEU difference from each seed's same-seed baseline, and of its
    brevity-penalty part; None when a seed has no baseline or no BLEU parts."""
    splits = []
    for m, b in zip(members, baselines):
        mine, theirs = bleu_parts(results, m, test), (bleu_parts(results, b, test) if b else None)
        split = bleu_difference(mine, theirs) if mine is not None and theirs is not None else None
        if split is None:
            return None
        splits.append(split)
    log_ratio = sum(x["log_ratio"] for x in splits) / len(splits)
    bp_part = sum(x["bp_part"] for x in splits) / len(splits)
    share = bp_part / log_ratio if abs(log_ratio) > 1e-12 else None
    return {"log_ratio": log_ratio, "bp_part": bp_part, "bp_share": share,
            "mostly_brevity": share is not None and share > 0.5,
            "precisions_fall_every_seed": all(x["precisions_fall"] for x in splits)}


def _not_real(v: dict) -> str:
    """Why a difference is not called real."""
    if not v.get("evidence", True):
        would = [("beyond the baseline's spread" if v["beyond_spread"] else "within the baseline's spread"),
                 ("significant on every seed" if v["significant_every_seed"] else "not significant on every seed")]
        if v.get("separated"):
            would.append(f"every seed {v['separated']} every baseline seed")
        return f" ({DAGGER} not evidence, the baseline cannot translate this test; " + ", ".join(would) + ")"
    if not v["beyond_spread"]:
        return " (within the baseline's spread)"
    if any(b is None for b in v["baselines"]):
        return " (a seed without a same-seed baseline)"
    if any(p is None for p in v["p_values"]):
        return " (no same-seed p-value)"
    return " (not significant on every seed)"


def _brevity(v: dict) -> str:
    """The note on a BLEU difference that is mostly brevity penalty."""
    split = v.get("bleu")
    if not split or not split["mostly_brevity"] or abs(v["diff"]) < 0.05:   # a difference that reads +0.0: no note
        return ""
    fall = ", every precision falls on every seed" if split["precisions_fall_every_seed"] else ""
    return f" [mostly brevity penalty: BP part {_share(split['bp_share'])} of the log difference{fall}]"


def format_seed_section(results: dict, width: int = 1) -> list[str]:
    summary = seed_summary(results)
    if not summary:
        return []
    marked = _labels(results)
    labels = {c["id"]: marked[c["id"]] + (" (lower is better)" if c["metric"] == "liter" else "")
              for c in results["columns"]}
    cols = summary["columns"]
    base = summary["baseline_group"]
    lines = ["## Seeds: spread and the differences that are real", "",
             "Each cell: the mean over the group's seeds (max - min over them). A difference to the baseline's group "
             "is judged against the **baseline's seed spread** (max - min over the baseline's seeds: how far the "
             "baseline moves by its seed alone) and called **real** only when it is larger than that spread and "
             f"every seed of the group differs at p < {ALPHA} from the baseline trained with the same seed (paired "
             "bootstrap, in the same direction). **Every seed above (below)**: every seed of the group scores higher "
             f"(lower) than every seed of the baseline. {DAGGER}: a test the baseline cannot translate, whose MWE "
             "differences are not evidence.", "",
             "| group | seeds | " + " | ".join(labels[c] for c in cols) + " |",
             "|---|---|" + "---:|" * len(cols)]
    for g, members in results["seed_groups"].items():
        cells = [f"{summary['groups'][g][c]['mean']:.{width}f} ({summary['groups'][g][c]['spread']:.{width}f})"
                 for c in cols]
        lines.append(f"| {g} | {', '.join(members)} | " + " | ".join(cells) + " |")
    lines.append(f"| **baseline seed spread** ({base}) | | "
                 + " | ".join(f"{summary['spread'][c]:.{width}f}" for c in cols) + " |")
    lines.append("")
    for g, v in summary["verdicts"].items():
        real = [f"{labels[c]} {v[c]['diff']:+.{width}f}{_brevity(v[c])}" for c in cols if v[c]["real"]]
        pairs = ", ".join(f"{m} vs {b or 'no baseline of its seed'}"
                          for m, b in zip(results["seed_groups"][g], v[cols[0]]["baselines"])) \
            if cols and results.get("seed_baselines") is not None else ""   # the pairing, where results record it
        text = (f"- **{g}** vs {base}" + (f" ({pairs})" if pairs else "") + ": " +
                ("real differences: " + ", ".join(real) if real else "no real difference"))
        for side in ("above", "below"):
            sep = [labels[c] for c in cols if v[c]["separated"] == side and v[c]["evidence"]]
            if sep:
                text += f"; every seed {side} every baseline seed: " + ", ".join(sep)
        rest = [f"{labels[c]} {v[c]['diff']:+.{width}f}" + _not_real(v[c]) + _brevity(v[c])
                for c in cols if not v[c]["real"]]
        lines.append(text + ("; " + ", ".join(rest) if rest else ""))
    lines.append("")
    return lines


def format_markdown(results: dict, width: int = 1) -> str:
    cols = results["columns"]
    labels = _labels(results)
    header = ["system", *[labels[c["id"]] for c in cols]]
    lines = [f"# Results: {results['name']}", "",
             "| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * len(cols)) + "|"]
    for s in results["systems"]:
        name = f"{s} (baseline)" if s == results["baseline"] and s != "baseline" else s
        lines.append("| " + " | ".join([name, *[_cell(results["scores"][s][c["id"]], width) for c in cols]]) + " |")
    lines.append("")
    lines += [undefined_note(c["label"], c["undefined"]) for c in cols if c.get("undefined")]
    if any(c.get("undefined") for c in cols):
        lines.append("")
    bs = results.get("paired_bootstrap")
    if bs:
        lines.append(f"Scores on a 0-100 scale, ± the 95% confidence half-width of a paired bootstrap "
                     f"({bs['resamples']} resamples, seed {bs['seed']}); * = differs from the baseline "
                     f"({results['baseline']}) at p < {ALPHA}.")
    else:
        lines.append("Scores on a 0-100 scale.")
    lines.append("")
    lines += format_untranslatable_section(results)
    f = findings(results)
    bad = untranslatable_tests(results)
    if f or bad:
        lines += ["## MWE-aware systems against the baseline (MWE score, BLEU on MWE test sets)", "", *f]
        if bad:
            lines.append(f"- Not evidence, left out ({DAGGER}, the baseline cannot translate them): the MWE columns "
                         f"of {', '.join(bad)}.")
        lines.append("")
    lines += format_bleu_section(results, width)
    lines += format_degenerate_section(results)
    lines += format_seed_section(results, width)
    breakdowns = results.get("compositionality_breakdown") or {}
    if breakdowns:
        lines += ["## MWE score by predicted compositionality (tertiles)", ""]
        for test, b in breakdowns.items():
            lines += format_breakdown(test, b, results["baseline"], width)
    lines += format_constraint_section(results)
    reports = results.get("reports") or {}
    if reports:
        lines += ["## Comparison reports (open in a browser)", "",
                  *[f"- {test}: [{page}]({page}) (also report.md, report.json)" for test, page in reports.items()], ""]
    lines += ["## Signatures", ""]
    for c in cols:
        lines.append(f"- {c['label']} ({c['n_sentences']} sentences): `{c['signature']}`")
    meta = results.get("meta") or {}
    if meta:
        lines += ["", "## Run", ""]
        for k, v in meta.items():
            lines.append(f"- {k}: {v}")
    return "\n".join(lines) + "\n"


CSV_FIELDS = ("test", "role", "metric", "system", "score", "bs_mean", "bs_ci95", "p_value", "n_sentences",
              "signature")


def format_csv(results: dict) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for c in results["columns"]:
        for s in results["systems"]:
            row = results["scores"][s][c["id"]]
            undefined = row["score"] is None   # n/a in every number: no score, so no interval or test either
            w.writerow({"test": c["test"], "role": c["role"], "metric": c["metric"], "system": s,
                        "score": format_score(row["score"], 4),
                        **{k: UNDEFINED if undefined else "" if row.get(k) is None else f"{row[k]:.4f}"
                           for k in ("bs_mean", "bs_ci95", "p_value")},
                        "n_sentences": c["n_sentences"], "signature": c["signature"]})
    return buf.getvalue()


def plot_results(results: dict, path: str | Path) -> None:
    """One panel per (test set, metric), one bar per system with its 95% CI; written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = results["columns"]
    systems = results["systems"]
    n = len(cols)
    ncols = min(n, 4)
    nrows = math.ceil(n / ncols) if n else 1
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 * ncols, 2.9 * nrows), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    for k, c in enumerate(cols):
        ax = axes[k // ncols][k % ncols]
        vals = [results["scores"][s][c["id"]]["score"] for s in systems]
        errs = [results["scores"][s][c["id"]].get("bs_ci95") or 0.0 for s in systems]
        shown = [i for i, v in enumerate(vals) if v is not None]   # an undefined score gets no bar
        ax.bar(shown, [vals[i] for i in shown], yerr=[errs[i] for i in shown], capsize=3,
               color=[colors[i % len(colors)] for i in shown])
        for i, s in enumerate(systems):
            p = results["scores"][s][c["id"]].get("p_value")
            if vals[i] is None:
                ax.text(i, 0, UNDEFINED, ha="center", va="bottom", fontsize=8)
            elif p is not None and p < ALPHA:
                ax.text(i, vals[i] + errs[i], "*", ha="center", va="bottom")
        ax.set_xlim(-0.6, len(systems) - 0.4)
        if not shown:
            ax.set_ylim(0, 100)   # nothing defined: the scale the other panels share
        ax.set_xticks(range(len(systems)))
        ax.set_xticklabels(systems, rotation=35, ha="right", fontsize=8)
        ax.set_title(c["label"], fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    for k in range(n, nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    save_figure(fig, path, f"{results['name']}: scores per system (0-100, 95% CI; * p<{ALPHA} vs "
                           f"{results['baseline']})")


def save_figure(fig, path: str | Path, title: str, rect: tuple[float, float, float, float] | None = None) -> None:
    """Title, lay out (inside ``rect`` of the figure, e.g. to leave room for a figure legend) and write a
    matplotlib figure as PNG, atomically; the figure is closed."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=rect)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)


def write_results(out_dir: str | Path, results: dict, *, plot: bool = True) -> dict[str, Path]:
    out = Path(out_dir)
    paths = {"json": out / "results.json", "csv": out / "results.csv", "md": out / "results.md"}
    write_json(paths["json"], results)
    write_text(paths["csv"], format_csv(results))
    write_text(paths["md"], format_markdown(results))
    if plot:
        paths["png"] = out / "results.png"
        plot_results(results, paths["png"])
    return paths
