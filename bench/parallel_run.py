"""Grid wall time of `mwemt demo --jobs 2` / `--jobs 1`, measured side by side in one run.

    python bench/parallel_run.py [--rounds 2] [--small] [--keep DIR]

Every measurement is a whole `mwemt demo` from an empty run directory (nothing cached), with
``--no-plot -q``. The runs are interleaved A B B A (jobs 1, jobs 2, jobs 2, jobs 1, ...) so that a
change in the machine's load during the benchmark falls on both sides; the ratio is the sum of the
--jobs 2 times over the sum of the --jobs 1 times (target <= 0.6). It also checks that both settings
produce identical scores. Prints the CPU model and flags and the load (`uptime`) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mwemt.nmt.cpu import describe  # noqa: E402


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def demo(run_dir: Path, jobs: int, small: bool, overrides: Sequence[str] = (), *, keep_stderr: bool = False) -> float:
    """Wall seconds of one `mwemt demo` into ``run_dir`` (``overrides``: `--set` values); exits on failure.
    ``keep_stderr`` writes its progress to RUN/stderr.txt."""
    args = [sys.executable, "-m", "mwemt", "demo", "--run-dir", str(run_dir), "--jobs", str(jobs), "-q", "--no-plot"]
    if small:
        args.append("--small")
    for o in overrides:
        args += ["--set", o]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    t0 = time.monotonic()
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.monotonic() - t0
    if out.returncode != 0:
        sys.exit(f"mwemt demo --jobs {jobs} {' '.join(overrides)} failed:\n{out.stderr[-3000:]}")
    if keep_stderr:
        (run_dir / "stderr.txt").write_text(out.stderr, encoding="utf-8")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2, help="pairs of runs per setting, interleaved A B B A")
    ap.add_argument("--small", action="store_true", help="`mwemt demo --small` instead of the full demo")
    ap.add_argument("--keep", help="keep the run directories here (default: a temporary directory, removed)")
    args = ap.parse_args()

    print(f"{describe()}; cores available: {len(os.sched_getaffinity(0))}")
    print(f"before: {uptime()}")
    base = Path(args.keep or tempfile.mkdtemp(prefix="mwemt-bench-parallel-"))
    order = []
    for r in range(args.rounds):
        order += [1, 2] if r % 2 == 0 else [2, 1]
    times: dict[int, list[float]] = {1: [], 2: []}
    scores: dict[int, list] = {1: [], 2: []}
    for k, jobs in enumerate(order):
        run_dir = base / f"run{k}-jobs{jobs}"
        wall = demo(run_dir, jobs, args.small)
        times[jobs].append(wall)
        scores[jobs].append(json.loads((run_dir / "results.json").read_text())["scores"])
        print(f"  run {k + 1}/{len(order)}: --jobs {jobs}  {wall:7.1f} s   ({uptime().split('load average')[-1].strip()})",
              flush=True)
    print(f"after: {uptime()}")
    identical = all(s == scores[1][0] for s in scores[1] + scores[2])
    t1, t2 = sum(times[1]), sum(times[2])
    print(f"demo{' --small' if args.small else ''} grid wall time, {args.rounds} run(s) each: "
          f"--jobs 1 {t1 / len(times[1]):.1f} s, --jobs 2 {t2 / len(times[2]):.1f} s (mean)")
    print(f"ratio --jobs 2 / --jobs 1 = {t2 / t1:.2f}   (target <= 0.6)")
    print(f"scores identical across all runs: {'yes' if identical else 'NO'}")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
