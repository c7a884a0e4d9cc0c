"""fairseq-train for one (factored) model, and the model directory `Translator` loads.

This is the training step of the pipeline (`mwemt.experiments.stages.train_stage`, run by both
`mwemt run` and `mwemt train`): the stage runner caches it and hands it its data; here we only run
fairseq and package the result. Training is stock ``fairseq-train`` (run as
``python -m fairseq_cli.train`` with our ``--user-dir``), so its data-parallel, multi-GPU and
multi-node modes work unchanged; it resumes from ``checkpoint_last.pt`` when the directory holds one
(the experiment runner never lets it: it gives an interrupted train stage an empty directory, as
fairseq's resume is not bit-identical). fairseq-train is started so that it dies with this process. We stream fairseq's JSON log into one line per validation (loss, perplexity, BLEU) and a
tqdm bar.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import MwemtError
from mwemt.fileio import atomic_write, sha256_file
from mwemt.nmt import modeldir
from mwemt.nmt.config import ModelConfig, TrainConfig
from mwemt.nmt.cpu import allocator_env, resolve_precision
from mwemt.preprocess.annotate import FACTOR_NAMES, AnnotatorConfig
from mwemt.process_tree import guarded_command
from mwemt.processes import resolve_device
from mwemt.provenance import manifest, versions, write_json

log = logging.getLogger(__name__)

PLUGIN_DIR = Path(__file__).resolve().parent / "fairseq_plugin"
CRITERION = "label_smoothed_cross_entropy_fused"
WEIGHTED_CRITERION = "mwe_weighted_label_smoothed_cross_entropy"   # train.mwe_loss_weight != 1


@dataclass(frozen=True)
class FairseqJob:
    """What fairseq-train is given besides the data: the model and training sections (presets
    applied), the languages, the number of source factors and the seed."""

    model: ModelConfig
    train: TrainConfig
    src_lang: str
    tgt_lang: str
    factors: int
    seed: int


# ---------------------------------------------------------------- fairseq-train

def fairseq_train_args(job: FairseqJob, data_bin: Path, save_dir: Path, device: str = "cpu") -> list[str]:
    """The fairseq-train command line (without the program)."""
    m, t = job.model, job.train
    src, tgt = job.src_lang, job.tgt_lang
    a = [str(data_bin), "--user-dir", str(PLUGIN_DIR), "--task", "factored_translation",
         "--source-lang", src, "--target-lang", tgt, "--source-factors", str(job.factors),
         "--arch", str(m.arch), "--seed", str(job.seed), "--dropout", str(m.dropout),
         "--factor-combine", m.factor_combine,
         "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--clip-norm", "1.0",
         "--lr", str(t.lr), "--lr-scheduler", "inverse_sqrt", "--warmup-updates", str(t.warmup_updates),
         "--warmup-init-lr", "1e-07",
         "--criterion", CRITERION if t.mwe_loss_weight == 1.0 else WEIGHTED_CRITERION, "--label-smoothing", "0.1",
         "--max-tokens", str(t.max_tokens), "--update-freq", str(t.update_freq),
         "--required-batch-size-multiple", "1",
         # batches are loaded in fairseq's own process: a data-loader process would outlive a kill -9 of the
         # run by up to 5 s (PyTorch's loader polls for its parent; docs/nmt.md, "Resuming, progress, reproducibility")
         "--num-workers", "0",
         "--save-dir", str(save_dir), "--patience", str(t.patience),
         "--log-format", "json", "--log-interval", str(t.log_interval)]
    # epoch checkpoints only where they are averaged (train.average_last): the last N are kept
    a += ["--keep-last-epochs", str(t.average_last)] if t.average_last else ["--no-epoch-checkpoints"]
    if t.patience_updates or t.min_improvement:   # the plugin's stopping rule (fairseq_plugin/stopping.py)
        a += ["--stop-patience-updates", str(t.patience_updates), "--stop-min-improvement", str(t.min_improvement)]
    if t.mwe_loss_weight != 1.0:   # the data directory holds the training sentences' MWE flags
        a += ["--mwe-loss-weight", str(t.mwe_loss_weight)]
    if m.factor_embed_dims:
        a += ["--factor-embed-dims", ",".join(map(str, m.factor_embed_dims))]
    if m.share == "decoder":
        a.append("--share-decoder-input-output-embed")
    elif m.share == "all":
        a.append("--share-all-embeddings")
    for k, v in m.args.items():
        flag = "--" + str(k).replace("_", "-")
        if v is True:
            a.append(flag)
        elif v is not False and v is not None:
            a += [flag, str(v)]
    if t.max_epoch:
        a += ["--max-epoch", str(t.max_epoch)]
    if t.max_update:
        a += ["--max-update", str(t.max_update)]
    if t.validate_interval_updates:
        a += ["--validate-interval-updates", str(t.validate_interval_updates),
              "--save-interval-updates", str(t.validate_interval_updates),
              "--keep-interval-updates", str(max(1, t.average_last))]
    if t.early_stop == "bleu":
        a += ["--eval-bleu", "--eval-bleu-args", json.dumps({"beam": t.eval_beam, "max_len_a": float(t.eval_max_len[0]),
                                                       "max_len_b": int(t.eval_max_len[1])}),
              "--eval-bleu-detok", "moses",
              "--eval-bleu-detok-args", json.dumps({"source_lang": src, "target_lang": tgt}),
              "--eval-bleu-remove-bpe", "sentencepiece",
              "--best-checkpoint-metric", "bleu", "--maximize-best-checkpoint-metric"]
    if device == "cpu":
        a.append("--cpu")
    if resolve_precision(t.precision, device)[0] == "bf16":
        a.append("--autocast-bf16")
    if t.distributed_world_size > 1:
        if device == "cpu":
            # world size and ranks come from torchrun (see fairseq_command); PyTorch's DDP wrapper
            # wants GPU device ids, fairseq's legacy_ddp all-reduces CPU gradients over gloo
            a += ["--distributed-backend", "gloo", "--ddp-backend", "legacy_ddp"]
        else:
            a += ["--distributed-world-size", str(t.distributed_world_size)]
    a += [str(x) for x in t.extra_args]
    return a


_MMAP_INDEX_MAGIC = b"MMIDIDX\x00\x00"


def indexed_sizes(idx: Path):
    """The item lengths of a fairseq mmap index (``.idx``: magic, version 1, dtype code, count, then the
    int32 sizes), as a numpy array; None when the file is missing or not such an index. Read directly: fairseq's
    ``MMapIndexedDataset(...).sizes`` is a view of a memory map that closes with the object (reading it afterwards
    crashed the stage worker with SIGSEGV), and the stage worker need not import fairseq at all."""
    import struct

    import numpy as np

    try:
        with open(idx, "rb") as fh:
            head = fh.read(26)
            if len(head) < 26 or head[:9] != _MMAP_INDEX_MAGIC or struct.unpack("<Q", head[9:17])[0] != 1:
                return None
            count = struct.unpack("<Q", head[18:26])[0]
            sizes = np.fromfile(fh, dtype="<i4", count=count)
    except OSError:
        return None
    return sizes if len(sizes) == count else None


def check_batch_room(job: FairseqJob, data_bin: Path) -> None:
    """Refuse, before fairseq starts, a ``train.max_tokens`` smaller than the longest sentence pair of the
    training or validation data (in pieces, with the end of sentence): fairseq would stop with a traceback
    ("exceeds max_tokens limit") once it builds its batches. A pair counts its longer side."""
    import numpy as np

    src, tgt = job.src_lang, job.tgt_lang
    worst = None   # (pieces, split, pair number, source pieces, target pieces)
    for split in ("train", "valid"):
        prefix = data_bin / f"{split}.{src}-{tgt}"
        sizes = [indexed_sizes(Path(f"{prefix}.{lang}.idx")) for lang in (src, tgt)]
        if sizes[0] is None or sizes[1] is None or not len(sizes[0]) or len(sizes[0]) != len(sizes[1]):
            continue
        pair = np.maximum(sizes[0], sizes[1])
        k = int(pair.argmax())
        if worst is None or int(pair[k]) > worst[0]:
            worst = (int(pair[k]), split, k + 1, int(sizes[0][k]), int(sizes[1][k]))
    if worst is not None and worst[0] > job.train.max_tokens:
        pieces, split, number, s_len, t_len = worst
        raise MwemtError(f"train.max_tokens {job.train.max_tokens} cannot hold the longest sentence pair: pair {number} "
                         f"of the {split} data is {pieces} pieces long with its end of sentence (source {s_len}, "
                         f"target {t_len}); set train.max_tokens to at least {pieces} (default 4096)")


def fairseq_command(job: FairseqJob, args: list[str], device: str) -> list[str]:
    """`python -m fairseq_cli.train ARGS`, or under torchrun for CPU data-parallel training."""
    n = job.train.distributed_world_size
    if n > 1 and device == "cpu":
        # fairseq spawns one process per GPU itself; on CPU, torchrun provides the processes (gloo)
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}",
                "-m", "mwemt.nmt.fairseq_launch", *args]
    return [sys.executable, "-m", "fairseq_cli.train", *args]


_LOG_RE = re.compile(r"\| (train_inner|train|valid) \| (\{.*\})\s*$")


class ProgressDisplay:
    """Turns fairseq's JSON log into a tqdm bar and one summary line per validation."""

    def __init__(self, train: TrainConfig, enabled: bool = True):
        from tqdm import tqdm

        self.metric = train.early_stop
        self.by_update = bool(train.max_update)
        total = train.max_update if self.by_update else train.max_epoch
        self.bar = tqdm(total=total, unit=" upd" if self.by_update else " epoch", desc="train",
                        disable=not enabled, dynamic_ncols=True)
        self.enabled = enabled
        self.pending: dict | None = None
        self.quiet = False
        self.history: list[dict] = []
        self.stop_reason = ""
        self.error_lines: list[str] = []
        self.last_lines: deque[str] = deque(maxlen=15)   # what a failure shows when it printed no error line

    def feed(self, line: str) -> None:
        if line.strip():
            self.last_lines.append(line.rstrip())
        if "early stop since" in line or "Stopping training due to" in line:
            self.stop_reason = line.split("|")[-1].strip()
        if "Error" in line or "Traceback" in line or self.error_lines:
            self.error_lines.append(line.rstrip())
        m = _LOG_RE.search(line)
        if not m:
            return
        kind, stats = m.group(1), json.loads(m.group(2))
        if kind == "train_inner":
            updates = int(float(stats.get("num_updates", 0)))
            self._advance(updates, float(stats.get("epoch", 0)))
            self.bar.set_postfix(loss=stats.get("loss"), lr=stats.get("lr"), wps=stats.get("wps"))
        elif kind == "train":
            self._advance(int(float(stats.get("train_num_updates", 0))), float(stats.get("epoch", 0)))
            # fairseq validates at the end of an epoch *before* it logs that epoch's training summary
            if self.pending is not None and self.pending["epoch"] == int(stats.get("epoch", -1)):
                self.pending["train_loss"] = _num(stats.get("train_loss"))
            self._flush()
        elif kind == "valid":
            self._flush()
            self.pending = {"epoch": int(stats.get("epoch", 0)),
                            "updates": int(float(stats.get("valid_num_updates", 0))),
                            "train_loss": None,
                            "valid_loss": _num(stats.get("valid_loss")), "valid_ppl": _num(stats.get("valid_ppl")),
                            "valid_bleu": _num(stats.get("valid_bleu")),
                            "best": _num(stats.get(f"valid_best_{self.metric}"))}

    def _flush(self) -> None:
        """Print (and keep) the pending validation row."""
        row, self.pending = self.pending, None
        if row is None:
            return
        self.history.append(row)
        parts = [f"epoch {row['epoch']:3d}", f"updates {row['updates']:6d}"]
        if row["train_loss"] is not None:
            parts.append(f"train loss {row['train_loss']:.3f}")
        parts.append(f"valid loss {row['valid_loss']:.3f} ppl {row['valid_ppl']:.2f}")
        if row["valid_bleu"] is not None:
            parts.append(f"BLEU {row['valid_bleu']:.2f}")
        if row["best"] is not None:
            parts.append(f"best {self.metric} {row['best']:.2f}")
        msg = " | ".join(parts)
        if self.quiet:
            return
        if self.enabled:
            self.bar.write(msg, file=sys.stderr)
        else:
            log.info(msg)

    def _advance(self, updates: int, epoch: float) -> None:
        target = updates if self.by_update else int(epoch)
        if target > self.bar.n:
            self.bar.update(target - self.bar.n)

    def close(self) -> None:
        self._flush()
        self.bar.close()


def _raise_on_sigterm():
    """While fairseq runs, SIGTERM unwinds us (and so stops fairseq) instead of orphaning it."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, handler)


def _restore_sigterm(previous) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def run_fairseq_train(job: FairseqJob, data_bin: Path, model_dir: Path, progress: bool = True) -> dict:
    """Run fairseq-train into ``model_dir/checkpoints`` (resuming from its last checkpoint)."""
    device = resolve_device(job.train.device)
    save_dir = model_dir / modeldir.CHECKPOINTS
    save_dir.mkdir(parents=True, exist_ok=True)
    check_batch_room(job, data_bin)
    args = fairseq_train_args(job, data_bin, save_dir, device)
    cmd = fairseq_command(job, args, device)
    env = dict(os.environ)
    threads = str(job.train.threads)
    env.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, PYTHONUNBUFFERED="1")
    if device == "cpu":
        env.update(allocator_env())
    precision, why = resolve_precision(job.train.precision, device)
    restore_single_best(save_dir)   # a resumed run continues from fairseq's own best, not from an average
    resumed = (save_dir / "checkpoint_last.pt").exists()
    log.info("%s fairseq-train (%s, %s threads, %s)%s", "resuming" if resumed else "starting", device, threads,
             why, ": " + " ".join(cmd) if log.isEnabledFor(logging.DEBUG) else "")
    display = ProgressDisplay(job.train, enabled=progress)
    start = time.time()
    with open(model_dir / "train.log", "a", encoding="utf-8") as logf:
        logf.write(f"\n# {time.strftime('%Y-%m-%d %H:%M:%S')} precision {precision} ({why})\n")
        logf.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n")
        # guarded: fairseq-train dies with this process, even when it is killed with SIGKILL
        proc = subprocess.Popen(guarded_command(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                text=True, encoding="utf-8", errors="replace", bufsize=1)
        previous = _raise_on_sigterm()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                logf.write(line)
                logf.flush()
                display.feed(line)
            code = proc.wait()
        except BaseException:
            proc.terminate()
            proc.wait()
            display.close()
            raise
        finally:
            _restore_sigterm(previous)
    display.close()
    if code != 0:
        raise MwemtError(failure_message(display, code, model_dir / "train.log"))
    if not (save_dir / "checkpoint_last.pt").exists():
        raise MwemtError(f"fairseq-train wrote no checkpoint; see {model_dir / 'train.log'}")
    history = validation_history(job.train, model_dir / "train.log")
    stop_reason = display.stop_reason or "max_epoch reached"
    summary = {"device": device, "precision": precision, "precision_reason": why,
               "wall_seconds": round(time.time() - start, 1), "resumed": resumed,
               "stop_reason": stop_reason, "converged": converged(stop_reason),
               "best": best_validation(job.train, history), "validations": history, "command": cmd}
    if job.train.average_last:
        summary["average"] = average_checkpoints(save_dir, job.train.average_last)
    return summary


def failure_message(display: ProgressDisplay, code: int, train_log: Path) -> str:
    """Why fairseq-train failed, from its output: our own error, its command-line parser's complaint (a bad
    ``train.extra_args`` or ``model.args``), else its last error lines (or last lines when it printed none)."""
    lines = list(display.error_lines) + list(display.last_lines)
    ours = next((ln.split("MwemtError: ", 1)[1] for ln in reversed(lines) if "MwemtError: " in ln), None)
    if ours:
        return ours
    usage = next((ln.split(": error: ", 1)[1] for ln in reversed(lines) if ": error: " in ln), None)
    if usage:
        return (f"fairseq-train refused its command line: {usage} (train.extra_args and model.args are passed "
                f"to it as they are; see {train_log})")
    tail = "\n".join(display.error_lines[-15:] or display.last_lines)
    return f"fairseq-train failed (exit {code}); see {train_log}:\n{tail}"


def converged(stop_reason: str) -> bool:
    """Whether training stopped because validation stopped improving (``train.patience``), not
    because its budget (``max_epoch``/``max_update``) ran out: a model that used its whole budget
    may still have been improving, and a grid report should say so."""
    return stop_reason.startswith("early stop")


def best_validation(train: TrainConfig, history: list[dict]) -> dict | None:
    """The validation row of the best checkpoint by ``train.early_stop`` (lowest loss, highest BLEU),
    with how many validations came after it: where the plateau began."""
    key = "valid_loss" if train.early_stop == "loss" else "valid_bleu"
    rows = [(k, r) for k, r in enumerate(history) if r.get(key) is not None]
    if not rows:
        return None
    best = (min if key == "valid_loss" else max)(r[key] for _, r in rows)
    k, row = [kr for kr in rows if kr[1][key] == best][-1]   # fairseq keeps the later checkpoint of a tie
    return {"epoch": row["epoch"], "updates": row["updates"], key: row[key],
            "validations_after": len(history) - 1 - k}


# ---------------------------------------------------------------- checkpoint averaging (train.average_last)

AVERAGED = "checkpoint_best.pt"            # the checkpoint `mwemt translate` loads: the average, when there is one
SINGLE_BEST = "checkpoint_best_single.pt"  # fairseq's own best, kept beside it
_EPOCH_CHECKPOINT = re.compile(r"checkpoint(\d+)\.pt$")
_INTERVAL_CHECKPOINT = re.compile(r"checkpoint_(\d+)_(\d+)\.pt$")


def last_checkpoints(save_dir: Path, n: int) -> list[Path]:
    """The last ``n`` epoch-end (``checkpointE.pt``) and interval (``checkpoint_E_U.pt``) checkpoints of
    ``save_dir``, oldest first: an epoch's interval checkpoints come before its end."""
    found = []
    for p in save_dir.glob("checkpoint*.pt"):
        if m := _EPOCH_CHECKPOINT.match(p.name):
            found.append(((int(m[1]), 1, 0), p))
        elif m := _INTERVAL_CHECKPOINT.match(p.name):
            found.append(((int(m[1]), 0, int(m[2])), p))
    return [p for _, p in sorted(found)[-n:]]


def average_checkpoints(save_dir: Path, n: int) -> dict:
    """Average the weights of the last ``n`` checkpoints (`last_checkpoints`) into `AVERAGED`; fairseq's
    own best becomes `SINGLE_BEST`. Floating-point weights are averaged (in float64, stored in their own
    type), others taken from the newest; the rest of the file is the newest checkpoint's, less its optimizer
    state (the average is for translation, not a resume point). Written atomically. Returns the record
    training.json keeps."""
    import torch

    import mwemt.nmt.fairseq_plugin  # noqa: F401  (fairseq's checkpoint types allowed by torch.load)

    paths = last_checkpoints(save_dir, n)
    if not paths:
        raise MwemtError(f"train.average_last {n}: {save_dir} holds no epoch or interval checkpoint to average")
    total: dict | None = None
    updates = []
    for p in paths:
        state = torch.load(p, map_location="cpu")
        updates.append(int(state["optimizer_history"][-1].get("num_updates", 0)))
        weights = state["model"]
        if total is None:
            total = {k: v.double().clone() if v.is_floating_point() else v for k, v in weights.items()}
        else:
            if weights.keys() != total.keys():
                raise MwemtError(f"{p} does not hold the same parameters as {paths[0]}: cannot average them")
            for k, v in weights.items():
                total[k] = total[k] + v.double() if v.is_floating_point() else v
    assert total is not None
    state["model"] = {k: (v / len(paths)).to(weights[k].dtype) if weights[k].is_floating_point() else v
                      for k, v in total.items()}
    state.pop("last_optimizer_state", None)
    has_best = (save_dir / AVERAGED).exists()
    record = {"last": n, "averaged": len(paths), "checkpoints": [p.name for p in paths], "updates": updates,
              "into": AVERAGED, "single_best": SINGLE_BEST if has_best else None}
    state.setdefault("extra_state", {})["mwemt_average"] = record
    if has_best:   # interrupted before the average is in place: `restore_single_best`
        os.replace(save_dir / AVERAGED, save_dir / SINGLE_BEST)
    with atomic_write(save_dir / AVERAGED, "wb") as fh:
        torch.save(state, fh)
    if len(paths) < n:
        log.warning("train.average_last %d: only %d checkpoint(s) to average (%s)", n, len(paths),
                    ", ".join(p.name for p in paths))
    log.info("averaged %s into %s", ", ".join(p.name for p in paths), save_dir / AVERAGED)
    return record


def restore_single_best(save_dir: Path) -> None:
    """Undo `average_checkpoints` before fairseq runs again in ``save_dir``: its own best back in place."""
    if (save_dir / SINGLE_BEST).exists():
        os.replace(save_dir / SINGLE_BEST, save_dir / AVERAGED)


def validation_history(train: TrainConfig, train_log: Path) -> list[dict]:
    """Every validation in a model's train.log, across resumed runs (one row each)."""
    replay = ProgressDisplay(train, enabled=False)
    replay.quiet = True
    with open(train_log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            replay.feed(line)
    replay.close()
    return replay.history


# ---------------------------------------------------------------- the model directory

def finish_model_dir(model_dir: Path, *, data_bin: Path, src_model: Path, tgt_model: Path,
                     annotation: AnnotatorConfig, encoding: str, subword_iob: str, tgt_lang: str, summary: dict,
                     config: dict, seed: int, confidence_buckets: int = 0) -> None:
    """Copy dictionaries, subword models, lexicon and filter model in; write preprocess.json and the
    manifest.

    ``annotation`` is how the training source was annotated (its ``filters`` the saved filter model
    the source went through, if any): `Translator.load` rebuilds the same annotator from
    preprocess.json (`mwemt.nmt.translate.model_annotator`).
    """
    from mwemt.nmt.modeldir import factor_lang
    from mwemt.preprocess.identification import FILTER_SOURCES, load_filter_model, resolved_max_gap

    src, tgt = annotation.lang, tgt_lang
    factor_names = list(FACTOR_NAMES[encoding])
    names = [f"dict.{factor_lang(src, k)}.txt" for k in range(len(factor_names))] + [f"dict.{tgt}.txt",
                                                                                    "factors.json"]
    for name in names:
        shutil.copyfile(data_bin / name, model_dir / name)
    if src_model == tgt_model:
        shutil.copyfile(src_model, model_dir / "spm.model")
        sub = {"source": "spm.model", "target": "spm.model"}
    else:
        shutil.copyfile(src_model, model_dir / "spm.src.model")
        shutil.copyfile(tgt_model, model_dir / "spm.tgt.model")
        sub = {"source": "spm.src.model", "target": "spm.tgt.model"}
    sub["iob"] = subword_iob
    lexicon = None
    if encoding != "none":
        lex_path = Path(annotation.lexicon[0])
        copy_name = "lexicon" + "".join(lex_path.suffixes[-1:])
        shutil.copyfile(lex_path, model_dir / copy_name)
        lexicon = {"file": copy_name, "format": annotation.lexicon_format, "side": annotation.lexicon_side,
                   "sha256": sha256_file(lex_path), "source_path": str(lex_path)}
    filters, model = None, None
    if encoding != "none" and annotation.filters not in FILTER_SOURCES:
        shutil.copyfile(annotation.filters, model_dir / modeldir.FILTERS)
        model = load_filter_model(model_dir / modeldir.FILTERS)
        filters = {"file": modeldir.FILTERS, "sha256": sha256_file(model_dir / modeldir.FILTERS),
                   "signature": model.signature}
    preprocess = {"src_lang": src, "tgt_lang": tgt, "encoding": encoding, "factors": len(factor_names),
                  "factor_names": factor_names, "lexicon": lexicon, "lemmatizer": annotation.lemmatizer,
                  "max_gap": resolved_max_gap(annotation.max_gap, model), "filters": filters,
                  "confidence_buckets": confidence_buckets, "pretokenized": annotation.pretokenized, "subword": sub}
    write_json(model_dir / modeldir.PREPROCESS, preprocess)
    files = {p.name: sha256_file(p) for p in sorted(model_dir.iterdir()) if p.is_file()
             and p.name not in (modeldir.MANIFEST, "train.log")}
    ckpts = {p.name: sha256_file(p) for p in sorted((model_dir / modeldir.CHECKPOINTS).glob("checkpoint*.pt"))}
    write_json(model_dir / modeldir.MANIFEST, manifest(
        "nmt-model", config=config, seed=seed, files=files, checkpoints=ckpts, training=summary,
        versions_full=versions()))
