#!/usr/bin/env python
"""The data-size ladder: scores of the same systems on the same test sets at several training sizes.

The paper's claim is about low resource, so the question is whether an MWE method's gain over the
baseline grows or shrinks with the training data. Each run of the ladder is an `mwemt run` of the
same config at another `data.split.train_size` (training samples of one seed are nested, and the
test sets are the same files: docs/experiments.md has the recipe). This script reads the runs'
results.json and draws one panel per metric: score against training pairs (log scale), one line per
system, error bars the 95% paired-bootstrap half-width, `*` where a system differs from its run's
baseline at p < 0.05. It also writes the numbers as a Markdown table beside the plot.

    python scripts/ladder_plot.py runs/ladder-25000 runs/ladder-50000 runs/cpu-science \\
        --metric tatoeba-mwe/mwe --metric tatoeba-mwe/bleu --metric tatoeba/bleu -o results/cpu-science/ladder.png

A run is a run directory (or a results.json); its training size comes from the manifest.json next to
it, or is given as SIZE=PATH (for a published results folder, which has no manifest).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mwemt.fileio import write_text

ALPHA = 0.05


def read_run(spec: str) -> tuple[int, dict]:
    """(training pairs, results) of one ``[SIZE=]PATH`` argument."""
    size = None
    if "=" in spec and spec.split("=", 1)[0].isdigit():
        size_text, spec = spec.split("=", 1)
        size = int(size_text)
    path = Path(spec)
    results_path = path / "results.json" if path.is_dir() else path
    if not results_path.is_file():
        raise SystemExit(f"ladder_plot: {results_path}: no results.json (expected a run directory or its "
                         "results.json)")
    results = json.loads(results_path.read_text(encoding="utf-8"))
    if size is None:
        size = training_size(results_path.parent / "manifest.json")
    return size, results


def training_size(manifest_path: Path) -> int:
    """The training pairs a run sampled (data.split.train_size or data.train_size) from its manifest."""
    if not manifest_path.is_file():
        raise SystemExit(f"ladder_plot: {manifest_path} not found: give the run as SIZE=PATH")
    data = json.loads(manifest_path.read_text(encoding="utf-8"))["config"]["data"]
    size = (data.get("split") or {}).get("train_size") or data.get("train_size")
    if not size:
        raise SystemExit(f"ladder_plot: {manifest_path}: the run trained on all pairs (no train_size): "
                         "give the run as SIZE=PATH")
    return int(size)


def ladder_rows(runs: list[tuple[int, dict]], metrics: list[str], systems: list[str] | None) -> list[dict]:
    """One row per (metric, system, size) with score, CI half-width, p-value and the run's baseline."""
    rows = []
    for size, results in sorted(runs, key=lambda r: r[0]):
        names = systems or results["systems"]
        for metric in metrics:
            if not any(c["id"] == metric for c in results["columns"]):
                known = ", ".join(c["id"] for c in results["columns"])
                raise SystemExit(f"ladder_plot: metric {metric!r} is not in the run of {size} pairs (it has {known})")
            for s in names:
                if s not in results["scores"]:
                    raise SystemExit(f"ladder_plot: system {s!r} is not in the run of {size} pairs "
                                     f"(it has {', '.join(results['systems'])})")
                row = results["scores"][s][metric]
                rows.append({"metric": metric, "system": s, "size": size, "score": row["score"],
                             "ci": row.get("bs_ci95"), "p": row.get("p_value"), "baseline": results["baseline"]})
    return rows


def markdown(rows: list[dict], metrics: list[str]) -> str:
    sizes = sorted({r["size"] for r in rows})
    lines = ["| metric | system | " + " | ".join(f"{n:,} pairs" for n in sizes) + " |",
             "|---|---|" + "---:|" * len(sizes)]
    for metric in metrics:
        for s in dict.fromkeys(r["system"] for r in rows if r["metric"] == metric):
            cells = []
            for n in sizes:
                r = next((r for r in rows if r["metric"] == metric and r["system"] == s and r["size"] == n), None)
                if r is None:
                    cells.append("")
                    continue
                if r["score"] is None:   # undefined (results.json null): nothing in the test counts towards it
                    cells.append("n/a")
                    continue
                star = "*" if r["p"] is not None and r["p"] < ALPHA else ""
                cells.append(f"{r['score']:.1f}" + (f" ±{r['ci']:.1f}" if r["ci"] is not None else "") + star)
            lines.append(f"| {metric} | {s} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\n± = 95% paired-bootstrap half-width; * = differs from the run's baseline at p < 0.05.\n"


def seed_markdown(runs: list[tuple[int, dict]], metrics: list[str]) -> str:
    """For runs whose config groups systems by seed (results.json ``seed_groups``): each group's mean over its
    seeds with max - min, and each method's difference to the baseline seed by seed (the k-th seed of the group
    against the baseline's k-th, so the same training seed). Empty when no run has seeds."""
    runs = sorted(runs, key=lambda r: r[0])
    seed_groups = [res.get("seed_groups") or {} for _, res in runs]
    if not any(len(g) > 1 for groups in seed_groups for g in groups.values()):
        return ""
    baseline = runs[0][1]["baseline"]
    lines = ["## Seeds", "",
             "Each cell: the mean over the group's seeds (max - min over them); Δ: the group's seeds minus the "
             "baseline's seeds of the same training seed.", "",
             "| metric | group | " + " | ".join(f"{n:,} pairs" for n, _ in runs) + " |",
             "|---|---|" + "---:|" * len(runs)]
    for metric in metrics:
        for group in dict.fromkeys(g for groups in seed_groups for g in groups):
            means, deltas = [], []
            for (_, res), groups in zip(runs, seed_groups):
                score = {s: v[metric]["score"] for s, v in res["scores"].items() if v[metric]["score"] is not None}
                members = [m for m in groups.get(group, []) if m in score]
                if not members:
                    means.append("")
                    deltas.append("")
                    continue
                vals = [score[m] for m in members]
                means.append(f"{sum(vals) / len(vals):.1f} ({max(vals) - min(vals):.1f})")
                base = groups.get(res["baseline"], [res["baseline"]])
                deltas.append(" / ".join(f"{score[m] - score[b]:+.1f}" for m, b in zip(members, base) if b in score))
            lines.append(f"| {metric} | {group} | " + " | ".join(means) + " |")
            if group != baseline:
                lines.append(f"| {metric} | {group} Δ | " + " | ".join(deltas) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], metrics: list[str], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mwemt.experiments.results import save_figure

    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.4), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    for ax, metric in zip(axes[0], metrics):
        systems = list(dict.fromkeys(r["system"] for r in rows if r["metric"] == metric))
        for k, s in enumerate(systems):
            pts = sorted((r for r in rows if r["metric"] == metric and r["system"] == s and r["score"] is not None),
                         key=lambda r: r["size"])
            xs, ys = [r["size"] for r in pts], [r["score"] for r in pts]
            ax.errorbar(xs, ys, yerr=[r["ci"] or 0.0 for r in pts], marker="o", capsize=3, label=s,
                        color=colors[k % len(colors)])
            for r in pts:
                if r["p"] is not None and r["p"] < ALPHA:
                    ax.annotate("*", (r["size"], r["score"]), textcoords="offset points", xytext=(5, 2))
        ax.set_xscale("log")
        sizes = sorted({r["size"] for r in rows})
        ax.set_xticks(sizes)
        ax.set_xticklabels([f"{n // 1000}k" if n >= 1000 else str(n) for n in sizes])
        ax.minorticks_off()
        ax.set_xlabel("training pairs")
        ax.set_title(metric, fontsize=10)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=8)
    save_figure(fig, out, title)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="example:\n  python scripts/ladder_plot.py runs/ladder-25000 runs/ladder-50000 "
                                        "runs/cpu-science --metric tatoeba-mwe/mwe -o ladder.png")
    ap.add_argument("runs", nargs="+", metavar="[SIZE=]RUN", help="run directories or results.json files")
    ap.add_argument("--metric", action="append", required=True, metavar="TEST/METRIC",
                    help="a column of results.json, e.g. tatoeba-mwe/mwe (repeatable: one panel each)")
    ap.add_argument("--systems", help="comma-separated systems to draw (default: every system of each run)")
    ap.add_argument("-o", "--output", required=True, help="the plot (PNG); the table goes beside it as .md")
    ap.add_argument("--title", default="Data-size ladder (same test sets, nested training samples)")
    args = ap.parse_args(argv)
    runs = [read_run(spec) for spec in args.runs]
    if len({n for n, _ in runs}) != len(runs):
        raise SystemExit("ladder_plot: two runs have the same training size")
    systems = [s.strip() for s in args.systems.split(",")] if args.systems else None
    rows = ladder_rows(runs, args.metric, systems)
    out = Path(args.output)
    plot(rows, args.metric, out, args.title)
    table = out.with_suffix(".md")
    seeds = seed_markdown(runs, args.metric)
    write_text(table, markdown(rows, args.metric) + ("\n" + seeds if seeds else ""))   # atomic, like the plot
    print(f"ladder_plot: {len(runs)} runs, {len(args.metric)} metric(s): wrote {out} and {table}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
