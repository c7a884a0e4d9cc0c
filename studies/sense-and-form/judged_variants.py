#!/usr/bin/env python
"""Judged constraints on the MWE test with one model and one fixed threshold, today's setting against the
issue-42 options (items 1-3), and a blind sample of the changed lines to label (item 2: forced MWEs in the
wrong inflection).

Variants: A today's best (ranking count, one form, every table match: ``mwe_context none``); B A + three forms
per candidate; C B + ranking by context + ``mwe_context in-context``. Writes OUT/hyp_V.txt, OUT/report_V.json
and, with ``--sample N``, OUT/blind.txt (N changed lines per variant, shuffled together, the variant hidden)
and OUT/blind_key.json (which variant wrote which).

    python studies/sense-and-form/judged_variants.py --model MODEL --table T --senses S --forms F \\
        --test results/cpu-science-2-ladder/60000/refs/tatoeba-mwe.jsonl --threshold 1.125 --out OUT --sample 40
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--senses", required=True)
    ap.add_argument("--forms", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--threshold", type=float, required=True, help="a fixed threshold (tuned elsewhere, on validation)")
    ap.add_argument("--variants", default="ABC")
    ap.add_argument("--out", required=True)
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=42, help="the sample of each variant")
    ap.add_argument("--shuffle-seed", type=int, default=7, help="the order of the blind file")
    args = ap.parse_args(argv)

    from mwemt.fileio import write_lines
    from mwemt.formats import read_testset
    from mwemt.nmt.constraints import ConstraintOptions, constrained_translate
    from mwemt.nmt.translate import Translator

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    items = read_testset(args.test)
    lines = [it.meta.get("raw_source", it.source) for it in items]
    common = {"threshold": args.threshold}
    variants = {"A": ConstraintOptions("judged", mwe_context="none", **common),
                "B": ConstraintOptions("judged", mwe_context="none", forms=3, forms_file=args.forms, **common),
                "C": ConstraintOptions("judged", mwe_context="in-context", forms=3, forms_file=args.forms,
                                       ranking="context", senses_file=args.senses, **common)}
    tr = Translator.load(args.model, threads=1)
    reports = {}
    for name in args.variants:
        t0 = time.time()
        hyps, report = constrained_translate(tr, lines, args.table, variants[name], beam=5, batch_size=64)
        write_lines(out / f"hyp_{name}.txt", hyps)
        reports[name] = (hyps, report.to_json())
        (out / f"report_{name}.json").write_text(json.dumps(reports[name][1], ensure_ascii=False), encoding="utf-8")
        print(f"{name}: {report.summary()} ({time.time() - t0:.0f} s)", flush=True)
    if args.sample:
        rows = []
        for name, (hyps, report) in reports.items():
            changed = [j for j in report["judgements"] if j["accepted"]]
            for j in random.Random(args.seed).sample(changed, min(args.sample, len(changed))):
                rows.append({"variant": name, "line": j["line"], "forced": j["accepted"], "output": hyps[j["line"] - 1]})
        random.Random(args.shuffle_seed).shuffle(rows)
        with open(out / "blind.txt", "w", encoding="utf-8") as fh:
            for k, r in enumerate(rows, 1):
                fh.write(f"{k}. {lines[r['line'] - 1]}\n   forced: {r['forced']}\n   out: {r['output']}\n")
        (out / "blind_key.json").write_text(json.dumps([{"k": k, **r} for k, r in enumerate(rows, 1)],
                                                       ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
