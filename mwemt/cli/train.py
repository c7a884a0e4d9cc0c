"""`mwemt train`: one system of a config, annotated, segmented, binarized and trained with fairseq."""

from __future__ import annotations

import argparse
import sys

from mwemt.cli.argtypes import non_negative_int, seed, workers

DESCRIPTION = """\
Train the model of one system: the same stages `mwemt run` runs for it (corpus -> [augment] ->
annotate -> subword -> prepare -> train), with the same cache, lock and manifest, in WORKDIR. The
config is an experiment config (docs/config.md); test sets are not needed. The trained model
directory is WORKDIR/model (hard links to the train stage's files: a real directory that can be moved
or copied anywhere), ready for `mwemt translate --model`."""

EPILOG = """\
examples:
  mwemt train --config configs/nmt-tiny.yaml --workdir runs/nmt-tiny
  mwemt train --config configs/demo.yaml --system iob --workdir runs/demo-iob   # one system of a grid
  mwemt train --config configs/nmt-tiny.yaml --set train.max_epoch=2 --dry-run  # check and show the config
  mwemt train --config configs/nmt-tiny.yaml --print-command      # the fairseq-train call (data stages run)
  mwemt translate --model runs/nmt-tiny/model < input.en

Re-running the same command resumes: finished stages are cache hits, an interrupted training starts
again (to the same weights; fairseq's own resume is not bit-identical), and a finished model with
unchanged data and settings is not trained again. One command at a time may use a WORKDIR (a lock);
killing it (even with kill -9) stops fairseq-train too. The model directory is self-contained: checkpoints,
dictionaries, sentencepiece model(s), lexicon copy, preprocess.json, manifest.json."""


def configure(p: argparse.ArgumentParser) -> None:
    p.description = DESCRIPTION
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--config", "-c", required=True, help="experiment YAML (paths relative to the config file)")
    p.add_argument("--system", help="the system to train (default: the config's only system)")
    p.add_argument("--workdir", "-w", default=None,
                   help="working directory (default: runs/NAME, or runs/NAME-SYSTEM for a config of several systems)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set train.max_epoch=3 (repeatable; YAML values)")
    p.add_argument("--seed", type=seed(), default=None, help="override the config's seed")
    p.add_argument("--threads", type=workers(), default=None, help="override the system's train.threads")
    p.add_argument("--max-epoch", type=non_negative_int(), default=None, help="override the system's train.max_epoch")
    p.add_argument("--max-update", type=non_negative_int(), default=None, help="override the system's train.max_update")
    p.add_argument("--print-command", action="store_true",
                   help="run the data stages, print the fairseq-train command of the train stage and exit")
    p.add_argument("--dry-run", action="store_true", help="check the config, print it resolved as JSON and exit")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars (stage lines are still printed)")


def run(args: argparse.Namespace) -> int:
    import shlex
    from pathlib import Path

    from mwemt.cli.run import print_config
    from mwemt.errors import MwemtError
    from mwemt.experiments.config import load_config
    from mwemt.experiments.experiment import prepare_system, train_system
    from mwemt.nmt.train import fairseq_command, fairseq_train_args
    from mwemt.processes import resolve_device

    cfg = load_config(args.config, args.overrides)
    system = args.system
    if system is None:
        if len(cfg.systems) != 1:
            raise MwemtError(f"{args.config} has {len(cfg.systems)} systems ({', '.join(cfg.systems)}); "
                             f"choose one with --system")
        system = next(iter(cfg.systems))
    if system not in cfg.systems:
        raise MwemtError(f"--system {system}: not in {args.config} (it has {', '.join(cfg.systems)})")
    flags = [f"seed={args.seed}"] if args.seed is not None else []
    flags += [f"systems.{system}.train.{key}={value}" for key, value in
              (("threads", args.threads), ("max_epoch", args.max_epoch), ("max_update", args.max_update))
              if value is not None]
    if flags:
        cfg = load_config(args.config, [*args.overrides, *flags])
    if args.dry_run:
        print_config(cfg)
        return 0
    default = cfg.name if len(cfg.systems) == 1 else f"{cfg.name}-{system}"
    workdir = Path(args.workdir or Path("runs") / default)
    if args.print_command:
        job, data_bin, model_dir = prepare_system(cfg, system, workdir, progress=not args.quiet)
        device = resolve_device(job.train.device)
        cmd = fairseq_command(job, fairseq_train_args(job, data_bin, model_dir / "checkpoints", device), device)
        print(" ".join(shlex.quote(c) for c in cmd))
        return 0
    print(f"mwemt train: {cfg.name}, system {system} -> {workdir}", file=sys.stderr)
    model_dir = train_system(cfg, system, workdir, progress=not args.quiet)
    print(f"model directory: {model_dir}")
    return 0
