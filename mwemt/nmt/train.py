"""Train a (factored) fairseq model from a config: annotate -> subword -> prepare -> fairseq-train.

`train(config, workdir)` runs every stage and returns the model directory. Stages are skipped when
their inputs and settings are unchanged (a ``*.done.json`` marker holds the key), and training
resumes from ``checkpoint_last.pt``, so re-running an interrupted command continues it.

Training itself is stock ``fairseq-train`` (run as ``python -m fairseq_cli.train`` with our
``--user-dir``): its data-parallel, multi-GPU and multi-node modes work unchanged. We stream its
JSON log into one line per epoch (loss, perplexity, validation BLEU) and a tqdm bar.

The config schema is documented in `mwemt.nmt.config`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_parallel, sha256_file, write_lines
from mwemt.nmt import modeldir
from mwemt.nmt.config import resolve
from mwemt.nmt.cpu import allocator_env, resolve_precision
from mwemt.provenance import manifest, versions, write_json

log = logging.getLogger(__name__)

PLUGIN_DIR = Path(__file__).resolve().parent / "fairseq_plugin"


# ---------------------------------------------------------------- stage caching

def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _done(marker: Path, key: str) -> bool:
    if not marker.exists():
        return False
    try:
        return json.loads(marker.read_text(encoding="utf-8")).get("key") == key
    except json.JSONDecodeError:
        return False


def _mark(marker: Path, key: str, **info) -> None:
    write_json(marker, {"key": key, **info})


# ---------------------------------------------------------------- stage 1: annotate and tokenise

def build_annotator(cfg: dict):
    from mwemt.preprocess.annotate import Annotator
    from mwemt.preprocess.lexicon import load_lexicon

    pre = cfg["preprocess"]
    lex = None
    if pre["encoding"] != "none":
        lex = load_lexicon(pre["lexicon"], pre["lexicon_format"], lang=cfg["src_lang"],
                           lemmatizer=pre["lemmatizer"], side=pre["lexicon_side"])
    return Annotator(lex, cfg["src_lang"], pre["lemmatizer"], pre["max_gap"], pretokenized=pre["pretokenized"])


def annotate_corpus(cfg: dict, workdir: Path, progress: bool = True) -> dict[str, tuple[Path, Path]]:
    """Encode the source with the MWE annotation and Moses-tokenise the target; returns split -> files.

    Pairs with an empty side are dropped (and counted), so both files stay aligned.
    """
    from tqdm import tqdm

    from mwemt.preprocess.annotate import AnnotationReport, encode_sentence
    from mwemt.preprocess.tokenize import tokenize

    out_dir = workdir / "text"
    src, tgt = cfg["src_lang"], cfg["tgt_lang"]
    files = {split: (out_dir / f"{split}.tok.{src}", out_dir / f"{split}.tok.{tgt}") for split in ("train", "valid")}
    inputs = {f"{s}.{side}": sha256_file(cfg["data"][s][side]) for s in ("train", "valid") for side in ("src", "tgt")}
    key = _key("annotate", cfg["preprocess"], cfg["data"]["max_train_lines"], cfg["data"]["train_sample"],
               cfg["seed"], src, tgt, inputs,
               sha256_file(cfg["preprocess"]["lexicon"]) if cfg["preprocess"]["lexicon"] else None)
    marker = workdir / "annotate.done.json"
    if _done(marker, key):
        log.info("annotate: cached")
        return files
    annotator = build_annotator(cfg)
    stats = {}
    for split in ("train", "valid"):
        pair = cfg["data"][split]
        limit = cfg["data"]["max_train_lines"] if split == "train" else 0
        report = AnnotationReport()
        src_out, tgt_out, dropped = [], [], 0
        lines = iter_parallel(pair["src"], pair["tgt"], allow_empty=True)
        if limit and cfg["data"]["train_sample"] == "random":
            lines = _sample(list(lines), limit, cfg["seed"])
        for n, (s, t) in enumerate(tqdm(lines, desc=f"annotate {split}", unit=" lines", disable=not progress,
                                        dynamic_ncols=True)):
            if limit and n >= limit:
                break
            sent = annotator.annotate_text(s)
            t_tokens = t.split() if cfg["preprocess"]["pretokenized"] else tokenize(t, tgt)
            if not sent.tokens or not t_tokens:
                dropped += 1
                continue
            line, skipped = encode_sentence(sent, cfg["preprocess"]["encoding"])
            report.add(sent, skipped)
            src_out.append(line)
            tgt_out.append(" ".join(t_tokens))
        if not src_out:
            raise InputError(f"no non-empty sentence pairs in the {split} split", pair["src"])
        write_lines(files[split][0], src_out)
        write_lines(files[split][1], tgt_out)
        stats[split] = {"pairs": len(src_out), "dropped_empty": dropped, "mwes": report.mwes,
                        "sentences_with_mwe": report.sentences_with_mwe}
        log.info("annotate %s: %d pairs, %d MWEs, %d empty pairs dropped", split, len(src_out), report.mwes, dropped)
    _mark(marker, key, stats=stats, annotator=annotator.signature)
    return files


def _sample(pairs: list, n: int, seed: int) -> list:
    """``n`` pairs drawn with ``seed``, kept in corpus order."""
    import random

    if n >= len(pairs):
        return pairs
    keep = sorted(random.Random(seed).sample(range(len(pairs)), n))
    return [pairs[i] for i in keep]


# ---------------------------------------------------------------- stage 2: subwords

def subword_corpus(cfg: dict, workdir: Path, tok: dict[str, tuple[Path, Path]],
                   progress: bool = True) -> tuple[dict[str, tuple[Path, Path]], Path, Path]:
    """Train sentencepiece (joint or per side) and segment both sides; factors ride on the pieces."""
    from mwemt.preprocess.subword import SubwordModel, apply_file

    sub = cfg["subword"]
    src, tgt = cfg["src_lang"], cfg["tgt_lang"]
    n = cfg["factors"]
    spm_dir = workdir / "spm"
    if sub["joint"]:
        src_model = tgt_model = spm_dir / "spm.model"
    else:
        src_model, tgt_model = spm_dir / "spm.src.model", spm_dir / "spm.tgt.model"
    files = {split: (workdir / "text" / f"{split}.sp.{src}", workdir / "text" / f"{split}.sp.{tgt}") for split in tok}
    key = _key("subword", sub, cfg["seed"], n, {s: [sha256_file(p) for p in pair] for s, pair in tok.items()})
    marker = workdir / "subword.done.json"
    if _done(marker, key):
        log.info("subword: cached")
        return files, src_model, tgt_model
    common = {"vocab_size": sub["vocab_size"], "model_type": sub["model_type"], "seed": cfg["seed"],
              "input_sentence_size": sub["input_sentence_size"]}
    if sub["joint"]:
        # the target has one factor: its tokens never contain an unescaped '|', so the surface is the token
        m = SubwordModel.train([tok["train"][0], tok["train"][1]], spm_dir / "spm", factored=n > 1, **common)
        src_sp = tgt_sp = m
    else:
        src_sp = SubwordModel.train([tok["train"][0]], spm_dir / "spm.src", factored=n > 1, **common)
        tgt_sp = SubwordModel.train([tok["train"][1]], spm_dir / "spm.tgt", **common)
    for split, (s, t) in tok.items():
        apply_file(src_sp, s, files[split][0], factors=n, iob=sub["iob"] if n > 1 else "copy", progress=progress)
        apply_file(tgt_sp, t, files[split][1], progress=progress)
    _mark(marker, key)
    return files, src_model, tgt_model


# ---------------------------------------------------------------- stage 3: binarise

def prepare_corpus(cfg: dict, workdir: Path, seg: dict[str, tuple[Path, Path]], progress: bool = True) -> Path:
    from mwemt.nmt.prepare import prepare

    data_bin = workdir / "data-bin"
    key = _key("prepare", cfg["prepare"], cfg["factors"], {s: [sha256_file(p) for p in pair] for s, pair in seg.items()})
    marker = workdir / "prepare.done.json"
    if _done(marker, key) and data_bin.is_dir():
        log.info("prepare: cached")
        return data_bin
    prepare(seg, data_bin, src_lang=cfg["src_lang"], tgt_lang=cfg["tgt_lang"],
            joined=cfg["prepare"]["joined_dictionary"], factors=cfg["factors"], factor_names=cfg["factor_names"],
            threshold=cfg["prepare"]["threshold"], overwrite=True, progress=progress)
    _mark(marker, key)
    return data_bin


# ---------------------------------------------------------------- stage 4: fairseq-train

def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def fairseq_train_args(cfg: dict, data_bin: Path, save_dir: Path, device: str = "cpu") -> list[str]:
    """The fairseq-train command line (without the program) for a resolved config."""
    m, t = cfg["model"], cfg["train"]
    src, tgt = cfg["src_lang"], cfg["tgt_lang"]
    a = [str(data_bin), "--user-dir", str(PLUGIN_DIR), "--task", "factored_translation",
         "--source-lang", src, "--target-lang", tgt, "--source-factors", str(cfg["factors"]),
         "--arch", m["arch"], "--seed", str(cfg["seed"]), "--dropout", str(m["dropout"]),
         "--factor-combine", m["factor_combine"],
         "--optimizer", "adam", "--adam-betas", "(0.9, 0.98)", "--clip-norm", "1.0",
         "--lr", str(t["lr"]), "--lr-scheduler", "inverse_sqrt", "--warmup-updates", str(t["warmup_updates"]),
         "--warmup-init-lr", "1e-07",
         "--criterion", "label_smoothed_cross_entropy_fused", "--label-smoothing", "0.1",
         "--max-tokens", str(t["max_tokens"]), "--update-freq", str(t["update_freq"]),
         "--required-batch-size-multiple", "1",
         "--save-dir", str(save_dir), "--no-epoch-checkpoints", "--patience", str(t["patience"]),
         "--log-format", "json", "--log-interval", str(t["log_interval"])]
    if m["factor_embed_dims"]:
        a += ["--factor-embed-dims", ",".join(map(str, m["factor_embed_dims"]))]
    if m["share"] == "decoder":
        a.append("--share-decoder-input-output-embed")
    elif m["share"] == "all":
        a.append("--share-all-embeddings")
    for k, v in (m["args"] or {}).items():
        flag = "--" + str(k).replace("_", "-")
        if v is True:
            a.append(flag)
        elif v is not False and v is not None:
            a += [flag, str(v)]
    if t["max_epoch"]:
        a += ["--max-epoch", str(t["max_epoch"])]
    if t["max_update"]:
        a += ["--max-update", str(t["max_update"])]
    if t["validate_interval_updates"]:
        a += ["--validate-interval-updates", str(t["validate_interval_updates"]),
              "--save-interval-updates", str(t["validate_interval_updates"]), "--keep-interval-updates", "1"]
    if t["early_stop"] == "bleu":
        a += ["--eval-bleu", "--eval-bleu-args", json.dumps({"beam": t["eval_beam"], "max_len_a": float(t["eval_max_len"][0]),
                                                       "max_len_b": int(t["eval_max_len"][1])}),
              "--eval-bleu-detok", "moses",
              "--eval-bleu-detok-args", json.dumps({"source_lang": src, "target_lang": tgt}),
              "--eval-bleu-remove-bpe", "sentencepiece",
              "--best-checkpoint-metric", "bleu", "--maximize-best-checkpoint-metric"]
    if device == "cpu":
        a.append("--cpu")
    if resolve_precision(t["precision"], device)[0] == "bf16":
        a.append("--autocast-bf16")
    if t["distributed_world_size"] > 1:
        if device == "cpu":
            # world size and ranks come from torchrun (see fairseq_command); PyTorch's DDP wrapper
            # wants GPU device ids, fairseq's legacy_ddp all-reduces CPU gradients over gloo
            a += ["--distributed-backend", "gloo", "--ddp-backend", "legacy_ddp"]
        else:
            a += ["--distributed-world-size", str(t["distributed_world_size"])]
    a += [str(x) for x in t["extra_args"]]
    return a


def fairseq_command(cfg: dict, args: list[str], device: str) -> list[str]:
    """`python -m fairseq_cli.train ARGS`, or under torchrun for CPU data-parallel training."""
    n = cfg["train"]["distributed_world_size"]
    if n > 1 and device == "cpu":
        # fairseq spawns one process per GPU itself; on CPU, torchrun provides the processes (gloo)
        return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}",
                "-m", "mwemt.nmt.fairseq_launch", *args]
    return [sys.executable, "-m", "fairseq_cli.train", *args]


_LOG_RE = re.compile(r"\| (train_inner|train|valid) \| (\{.*\})\s*$")


class ProgressDisplay:
    """Turns fairseq's JSON log into a tqdm bar and one summary line per validation."""

    def __init__(self, cfg: dict, enabled: bool = True):
        from tqdm import tqdm

        t = cfg["train"]
        self.metric = t["early_stop"]
        self.by_update = bool(t["max_update"])
        total = t["max_update"] if self.by_update else t["max_epoch"]
        self.bar = tqdm(total=total, unit=" upd" if self.by_update else " epoch", desc="train",
                        disable=not enabled, dynamic_ncols=True)
        self.enabled = enabled
        self.pending: dict | None = None
        self.quiet = False
        self.history: list[dict] = []
        self.stop_reason = ""
        self.error_lines: list[str] = []

    def feed(self, line: str) -> None:
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


def run_fairseq_train(cfg: dict, data_bin: Path, model_dir: Path, progress: bool = True) -> dict:
    """Run fairseq-train into ``model_dir/checkpoints`` (resuming from its last checkpoint)."""
    device = resolve_device(cfg["train"]["device"])
    save_dir = model_dir / modeldir.CHECKPOINTS
    save_dir.mkdir(parents=True, exist_ok=True)
    args = fairseq_train_args(cfg, data_bin, save_dir, device)
    cmd = fairseq_command(cfg, args, device)
    env = dict(os.environ)
    threads = str(cfg["train"]["threads"])
    env.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, PYTHONUNBUFFERED="1")
    if device == "cpu":
        env.update(allocator_env())
    precision, why = resolve_precision(cfg["train"]["precision"], device)
    resumed = (save_dir / "checkpoint_last.pt").exists()
    log.info("%s fairseq-train (%s, %s threads, %s)%s", "resuming" if resumed else "starting", device, threads,
             why, ": " + " ".join(cmd) if log.isEnabledFor(logging.DEBUG) else "")
    display = ProgressDisplay(cfg, enabled=progress)
    start = time.time()
    with open(model_dir / "train.log", "a", encoding="utf-8") as logf:
        logf.write(f"\n# {time.strftime('%Y-%m-%d %H:%M:%S')} precision {precision} ({why})\n")
        logf.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                                encoding="utf-8", errors="replace", bufsize=1)
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
        detail = next((ln.split("MwemtError: ", 1)[1] for ln in reversed(display.error_lines) if "MwemtError: " in ln),
                      None)
        tail = "\n".join(display.error_lines[-15:])
        raise MwemtError(detail or f"fairseq-train failed (exit {code}); see {model_dir / 'train.log'}:\n{tail}")
    if not (save_dir / "checkpoint_last.pt").exists():
        raise MwemtError(f"fairseq-train wrote no checkpoint; see {model_dir / 'train.log'}")
    return {"device": device, "precision": precision, "precision_reason": why,
            "wall_seconds": round(time.time() - start, 1), "resumed": resumed,
            "stop_reason": display.stop_reason or "max_epoch reached",
            "validations": validation_history(cfg, model_dir / "train.log"), "command": cmd}


def validation_history(cfg: dict, train_log: Path) -> list[dict]:
    """Every validation in a model's train.log, across resumed runs (one row each)."""
    replay = ProgressDisplay(cfg, enabled=False)
    replay.quiet = True
    with open(train_log, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            replay.feed(line)
    replay.close()
    return replay.history


# ---------------------------------------------------------------- stage 5: the model directory

def finish_model_dir(cfg: dict, model_dir: Path, data_bin: Path, src_model: Path, tgt_model: Path,
                     summary: dict) -> None:
    """Copy dictionaries, subword models and lexicon in; write preprocess.json and the manifest."""
    from mwemt.nmt.modeldir import factor_lang

    src, tgt = cfg["src_lang"], cfg["tgt_lang"]
    names = [f"dict.{factor_lang(src, k)}.txt" for k in range(cfg["factors"])] + [f"dict.{tgt}.txt", "factors.json"]
    for name in names:
        shutil.copyfile(data_bin / name, model_dir / name)
    if src_model == tgt_model:
        shutil.copyfile(src_model, model_dir / "spm.model")
        sub = {"source": "spm.model", "target": "spm.model"}
    else:
        shutil.copyfile(src_model, model_dir / "spm.src.model")
        shutil.copyfile(tgt_model, model_dir / "spm.tgt.model")
        sub = {"source": "spm.src.model", "target": "spm.tgt.model"}
    sub["iob"] = cfg["subword"]["iob"]
    pre = cfg["preprocess"]
    lexicon = None
    if pre["encoding"] != "none":
        lex_path = Path(pre["lexicon"])
        copy_name = "lexicon" + "".join(lex_path.suffixes[-1:])
        shutil.copyfile(lex_path, model_dir / copy_name)
        lexicon = {"file": copy_name, "format": pre["lexicon_format"], "side": pre["lexicon_side"],
                   "sha256": sha256_file(lex_path), "source_path": str(lex_path)}
    preprocess = {"src_lang": src, "tgt_lang": tgt, "encoding": pre["encoding"], "factors": cfg["factors"],
                  "factor_names": cfg["factor_names"], "lexicon": lexicon, "lemmatizer": pre["lemmatizer"],
                  "max_gap": pre["max_gap"], "pretokenized": pre["pretokenized"], "subword": sub}
    write_json(model_dir / modeldir.PREPROCESS, preprocess)
    files = {p.name: sha256_file(p) for p in sorted(model_dir.iterdir()) if p.is_file()
             and p.name not in (modeldir.MANIFEST, "train.log")}
    ckpts = {p.name: sha256_file(p) for p in sorted((model_dir / modeldir.CHECKPOINTS).glob("checkpoint*.pt"))}
    write_json(model_dir / modeldir.MANIFEST, manifest(
        "nmt-model", config=cfg, seed=cfg["seed"], files=files, checkpoints=ckpts, training=summary,
        versions_full=versions()))


# ---------------------------------------------------------------- everything

def train(config: dict, workdir: str | Path, *, progress: bool = True, base_dir: str | Path | None = None) -> Path:
    """Run the whole pipeline for ``config`` (a mapping as in `mwemt.nmt.config`) in ``workdir``.

    Returns the model directory (``workdir/model``), ready for `Translator.load`.
    """
    cfg = config if config.get("factor_names") else resolve(config, base_dir)
    workdir = Path(workdir)
    work = workdir / "work"
    model_dir = workdir / "model"
    work.mkdir(parents=True, exist_ok=True)
    model_dir.mkdir(parents=True, exist_ok=True)
    tok = annotate_corpus(cfg, work, progress)
    seg, src_model, tgt_model = subword_corpus(cfg, work, tok, progress)
    data_bin = prepare_corpus(cfg, work, seg, progress)
    stamp = model_dir / "data.json"
    data_key = sha256_file(data_bin / "manifest.json")
    if (model_dir / modeldir.CHECKPOINTS / "checkpoint_last.pt").exists() and stamp.exists():
        if json.loads(stamp.read_text(encoding="utf-8")).get("data") != _key(_data_identity(data_bin)):
            raise MwemtError(f"{model_dir} holds checkpoints trained on other data; use a new workdir or delete "
                             f"{model_dir / modeldir.CHECKPOINTS} to start over")
    write_json(stamp, {"data": _key(_data_identity(data_bin)), "prepare_manifest_sha256": data_key})
    # a finished model with the same data and training settings is left as it is: fairseq would
    # otherwise run one more update on resume and overwrite the checkpoints
    done_marker = model_dir / "trained.json"
    settings = {k: v for k, v in cfg["train"].items() if k not in ("threads", "device", "log_interval")}
    train_key = _key(_data_identity(data_bin), cfg["model"], settings, cfg["seed"])
    if _done(done_marker, train_key) and (model_dir / modeldir.MANIFEST).exists():
        log.info("%s is already trained with these data and settings; nothing to do", model_dir)
        return model_dir
    summary = run_fairseq_train(cfg, data_bin, model_dir, progress)
    finish_model_dir(cfg, model_dir, data_bin, src_model, tgt_model, summary)
    _mark(done_marker, train_key)
    return model_dir


def _data_identity(data_bin: Path) -> list:
    """Hashes of the binarised data and dictionaries (not the manifest's timestamps)."""
    return sorted((p.name, sha256_file(p)) for p in data_bin.iterdir() if p.suffix in (".bin", ".idx", ".txt"))
