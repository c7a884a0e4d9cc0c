"""The training budget of a converged grid: updates per CPU-minute and epochs at the grid's settings, and
what the MWE-weighted loss costs.

    python bench/train_budget.py                       # Tatoeba EN-IT, 25k pairs: configs/cpu-science-2.yaml
    python bench/train_budget.py --pairs 2000 --updates 4 --rounds 1     # a quick look

The data are what `mwemt run configs/cpu-science-2.yaml` trains on: the seed-1 split of Tatoeba, a seeded
sample of ``--pairs`` training pairs, joint BPE 8k, built by `mwemt train`'s stages (cached in
``--workdir``), plus the MWE flags of the `mwe-weighted-loss` system (OEWN MWEs whose predicted
compositionality is in the lowest tertile). Three settings train the `small` preset (128-dim 3+3) with
the fairseq command line `mwemt train` builds, each with its own fairseq `Trainer` in this process,
one thread, bf16 autocast as `train.precision: auto` chooses on this CPU:

- ``fused, max_tokens 2048``: cpu-science's batch;
- ``fused, max_tokens 4096``: cpu-science-2's;
- ``MWE-weighted x3, 4096``: the `mwe_weighted_label_smoothed_cross_entropy` criterion, weight 3.

They train in rounds (``--updates`` each, order flipped every round), timed by CPU time of this
process (robust to the other jobs on a shared machine). Printed per setting: updates per CPU-minute,
sentences per update, updates per epoch of the sample and CPU-minutes per epoch; then the grid's
worst case (every model uses its whole epoch budget) for ``--models`` models of ``--max-epoch``
epochs on ``--cores`` cores.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TSV = ROOT.parent / "shared" / "data" / "parallel" / "tatoeba-en-it" / "eng-ita.anki.tsv"
LEXICON = ROOT.parent / "shared" / "data" / "lexicons" / "wordnet-mwe" / "derived" / "oewn_english_mwe_lemmas.tsv"
COMPOSITIONALITY = ROOT / "results" / "compositionality" / "oewn-tatoeba.tsv"


def build_data(workdir: Path, pairs: int):
    """The baseline's and the weighted system's binarized data (cached stages) and their fairseq jobs."""
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import prepare_system

    for path in (TSV, LEXICON, COMPOSITIONALITY):
        if not path.exists():
            sys.exit(f"{path} not found (the bench needs the shared data)")
    weighted = {"mwe_loss_weight": 3.0, "mwe_loss_sentences": "idiomatic",
                "mwe_loss_compositionality": str(COMPOSITIONALITY)}
    cfg = config_from_data({
        "src_lang": "en", "tgt_lang": "it",
        "data": {"split": {"tsv": str(TSV), "valid_size": 1000, "test_size": 40000, "train_size": pairs},
                 "lexicon": str(LEXICON), "lexicon_format": "oewn"},
        "subword": {"vocab_size": 8000, "model_type": "bpe", "joint": True}, "model": {"preset": "small"},
        "train": {"max_epoch": 20, "max_update": 0, "patience": 3, "early_stop": "loss", "max_tokens": 4096},
        "systems": {"baseline": {}, "mwe-weighted-loss": {"train": weighted}}})
    return {name: prepare_system(cfg, name, workdir, progress=False)[:2] for name in cfg.systems}


def make_trainer(job, data_bin: Path, save_dir: Path):
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.trainer import Trainer

    import mwemt.nmt.fairseq_plugin  # noqa: F401
    from mwemt.nmt.train import fairseq_train_args

    args = fairseq_train_args(job, data_bin, save_dir, "cpu") + ["--num-workers", "0", "--disable-validation"]
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(options.get_training_parser(), args))
    task = tasks.setup_task(cfg.task)
    task.load_dataset("train")
    model = task.build_model(cfg.model)
    trainer = Trainer(cfg, task, model, task.build_criterion(cfg.criterion))
    itr = trainer.get_train_iterator(epoch=1, load_dataset=False)
    return trainer, len(task.dataset("train")), len(itr), itr.next_epoch_itr(shuffle=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=25000)
    ap.add_argument("--workdir", default=str(ROOT / "runs" / "bench-train-budget"))
    ap.add_argument("--updates", type=int, default=15, help="updates per setting and round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--models", type=int, default=19, help="trained models of the grid (cpu-science-2: 19)")
    ap.add_argument("--max-epoch", type=int, default=20, help="the grid's epoch budget")
    ap.add_argument("--cores", type=int, default=2)
    a = ap.parse_args()

    import numpy as np
    import torch

    from mwemt.nmt.cpu import describe

    warnings.filterwarnings("ignore")
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("fairseq").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    workdir = Path(a.workdir)
    data = build_data(workdir, a.pairs)
    print(describe(), flush=True)
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    (base_job, base_bin), (w_job, w_bin) = data["baseline"], data["mwe-weighted-loss"]
    flags = np.load(w_bin / "train.en-it.mweflags.npy")
    specs = {"fused, max_tokens 2048": (replace(base_job, train=replace(base_job.train, max_tokens=2048)), base_bin),
             "fused, max_tokens 4096": (base_job, base_bin),
             "MWE-weighted x3, 4096": (w_job, w_bin)}
    settings = {}
    for name, (job, data_bin) in specs.items():
        trainer, n_sent, n_batches, batches = make_trainer(job, data_bin, workdir / "ckpt")
        settings[name] = {"trainer": trainer, "batches": batches, "sentences": n_sent, "per_epoch": n_batches,
                          "cpu": 0.0, "updates": 0, "sent": 0}
    print(f"{a.pairs} training pairs ({int(flags.sum())} flagged idiomatic for the weighted loss); small preset, "
          f"bf16 autocast, 1 thread; {a.rounds} rounds x {a.updates} updates per setting", flush=True)
    names = list(settings)
    for r in range(a.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            s = settings[name]
            t0 = time.process_time()
            for _ in range(a.updates):
                sample = next(s["batches"])
                s["sent"] += int(sample["nsentences"])
                s["trainer"].train_step([sample])
            s["cpu"] += time.process_time() - t0
            s["updates"] += a.updates
        print(f"  round {r + 1}/{a.rounds} done; "
              f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}", flush=True)
    print()
    print(f"{'setting':<24} {'upd/CPU-min':>11} {'sent/upd':>8} {'upd/epoch':>9} {'CPU-min/epoch':>13} {'ratio':>6}")
    ref = None
    for name, s in settings.items():
        upm = s["updates"] / s["cpu"] * 60
        epoch_min = s["per_epoch"] / upm
        ref = ref or s["cpu"] / s["updates"]
        print(f"{name:<24} {upm:>11.1f} {s['sent'] / s['updates']:>8.1f} {s['per_epoch']:>9d} {epoch_min:>13.2f} "
              f"{ref / (s['cpu'] / s['updates']):>6.3f}")
    grid = settings["fused, max_tokens 4096"]
    epoch_min = grid["per_epoch"] / (grid["updates"] / grid["cpu"] * 60)
    total = a.models * a.max_epoch * epoch_min
    print(f"\ngrid worst case (max_tokens 4096): {a.models} models x {a.max_epoch} epochs x {epoch_min:.2f} CPU-min = "
          f"{total:.0f} CPU-min = {total / a.cores:.0f} min on {a.cores} cores (training only, no early stop)")
    w, f = settings["MWE-weighted x3, 4096"], grid
    print(f"MWE-weighted loss: {(w['cpu'] / w['updates']) / (f['cpu'] / f['updates']):.3f}x the CPU time per update "
          f"of the fused loss (same batches)")
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
