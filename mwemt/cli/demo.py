"""`mwemt demo`: the whole pipeline on the bundled EN-IT sample, in a few minutes on a CPU."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
Train and score the five systems of Zaninello & Birch (2020) - baseline, +dictionary, +back-translation,
words-with-spaces and IOB factors - on the small EN-IT sample bundled with mwemt (template sentences
written for mwemt, rich in MWEs; some MWEs occur only in the dictionary and the Italian monolingual
text). Tiny models, a few minutes on 2 CPU cores; prints the results table. Rerunning is instant:
every stage is cached in the run directory."""

EPILOG = """\
examples:
  mwemt demo                          # runs/demo/results.md, .json, .csv, .png; runs/demo/report/*/index.html
  mwemt demo --small                  # fewer epochs and sentences: a quick smoke test (~1-2 min)
  mwemt demo --set train.max_epoch=60 --run-dir runs/demo-long

The sample and its generator: mwemt/data/demo/README.md, scripts/make_demo_data.py.
The config: mwemt/data/demo/demo.yaml (also configs/demo.yaml); use `mwemt run` for your own data."""

SMALL = ["train.max_epoch=3", "data.train_size=300", "tests.general.max_items=30", "tests.mwe.max_items=30",
         "score.bootstrap=200"]


def configure(p: argparse.ArgumentParser) -> None:
    p.description = DESCRIPTION
    p.epilog = EPILOG
    p.add_argument("--run-dir", help="run directory (default: runs/demo, or runs/demo-small with --small)")
    p.add_argument("--small", action="store_true", help="a smaller, faster run (smoke test; scores mean little)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a value of the demo config, e.g. --set train.max_epoch=10")
    p.add_argument("--no-plot", action="store_true", help="do not draw results.png")
    p.add_argument("--dry-run", action="store_true", help="print the resolved config as JSON and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars (stage lines are still printed)")


def run(args: argparse.Namespace) -> int:
    from mwemt.cli.run import run_config
    from mwemt.experiments.config import PACKAGE_DATA

    if args.small:
        args.overrides = SMALL + list(args.overrides)
    default = "runs/demo-small" if args.small else "runs/demo"
    return run_config(args, str(PACKAGE_DATA / "demo" / "demo.yaml"), default_run_dir=default)
