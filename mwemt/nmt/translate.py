"""Translate raw text with a model directory: annotate, segment, beam search, de-segment, detokenize.

``fairseq-interactive`` hands the model ``src_tokens`` only, so factored models are decoded here
with fairseq's own `SequenceGenerator` (via ``task.inference_step``) on length-sorted batches
built by the task's inference dataset: the same batching code as training and validation.

    >>> tr = Translator.load("runs/tiny/model")
    >>> tr.translate(["She took care of the dog."], beam=5)
    ['Si è presa cura del cane.']
"""

from __future__ import annotations

import logging
from argparse import Namespace
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.formats import parse_factored
from mwemt.nmt.modeldir import check_dictionary, find_checkpoint, model_file, read_checkpoint, read_preprocess
from mwemt.preprocess.tokenize import detokenize

log = logging.getLogger(__name__)

INPUT_FORMATS = ("raw", "tokenized", "annotated")
# What the encoder is told about the source's MWEs: what the lexicon identifies (as in training), or
# nothing (an ablation: every IOB tag O and every lemma factor the word's own lemma; no wws join).
SOURCE_MWES = ("identified", "none")
# fp32 | bf16 (autocast; CPUs with avx512_bf16/amx_bf16) | int8 (dynamic quantization of the linear
# layers); bench/decode_speed.py measures their speed and BLEU against fp32
DECODE_PRECISIONS = ("fp32", "bf16", "int8")


@dataclass
class Encoded:
    """A source sentence as model input: piece-major factor rows."""

    rows: list[list[str]]


class Translator:
    """A loaded model directory. Build with `Translator.load`; call `translate`."""

    def __init__(self, model_dir: Path, preprocess: dict, task, model, checkpoint: Path,
                 annotator, src_subword, tgt_subword):
        self.model_dir = model_dir
        self.preprocess = preprocess
        self.task = task
        self.model = model
        self.checkpoint = checkpoint
        self.annotator = annotator
        self.src_subword = src_subword
        self.tgt_subword = tgt_subword
        self.n_factors = int(preprocess["factors"])
        self.factor_dicts = getattr(task, "factor_dicts", [task.source_dictionary])
        self.tgt_dict = task.target_dictionary

    # ------------------------------------------------------------ loading
    @classmethod
    def load(cls, model_dir: str | Path, checkpoint: str | None = None, threads: int | None = 1,
             lexicon: str | Path | None = None, device: str = "auto", precision: str = "fp32") -> Translator:
        """Load a model directory written by `mwemt train`; fails clearly on anything inconsistent.

        ``precision``: fp32, bf16 (forward passes under bf16 autocast) or int8 (linear layers
        dynamically quantized; CPU only), whatever precision the model was trained in.
        ``lexicon`` replaces the model's lexicon copy (for a directory that stores only its hash).
        ``device``: auto (a GPU when there is one), cpu or cuda. ``threads``: torch CPU threads
        (None = torch's default, one per core; on a loaded machine 1 is much faster, see docs/nmt.md).
        """
        import torch

        if precision not in DECODE_PRECISIONS:
            raise MwemtError(f"decoding precision {precision!r}: choose one of {', '.join(DECODE_PRECISIONS)}")
        if not logging.getLogger().isEnabledFor(logging.DEBUG):  # fairseq's INFO chatter only with -v
            for name in ("fairseq", "mwemt.nmt.fairseq_plugin"):
                logging.getLogger(name).setLevel(logging.WARNING)
        from fairseq import tasks

        import mwemt.nmt.fairseq_plugin  # noqa: F401  (registers task and models; checkpoint loading)
        from mwemt.nmt.train import resolve_device
        from mwemt.preprocess.subword import SubwordModel

        device = resolve_device(device)
        model_dir = Path(model_dir)
        pre = read_preprocess(model_dir)
        ckpt = find_checkpoint(model_dir, checkpoint)
        sub = pre["subword"] or {}
        src_sp = SubwordModel.load(model_file(model_dir, sub["source"], "source sentencepiece model")) \
            if sub.get("source") else None
        tgt_sp = SubwordModel.load(model_file(model_dir, sub["target"], "target sentencepiece model")) \
            if sub.get("target") else None
        annotator = model_annotator(model_dir, pre, lexicon)
        if threads:
            torch.set_num_threads(threads)
        state = read_checkpoint(ckpt, model_dir)
        cfg = state["cfg"]
        task_name = cfg.task._name
        if task_name not in ("factored_translation", "translation"):
            raise MwemtError(f"{ckpt} was trained with task {task_name!r}; mwemt translates "
                             "'factored_translation' and 'translation' models")
        for k in range(int(pre["factors"])):
            from mwemt.nmt.modeldir import factor_lang
            check_dictionary(model_file(model_dir, f"dict.{factor_lang(pre['src_lang'], k)}.txt",
                                        f"dictionary of factor {k}"))
        check_dictionary(model_file(model_dir, f"dict.{pre['tgt_lang']}.txt", "target dictionary"))
        if task_name == "factored_translation":
            from omegaconf import open_dict

            with open_dict(cfg.task):
                cfg.task.source_factors = int(pre["factors"])
                cfg.task.autocast_bf16 = precision == "bf16"   # not the training precision: the caller's
        elif precision == "bf16":
            raise MwemtError(f"{ckpt}: bf16 decoding needs a 'factored_translation' model (task {task_name!r})")
        if "eval_bleu" in cfg.task:
            cfg.task.eval_bleu = False
        task = tasks.setup_task(cfg.task)
        check_compatible(state["model"], task, pre, ckpt)
        model = task.build_model(cfg.model)
        model.load_state_dict(state["model"], strict=True, model_cfg=cfg.model)
        model.eval()
        if device == "cuda":  # resolved above: "auto" became cuda or cpu, cuda without a GPU was refused
            if precision == "int8":
                raise MwemtError("int8 decoding runs on the CPU only (device cpu)")
            model.cuda()
        elif precision == "int8":
            model = quantize_int8(model)
        log.info("loaded %s (%d source factor(s), %s)", ckpt, int(pre["factors"]), precision)
        return cls(model_dir, pre, task, model, ckpt, annotator, src_sp, tgt_sp)

    # ------------------------------------------------------------ source side
    def encode(self, line: str, input_format: str = "raw", source_mwes: str = "identified") -> Encoded:
        """One input line -> piece-major factor rows, with the model's own preprocessing.

        ``source_mwes="none"`` encodes the line as if the lexicon had found no MWE in it (the
        ablation that shows whether a model uses its MWE factors)."""
        from mwemt.preprocess.annotate import encode_sentence
        from mwemt.preprocess.encode import check_iob

        check_source_mwes(source_mwes, input_format)
        if input_format not in INPUT_FORMATS:
            raise MwemtError(f"input format {input_format!r}: choose one of {', '.join(INPUT_FORMATS)}")
        if not line.strip():
            return Encoded([])
        if input_format == "annotated":
            text = line
        else:
            tokens = line.split() if input_format == "tokenized" else self.annotator.tokens(line)
            sent = self.annotator.annotate_tokens(tokens)
            if source_mwes == "none":
                sent = replace(sent, mwes=[])
            text, _ = encode_sentence(sent, self.preprocess["encoding"],
                                      int(self.preprocess.get("confidence_buckets") or 0))
        if self.n_factors == 1:
            rows = [[t] for t in text.split()]
            if self.src_subword is not None:
                rows = [[p] for p in self.src_subword.encode_tokens([r[0] for r in rows])]
        else:
            rows = parse_factored(text, None)
            if rows and len(rows[0]) != self.n_factors:
                raise MwemtError(f"input has {len(rows[0])} factor(s) per token but the model expects "
                                 f"{self.n_factors} ({'|'.join(self.preprocess['factor_names'])})")
            parse_factored(text, self.n_factors)
            if input_format == "annotated" and self.preprocess["encoding"] == "iob":
                try:  # a tag the model never saw would be read as <unk>, silently
                    check_iob([r[-1] for r in rows], [r[1] for r in rows])
                except ValueError as exc:
                    raise MwemtError(f"{exc} (expected IOB tags B, I or O, each I continuing a B)") from None
            if self.src_subword is not None:
                rows = self.src_subword.encode_factored(rows, iob=self.preprocess["subword"].get("iob", "copy"))
        return Encoded(rows)

    def _ids(self, enc: Encoded):
        import torch

        cols = []
        for k, d in enumerate(self.factor_dicts):
            ids = [d.index(r[k]) for r in enc.rows] + [d.eos()]
            cols.append(torch.tensor(ids, dtype=torch.long))
        return cols[0] if self.n_factors == 1 else torch.stack(cols, dim=-1)

    # ------------------------------------------------------------ decoding
    def translate(self, lines: Sequence[str], beam: int = 5, batch_size: int = 32, sampling: bool = False,
                  topk: int = -1, seed: int | None = None, *, input_format: str = "raw",
                  source_mwes: str = "identified", max_len_a: float = 1.2, max_len_b: int = 10,
                  progress: bool = False, source: str | None = None) -> list[str]:
        """Raw source lines -> detokenized target lines (an empty line gives an empty line).

        ``sampling=True`` samples one output per line (``topk`` > 0 restricts to the k most
        likely tokens), as used for back-translation; ``seed`` makes it reproducible.
        ``source_mwes="none"`` hides the source's MWEs from the model (`encode`).
        """
        out = ["" for _ in lines]
        for idx, hyp in self.iter_translate(lines, beam=beam, batch_size=batch_size, sampling=sampling,
                                            topk=topk, seed=seed, input_format=input_format,
                                            source_mwes=source_mwes, max_len_a=max_len_a, max_len_b=max_len_b,
                                            progress=progress, source=source):
            out[idx] = hyp
        return out

    def iter_translate(self, lines: Sequence[str], beam: int = 5, batch_size: int = 32, sampling: bool = False,
                       topk: int = -1, seed: int | None = None, *, input_format: str = "raw",
                       source_mwes: str = "identified", max_len_a: float = 1.2, max_len_b: int = 10,
                       progress: bool = False, source: str | None = None) -> Iterator[tuple[int, str]]:
        """(line index, translation) in batch order, for streaming callers. ``source`` names the
        lines' file in errors (which then give its line number)."""
        import torch
        from fairseq import utils as fs_utils
        from tqdm import tqdm

        if beam < 1 or batch_size < 1:
            raise MwemtError("beam and batch size must be at least 1")
        check_source_mwes(source_mwes, input_format)
        if seed is not None:
            fs_utils.set_torch_seed(seed)
        gen_args = Namespace(beam=1 if sampling else beam, sampling=sampling, sampling_topk=topk,
                             max_len_a=max_len_a, max_len_b=max_len_b, nbest=1)
        generator = self.task.build_generator([self.model], gen_args)
        encoded: list[tuple[int, torch.Tensor]] = []
        for i, line in enumerate(lines):
            try:
                enc = self.encode(line, input_format, source_mwes)
            except InputError as exc:
                raise InputError(exc.detail, source or "<input>", i + 1, exc.expected) from None
            except MwemtError as exc:
                raise InputError(str(exc), source or "<input>", i + 1) from None
            if enc.rows:
                encoded.append((i, self._ids(enc)))
        encoded.sort(key=lambda p: -len(p[1]))
        with tqdm(total=len(encoded), desc="translate", unit=" sent", disable=not progress,
                  dynamic_ncols=True) as bar:
            for start in range(0, len(encoded), batch_size):
                chunk = encoded[start:start + batch_size]
                tokens = [t for _, t in chunk]
                ds = self.task.build_dataset_for_inference(tokens, [len(t) for t in tokens])
                sample = ds.collater([ds[j] for j in range(len(ds))])
                if next(self.model.parameters()).is_cuda:
                    sample = fs_utils.move_to_cuda(sample)
                with torch.no_grad():
                    hyps = self.task.inference_step(generator, [self.model], sample)
                for sid, hyp in zip(sample["id"].tolist(), hyps):
                    yield chunk[sid][0], self.decode_ids(hyp[0]["tokens"])
                bar.update(len(chunk))

    def decode_ids(self, ids) -> str:
        pieces = self.tgt_dict.string(ids.int().cpu(), unk_string="<unk>").split()
        tokens = self.tgt_subword.decode(pieces) if self.tgt_subword is not None else pieces
        return detokenize(tokens, self.preprocess["tgt_lang"])


def check_source_mwes(source_mwes: str, input_format: str) -> None:
    if source_mwes not in SOURCE_MWES:
        raise MwemtError(f"source_mwes {source_mwes!r}: choose one of {', '.join(SOURCE_MWES)}")
    if source_mwes == "none" and input_format == "annotated":
        raise MwemtError("source_mwes 'none' re-annotates the source: it needs raw or tokenized input, "
                         "not annotated lines")


def quantize_int8(model):
    """The model with int8 weights in its linear layers (activations quantized per batch).

    PyTorch's fused attention reads ``k_proj.weight`` as a tensor, which a quantized layer no
    longer has, so attention takes fairseq's own path through the projection modules.
    """
    import torch
    from fairseq.modules.multihead_attention import MultiheadAttention

    for module in model.modules():
        if isinstance(module, MultiheadAttention):
            module.skip_embed_dim_check = True
    return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def model_annotator(model_dir: Path, pre: dict, lexicon_path: str | Path | None = None):
    """The `Annotator` the training source went through, rebuilt from preprocess.json."""
    from mwemt.fileio import sha256_file
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator

    files: tuple[str, ...] = ()
    info = pre.get("lexicon")
    if info and pre["encoding"] != "none":
        path = Path(lexicon_path) if lexicon_path else model_dir / info["file"] if info.get("file") else None
        if path is None or not path.is_file():
            raise InputError("missing model file (the MWE lexicon)", path or model_dir,
                             expected=f"the lexicon with sha256 {info.get('sha256', '?')[:12]}...; "
                                      "pass it as the lexicon argument")
        if info.get("sha256") and sha256_file(path) != info["sha256"]:
            raise MwemtError(f"lexicon {path} differs from the one the model was trained with "
                             f"(sha256 {info['sha256'][:12]}...)")
        files = (str(path),)
    return build_annotator(AnnotatorConfig(
        lang=pre["src_lang"], lexicon=files, lexicon_format=(info or {}).get("format", "auto"),
        lexicon_side=(info or {}).get("side", "source"), lemmatizer=pre["lemmatizer"],
        max_gap=int(pre.get("max_gap") or 0), pretokenized=bool(pre.get("pretokenized", False)),
        filters=saved_filters(model_dir, pre) if files else "none"))


def saved_filters(model_dir: Path, pre: dict) -> str:
    """The identification filter model the training source went through ("none" if it had none),
    checked against the sha256 preprocess.json recorded."""
    from mwemt.fileio import sha256_file

    info = pre.get("filters")
    if not info:
        return "none"   # also directories written before identification filters existed
    path = model_dir / info["file"]
    if not path.is_file():
        raise InputError("missing model file (the identification filters)", path,
                         expected=f"the filter model with sha256 {info.get('sha256', '?')[:12]}...")
    if info.get("sha256") and sha256_file(path) != info["sha256"]:
        raise MwemtError(f"{path} differs from the filter model the training source was annotated with "
                         f"(sha256 {info['sha256'][:12]}...)")
    return str(path)


def check_compatible(state_model: dict, task, pre: dict, ckpt: Path) -> None:
    """Refuse a checkpoint whose factor count or vocabularies do not match the directory's."""
    dicts = getattr(task, "factor_dicts", [task.source_dictionary])
    n = int(pre["factors"])
    tables = sorted(k for k in state_model if k.startswith("encoder.embed_tokens.tables.") and k.endswith(".weight"))
    n_ckpt = len(tables) if tables else 1
    if n_ckpt != n or len(dicts) != n:
        raise MwemtError(f"factor-count mismatch: {ckpt} has {n_ckpt} source factor(s), preprocess.json says "
                         f"{n} and the directory has {len(dicts)} source dictionar(y/ies)")
    src_keys = tables or ["encoder.embed_tokens.weight"]
    names = pre.get("factor_names") or [f"factor{k}" for k in range(n)]
    for k, (key, d) in enumerate(zip(src_keys, dicts)):
        if key in state_model and state_model[key].shape[0] != len(d):
            raise MwemtError(f"vocabulary mismatch: the checkpoint's '{names[k]}' embedding has "
                             f"{state_model[key].shape[0]} rows but dict has {len(d)} symbols; the dictionaries "
                             "do not belong to this checkpoint")
    key = "decoder.embed_tokens.weight"
    if key in state_model and state_model[key].shape[0] != len(task.target_dictionary):
        raise MwemtError(f"vocabulary mismatch: the checkpoint's target embedding has {state_model[key].shape[0]} "
                         f"rows but the target dictionary has {len(task.target_dictionary)} symbols")
