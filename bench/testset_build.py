"""`mwemt testset build` on 2,000 Tatoeba pairs with 50,000 extra pairs, cold and cached, in one run.

    python bench/testset_build.py [--test 2000] [--extra 50000] [--lexicon OEWN.tsv]

The test pairs are the held-out test split of `mwemt augment split` (seed 1) of the Tatoeba EN-IT
TSV; the extra pairs are the first pairs of its training split. Each configuration runs the real
command in a fresh process (lexicon loading, annotation, tokenization, eflomal and writing
included) and is timed by wall clock. Prints (target from the issue on aligned MWE test sets):
  cold build (default settings) / 120 s      target < 1
  cached build / cold build                  (the alignment cache at work)
  samplers 1 / samplers 3                    (what eflomal's extra samplers cost)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DEFAULT_LEXICON = SHARED / "lexicons/wordnet-mwe/derived/oewn_english_mwe_lemmas.tsv"
TATOEBA = SHARED / "parallel/tatoeba-en-it/eng-ita.anki.tsv"
TARGET_SECONDS = 120.0


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def build(workdir: Path, lexicon: Path, name: str, *extra_args: str) -> float:
    cmd = [sys.executable, "-m", "mwemt", "testset", "build", "--src", str(workdir / "test.en"),
           "--tgt", str(workdir / "test.it"), "--lexicon", str(lexicon), "--extra", str(workdir / "extra.en"),
           str(workdir / "extra.it"), "-o", str(workdir / f"{name}.jsonl"), "--report",
           str(workdir / f"{name}.report.json"), *extra_args]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{name}: exit {r.returncode}\n{r.stderr}")
    print(f"  {name:22s} {seconds:6.1f} s   {r.stderr.strip().splitlines()[0]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", type=int, default=2000)
    ap.add_argument("--extra", type=int, default=50_000)
    ap.add_argument("--lexicon", type=Path, default=DEFAULT_LEXICON)
    args = ap.parse_args()
    if not TATOEBA.exists() or not args.lexicon.exists():
        sys.exit(f"needs {TATOEBA} and {args.lexicon} (../shared/data)")
    sys.path.insert(0, str(ROOT))
    from mwemt.augment.corpus import iter_tsv_pairs, plan_split
    from mwemt.fileio import write_lines
    from mwemt.nmt.cpu import describe

    rows = list(iter_tsv_pairs(TATOEBA))
    plan = plan_split([s for _, s, _ in rows], valid_size=2000, test_size=args.test, seed=1)
    test = [rows[i] for i in plan.test][: args.test]
    extra = [rows[i] for i in plan.train][: args.extra]
    print(describe())
    print(f"load average before: {load_average()}")
    print(f"data: {len(test)} test pairs, {len(extra)} extra pairs (Tatoeba EN-IT); lexicon {args.lexicon.name}")
    env_root = str(ROOT)
    os.environ["PYTHONPATH"] = env_root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    with tempfile.TemporaryDirectory(prefix="mwemt-bench-") as tmp:
        d = Path(tmp)
        write_lines(d / "test.en", (s for _, s, _ in test))
        write_lines(d / "test.it", (t for _, _, t in test))
        write_lines(d / "extra.en", (s for _, s, _ in extra))
        write_lines(d / "extra.it", (t for _, _, t in extra))
        cache = str(d / "cache")
        cold = build(d, args.lexicon, "cold (samplers 3)", "--cache", cache)
        warm = build(d, args.lexicon, "cached", "--cache", cache)
        one = build(d, args.lexicon, "cold (samplers 1)", "--samplers", "1", "--no-cache")
    print(f"load average after: {load_average()}")
    print(f"RATIO cold build / {TARGET_SECONDS:.0f} s        = {cold / TARGET_SECONDS:.2f}   (target < 1)")
    print(f"RATIO cached / cold build       = {warm / cold:.2f}")
    print(f"RATIO samplers 1 / samplers 3   = {one / cold:.2f}")


if __name__ == "__main__":
    main()
