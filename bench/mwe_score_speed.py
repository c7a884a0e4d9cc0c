"""Speed of the alignment-aware MWE score next to today's whole-sentence score, in one run.

    python bench/mwe_score_speed.py [--repeats 3] [--samplers 1]

Scores the 1,293 adjudicated (FINAL) TED EN-IT MWEs (`mwemt.testsets.testset.build_ted_testset`,
MWEs kept even when not located in the source) in their 669 MT sentences, and prints each timing
as a ratio to today's score (``align="none"``, characters only) measured in the same run:

  aligned, uncached: eflomal (``align="eflomal"``) aligns the 669 sentence pairs as one file, no extra
                     text, then scoring; the target: under 10 s on 2 cores
  aligned, cached:   the same with the links read from the alignment cache
  matching options:  eflomal's links plus lemma, elision, function words (cached)
  lex, uncached:     the default, line-stable aligner (`mwemt.testsets.lexalign`): its model learned
                     from the 669 (source, reference) pairs, each pair aligned alone, then scoring
  lex, cached model: the same with the model read from the alignment cache (a new process: nothing
                     remembered in memory), each pair aligned again
and the ratio of the line-stable aligner's time to eflomal's (new / old), uncached and cached.

The CPU model, its flags and the load (``os.getloadavg``) are printed beside the numbers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT.parent / "shared" / "data" / "testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv"
sys.path.insert(0, str(ROOT / "bench"))

from score_speed import best_time  # noqa: E402

from mwemt.evaluate.mwe_match import MweMatching  # noqa: E402
from mwemt.evaluate.mwe_score import DEFAULT_ALIGN_CONFIG, DEFAULT_MATCHING, MweAlignSettings, MweScore  # noqa: E402
from mwemt.nmt.cpu import describe  # noqa: E402
from mwemt.testsets.align import AlignConfig  # noqa: E402
from mwemt.testsets.testset import build_ted_testset, read_ted_pairs  # noqa: E402


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (eflomal runs as a child process): the
    measure that a loaded shared machine distorts least."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, default=PAIRS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--samplers", type=int, default=DEFAULT_ALIGN_CONFIG.samplers)
    args = ap.parse_args(argv)
    if not args.pairs.exists():
        print(f"{args.pairs} is missing: nothing to measure")
        return 0
    items, _ = build_ted_testset(read_ted_pairs(args.pairs, "FINAL"), keep_unlocated=True)
    hyps = [it.meta["mt_it"] for it in items]
    refs = [it.mwes for it in items]
    sources = [it.source for it in items]
    references = [it.reference for it in items]
    n_mwes = sum(len(m) for m in refs)
    print(f"CPU: {describe()}; load average {os.getloadavg()}")
    print(f"{n_mwes} MWEs in {len(items)} sentences; best of {args.repeats} (uncached alignment: one run)")

    today = MweScore("it", pretokenized=True, align=MweAlignSettings("none", window=0), matching=MweMatching())
    t_today = best_time(lambda: today.sentence_stats(hyps, refs), args.repeats)
    print(f"{'today (align none, characters)':44} {t_today:7.3f} s   1.0 x   score "
          f"{today.corpus_score(hyps, refs).score:.1f}")
    config = AlignConfig(samplers=args.samplers)
    with tempfile.TemporaryDirectory(prefix="mwe-bench-") as cache:
        settings = MweAlignSettings("eflomal", cache_dir=cache, config=config)
        t0, c0 = time.perf_counter(), cpu_seconds()
        stats = MweScore("it", pretokenized=True, align=settings).sentence_stats(hyps, refs, sources=sources)
        t_uncached, c_uncached = time.perf_counter() - t0, cpu_seconds() - c0
        rows = [("aligned, uncached (eflomal + scoring)", t_uncached, stats)]
        for name, matching in (("aligned, cached", DEFAULT_MATCHING),
                               ("aligned, cached, +lemma", replace(DEFAULT_MATCHING, lemma=True)),
                               ("aligned, cached, +elision", replace(DEFAULT_MATCHING, elision=True)),
                               ("aligned, cached, +function weight 0.5", replace(DEFAULT_MATCHING, function_weight=0.5))):
            def run(m=matching):
                return MweScore("it", pretokenized=True, align=settings, matching=m).sentence_stats(
                    hyps, refs, sources=sources)
            rows.append((name, best_time(run, args.repeats), run()))
        t_cached = rows[1][1]
        lex = MweAlignSettings("lex", cache_dir=cache)
        t0, c0 = time.perf_counter(), cpu_seconds()
        stats = MweScore("it", pretokenized=True, align=lex).sentence_stats(hyps, refs, sources=sources,
                                                                            references=references)
        t_lex, c_lex = time.perf_counter() - t0, cpu_seconds() - c0
        rows.append(("lex, uncached (model + aligning + scoring)", t_lex, stats))

        def lex_cached():
            from mwemt.evaluate import mwe_score
            from mwemt.testsets import lexalign

            lexalign._MEMO.clear()        # as a new process: the model comes from the cache on disk
            mwe_score._LEX_MEMO.clear()
            return MweScore("it", pretokenized=True, align=lex).sentence_stats(hyps, refs, sources=sources,
                                                                               references=references)
        t_lex_cached = best_time(lex_cached, args.repeats)
        c0 = cpu_seconds()
        rows.append(("lex, cached model (aligning + scoring)", t_lex_cached, lex_cached()))
        c_lex_cached = cpu_seconds() - c0
        for name, seconds, st in rows:
            score = today.score_from_totals(st.totals())
            print(f"{name:44} {seconds:7.3f} s {seconds / t_today:5.1f} x   score {score:.1f}")
    print(f"new / old: lex {t_lex:.2f} s / eflomal {t_uncached:.2f} s = {t_lex / t_uncached:.2f} uncached "
          f"(CPU {c_lex:.2f} s / {c_uncached:.2f} s = {c_lex / c_uncached:.2f}); "
          f"{t_lex_cached:.2f} s / {t_cached:.2f} s = {t_lex_cached / t_cached:.2f} cached (lex CPU "
          f"{c_lex_cached:.2f} s)")
    print(f"aligned, uncached: {t_uncached:.2f} s wall, {c_uncached:.2f} s CPU (this process and eflomal's; "
          f"target < 10 s on 2 cores); ratio to today's {t_today:.3f} s: {t_uncached / t_today:.0f} x")
    print(f"load average after: {os.getloadavg()}; eflomal samplers {args.samplers}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
