"""Compositionality vectors at corpus scale: throughput per stage and peak memory at 10% and 100%.

    python bench/compositionality.py [--corpus enwiki-2015.en.txt.gz] [--fractions 0.1,1.0] [--models ppmi,svd,w2v]

Each fraction is a fresh `mwemt compositionality vectors` run in its own process and empty directory
(the first N lines of the corpus, N = fraction x its lines), so nothing is cached between them.
Printed side by side: tokens/s of every stage (lemmatize + collapse, PPMI counts, PPMI-SVD, word2vec
token passes), wall and CPU seconds, and peak resident memory: of the main process, of the largest
worker process, and their sum with every worker at its peak at once (an upper bound of the whole
build). The ratio of the peaks at 100% and 10% shows whether memory stays flat as the corpus grows
(target: the whole build under 6 GiB). The CPU model, its flags and the load average go beside the
numbers: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mwemt.nmt.cpu import describe

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MWEMT_SHARED", ROOT.parent / "shared" / "data"))
DEFAULT_CORPUS = SHARED / "monolingual/enwiki-2015-sample/enwiki-2015.en.txt.gz"
STAGES = ("collapse", "ppmi", "svd", "w2v")
LIMIT_MIB = 6 * 1024


def count_lines(path: Path) -> int:
    from mwemt.fileio import iter_lines

    return sum(1 for _ in iter_lines(path))


def run_build(corpus: Path, lexicon: Path, out: Path, max_lines: int | None, models: str, workers: int,
              epochs: int) -> dict:
    """One vectors build in a child process; its stage records and peak memory."""
    code = (
        "import json, resource, sys; from mwemt.cli import main; "
        "rc = main(sys.argv[1:]); "
        "print(json.dumps({'rc': rc, 'self': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "
        "'child': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))"
    )
    argv = ["compositionality", "vectors", "-c", str(corpus), "-l", str(lexicon), "-o", str(out), "--models", models,
            "--workers", str(workers), "--w2v-workers", str(workers), "--epochs", str(epochs), "-q"]
    if max_lines is not None:
        argv += ["--max-sentences", str(max_lines)]
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit(f"build failed:\n{r.stderr[-3000:]}")
    peaks = json.loads(r.stdout.strip().splitlines()[-1])
    stages = {}
    for name in STAGES:
        f = out / ("collapse.json" if name == "collapse" else f"{name}.json")
        if f.is_file():
            stages[name] = json.loads(f.read_text())
    man = json.loads((out / "manifest.json").read_text())
    return {"wall": wall, "self_mib": peaks["self"] / 1024, "child_mib": peaks["child"] / 1024,
            "stages": stages, "tokens": man["corpus"]["tokens_before_collapse"],
            "workers": stages["collapse"]["workers"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--lexicon", type=Path, help="MWEs to collapse (default: every rated compound of the shared data)")
    ap.add_argument("--fractions", default="0.1,1.0")
    ap.add_argument("--models", default="ppmi,svd,w2v")
    ap.add_argument("--workers", type=int, default=0, help="0 = one per core")
    ap.add_argument("--epochs", type=int, default=5,
                    help="word2vec epochs (memory does not depend on them; tok/s counts token passes)")
    ap.add_argument("--keep", type=Path, help="keep the build directories here (default: a temporary directory)")
    args = ap.parse_args()
    if not args.corpus.exists():
        sys.exit(f"corpus not found: {args.corpus} (needs ../shared/data)")

    from mwemt.compositionality.gold import rated_mwes, read_shared_gold
    from mwemt.fileio import write_lines

    print(describe())
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    fractions = [float(x) for x in args.fractions.split(",")]
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-comp-"))
    work.mkdir(parents=True, exist_ok=True)
    lexicon = args.lexicon
    if lexicon is None:
        lexicon = work / "rated.txt"
        write_lines(lexicon, rated_mwes(read_shared_gold(SHARED)))
    n_lines = count_lines(args.corpus)
    print(f"corpus: {args.corpus.name}, {n_lines:,} lines; lexicon: {lexicon.name}; models: {args.models}; "
          f"word2vec epochs: {args.epochs}")

    results = {}
    for f in fractions:
        max_lines = None if f >= 1.0 else max(1, round(f * n_lines))
        out = work / f"frac-{f:g}"
        print(f"\nbuilding {f:.0%} of the corpus ({max_lines or n_lines:,} lines) ...", flush=True)
        results[f] = res = run_build(args.corpus, lexicon, out, max_lines, args.models, args.workers,
                                         args.epochs)
        res["load"] = os.getloadavg()
        print(f"  done in {res['wall']:.0f} s; load average {' '.join(f'{x:.2f}' for x in res['load'])}; "
              f"{res['tokens']:,} tokens; peak MiB main {res['self_mib']:,.0f}, largest worker "
              f"{res['child_mib']:,.0f}; " + ", ".join(
                  f"{k} {v['seconds']:.0f} s" + (f" {v['tokens_per_second']:,} tok/s" if v.get('tokens_per_second') else "")
                  for k, v in res["stages"].items()), flush=True)

    print("\nthroughput (tokens/s; tokens = corpus tokens before collapsing, word2vec: token passes = "
          "tokens x epochs):")
    head = "stage".ljust(22) + "".join(f"{f:>8.0%} tok/s  wall s   cpu s" for f in fractions)
    print(head)
    for name in STAGES:
        row = name.ljust(22)
        for f in fractions:
            st = results[f]["stages"].get(name)
            if st is None:
                row += f"{'-':>14}{'-':>8}{'-':>8}"
                continue
            tps = st.get("tokens_per_second")
            row += f"{(f'{tps:,}' if tps else '-'):>14}{st['seconds']:>8.0f}{st['cpu_seconds']:>8.0f}"
        print(row)
    print("\npeak resident memory (MiB):")
    print("".ljust(22) + "".join(f"{f:>14.0%}" for f in fractions) + "   ratio")
    rows = {
        "main process": lambda r: r["self_mib"],
        "largest worker": lambda r: r["child_mib"],
        "main + all workers": lambda r: r["self_mib"] + r["workers"] * r["child_mib"],
    }
    for label, get in rows.items():
        vals = [get(results[f]) for f in fractions]
        ratio = vals[-1] / vals[0] if vals[0] else float("nan")
        print(label.ljust(22) + "".join(f"{v:>14,.0f}" for v in vals) + f"   {ratio:5.2f}x")
    top = max(r["self_mib"] + r["workers"] * r["child_mib"] for r in results.values())
    print(f"\nlargest bound {top:,.0f} MiB vs the 6 GiB target ({LIMIT_MIB:,} MiB): "
          f"{'OK' if top < LIMIT_MIB else 'OVER'}")
    print("corpus tokens: " + ", ".join(f"{f:.0%}: {results[f]['tokens']:,}" for f in fractions))
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.keep is None:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
