"""`mwemt run`: the whole experiment grid from one YAML config, cached and resumable."""

from __future__ import annotations

import argparse
import sys

from mwemt.cli.argtypes import positive_int

MAX_JOBS = 1000  # --jobs: Slurm jobs in the queue at once; the local executor forks one worker per job

DESCRIPTION = """\
Run an experiment grid from a YAML config: build the (augmented) corpora, annotate, segment, binarize,
train every system, translate every test set and score them all against the baseline with a paired
bootstrap. Every stage is cached by the content hash of its inputs and its configuration, so a rerun
skips finished work, a changed input reruns exactly what depends on it, and an interrupted run
(Ctrl-C, a killed job) resumes where it stopped: finished stages are kept, the stages that were
running start again, and the results are the same as those of an uninterrupted run.

Independent stages (different systems, different test sets) run in parallel, --jobs at a time (default:
one per core), each with its share of the cores; the results do not depend on --jobs. With --executor slurm
(or `executor: slurm` in the config) every stage is a Slurm job instead, with the resources of the config's
`slurm:` section; the stage keys and results are the same, so a run moves between the two and resumes on either.

Writes RUN/results.md, results.json, results.csv, results.png, a comparison report per test set (with two
or more systems) in RUN/report/TEST/ (index.html: open it in a browser; report.md, report.json; as `mwemt
compare` writes it: MWE hit rates by bucket, a per-MWE table, examples where systems differ) and RUN/manifest.json
(config, versions, seed, every stage's key, timing and output hashes); stages live in RUN/stages/."""

EPILOG = """\
examples:
  mwemt run configs/paper-small.yaml                        # runs/paper-small/
  mwemt run configs/paper-small.yaml --systems baseline,iob # only these systems (+ the baseline)
  mwemt run configs/paper-small.yaml --systems baseline     # one system: scores, no comparison report
  mwemt run configs/demo.yaml --set train.max_epoch=5 --run-dir runs/demo-quick
  mwemt run configs/paper-small.yaml --jobs 1                # one stage at a time
  mwemt run configs/paper-small.yaml --executor slurm --set slurm.partition=gpu --set slurm.account=mylab
  mwemt run configs/paper-small.yaml --dry-run              # show the resolved config and exit
  mwemt run configs/cpu-science.yaml --publish results/cpu-science   # + hyps, refs, rescore.sh for git
  mwemt run configs/demo.yaml --set report.tests=[mwe] --set report.examples=4   # one report, fewer examples

systems (config 'systems:'), after Zaninello & Birch (2020):
  baseline             plain text                    dictionary   + MWE dictionary pairs
  backtranslation      + back-translated MWE sentences (reverse model trained in the run)
  words-with-spaces    contiguous MWEs joined: take_care_of   iob   IOB + lemma source factors"""


def configure(p: argparse.ArgumentParser) -> None:
    p.description = DESCRIPTION
    p.epilog = EPILOG
    p.add_argument("config", help="experiment YAML (see configs/*.yaml)")
    p.add_argument("--run-dir", help="run directory (default: runs/NAME, NAME from the config)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set train.max_epoch=3 (repeatable; YAML values)")
    p.add_argument("--systems", help="comma-separated subset of the config's systems (the baseline is always run); "
                                     "one system is scored and tabled, with no comparison report")
    add_jobs_argument(p)
    p.add_argument("--executor", choices=("local", "slurm"),
                   help="where the stages run: local worker processes, or one Slurm job per stage (submitit; "
                        "resources from the config's `slurm:` section; docs/experiments.md); default: the "
                        "config's `executor`, local")
    p.add_argument("--no-plot", action="store_true", help="do not draw results.png")
    p.add_argument("--publish", metavar="DIR",
                   help="also copy the results, every system's translations (hyps/SYSTEM.TEST.txt.gz), the references "
                        "and MWE test sets (refs/) and rescore.sh (the `mwemt score` commands that reproduce "
                        "results.json from them) into DIR, e.g. results/NAME; DIR (a new directory or an earlier "
                        "publish's, outside the run directory) is checked before the run starts")
    p.add_argument("--dry-run", action="store_true",
                   help="check the config and where the run (and --publish) would write, print the config "
                        "resolved (every default, every system's sections) as JSON and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars (stage lines are still printed)")


def add_jobs_argument(p: argparse.ArgumentParser) -> None:
    from mwemt.experiments.executors import SLURM_DEFAULT_JOBS
    from mwemt.experiments.runner import default_jobs

    p.add_argument("--jobs", "-j", type=positive_int(MAX_JOBS, why="the local executor: at most the cores"),
                   default=None, metavar="N",
                   help=f"stages run at once, each with its share of the cores (default: the number of cores, "
                        f"{default_jobs()} here; with the slurm executor it caps the stage jobs in the queue, "
                        f"by default {SLURM_DEFAULT_JOBS}); results do not depend on it")


def run_config(args: argparse.Namespace, config_path: str, default_run_dir: str | None = None) -> int:
    """Shared by `mwemt run` and `mwemt demo`: the whole config is checked before any stage runs."""
    from pathlib import Path

    from mwemt.errors import MwemtError
    from mwemt.experiments.config import load_config, require_tests
    from mwemt.experiments.executors import SLURM_DEFAULT_JOBS
    from mwemt.experiments.experiment import check_targets, ordered_systems, run_experiment
    from mwemt.experiments.results import format_markdown
    from mwemt.experiments.runner import default_jobs

    if args.jobs is not None and args.jobs < 1:
        raise MwemtError(f"--jobs must be at least 1, not {args.jobs}")
    overrides = list(args.overrides)
    if getattr(args, "executor", None):   # the same as --set executor=NAME
        overrides.append(f"executor={args.executor}")
    cfg = load_config(config_path, overrides)
    require_tests(cfg)
    if args.jobs is None:
        args.jobs = default_jobs() if cfg.executor == "local" else SLURM_DEFAULT_JOBS
    if cfg.executor == "local" and args.jobs > default_jobs():  # one forked worker each: no more than the cores
        raise MwemtError(f"--jobs {args.jobs}: the local executor runs at most {default_jobs()} stages at once (the "
                         "cores this process may use)")
    systems = None
    if getattr(args, "systems", None):
        systems = ordered_systems(cfg, [s.strip() for s in args.systems.split(",") if s.strip()])
    run_dir = Path(args.run_dir or default_run_dir or Path("runs") / cfg.name)
    if args.dry_run:   # the config, and where the run and its publish would write
        check_targets(run_dir, getattr(args, "publish", None))
        print_config(cfg)
        return 0
    jobs = f"{args.jobs} job{'s' if args.jobs > 1 else ''}"
    if cfg.executor != "local":
        jobs = f"executor {cfg.executor}, at most {jobs} at once"
    print(f"mwemt run: {cfg.name} -> {run_dir} ({jobs})", file=sys.stderr)
    results = run_experiment(cfg, run_dir, systems=systems, progress=not args.quiet, plot=not args.no_plot,
                             publish=getattr(args, "publish", None), jobs=args.jobs)
    print(format_markdown(results))
    print(f"results: {run_dir / 'results.md'} (.json .csv .png); manifest: {run_dir / 'manifest.json'}",
          file=sys.stderr)
    for test, page in results.get("reports", {}).items():
        print(f"comparison report ({test}): {run_dir / page}", file=sys.stderr)
    return 0


def print_config(cfg) -> None:
    """The resolved config as JSON: every default filled in, every system's sections resolved."""
    import json

    from mwemt.schema import to_plain

    print(json.dumps(to_plain(cfg), indent=2, ensure_ascii=False))


def run(args: argparse.Namespace) -> int:
    return run_config(args, args.config)
