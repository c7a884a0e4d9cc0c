#!/usr/bin/env python
"""Exact precision, lenient precision and recall of OEWN identification, before and after each
change of issue 29 (docs/identification.md):

1. the MWE-in-context classifier (`mwemt.preprocess.mwe_context`, ``--mwe-context``);
2. surface agreement (`mwemt.preprocess.lexicon`: lemmatizing an entry creates no key that other
   words match).

Rows: the plain look-up as `mwemt testset build` did before (lemmas only, contiguous, no filters);
with surface agreement; with the classifier only; with both = `testset build`'s defaults now.
Measured on DiMSUM 2016 test (MWEs of every kind) and on the PARSEME 1.1 EN held-out split
(train.cupt sentences k with k % 5 == 0, never used in training; PARSEME annotates verbal MWEs
only, so only matches of verbal OEWN entries count as predictions there).

- exact P: predicted token set = a gold MWE's; lenient P: predicted tokens inside one gold MWE;
- R: gold MWEs predicted exactly.

    python studies/identification/identify_context_eval.py [--model PATH] [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))   # scripts/train_mwe_context.py

from train_mwe_context import (
    DIMSUM_TRAIN,
    OEWN,
    PARSEME_TRAIN,
    load_lexicon,
    parseme_sentences,
    parseme_split,
    rel,
)

from mwemt.fileio import atomic_write, sha256_file
from mwemt.preprocess.annotate import Annotator, AnnotatorConfig, build_annotator
from mwemt.preprocess.mwe_context import MweContextModel, Prf, bundled_model, read_dimsum
from mwemt.provenance import manifest, write_json

DIMSUM_TEST = DIMSUM_TRAIN.with_name("dimsum16.test")


def evaluate(annotator: Annotator, sentences, verbal_only: bool) -> Prf:
    prf = Prf()
    for forms, gold in sentences:
        pred = annotator.annotate_tokens(forms).mwes
        if verbal_only:
            pred = [m for m in pred if m.category.startswith("verb.")]
        prf.add(gold, pred)
    return prf


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lexicon", default=str(OEWN))
    ap.add_argument("--dimsum-test", default=str(DIMSUM_TEST))
    ap.add_argument("--parseme", default=str(PARSEME_TRAIN), help="train.cupt; its held-out split is scored")
    ap.add_argument("--model", help="MWE-in-context model (default: the bundled one)")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    model = MweContextModel.load(args.model) if args.model else bundled_model()
    data = {"DiMSUM test": (read_dimsum(args.dimsum_test), False),
            "PARSEME EN held-out": ([s for k, s in enumerate(parseme_sentences(args.parseme))
                                     if parseme_split(k) == "heldout"], True)}
    gap = model.thresholds.max_gap
    old = load_lexicon(args.lexicon, "oewn", surface=False)
    # `testset build`'s defaults: --mwe-context auto, the model's gap, surface agreement
    config = AnnotatorConfig(lang="en", lexicon=(args.lexicon,), lexicon_format="oewn", pretokenized=True,
                             mwe_context=args.model or "auto")
    now = build_annotator(config, log=lambda _msg: None)
    if not isinstance(now.filters, MweContextModel):
        raise SystemExit("testset build's defaults did not pick the MWE-in-context model")
    systems = [("before: lemma look-up (no surface agreement), no classifier", Annotator(old, max_gap=gap, pretokenized=True)),
               ("+ surface agreement (change 2)", Annotator(now.lexicon, max_gap=gap, pretokenized=True)),
               ("+ MWE-in-context classifier only (change 1)",
                Annotator(old, max_gap=gap, pretokenized=True, filters=model)),
               ("both = testset build defaults", now)]
    results: dict[str, dict[str, Prf]] = {}
    for label, annotator in systems:
        results[label] = {}
        for name, (sentences, verbal) in data.items():
            results[label][name] = prf = evaluate(annotator, sentences, verbal)
            print(f"[{time.perf_counter() - t0:6.1f}s] {name:20} {label}: {prf.row()}", file=sys.stderr)
    names = list(data)
    lines = ["| system | " + " | ".join(f"{n}: #pred | exact P | lenient P | R" for n in names) + " |",
             "|---|" + "---|---|---|---|" * len(names)]
    for label, by in results.items():
        cells = " | ".join(f"{p.pred} | {100 * p.precision:.1f} | {100 * p.lenient:.1f} | {100 * p.recall:.1f}"
                           for p in by.values())
        lines.append(f"| {label} | {cells} |")
    gold = ", ".join(f"{n}: {sum(len(g) for _, g in s)} gold MWEs in {len(s)} sentences" for n, (s, _) in data.items())
    text = "\n".join(lines) + (f"\n\n(x 100; max_gap {gap}; threshold {model.thresholds.min_probability:g}; "
                               f"model {model.signature}; {gold}.)")
    print(text)
    if args.markdown:
        with atomic_write(args.markdown) as fh:
            fh.write(text + "\n")
    if args.json:
        inputs = {"lexicon": args.lexicon, "dimsum_test": args.dimsum_test, "parseme": args.parseme}
        write_json(args.json, manifest(
            "identify-context-eval", input_files={k: {"path": rel(v), "sha256": sha256_file(v)} for k, v in inputs.items()},
            model=model.signature, config={"max_gap": gap, "threshold": model.thresholds.min_probability,
                                           "parseme_split": "sentence k (0-based) with k % 5 == 0"},
            results={label: {n: p.to_json() for n, p in by.items()} for label, by in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
