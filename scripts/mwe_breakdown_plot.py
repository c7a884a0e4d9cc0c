#!/usr/bin/env python
"""One figure of where each MWE method gains or loses against the baseline, from a comparison report.

The numbers are the comparison report's (`mwemt compare`, or the report `mwemt run` writes per test
set in RUN/report/TEST/report.json): the aggregate scores with their paired bootstrap, and each
system's MWE hit rate by bucket (frequency of the MWE in the training data, contiguous vs gapped,
covered vs not covered by the augmentation dictionary). This script computes nothing new; it draws
them side by side for a results folder: panel 1 the difference from the baseline on every aggregate
metric, then one panel per bucket dimension with the difference in hit rate (percentage points) per
bucket; `*` marks p < 0.05 (paired bootstrap), bucket labels carry their MWE counts.

    python scripts/mwe_breakdown_plot.py runs/cpu-science/report/tatoeba-mwe/report.json \\
        -o results/cpu-science/mwe-breakdown.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ALPHA = 0.05
DIMENSIONS = ("frequency", "contiguity", "dictionary")


def read_report(path: Path) -> dict:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"mwe_breakdown_plot: {path}: {exc}") from None
    for key in ("systems", "baseline", "aggregate", "mwe"):
        if key not in report:
            raise SystemExit(f"mwe_breakdown_plot: {path}: no {key!r} (expected a report.json of `mwemt compare`)")
    return report


def aggregate_deltas(report: dict) -> list[tuple[str, str, float, float | None]]:
    """(metric name, system, difference from the baseline, p-value) for every non-baseline system."""
    out = []
    for m in report["aggregate"]:
        for s in report["systems"]:
            if s == report["baseline"]:
                continue
            row = m["systems"][s]
            out.append((m["name"], s, row["delta"], row.get("p_value")))
    return out


def bucket_deltas(report: dict, dimension: str) -> tuple[str, list[str], dict[str, list[tuple[float, float | None]]]] | None:
    """(title, bucket labels with counts, system -> [(difference in hit rate, p-value)] per bucket)."""
    dim = next((b for b in report["mwe"]["buckets"] if b["key"] == dimension), None)
    if dim is None:
        return None
    labels = [f"{b['label']}\n({b['mwes']})" for b in dim["buckets"]]
    series = {s: [(b["systems"][s]["delta"], b["systems"][s].get("p_value")) for b in dim["buckets"]]
              for s in report["systems"] if s != report["baseline"]}
    return dim["title"], labels, series


def plot(report: dict, out: Path, title: str) -> list[str]:
    """Draw the figure; returns the dimensions that were missing from the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mwemt.experiments.results import save_figure

    panels = [(d, bucket_deltas(report, d)) for d in DIMENSIONS]
    missing = [d for d, p in panels if p is None]
    panels = [p for _, p in panels if p is not None]
    fig, axes = plt.subplots(1, 1 + len(panels), figsize=(4.4 * (1 + len(panels)), 4.2), squeeze=False)
    systems = [s for s in report["systems"] if s != report["baseline"]]
    colors = plt.get_cmap("tab10").colors
    width = 0.8 / max(len(systems), 1)

    def bars(ax, groups: list[str], values: dict[str, list[tuple[float, float | None]]], ylabel: str) -> None:
        for k, s in enumerate(systems):
            xs = [g + (k - (len(systems) - 1) / 2) * width for g in range(len(groups))]
            ys = [v if v is not None else 0.0 for v, _ in values[s]]
            ax.bar(xs, ys, width, label=s, color=colors[(k + 1) % len(colors)])
            for x, (v, p) in zip(xs, values[s]):
                if v is not None and p is not None and p < ALPHA:
                    ax.text(x, v, "*", ha="center", va="bottom" if v >= 0 else "top")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8, rotation=20 if max(map(len, groups), default=0) > 8 else 0)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.grid(axis="y", alpha=0.3)

    agg = aggregate_deltas(report)
    metrics = list(dict.fromkeys(m for m, *_ in agg))
    bars(axes[0][0], metrics, {s: [next((d, p) for m2, s2, d, p in agg if m2 == m and s2 == s) for m in metrics]
                               for s in systems}, f"difference from {report['baseline']}")
    axes[0][0].set_title("Aggregate scores", fontsize=10)
    for ax, (dim_title, labels, series) in zip(axes[0][1:], panels):
        bars(ax, labels, series, "difference in MWE hit rate (points)")
        ax.set_title(dim_title, fontsize=10)
    handles, labels = axes[0][0].get_legend_handles_labels()   # below the panels: it hides no bar
    fig.legend(handles, labels, loc="lower center", ncol=len(systems), fontsize=8, frameon=False)
    save_figure(fig, out, title, rect=(0, 0.07, 1, 1))
    return missing


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="example:\n  python scripts/mwe_breakdown_plot.py "
                                        "runs/cpu-science/report/tatoeba-mwe/report.json -o mwe-breakdown.png")
    ap.add_argument("report", help="report.json of `mwemt compare` (RUN/report/TEST/report.json)")
    ap.add_argument("-o", "--output", required=True, help="the figure (PNG)")
    ap.add_argument("--title", default=None, help="figure title (default: from the report)")
    args = ap.parse_args(argv)
    report = read_report(Path(args.report))
    title = args.title or (f"{report['n_sentences']} sentences, {report['mwe']['n_mwes']} MWEs: each system "
                           f"against {report['baseline']} (* p < {ALPHA}, paired bootstrap)")
    missing = plot(report, Path(args.output), title)
    note = f" (not in the report: {', '.join(missing)})" if missing else ""
    print(f"mwe_breakdown_plot: wrote {args.output}{note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
