"""The training of every model of a run: how long it trained, where its validation loss was best, whether early
stopping ended it (converged) or the budget did, and the validation-loss curves (the plateau).

    python scripts/training_curves.py runs/cpu-science-2 -o results/cpu-science-2

Reads the run's manifest (the train stages of its last invocation) and each stage's training.json; writes
OUT/training.md and OUT/training.png (atomically). Exit 2 when the run has no finished train stage.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mwemt.errors import InputError
from mwemt.experiments.results import save_figure
from mwemt.fileio import write_text


def train_stages(run_dir: Path) -> dict[str, dict]:
    """system -> its training.json, for the train stages of the run's manifest that finished."""
    manifest = run_dir / "manifest.json"
    try:
        stages = json.loads(manifest.read_text(encoding="utf-8"))["stages"]
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{manifest}: not a run manifest ({exc})") from None
    out = {}
    for st in stages:
        if st.get("stage") != "train" or st.get("status") not in ("ran", "cached"):
            continue
        record = run_dir / st["directory"] / "training.json"
        if record.is_file():
            out[st["system"]] = json.loads(record.read_text(encoding="utf-8"))
    return out


def table(models: dict[str, dict]) -> list[str]:
    lines = ["| model | epochs | updates | best epoch | best valid loss | stopped by | wall (min) |",
             "|---|---:|---:|---:|---:|---|---:|"]
    for name, t in models.items():
        last = t["validations"][-1] if t["validations"] else {}
        best = t.get("best") or {}
        stop = "early stopping (converged)" if t.get("converged") else (t.get("stop_reason") or "?")
        lines.append(f"| {name} | {last.get('epoch', 0)} | {last.get('updates', 0)} | {best.get('epoch', '')} | "
                     f"{best.get('valid_loss', float('nan')):.3f} | {stop} | {t.get('wall_seconds', 0) / 60:.1f} |")
    return lines


def plot(models: dict[str, dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, t in models.items():
        ep = [v["epoch"] for v in t["validations"] if v.get("valid_loss") is not None]
        vl = [v["valid_loss"] for v in t["validations"] if v.get("valid_loss") is not None]
        style = "--" if "seed" in name else "-"
        for a in (ax, zoom):
            a.plot(ep, vl, style, label=name, linewidth=1)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation loss (label-smoothed, base 2)")
    lows = [min(v["valid_loss"] for v in t["validations"] if v.get("valid_loss") is not None)
            for t in models.values() if t["validations"]]
    if lows:
        zoom.set_ylim(min(lows) - 0.05, min(lows) + 0.6)
    zoom.set_xlabel("epoch")
    zoom.set_title("near the minimum", fontsize=9)
    for a in (ax, zoom):
        a.grid(alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="center right", fontsize=7)
    save_figure(fig, path, title, rect=(0, 0, 0.84, 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("run_dir", type=Path, help="the run directory (RUN/manifest.json)")
    ap.add_argument("-o", "--out", type=Path, required=True, help="directory for training.md and training.png")
    args = ap.parse_args(argv)
    try:
        models = train_stages(args.run_dir)
    except InputError as exc:
        print(f"training_curves: {exc}", file=sys.stderr)
        return 2
    if not models:
        print(f"training_curves: {args.run_dir}/manifest.json lists no finished train stage", file=sys.stderr)
        return 2
    models = dict(sorted(models.items()))
    converged = sum(bool(t.get("converged")) for t in models.values())
    wall = sum(t.get("wall_seconds", 0) for t in models.values()) / 60
    lines = [f"# Training of the models of {args.run_dir.name}", "",
             f"{len(models)} models; {converged} stopped by early stopping (validation loss not better for "
             f"`train.patience` epochs: converged), {len(models) - converged} by their budget. Training wall time, "
             f"summed over models: {wall:.1f} min (two trainings ran side by side). Curves: "
             "[training.png](training.png).", "", *table(models), ""]
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(args.out / "training.md", "\n".join(lines))
    plot(models, args.out / "training.png", f"{args.run_dir.name}: validation loss per epoch")
    print(f"wrote {args.out / 'training.md'} and {args.out / 'training.png'}: {len(models)} models, "
          f"{converged} converged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
