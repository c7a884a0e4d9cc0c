#!/usr/bin/env python
"""Choose tesla-comp's default weight and the scaling of its compositionality predictions by
measurement: how much does each choice change tesla-comp's agreement with MQM, against tesla's?

Why a script: the choice is made once, on a development set, and the README reports it; the
measurement must be repeatable. Input is a directory written by ``studies/meta-evaluation/meta_eval_mqm.sh
wmt23-zh-en`` (rated texts with their ids, ``seg/tesla.seg.tsv``), and the raw predictions
(``mwemt compositionality weights --rescale none``).

For every scaling of the predictions (none, minmax, rank) and every default weight of MWEs without
a prediction (0, 0.25, 0.5, 0.75, 1, the median of the predictions), and as controls every
*constant* weight for all MWEs (the predictions ignored: 0 is tesla-01, 1 is tesla), it computes
tesla-comp's sentence scores and compares them with tesla's (`mwemt.evaluate.meta_compare`:
paired bootstrap CI and permutation p of each difference). Only sentences whose reference has an
MWE the hypothesis lacks can change, so only those are rescored; the others keep tesla's score,
which is exactly what tesla-comp gives them (checked on the first configuration).

    mwemt compositionality weights --ref runs/meta-eval-wmt23-zh-en/reference.txt --rescale none \
        -o runs/meta-eval-wmt23-zh-en/weights.raw.tsv
    python studies/meta-evaluation/tesla_comp_tuning.py --dir runs/meta-eval-wmt23-zh-en \
        --weights runs/meta-eval-wmt23-zh-en/weights.raw.tsv \
        --human ../shared/data/judgements/wmt23-mqm-zh-en/sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz \
        --out runs/tesla-comp-tuning
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from mwemt.compositionality.predict import rescale
from mwemt.evaluate.compositionality_table import CompositionalityTable
from mwemt.evaluate.human_scores import load_human_scores
from mwemt.evaluate.inputs import load_score_inputs
from mwemt.evaluate.meta_compare import compare_metrics
from mwemt.evaluate.meta_eval import build_grid, read_segment_scores
from mwemt.evaluate.tesla import Tesla
from mwemt.fileio import write_text
from mwemt.formats import read_compositionality
from mwemt.provenance import manifest, write_json

STATS = ("tau_wmt13", "acc_eq", "pearson_seg", "kendall_item", "pearson_sys")
DEFAULTS = (0.0, 0.25, 0.5, 0.75, 1.0, "median")
SCALINGS = ("none", "minmax", "rank")
CONSTANTS = (0.0, 0.25, 0.5, 0.75)


def _cells(entry: dict) -> list[str]:
    return [entry["config"], entry["default"],
            *(f"{e['delta']:+.4f} [{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}] p={e['p']:.3f}"
              for e in (entry[k] for k in STATS))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="output directory of studies/meta-evaluation/meta_eval_mqm.sh wmt23-zh-en")
    ap.add_argument("--human", required=True, help="the MQM file meta-eval reads")
    ap.add_argument("--weights", required=True, help="raw predictions: compositionality weights --rescale none")
    ap.add_argument("--out", required=True)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--permutations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args(argv)
    d = Path(args.dir)
    hyps = [(p.stem, p) for p in sorted((d / "hyp").glob("*.txt"))]
    inputs = load_score_inputs(hyps, testset=d / "testset.jsonl")
    ids = inputs.segment_ids
    refs = list(inputs.refs)
    raw = read_compositionality(args.weights, keep_missing=True)
    human = load_human_scores(args.human).oriented()
    tesla_scores = read_segment_scores(d / "seg" / "tesla.seg.tsv")
    grids = {"tesla": build_grid(human, tesla_scores)}

    configs: list[tuple[str, dict, float | str]] = []
    predicted = [(k, v) for k, v in raw.items() if v is not None]
    for how in SCALINGS:
        scaled = dict(rescale(predicted, how))
        table = {k: scaled.get(k) for k in raw}
        for default in DEFAULTS:
            configs.append((f"{how}/default {default}", table, default))
    for c in CONSTANTS:
        configs.append((f"constant {c}", {k: c for k in raw}, c))

    # which (system, sentence) pairs can differ from tesla: a reference MWE the hypothesis lacks
    probe = Tesla("tesla-comp", lang="en", compositionality=CompositionalityTable.from_mapping(configs[0][1]),
                  default_compositionality=configs[0][2])
    changeable: dict[str, list[int]] = {}
    for system in inputs.systems:
        stats = probe.sentence_stats(system.hyps, refs, progress=False)
        rows = stats.rows
        changeable[system.name] = [i for i in range(len(refs)) if rows[i, 2] > rows[i, 3]]
        same = [i for i in range(len(refs)) if rows[i, 2] == rows[i, 3]]
        diff = [abs(rows[i, 0] - tesla_scores[(system.name, ids[i])]) for i in same]
        if diff and max(diff) > 1e-4:
            raise SystemExit(f"{system.name}: tesla-comp differs from tesla on a sentence without an unmatched MWE")
    n_change = sum(len(v) for v in changeable.values())
    print(f"{n_change} of {len(refs) * len(inputs.systems)} translations have a reference MWE they lack",
          file=sys.stderr)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    done_path = out / "done.jsonl"  # one finished configuration per line: an interrupted run resumes
    done = {}
    if done_path.exists():
        for line in done_path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            done[entry["config"]] = entry
    for name, table, default in configs:
        if name in done:
            continue
        metric = Tesla("tesla-comp", lang="en", compositionality=CompositionalityTable.from_mapping(table),
                       default_compositionality=default, wordnet=probe.wordnet)
        scores = dict(tesla_scores)
        for system in inputs.systems:
            idx = changeable[system.name]
            stats = metric.sentence_stats([system.hyps[i] for i in idx], [refs[i] for i in idx], progress=False)
            for i, value in zip(idx, stats.rows[:, 0]):
                scores[(system.name, ids[i])] = float(value)
        res = compare_metrics({name: build_grid(human, scores), **grids}, n_bootstrap=args.bootstrap,
                              n_permutations=args.permutations, seed=args.seed, pairs=[(name, "tesla")])
        by_stat = {p.statistic: p for p in res.pairs}
        entry = {"config": name, "default": metric.default_rule}
        for key in STATS:
            p = by_stat[key]
            entry[key] = {"a": p.a_value, "tesla": p.b_value, "delta": p.delta, "ci": list(p.ci), "p": p.p_value}
        done[name] = entry
        with open(done_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
        print(" | ".join(_cells(entry)), file=sys.stderr)

    report = [done[name] for name, _, _ in configs]
    header = ["config", "default", *(f"{k}: comp - tesla" for k in STATS)]
    table_text = "\n".join(["\t".join(header), *("\t".join(_cells(e)) for e in report)])
    write_text(out / "report.txt", table_text + "\n")
    write_json(out / "report.json", {
        "changeable_translations": n_change, "results": report,
        "manifest": manifest("tesla-comp-tuning", inputs={"human": args.human, "weights": args.weights,
                                                           "testset": str(d / "testset.jsonl"),
                                                           "tesla": str(d / "seg" / "tesla.seg.tsv")},
                             config={"bootstrap": args.bootstrap, "permutations": args.permutations,
                                     "seed": args.seed})})
    print(table_text)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
