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
from mwemt.fileio import atomic_write, write_text
from mwemt.provenance import portable_path, write_json

ALPHA = 0.05
MWE_METRICS = ("mwe", "mwe-alts", "tesla-comp", "tesla-01", "liter", "term-use")   # MWE columns even on a general test
FINDING_METRICS = ("mwe", "mwe-alts")   # the MWE scores (single reference, with alternatives) of the findings
# the seed section: the findings' MWE scores, LiTER (lower is better), and BLEU and chrF of every test set
SEED_METRICS = ("bleu", "chrf", *FINDING_METRICS, "mwe-p", "liter")   # mwe-p: the precision-aware MWE score


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
                  seed_baselines: dict[str, str | None] | None = None, constraints: dict | None = None) -> dict:
    """One JSON-able dictionary with every score, signature and p-value, and the column order;
    ``reports``: test name -> its comparison report's page, relative to the run directory; ``seed_groups``:
    group name -> the systems that differ only in their training seed (`ExperimentConfig.seed_groups`);
    ``seed_baselines``: each member of a group other than the baseline's -> the baseline's member trained with
    its seed, or None (`ExperimentConfig.seed_baselines`); ``constraints``: system -> test -> the counts of its
    constrained decoding (`constraint_counts`)."""
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
    return {"name": name, "baseline": baseline, "systems": systems, "columns": columns, "scores": scores,
            "paired_bootstrap": bootstrap, "compositionality_breakdown": breakdowns, "reports": dict(reports or {}),
            "seed_groups": {g: list(m) for g, m in (seed_groups or {}).items() if all(x in scores for x in m)},
            "seed_baselines": {s: b for s, b in (seed_baselines or {}).items() if s in scores and b in (None, *scores)},
            "constraints": {s: dict(t) for s, t in (constraints or {}).items() if s in scores},
            "meta": meta or {}}


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
    """Each system against the baseline on the MWE score and on BLEU of the MWE test sets, as measured."""
    base = results["baseline"]
    out = []
    mwe_cols = [c for c in results["columns"]
                if c["metric"] in FINDING_METRICS or (c["role"] == "mwe" and c["metric"] == "bleu")]
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
    """Each seed group's mean and spread (max - min over its seeds) per column, the largest spread of any group
    (the seed spread), and each group's verdict against the baseline's group: a difference of the means is
    called real only when it is larger than the seed spread AND every seed of the group differs at p < ALPHA,
    in that direction, from the baseline trained with the same seed (`same_seed_baseline`; the paired
    bootstrap of the table, with that baseline first). A seed without a same-seed baseline, or without its
    p-value, is not significant. Empty when the grid has no baseline group."""
    groups = results.get("seed_groups") or {}
    base = next((g for g, m in groups.items() if results["baseline"] in m), None)
    if base is None:
        return {}
    cols = _seed_columns(results)
    stats = {}
    for g, members in groups.items():
        stats[g] = {}
        for c in cols:
            vals = [results["scores"][m][c["id"]]["score"] for m in members]
            stats[g][c["id"]] = {"mean": sum(vals) / len(vals), "spread": max(vals) - min(vals), "seeds": vals}
    spread = {c["id"]: max(stats[g][c["id"]]["spread"] for g in groups) for c in cols}
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
            real = significant and abs(diff) > spread[c["id"]]
            verdicts[g][c["id"]] = {"diff": diff, "baselines": [b for b, _, _ in tests],
                                    "seed_diffs": [d for _, d, _ in tests], "p_values": ps,
                                    "significant_every_seed": significant,
                                    "beyond_spread": abs(diff) > spread[c["id"]], "real": real}
    return {"baseline_group": base, "columns": [c["id"] for c in cols], "groups": stats, "spread": spread,
            "verdicts": verdicts}


def _not_real(v: dict) -> str:
    """Why a difference is not called real."""
    if not v["beyond_spread"]:
        return " (within the spread)"
    if any(b is None for b in v["baselines"]):
        return " (a seed without a same-seed baseline)"
    if any(p is None for p in v["p_values"]):
        return " (no same-seed p-value)"
    return " (not significant on every seed)"


def format_seed_section(results: dict, width: int = 1) -> list[str]:
    summary = seed_summary(results)
    if not summary:
        return []
    labels = {c["id"]: c["label"] + (" (lower is better)" if c["metric"] == "liter" else "")
              for c in results["columns"]}
    cols = summary["columns"]
    lines = ["## Seeds: spread and the differences that are real", "",
             "Each cell: the mean over the group's seeds (max - min over them). The seed spread of a column is the "
             "largest max - min of any group. A difference to the baseline's group is called **real** only when it "
             f"is larger than the seed spread and every seed of the group differs at p < {ALPHA} from the baseline "
             "trained with the same seed (paired bootstrap, in the same direction).", "",
             "| group | seeds | " + " | ".join(labels[c] for c in cols) + " |",
             "|---|---|" + "---:|" * len(cols)]
    for g, members in results["seed_groups"].items():
        cells = [f"{summary['groups'][g][c]['mean']:.{width}f} ({summary['groups'][g][c]['spread']:.{width}f})"
                 for c in cols]
        lines.append(f"| {g} | {', '.join(members)} | " + " | ".join(cells) + " |")
    lines.append("| **seed spread** | | " + " | ".join(f"{summary['spread'][c]:.{width}f}" for c in cols) + " |")
    lines.append("")
    for g, v in summary["verdicts"].items():
        real = [f"{labels[c]} {v[c]['diff']:+.{width}f}" for c in cols if v[c]["real"]]
        pairs = ", ".join(f"{m} vs {b or 'no baseline of its seed'}"
                          for m, b in zip(results["seed_groups"][g], v[cols[0]]["baselines"])) \
            if cols and results.get("seed_baselines") is not None else ""   # the pairing, where results record it
        lines.append(f"- **{g}** vs {summary['baseline_group']}" + (f" ({pairs})" if pairs else "") + ": " +
                     ("real differences: " + ", ".join(real) if real else "no real difference") +
                     "; " + ", ".join(f"{labels[c]} {v[c]['diff']:+.{width}f}" + _not_real(v[c])
                                      for c in cols if not v[c]["real"]))
    lines.append("")
    return lines


def format_markdown(results: dict, width: int = 1) -> str:
    cols = results["columns"]
    header = ["system", *[c["label"] for c in cols]]
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
    f = findings(results)
    if f:
        lines += ["## MWE-aware systems against the baseline (MWE score, BLEU on MWE test sets)", "", *f, ""]
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
