"""Speed of a 3-factor (IOB, concat) model relative to the baseline, measured side by side in one run.

    python bench/factor_speed.py                          # Tatoeba EN-IT from ../shared/data
    python bench/factor_speed.py --sizes tiny --pairs 2000 --updates 10   # quicker

Both models train on the *same* binarized data: the baseline reads only the word (piece) stream
of the factored data directory (``--source-factors 1``), so the batches are identical and the
only difference is the factored embedding. Timing alternates the two models in rounds (order
flipped every round) so the load of a shared machine hits both alike.

- training: target tokens per second (fairseq's "wps") over fairseq ``Trainer.train_step`` calls,
  batches from fairseq's own epoch iterator, collated in this process (``--num-workers 0``) so
  that the factor collation is measured too;
- decoding: sentences per second, beam search with fairseq's generator on identical batches of
  validation sentences; every output is forced to the same length (min_len = max_len) so an
  untrained model's babbling does not make one model do more work than the other.

Two clocks: CPU time of this process (``time.process_time``; with one thread it is the work done,
whatever else runs on the machine) and wall time (what a user waits, noisy on a shared machine).
The ratios by CPU time are the ones to compare with the targets.

Targets: both ratios >= 0.9 at the paper-small size.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TSV = ROOT.parent / "shared" / "data" / "parallel" / "tatoeba-en-it" / "eng-ita.anki.tsv"
LEXICON = ROOT.parent / "shared" / "data" / "lexicons" / "wordnet-mwe" / "derived" / "oewn_english_mwe_lemmas.tsv"
FIXTURE = ROOT / "tests" / "fixtures" / "nmt"
ARCH = {"tiny": "factored_transformer_tiny", "paper-small": "factored_transformer_paper_small"}


def build_data(workdir: Path, pairs: int, vocab: int) -> tuple[Path, dict]:
    """Annotate (IOB), segment and binarize with the stages `mwemt train` runs (cached in ``workdir``)."""
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import prepare_system

    if TSV.exists() and LEXICON.exists():
        data = {"split": {"tsv": str(TSV), "valid_size": 500, "test_size": 500, "train_size": pairs},
                "lexicon": str(LEXICON), "lexicon_format": "oewn"}
        source = f"Tatoeba EN-IT, a seeded sample of {pairs} training pairs of the seed-1 split; OEWN MWE lexicon"
    else:
        data = {"train": str(FIXTURE / "train"), "valid": str(FIXTURE / "valid"),
                "lexicon": str(FIXTURE / "lexicon.txt"), "lexicon_format": "list"}
        source = "test fixture (shared data not found)"
        vocab = min(vocab, 400)
    cfg = config_from_data({"src_lang": "en", "tgt_lang": "it", "data": data, "subword": {"vocab_size": vocab},
                            "systems": {"iob": {"encoding": "iob"}}})
    _, data_bin, _ = prepare_system(cfg, "iob", workdir)
    return data_bin, {"data": source, "vocab_size": vocab}


def make_trainer(data_bin: Path, arch: str, factors: int, max_tokens: int, seed: int):
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.trainer import Trainer

    from mwemt.nmt.train import PLUGIN_DIR

    argv = [str(data_bin), "--user-dir", str(PLUGIN_DIR), "--task", "factored_translation",
            "--source-factors", str(factors), "--arch", arch, "--cpu", "--seed", str(seed),
            "--optimizer", "adam", "--lr", "5e-4", "--lr-scheduler", "inverse_sqrt", "--warmup-updates", "100",
            "--criterion", "label_smoothed_cross_entropy", "--label-smoothing", "0.1",
            "--max-tokens", str(max_tokens), "--share-decoder-input-output-embed", "--dropout", "0.1",
            "--required-batch-size-multiple", "1", "--num-workers", "0"]
    args = options.parse_args_and_arch(options.get_training_parser(), argv)
    cfg = convert_namespace_to_omegaconf(args)
    task = tasks.setup_task(cfg.task)
    task.load_dataset("train")
    task.load_dataset("valid")
    model = task.build_model(cfg.model)
    trainer = Trainer(cfg, task, model, task.build_criterion(cfg.criterion))
    run = {"task": task, "model": model, "trainer": trainer, "epoch": 0,
           "params": sum(p.numel() for p in model.parameters())}
    new_epoch(run)
    return run


def new_epoch(run: dict) -> None:
    run["epoch"] += 1
    itr = run["trainer"].get_train_iterator(epoch=run["epoch"], load_dataset=False)
    run["batches"] = itr.next_epoch_itr(shuffle=True)


def next_sample(run: dict):
    try:
        return next(run["batches"])
    except StopIteration:
        new_epoch(run)
        return next(run["batches"])


def train_chunk(run: dict, updates: int) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, target tokens) for ``updates`` training steps."""
    tokens = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(updates):
        sample = next_sample(run)
        tokens += int(sample["ntokens"])
        run["trainer"].train_step([sample])
    return time.process_time() - cpu, time.perf_counter() - wall, tokens


def decode_batches(task, n_sentences: int, batch_size: int) -> list:
    ds = task.dataset("valid")
    ids = list(range(min(n_sentences, len(ds))))
    ids.sort(key=lambda i: -int(ds.src_sizes[i]))
    return [ds.collater([ds[i] for i in ids[k:k + batch_size]]) for k in range(0, len(ids), batch_size)]


def decode_chunk(run: dict, batches: list, out_len: int, beam: int) -> tuple[float, int]:
    import torch

    task, model = run["task"], run["model"]
    model.eval()
    gen = task.build_generator([model], argparse.Namespace(beam=beam, max_len_a=0, max_len_b=out_len,
                                                           min_len=out_len))
    cpu, wall = time.process_time(), time.perf_counter()
    with torch.no_grad():
        n = sum(len(task.inference_step(gen, [model], b)) for b in batches)
    model.train()
    return time.process_time() - cpu, time.perf_counter() - wall, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default=str(ROOT / "runs" / "bench-factor-speed"))
    ap.add_argument("--pairs", type=int, default=20000, help="training pairs (default: %(default)s)")
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--sizes", nargs="+", default=["tiny", "paper-small"], choices=sorted(ARCH))
    ap.add_argument("--updates", type=int, default=20, help="updates per model per round")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--max-tokens", type=int, default=4096)
    ap.add_argument("--decode-sentences", type=int, default=200)
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--out-len", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the results here")
    a = ap.parse_args()

    import torch

    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(a.threads)
    import mwemt.nmt.fairseq_plugin  # noqa: F401

    logging.getLogger("fairseq").setLevel(logging.WARNING)
    from mwemt.nmt.cpu import describe

    print(describe(), f"| torch {torch.__version__}", flush=True)
    data_bin, meta = build_data(Path(a.workdir), a.pairs, a.vocab)
    results = {"config": vars(a), **meta, "sizes": {}}
    print(f"data: {meta['data']}; {a.rounds} rounds x {a.updates} updates per model, max_tokens {a.max_tokens}, "
          f"{a.threads} threads", flush=True)
    for size in a.sizes:
        runs = {"baseline": make_trainer(data_bin, ARCH[size], 1, a.max_tokens, a.seed),
                "factored": make_trainer(data_bin, ARCH[size], 3, a.max_tokens, a.seed)}
        for run in runs.values():
            train_chunk(run, 2)                       # warm-up: allocator, first-batch costs
        train = {k: [0.0, 0.0, 0] for k in runs}
        for r in range(a.rounds):
            for name in (["baseline", "factored"] if r % 2 == 0 else ["factored", "baseline"]):
                for i, x in enumerate(train_chunk(runs[name], a.updates)):
                    train[name][i] += x
        batches = {k: decode_batches(runs[k]["task"], a.decode_sentences, 32) for k in runs}
        decode = {k: [0.0, 0.0, 0] for k in runs}
        for r in range(max(2, a.rounds // 2)):
            for name in (["baseline", "factored"] if r % 2 == 0 else ["factored", "baseline"]):
                for i, x in enumerate(decode_chunk(runs[name], batches[name], a.out_len, a.beam)):
                    decode[name][i] += x
        res = {"params": {k: runs[k]["params"] for k in runs}}
        for what, table, unit in (("train", train, "target_tokens_per_s"), ("decode", decode, "sentences_per_s")):
            for clock, i in (("cpu", 0), ("wall", 1)):
                speed = {k: v[2] / v[i] for k, v in table.items()}
                res[f"{what}_{unit}_{clock}"] = {k: round(v, 2) for k, v in speed.items()}
                res[f"{what}_ratio_{clock}"] = round(speed["factored"] / speed["baseline"], 3)
        results["sizes"][size] = res
        t_cpu, d_cpu = res["train_target_tokens_per_s_cpu"], res["decode_sentences_per_s_cpu"]
        print(f"{size:12s} train (tok/s per CPU-s): baseline {t_cpu['baseline']:7.0f}  factored "
              f"{t_cpu['factored']:7.0f}  ratio {res['train_ratio_cpu']:.3f} (wall {res['train_ratio_wall']:.3f})  |  "
              f"decode beam {a.beam} (sent/CPU-s): baseline {d_cpu['baseline']:6.1f}  factored "
              f"{d_cpu['factored']:6.1f}  ratio {res['decode_ratio_cpu']:.3f} (wall {res['decode_ratio_wall']:.3f})",
              flush=True)
        del runs
    if a.json:
        from mwemt.provenance import manifest, write_json

        write_json(a.json, manifest("bench.factor_speed", config=vars(a), seed=a.seed, results=results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
