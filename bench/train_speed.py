"""CPU training speed-ups against today's fp32 default, measured side by side in one run; and MFU.

    python bench/train_speed.py                        # Tatoeba EN-IT, 100k pairs, the `small` preset
    python bench/train_speed.py --pairs 2000 --updates 3 --rounds 1 --thread-rounds 1   # a quick look

Every setting trains the `small` preset (128-dim 3+3 transformer, FFN 512; lr 1e-3, warm-up 300)
on the same binarized data (joint BPE, max_tokens 2048) with the fairseq command line that
`mwemt train` builds (`fairseq_train_args`), in its own worker process, from the same seed. So the
settings see the same batches in the same order and differ only in what is named:

- ``fp32 (before)``: what `mwemt train` did before this bench: fairseq's label_smoothed_cross_entropy,
  fp32, glibc's default malloc;
- ``fp32 seed 2``: the same with another seed: how far validation loss moves by chance;
- ``+ fused loss``: `label_smoothed_cross_entropy_fused` (same values, fewer vocabulary-sized passes);
- ``+ malloc``: glibc keeps large buffers (`mwemt.nmt.cpu.allocator_env`);
- ``+ bf16``: ``--autocast-bf16`` (train.precision auto on this CPU): the new default;
- the new default with max_tokens 4096, with a 4k vocabulary, with all embeddings tied.

Timing runs in rounds; within a round the settings run two at a time (one per core, one thread
each, the pairing rotates every round) so each one meets the same load as the others. Speed is
target *words* per second (Moses tokens of the reference, so vocabularies compare), by CPU time of
the worker (work done, robust to other jobs) and by wall time. After the last round each worker
reports the validation NLL per target word (fp32, no dropout) after the same number of updates:
the check is that it stays within 2% of ``fp32 (before)``.

Threads: the new default run as 1 thread x 2 jobs (two workers at once: aggregate words/s) and as
2 threads x 1 job, alternating, by wall time.

MFU: model FLOPs per target word (matrix products of forward and backward, counted by
torch.utils.flop_counter on real batches) times words/s, as a share of the peak of a 4096^3 matrix
product measured here, in fp32 and bf16, on one core by CPU time (the two cores: twice that).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TSV = ROOT.parent / "shared" / "data" / "parallel" / "tatoeba-en-it" / "eng-ita.anki.tsv"
FIXTURE = ROOT / "tests" / "fixtures" / "nmt"


# ---------------------------------------------------------------- data

def build_data(workdir: Path, pairs: int, vocabs: list[int]) -> tuple[dict[int, Path], dict]:
    """Split, tokenize, segment (joint BPE) and binarize with the stages `mwemt train` runs (cached in
    ``workdir``): one baseline system per vocabulary size, on the same training sample."""
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import prepare_system

    if TSV.exists():
        data = {"split": {"tsv": str(TSV), "valid_size": 1000, "test_size": 2000, "train_size": pairs}}
        source = f"Tatoeba EN-IT, a seeded sample of {pairs} training pairs of the seed-1 split, 1,000+ valid"
    else:
        data = {"train": str(FIXTURE / "train"), "valid": str(FIXTURE / "valid")}
        source = "test fixture (shared data not found)"
    size = {v: v if TSV.exists() else min(v, 400) for v in vocabs}    # the fixture is tiny
    systems = {f"vocab{n}": {"encoding": "none", "subword": {"vocab_size": n}} for n in size.values()}
    cfg = config_from_data({"src_lang": "en", "tgt_lang": "it", "data": data, "systems": systems})
    bins = {v: prepare_system(cfg, f"vocab{n}", workdir, progress=False)[1] for v, n in size.items()}
    return bins, {"data": source}


def word_counts(data_bin: Path, split: str) -> list[int]:
    """Target words (Moses tokens) per sentence id of ``split``: the tokenized text the prepare stage's
    segmented input was made from (followed through the stages' DONE records)."""
    import json

    def inputs(stage_dir: Path) -> dict:
        return json.loads((stage_dir / "DONE").read_text(encoding="utf-8"))["inputs"]

    segmented = Path(inputs(data_bin.parent)[f"{split}_tgt"]["path"])
    tokenized = Path(inputs(segmented.parent.parent)[f"{split}_tgt"]["path"])
    return [len(line.split()) for line in tokenized.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- one setting in one process

def fairseq_args(spec: dict) -> list[str]:
    """`mwemt train`'s fairseq-train command line for this setting (validation by loss, no BLEU)."""
    from mwemt.nmt.config import ModelConfig, TrainConfig, with_preset
    from mwemt.nmt.train import FairseqJob, fairseq_train_args

    model, train = with_preset(ModelConfig(preset="small", share=spec["share"]),
                               TrainConfig(max_tokens=spec["max_tokens"], precision=spec["precision"],
                                           early_stop="loss", max_update=100000))
    job = FairseqJob(model, train, "en", "it", factors=1, seed=spec["seed"])
    args = fairseq_train_args(job, Path(spec["data_bin"]), Path(spec["save_dir"]), "cpu")
    if not spec["fused"]:
        args[args.index("label_smoothed_cross_entropy_fused")] = "label_smoothed_cross_entropy"
    return args + ["--num-workers", "0", "--disable-validation"]


def worker(conn, spec: dict) -> None:
    """Serve commands for one training setting: train N updates, validate, count FLOPs."""
    import torch

    torch.set_num_threads(spec["threads"])
    logging.basicConfig(level=logging.WARNING)
    import warnings

    warnings.filterwarnings("ignore")
    from fairseq import options, tasks
    from fairseq.dataclass.utils import convert_namespace_to_omegaconf
    from fairseq.trainer import Trainer

    import mwemt.nmt.fairseq_plugin  # noqa: F401

    logging.getLogger("fairseq").setLevel(logging.ERROR)
    cfg = convert_namespace_to_omegaconf(options.parse_args_and_arch(options.get_training_parser(),
                                                                     fairseq_args(spec)))
    task = tasks.setup_task(cfg.task)
    task.load_dataset("train")
    task.load_dataset("valid")
    model = task.build_model(cfg.model)
    criterion = task.build_criterion(cfg.criterion)
    trainer = Trainer(cfg, task, model, criterion)
    train_words = word_counts(Path(spec["data_bin"]), "train")
    state = {"epoch": 0, "batches": None}

    def next_sample():
        while True:
            if state["batches"] is not None:
                try:
                    return next(state["batches"])
                except StopIteration:
                    pass
            state["epoch"] += 1
            itr = trainer.get_train_iterator(epoch=state["epoch"], load_dataset=False)
            state["batches"] = itr.next_epoch_itr(shuffle=True)

    conn.send({"params": sum(p.numel() for p in model.parameters())})
    while True:
        cmd, arg = conn.recv()
        if cmd == "train":
            tokens = words = 0
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(arg):
                sample = next_sample()
                tokens += int(sample["ntokens"])
                words += sum(train_words[i] for i in sample["id"].tolist())
                trainer.train_step([sample])
            conn.send({"tokens": tokens, "words": words, "cpu": time.process_time() - cpu,
                       "wall": time.perf_counter() - wall, "updates": trainer.get_num_updates()})
        elif cmd == "valid":
            conn.send(valid_nll_per_word(task, model, criterion, Path(spec["data_bin"])))
        elif cmd == "flops":
            conn.send(flops_per_word(task, model, criterion, next_sample, train_words, arg))
        elif cmd == "stop":
            conn.send(None)
            return


def valid_nll_per_word(task, model, criterion, data_bin: Path) -> dict:
    """Validation NLL (nats) per target word and per target token; fp32, eval mode."""
    import torch

    words = word_counts(data_bin, "valid")
    itr = task.get_batch_iterator(dataset=task.dataset("valid"), max_tokens=4096, max_positions=(1024, 1024),
                                  ignore_invalid_inputs=False, required_batch_size_multiple=1,
                                  seed=1).next_epoch_itr(shuffle=False)
    model.eval()
    nll = tokens = n_words = 0.0
    with torch.no_grad():
        for sample in itr:
            _, _, out = criterion(model, sample)
            nll += float(out["nll_loss"])
            tokens += int(out["ntokens"])
            n_words += sum(words[i] for i in sample["id"].tolist())
    model.train()
    return {"nll_per_word": nll / n_words, "nll_per_token": nll / tokens, "valid_words": n_words}


def flops_per_word(task, model, criterion, next_sample, train_words, batches: int) -> dict:
    """Matrix-product FLOPs of forward + backward per target word, on ``batches`` real batches."""
    from torch.utils.flop_counter import FlopCounterMode

    flops = words = tokens = 0
    for _ in range(batches):
        sample = next_sample()
        counter = FlopCounterMode(display=False)
        with counter:
            with task.autocast(model):
                loss, _, _ = criterion(model, sample)
            loss.backward()
        model.zero_grad()
        flops += counter.get_total_flops()
        words += sum(train_words[i] for i in sample["id"].tolist())
        tokens += int(sample["ntokens"])
    return {"flops_per_word": flops / words, "flops_per_token": flops / tokens}


class Worker:
    """A setting's process; `start` and `result` split a command so that two can run at once."""

    def __init__(self, ctx, spec: dict, env: dict):
        self.spec = spec
        self.conn, child = ctx.Pipe()
        saved = dict(os.environ)
        os.environ.update(env)                  # malloc settings are read when the process starts
        try:
            self.proc = ctx.Process(target=worker, args=(child, spec), daemon=True)
            self.proc.start()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        self.info = None

    def ready(self) -> Worker:
        """Wait until the process has built its model (processes start in parallel, then wait here)."""
        if self.info is None:
            self.info = self.conn.recv()
        return self

    def start(self, cmd: str, arg=None) -> None:
        self.conn.send((cmd, arg))

    def result(self):
        return self.conn.recv()

    def call(self, cmd: str, arg=None):
        self.start(cmd, arg)
        return self.result()

    def stop(self) -> None:
        self.call("stop")
        self.proc.join()


# ---------------------------------------------------------------- peak

def matmul_peak(dtype_name: str, n: int = 4096, reps: int = 3) -> float:
    """GFLOP/s of one core: an n^3 matrix product on one thread, per CPU-second (best of ``reps``).

    CPU time, like the training speeds: the work a core does whatever else runs. The two cores'
    peak is twice this (a 2-thread product timed by the wall clock measures the other jobs' load).
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    dtype = getattr(torch, dtype_name)
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    a @ b
    best = 0.0
    for _ in range(reps):
        t = time.process_time()
        a @ b
        best = max(best, 2 * n ** 3 / (time.process_time() - t) / 1e9)
    torch.set_num_threads(before)
    return best


# ---------------------------------------------------------------- the run

def settings(a, data: dict[int, Path], workdir: Path) -> list[dict]:
    from mwemt.nmt.cpu import allocator_env

    base = {"seed": a.seed, "share": "decoder", "max_tokens": a.max_tokens, "threads": 1,
            "data_bin": str(data[a.vocab]), "vocab": a.vocab}
    fast = {**base, "fused": True, "precision": "auto", "env": allocator_env()}
    out = [
        {"name": "fp32 (before)", **base, "fused": False, "precision": "fp32", "env": {}},
        {"name": "fp32 seed 2", **base, "seed": a.seed + 1, "fused": False, "precision": "fp32", "env": {}},
        {"name": "+ fused loss", **base, "fused": True, "precision": "fp32", "env": {}},
        {"name": "+ malloc", **base, "fused": True, "precision": "fp32", "env": allocator_env()},
        {"name": "+ bf16 = new default", **fast},
        {"name": "new, max_tokens x2", **fast, "max_tokens": 2 * a.max_tokens},
        {"name": f"new, vocab {a.small_vocab}", **fast, "data_bin": str(data[a.small_vocab]),
         "vocab": a.small_vocab},
        {"name": "new, tie all embeddings", **fast, "share": "all"},
    ]
    for i, s in enumerate(out):
        s["save_dir"] = str(workdir / "unused-checkpoints" / str(i))
    return out


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "uptime unavailable"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", default=str(ROOT / "runs" / "bench-train-speed"))
    ap.add_argument("--pairs", type=int, default=100000, help="training pairs (default: %(default)s)")
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--small-vocab", type=int, default=4000)
    ap.add_argument("--max-tokens", type=int, default=2048)
    ap.add_argument("--updates", type=int, default=20, help="updates per setting per round")
    ap.add_argument("--rounds", type=int, default=5, help="rounds; every setting trains updates x rounds")
    ap.add_argument("--thread-rounds", type=int, default=2)
    ap.add_argument("--thread-updates", type=int, default=5,
                    help="updates per layout per thread round (2 threads on a loaded machine are slow)")
    ap.add_argument("--flop-batches", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the results here")
    a = ap.parse_args()

    import multiprocessing as mp

    import torch

    from mwemt.nmt.cpu import allocator_env, describe

    logging.basicConfig(level=logging.WARNING)
    workdir = Path(a.workdir)
    print(describe(), f"| torch {torch.__version__}", flush=True)
    print(f"load before: {uptime()}", flush=True)
    data, meta = build_data(workdir, a.pairs, sorted({a.vocab, a.small_vocab}))
    peaks = {d: matmul_peak(d) for d in ("float32", "bfloat16")}
    ctx = mp.get_context("spawn")
    specs = settings(a, data, workdir)
    print(f"data: {meta['data']}; preset small, max_tokens {a.max_tokens}; {a.rounds} rounds x {a.updates} "
          f"updates per setting, two settings at a time (1 thread each)", flush=True)
    workers = [w.ready() for w in [Worker(ctx, s, s["env"]) for s in specs]]
    totals = {s["name"]: {"tokens": 0, "words": 0, "cpu": 0.0, "wall": 0.0} for s in specs}
    for w in workers:                                   # warm-up: allocator, first batches
        w.call("train", 2)
    for r in range(a.rounds):
        order = workers[r % len(workers):] + workers[:r % len(workers)]
        if r % 2:
            order = order[::-1]
        for pair in itertools.zip_longest(order[0::2], order[1::2]):
            pair = [w for w in pair if w is not None]
            for w in pair:
                w.start("train", a.updates)
            for w in pair:
                res = w.result()
                for k in totals[w.spec["name"]]:
                    totals[w.spec["name"]][k] += res[k]
        print(f"  round {r + 1}/{a.rounds} done; {uptime()}", flush=True)
    valid = {w.spec["name"]: w.call("valid") for w in workers}
    flops = {w.spec["name"]: w.call("flops", a.flop_batches) for w in workers}
    for w in workers:
        w.stop()

    peaks = {k: max(v, matmul_peak(k)) for k, v in peaks.items()}        # again, after: the best of both
    print(f"load after the settings: {uptime()}", flush=True)

    # ------------------------------------------------------------ report of the settings
    ref = specs[0]["name"]
    speed = {n: {"cpu": t["words"] / t["cpu"], "wall": t["words"] / t["wall"]} for n, t in totals.items()}
    print(f"\nmatmul peak, 4096^3 on one core (GFLOP per CPU-second): fp32 {peaks['float32']:.0f}, "
          f"bf16 {peaks['bfloat16']:.0f}; the two cores: twice that")
    print(f"\n{'setting':26s} {'words/CPU-s':>11s} {'ratio':>6s} {'wall ratio':>10s} {'valid NLL/word':>14s} "
          f"{'vs fp32':>8s} {'GFLOP/s':>8s} {'MFU/core':>8s}")
    rows = {}
    for s in specs:
        n = s["name"]
        ratio = speed[n]["cpu"] / speed[ref]["cpu"]
        wall_ratio = speed[n]["wall"] / speed[ref]["wall"]
        loss = valid[n]["nll_per_word"]
        dloss = loss / valid[ref]["nll_per_word"] - 1
        gflops = flops[n]["flops_per_word"] * speed[n]["cpu"] / 1e9
        bf16 = s["precision"] != "fp32"
        peak = peaks["bfloat16" if bf16 else "float32"]
        rows[n] = {"words_per_cpu_s": speed[n]["cpu"], "words_per_wall_s": speed[n]["wall"], "ratio_cpu": ratio,
                   "ratio_wall": wall_ratio, **valid[n], "loss_vs_fp32": dloss, "gflops_per_s": gflops,
                   "mfu_per_core": gflops / peak, "mfu_peak": "bf16" if bf16 else "fp32", **flops[n],
                   "updates": a.rounds * a.updates + 2, **totals[n]}
        print(f"{n:26s} {speed[n]['cpu']:11.0f} {ratio:6.3f} {wall_ratio:10.3f} {loss:14.4f} {dloss:+8.2%} "
              f"{gflops:8.1f} {gflops / peak:8.1%}" + (" (bf16 peak)" if bf16 else ""))
    print(f"(validation NLL in nats per target word after {a.rounds * a.updates + 2} updates, fp32 eval; "
          f"{valid[ref]['valid_words']:.0f} words)")
    best = max((n for n in rows if n == ref or (n != specs[1]["name"] and abs(rows[n]["loss_vs_fp32"]) <= 0.02)),
               key=lambda n: rows[n]["ratio_cpu"])
    print(f"\nbest setting within the 2% loss check: {best}: words/s ratio {rows[best]['ratio_cpu']:.3f} "
          f"(CPU time), {rows[best]['ratio_wall']:.3f} (wall); target >= 1.5", flush=True)

    new = next(s for s in specs if s["name"].endswith("new default"))
    fpw = flops[new["name"]]["flops_per_word"]
    # threads: the new default as 1 thread x 2 jobs vs 2 threads x 1 job
    thread_totals = {"1 thread x 2 jobs": [0, 0.0], "2 threads x 1 job": [0, 0.0]}
    two_jobs = [Worker(ctx, {**new, "seed": new["seed"] + k}, allocator_env()) for k in range(2)]
    one_job = Worker(ctx, {**new, "threads": 2}, allocator_env())
    for w in (*two_jobs, one_job):
        w.ready()
    for w in (*two_jobs, one_job):
        w.call("train", 2)
    for r in range(a.thread_rounds):
        for layout in (("1 thread x 2 jobs", "2 threads x 1 job") if r % 2 == 0 else
                       ("2 threads x 1 job", "1 thread x 2 jobs")):
            group = two_jobs if layout.startswith("1 thread") else [one_job]
            t = time.perf_counter()
            for w in group:
                w.start("train", a.thread_updates)
            words = sum(w.result()["words"] for w in group)
            thread_totals[layout][0] += words
            thread_totals[layout][1] += time.perf_counter() - t
    for w in (*two_jobs, one_job):
        w.stop()
    print(f"load after: {uptime()}", flush=True)

    tw = {k: v[0] / v[1] for k, v in thread_totals.items()}
    print(f"\nthreads, new default, aggregate words per wall-second: 1 thread x 2 jobs {tw['1 thread x 2 jobs']:.0f}, "
          f"2 threads x 1 job {tw['2 threads x 1 job']:.0f}; ratio (1x2)/(2x1) "
          f"{tw['1 thread x 2 jobs'] / tw['2 threads x 1 job']:.2f}")
    print(f"MFU of the two cores (bf16 peak 2 x {peaks['bfloat16']:.0f} GFLOP/s), by wall time under the load "
          f"above: " + ", ".join(f"{k} {fpw * v / 1e9 / (2 * peaks['bfloat16']):.1%}" for k, v in tw.items()))
    if a.json:
        from mwemt.nmt.cpu import cpu_info
        from mwemt.provenance import manifest, write_json

        info = cpu_info()
        write_json(a.json, manifest("bench.train_speed", config=vars(a), seed=a.seed, results={
            "cpu": {"model": info.model, "flags": sorted(f for f in info.flags if "avx" in f or "amx" in f)},
            "settings": rows, "threads": tw, "peak_gflops_per_core": peaks,
            "uptime_after": uptime(), **meta}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
