"""`mwemt identify-eval`: PARSEME-style MWE identification scores for a predicted .cupt file."""

from __future__ import annotations

import argparse
import sys

from mwemt.cli.argtypes import int_range

EPILOG = """\
scores (P/R/F, shown x 100):
  MWE-based    a predicted MWE counts when its token set equals a gold MWE's
  token-based  partial credit: gold and predicted MWEs of a sentence are paired by a maximum-weight
               bipartite matching (weight = shared tokens), as in the PARSEME shared tasks
partitions: global, per category, continuous/discontinuous and, with --train, seen/unseen-in-train
(seen = the MWE's multiset of lemmas is annotated somewhere in the training file).

examples:
  mwemt identify-eval --gold test.cupt --pred pred.cupt
  mwemt identify-eval --gold test.cupt --pred pred.cupt --train train.cupt --json scores.json

Gold and pred must hold the same sentences with the same tokens (checked; the first difference is
reported with its file and line)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.add_argument("--gold", "-g", required=True, help="gold .cupt file")
    p.add_argument("--pred", "-p", required=True, help="predicted .cupt file (same sentences and tokens)")
    p.add_argument("--train", "-t", help="training .cupt file: adds seen/unseen-in-train partitions")
    p.add_argument("--json", help="also write the scores with provenance (inputs' sha256, versions) here")
    p.add_argument("--no-categories", action="store_true", help="leave out the per-category rows")
    p.add_argument("--digits", type=int_range(0, 10), default=2, help="decimals in the table (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    from mwemt.evaluate.parseme import evaluate_cupt
    from mwemt.formats import read_cupt
    from mwemt.provenance import manifest, write_json

    train = read_cupt(args.train) if args.train else None
    scores = evaluate_cupt(read_cupt(args.gold), read_cupt(args.pred), train,
                           categories=not args.no_categories)
    print(scores.table(args.digits))
    if args.json:
        inputs = {"gold": args.gold, "pred": args.pred, **({"train": args.train} if args.train else {})}
        write_json(args.json, manifest("identify-eval", inputs=inputs, **scores.to_dict()))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
