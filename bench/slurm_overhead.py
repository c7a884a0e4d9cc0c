"""Overhead of Slurm dispatch: the demo grid's wall time as Slurm jobs / with local stage workers, side by side.

    python bench/slurm_overhead.py [--rounds 1] [--small] [--keep DIR]

Needs a Slurm cluster on this machine (`sudo scripts/slurm-local.sh up`). Every measurement is a whole
`mwemt demo --jobs 2 -q --no-plot` from an empty run directory, once with the local executor and once
with `executor=slurm` (one core and 2 GB per job, no GPU: the same two stages at once on the same cores
as the local --jobs 2). Runs are interleaved A B B A so a change of the machine's load falls on both
sides. Prints the ratio of the summed wall times (slurm / local), the overhead per stage that ran and
whether both executors gave identical scores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))   # bench.parallel_run


def uptime() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


SLURM = ["executor=slurm", "slurm.cpus=1", "slurm.mem=2G", "slurm.train.cpus=1", "slurm.train.mem=2G",
         "slurm.train.gpus=0"]


def demo(run_dir: Path, executor: str, small: bool) -> float:
    """bench/parallel_run.py's timed `mwemt demo` (2 jobs), on Slurm with the small-node settings above."""
    from bench.parallel_run import demo as timed_demo

    return timed_demo(run_dir, 2, small, SLURM if executor == "slurm" else (), keep_stderr=True)


def stages_ran(run_dir: Path) -> int:
    return sum(s["status"] == "ran" for s in json.loads((run_dir / "manifest.json").read_text())["stages"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=1, help="pairs of runs, interleaved A B B A")
    ap.add_argument("--small", action="store_true", help="`mwemt demo --small` instead of the full demo")
    ap.add_argument("--keep", help="keep the run directories here (default: a temporary directory, removed)")
    args = ap.parse_args()
    if shutil.which("sbatch") is None:
        sys.exit("no Slurm here: start a local cluster with `sudo scripts/slurm-local.sh up`")

    from mwemt.nmt.cpu import describe

    print(f"{describe()}; cores available: {len(os.sched_getaffinity(0))}")
    print(f"before: {uptime()}")
    base = Path(args.keep or tempfile.mkdtemp(prefix="mwemt-bench-slurm-"))
    order: list[str] = []
    for r in range(args.rounds):
        order += ["local", "slurm"] if r % 2 == 0 else ["slurm", "local"]
    times: dict[str, list[float]] = {"local": [], "slurm": []}
    scores: dict[str, list] = {"local": [], "slurm": []}
    ran: dict[str, int] = {}
    for k, executor in enumerate(order):
        run_dir = base / f"run{k}-{executor}"
        wall = demo(run_dir, executor, args.small)
        times[executor].append(wall)
        scores[executor].append(json.loads((run_dir / "results.json").read_text())["scores"])
        ran[executor] = stages_ran(run_dir)
        print(f"  run {k + 1}/{len(order)}: {executor:<5}  {wall:7.1f} s  {ran[executor]} stages   "
              f"({uptime().split('load average')[-1].strip()})", flush=True)
        if executor == "slurm":
            jobs = re.findall(r"submitted(?: again)?: job (\d+)", (run_dir / "stderr.txt").read_text())
            print(f"           {len(jobs)} Slurm jobs")
    print(f"after: {uptime()}")
    identical = all(s == scores["local"][0] for s in scores["local"] + scores["slurm"])
    t_local, t_slurm = sum(times["local"]), sum(times["slurm"])
    n = len(times["local"])
    print(f"demo{' --small' if args.small else ''} grid wall time, {n} run(s) each (mean): "
          f"local {t_local / n:.1f} s, slurm {t_slurm / n:.1f} s")
    print(f"ratio slurm / local = {t_slurm / t_local:.2f}; "
          f"overhead per stage that ran: {(t_slurm - t_local) / n / max(1, ran['slurm']):.2f} s")
    print(f"scores identical across all runs: {'yes' if identical else 'NO'}")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
