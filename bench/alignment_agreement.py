"""The line-stable aligner (`mwemt.testsets.lexalign`) next to eflomal, on the TED EN-IT test.

    python bench/alignment_agreement.py [--run results/cpu-science-3-60000] [--system baseline]
        [--other judged-tune4k-nocontext] [--extra SRC TGT --extra-max N] [--no-human]

Prints, for the published run (its hypotheses, test set and eflomal alignments, `mwemt run --publish`):

1. agreement: precision, recall and F1 of the lexical aligner's links against the published eflomal links of
   ``--system``'s TED output, and as a yardstick eflomal against itself (the links of the lines that
   ``--system`` and ``--other`` translated identically, which eflomal aligned in two runs);
2. line stability: how many of those identical lines get a different per-line mwe / mwe-p score in the two
   systems, under each aligner (the lexical aligner: 0 by construction);
3. the corpus mwe and mwe-p of both systems under each aligner (eflomal: the published links, so the
   published numbers);
4. unless ``--no-human``: agreement with the adjudicated human verdicts on the TED MWEs (AUC of mwe and
   mwe-p with each aligner; eflomal aligns the 669 MT sentences afresh, with one sampler as the MWE
   score did, in a temporary cache);
5. the time the lexical aligner takes (learning the model, aligning one system).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
PAIRS = SHARED / "testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv"
sys.path.insert(0, str(ROOT))

from mwemt.evaluate.mwe_precision import MwePrecisionScore  # noqa: E402
from mwemt.evaluate.mwe_score import MweAlignSettings, MweScore, read_alignments  # noqa: E402
from mwemt.fileio import read_lines  # noqa: E402
from mwemt.formats import read_testset  # noqa: E402


def prf(found, gold) -> tuple[float, float, float, int, int]:
    tp = n_found = n_gold = 0
    for a, g in zip(found, gold):
        a, g = set(map(tuple, a or ())), set(map(tuple, g or ()))
        tp, n_found, n_gold = tp + len(a & g), n_found + len(a), n_gold + len(g)
    p, r = tp / max(n_found, 1), tp / max(n_gold, 1)
    return p, r, 2 * p * r / max(p + r, 1e-12), n_found, n_gold


def metrics(settings: MweAlignSettings, pretokenized: bool = False):
    return [MweScore("it", align=settings, pretokenized=pretokenized),
            MwePrecisionScore("it", align=settings, pretokenized=pretokenized)]


def human_agreement(settings_of: dict[str, MweAlignSettings]) -> None:
    sys.path.insert(0, str(ROOT / "studies" / "mwe-test-and-score"))
    from mwe_score_human import auc, read_final_rows

    from mwemt.testsets.testset import build_ted_testset, read_ted_pairs

    rows, _ = read_final_rows(PAIRS)
    items, _ = build_ted_testset(read_ted_pairs(PAIRS, "FINAL"), keep_unlocated=True)
    where = {c["line"]: (k, m) for k, it in enumerate(items) for m, c in enumerate(it.meta["mwe_checks"])}
    offsets = np.cumsum([0] + [len(it.mwes) for it in items])
    flat = np.array([offsets[k] + m for k, m in (where[r["line"]] for r in rows)])
    labels = np.array([r["label"] for r in rows])
    hyps, refs = [it.meta["mt_it"] for it in items], [it.mwes for it in items]
    sources, references = [it.source for it in items], [it.reference for it in items]
    print(f"\n4. agreement with the human verdicts: {len(rows)} adjudicated TED MWEs in {len(items)} MT sentences")
    for name, settings in settings_of.items():
        aucs = []
        for metric in metrics(settings, pretokenized=True):
            stats = metric.sentence_stats(hyps, refs, sources=sources, references=references)
            aucs.append(f"{metric.key} AUC {auc(np.nan_to_num(stats.info['mwe_scores'][flat]), labels):.3f}")
        print(f"   {name:8} {'   '.join(aucs)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, default=ROOT / "results" / "cpu-science-3-60000")
    ap.add_argument("--test", default="ted")
    ap.add_argument("--system", default="baseline")
    ap.add_argument("--other", default="judged-tune4k-nocontext")
    ap.add_argument("--extra", nargs=2, metavar=("SRC", "TGT"), help="extra parallel text for the lexical model")
    ap.add_argument("--extra-max", type=int, default=None)
    ap.add_argument("--no-human", action="store_true")
    args = ap.parse_args(argv)
    run, test = args.run, args.test
    if not (run / "refs" / f"{test}.jsonl.gz").exists():
        print(f"{run}/refs/{test}.jsonl.gz is missing: nothing to measure")
        return 0
    items = read_testset(run / "refs" / f"{test}.jsonl.gz")
    sources, references = [it.source for it in items], [it.reference for it in items]
    mwes = [it.mwes for it in items]
    extra, extra_name = None, ""
    if args.extra:
        from mwemt.testsets.align import read_extra

        extra, extra_name = read_extra(args.extra[0], args.extra[1], "en", "it", limit=args.extra_max), \
            Path(args.extra[1]).name
    cache = tempfile.mkdtemp(prefix="mwemt-bench-align-")
    lex = MweAlignSettings("lex", cache_dir=cache, extra=extra, extra_name=extra_name)
    scorer = MweScore("it", align=lex)
    hyps = {s: read_lines(run / "hyps" / f"{s}.{test}.txt.gz") for s in (args.system, args.other)}
    published = {s: read_alignments(run / "alignments" / f"{s}.{test}.align.gz") for s in hyps}
    tokens = {s: [scorer.moses_tokens(h) for h in hyps[s]] for s in hyps}
    from mwemt.testsets.lexalign import lexical_model

    prior_src = [s.split() for s in sources] + (list(extra[0]) if extra else [])
    prior_tgt = [scorer.reference_tokens(r) for r in references] + (list(extra[1]) if extra else [])
    t0 = time.perf_counter()
    lexical_model(prior_src, prior_tgt, cache_dir=cache)   # learns the model (what the first system pays)
    t_model = time.perf_counter() - t0
    t0 = time.perf_counter()
    links = {s: scorer.align_hypotheses(sources, tokens[s], references)[0] for s in hyps}
    t_align = (time.perf_counter() - t0) / len(hyps)
    print(f"{run.name}, test {test}: {len(items)} sentences; lexical aligner {lex.describe()}")

    print(f"\n1. link agreement with the published eflomal links ({published[args.system].origin})")
    for s in hyps:
        p, r, f, n_found, n_gold = prf(links[s], published[s])
        print(f"   {s:28} lex vs eflomal: P {p:.3f} R {r:.3f} F1 {f:.3f} ({n_found:,} vs {n_gold:,} links)")
    same = [k for k, (a, b) in enumerate(zip(hyps[args.system], hyps[args.other])) if a == b]
    p, r, f, _, _ = prf([published[args.system][k] for k in same], [published[args.other][k] for k in same])
    moved = sum(set(map(tuple, published[args.system][k] or ())) != set(map(tuple, published[args.other][k] or ()))
                for k in same)
    print(f"   eflomal vs eflomal on the {len(same):,} lines both systems wrote identically: F1 {f:.3f} "
          f"({moved:,} lines aligned differently)")
    moved_lex = sum(links[args.system][k] != links[args.other][k] for k in same)
    print(f"   lex vs lex on those lines: {moved_lex} aligned differently")

    print(f"\n2-3. MWE scores; per-line changes on the {len(same):,} identical lines")
    for name, given in (("eflomal", published), ("lex", None)):
        for metric in metrics(lex):
            stats = {s: (metric.sentence_stats(hyps[s], mwes, alignments=given[s], references=references)
                         if given is not None else
                         metric.sentence_stats(hyps[s], mwes, sources=sources, references=references))
                     for s in hyps}
            changed = sum(not np.array_equal(stats[args.system].rows[k], stats[args.other].rows[k]) for k in same)
            scores = "   ".join(f"{s} {metric.corpus_score_from_stats(stats[s]).score:6.2f}" for s in hyps)
            print(f"   {name:8} {metric.key:6} {scores}   identical lines scored differently: {changed}")
    print(f"\n5. time: learning the model {t_model:.2f} s; aligning one system's {len(items):,} lines {t_align:.2f} s")
    if not args.no_human and PAIRS.exists():
        human_agreement({"eflomal": MweAlignSettings("eflomal", cache_dir=cache),
                         "lex": MweAlignSettings("lex", cache_dir=cache)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
