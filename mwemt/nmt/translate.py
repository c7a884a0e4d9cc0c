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
from mwemt.formats import FACTOR_SEP, parse_factored
from mwemt.nmt.constraints import (  # noqa: F401  (TableConstraints re-exported)
    CONSTRAINT_ORDERS,
    ConstraintOptions,
    ForcedConstraints,
    TableConstraints,
)
from mwemt.nmt.modeldir import (
    CHECKPOINTS,
    PREFERRED_CHECKPOINTS,
    check_dictionary,
    find_checkpoint,
    model_file,
    read_checkpoint,
    read_preprocess,
)
from mwemt.preprocess.tokenize import detokenize

log = logging.getLogger(__name__)

INPUT_FORMATS = ("raw", "tokenized", "annotated")
# What the encoder is told about the source's MWEs: what the lexicon identifies (as in training), or
# nothing (an ablation: every IOB tag O and every lemma factor the word's own lemma; no wws join).
SOURCE_MWES = ("identified", "none")
# fp32 | bf16 (autocast; CPUs with avx512_bf16/amx_bf16) | int8 (dynamic quantization of the linear
# layers); bench/decode_speed.py measures their speed and BLEU against fp32
DECODE_PRECISIONS = ("fp32", "bf16", "int8")
# Longest source line `translate` takes, checked before any line is encoded: decoding time grows with
# the square of the length, and no model here is trained on sentences anywhere near this long. A line
# within it must also fit the model's source positions in pieces (checked once it is segmented).
MAX_LINE_CHARS = 16 * 1024


def check_source_lengths(lines: Sequence[str], source: str | None = None) -> None:
    """Refuse, naming the file and line, a source line over `MAX_LINE_CHARS` characters."""
    from mwemt.fileio import check_line_lengths

    check_line_lengths(lines, MAX_LINE_CHARS, source or "<input>",
                       why="translate's limit; decoding time grows with the square of the length")


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
        self.unconstrained_lines: list[int] = []   # of the last translation: lines decoded without their constraints
        self.line_scores: dict[int, float] = {}   # of the last translation: fairseq's length-normalized score by line

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
        from mwemt.preprocess.subword import SubwordModel
        from mwemt.processes import resolve_device

        device = resolve_device(device)
        model_dir = Path(model_dir)
        pre = read_preprocess(model_dir)
        ckpt = find_checkpoint(model_dir, checkpoint)
        if checkpoint is None and ckpt.name != PREFERRED_CHECKPOINTS[0]:
            log.warning("%s has no %s (training ended before its first validation, or the file was removed): "
                        "translating with %s, the last weights, not the best; pass --checkpoint to choose",
                        model_dir / CHECKPOINTS, PREFERRED_CHECKPOINTS[0], ckpt.name)
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
    def encode(self, line: str, input_format: str = "raw", source_mwes: str = "identified",
               hints=None) -> Encoded:
        """One input line -> piece-major factor rows, with the model's own preprocessing.

        ``source_mwes="none"`` encodes the line as if the lexicon had found no MWE in it (the
        ablation that shows whether a model uses its MWE factors). ``hints`` (a
        `mwemt.preprocess.hints.HintInserter`, for a model of a hint encoding): each identified MWE
        the inserter's table knows gets its best translation inline; without it no word is hinted."""
        from mwemt.preprocess.annotate import encode_sentence
        from mwemt.preprocess.encode import check_iob
        from mwemt.preprocess.hints import insert_hints, is_hint_encoding

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
            if hints is not None and is_hint_encoding(self.preprocess["encoding"]):
                text = " ".join(insert_hints(sent, hints.test_hints(sent)))
            else:
                text, _ = encode_sentence(sent, self.preprocess["encoding"],
                                          int(self.preprocess.get("confidence_buckets") or 0))
        if self.n_factors == 1:
            rows = [[t] for t in text.split()]
            if self.src_subword is not None:
                rows = [[p] for p in self.src_subword.encode_tokens([r[0] for r in rows])]
        else:
            names = FACTOR_SEP.join(self.preprocess.get("factor_names") or [])
            tokens = text.split()
            if tokens and len(tokens[0].split(FACTOR_SEP)) != self.n_factors:
                raise MwemtError(f"input has {len(tokens[0].split(FACTOR_SEP))} factor(s) per token but the model "
                                 f"expects {self.n_factors} ({names})")
            for k, token in enumerate(tokens, 1):  # the model's count, not the first token's, is expected
                if len(token.split(FACTOR_SEP)) != self.n_factors:
                    raise MwemtError(f"token {k} {token!r} has {len(token.split(FACTOR_SEP))} factors (expected "
                                     f"{self.n_factors} factors per token, what the model needs: {names})")
            rows = parse_factored(text, self.n_factors)
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
                  progress: bool = False, source: str | None = None, hints=None,
                  constraints: Sequence[Sequence[Sequence[str]]] | None = None,
                  constraint_order: str = "unordered", batch_groups: Sequence | None = None) -> list[str]:
        """Raw source lines -> detokenized target lines (an empty line gives an empty line).

        ``sampling=True`` samples one output per line (``topk`` > 0 restricts to the k most
        likely tokens), as used for back-translation; ``seed`` makes it reproducible.
        ``source_mwes="none"`` hides the source's MWEs from the model (`encode`). ``hints``: a
        `mwemt.preprocess.hints.HintInserter` (see `hint_inserter`) whose table gives inline hints
        to a hint model; only the table is read, never a reference. ``constraints``: per line, the
        target phrases (each a sequence of target Moses tokens) that fairseq's lexically constrained
        beam search must put in that line's output (`table_constraints` makes them from an MWE
        translation table), ``unordered`` or in the given order (``constraint_order="ordered"``).
        ``batch_groups``: per line, a key; only lines with the same key share a batch (judged constraints
        decode the variants of one source line together, so a line's outputs depend on that line alone).
        """
        out = ["" for _ in lines]
        for idx, hyp in self.iter_translate(lines, beam=beam, batch_size=batch_size, sampling=sampling,
                                            topk=topk, seed=seed, input_format=input_format,
                                            source_mwes=source_mwes, max_len_a=max_len_a, max_len_b=max_len_b,
                                            progress=progress, source=source, hints=hints,
                                            constraints=constraints, constraint_order=constraint_order,
                                            batch_groups=batch_groups):
            out[idx] = hyp
        return out

    def iter_translate(self, lines: Sequence[str], beam: int = 5, batch_size: int = 32, sampling: bool = False,
                       topk: int = -1, seed: int | None = None, *, input_format: str = "raw",
                       source_mwes: str = "identified", max_len_a: float = 1.2, max_len_b: int = 10,
                       progress: bool = False, source: str | None = None,
                       hints=None, constraints: Sequence[Sequence[Sequence[str]]] | None = None,
                       constraint_order: str = "unordered",
                       batch_groups: Sequence | None = None) -> Iterator[tuple[int, str]]:
        """(line index, translation) in batch order, for streaming callers. ``source`` names the
        lines' file in errors (which then give its line number)."""
        import torch
        from fairseq import utils as fs_utils
        from tqdm import tqdm

        from mwemt.nmt.fairseq_plugin.length_limit import SentenceLengthLimit

        if beam < 1 or batch_size < 1:
            raise MwemtError("beam and batch size must be at least 1")
        check_source_mwes(source_mwes, input_format)
        check_source_lengths(lines, source)
        max_pieces = self._max_source_pieces()
        if seed is not None:
            fs_utils.set_torch_seed(seed)
        gen_args = Namespace(beam=1 if sampling else beam, sampling=sampling, sampling_topk=topk,
                             max_len_a=max_len_a, max_len_b=max_len_b, nbest=1)
        if constraints is not None:
            if constraint_order not in CONSTRAINT_ORDERS:
                raise MwemtError(f"constraint order {constraint_order!r}: choose one of {', '.join(CONSTRAINT_ORDERS)}")
            if sampling:
                raise MwemtError("constrained decoding is a beam search: it cannot be combined with sampling")
            if len(constraints) != len(lines):
                raise MwemtError(f"{len(constraints)} constraint lists for {len(lines)} input lines")
        if batch_groups is not None and len(batch_groups) != len(lines):
            raise MwemtError(f"{len(batch_groups)} batch groups for {len(lines)} input lines")
        generator = self.task.build_generator([self.model], gen_args)
        # each sentence ends at its own length limit, not its batch's longest sentence's: no output depends on the
        # batch size or on which lines share a batch (mwemt.nmt.fairseq_plugin.length_limit)
        generator.search = SentenceLengthLimit(generator.search, self.tgt_dict)
        constrained_generator = None
        if constraints is not None:   # fairseq's LexicallyConstrainedBeamSearch, for the lines that have constraints
            constrained_generator = self.task.build_generator(
                [self.model], Namespace(**vars(gen_args), constraints=constraint_order))
            # each line's own limit here too, widened by its own constraints' length (`_decode_constrained`)
            constrained_generator.search = SentenceLengthLimit(constrained_generator.search, self.tgt_dict)
        encoded: list[tuple[int, torch.Tensor]] = []
        for i, line in enumerate(lines):
            try:
                enc = self.encode(line, input_format, source_mwes, hints)
            except InputError as exc:
                raise InputError(exc.detail, source or "<input>", i + 1, exc.expected) from None
            except MwemtError as exc:
                raise InputError(str(exc), source or "<input>", i + 1) from None
            if max_pieces is not None and len(enc.rows) + 1 > max_pieces:
                raise InputError(f"the line is {len(enc.rows) + 1} pieces long (with the end of sentence), more "
                                 f"than the model's {max_pieces} source positions", source or "<input>", i + 1,
                                 expected="a shorter line: split it into sentences")
            if enc.rows:
                encoded.append((i, self._ids(enc)))
        # each line's constraints as target dictionary ids, by line index (they travel with the line)
        line_constraints = {i: self.constraint_ids(constraints[i]) for i, _ in encoded} if constraints is not None \
            else None
        encoded.sort(key=lambda p: -len(p[1]))
        # lines with constraints are batched apart and decoded by the constrained search; the others by plain beam
        # search, as without constraints (the constrained search costs every line of its batch: bench/constrained_decode.py)
        groups = [(encoded, False)] if line_constraints is None else [
            ([e for e in encoded if line_constraints[e[0]]], True), ([e for e in encoded if not line_constraints[e[0]]],
                                                                    False)]
        if batch_groups is not None:   # lines of one key only share a batch; the keys in order of first appearance
            keyed: dict = {}
            for e in encoded:
                keyed.setdefault(batch_groups[e[0]], []).append(e)
            groups = [([e for e in members if (line_constraints is not None and bool(line_constraints[e[0]])) == f], f)
                      for members in keyed.values() for f in (True, False)]
            groups = [(g, f) for g, f in groups if g]
        batches = [(g[k:k + batch_size], forced) for g, forced in groups for k in range(0, len(g), batch_size)]
        self.unconstrained_lines, self.line_scores = [], {}
        with tqdm(total=len(encoded), desc="translate", unit=" sent", disable=not progress,
                  dynamic_ncols=True) as bar:
            for chunk, forced in batches:
                if not forced:
                    yield from self._decode(chunk, generator, None)
                else:
                    yield from self._decode_constrained(chunk, constrained_generator, generator, line_constraints,
                                                        max_len_b)
                bar.update(len(chunk))

    def _decode(self, chunk, generator, line_constraints, *, base_len_b: int | None = None,
                extra: dict[int, int] | None = None):
        """(line index, output) of one batch; ``line_constraints``: the lines' constraint ids, or None;
        ``extra``: by line index, how many tokens its length limit grows beyond ``base_len_b``."""
        import torch
        from fairseq import utils as fs_utils

        from mwemt.nmt.fairseq_plugin.length_limit import SentenceLengthLimit, limits_by_id

        tokens = [t for _, t in chunk]
        packed = None
        if line_constraints is not None:   # fairseq's packing, row k = chunk[k]; the collater reorders it too
            from fairseq.token_generation_constraints import pack_constraints

            packed = pack_constraints([line_constraints[i] for i, _ in chunk])
        ds = self.task.build_dataset_for_inference(tokens, [len(t) for t in tokens], constraints=packed)
        sample = ds.collater([ds[j] for j in range(len(ds))])
        if next(self.model.parameters()).is_cuda:
            sample = fs_utils.move_to_cuda(sample)
        if isinstance(generator.search, SentenceLengthLimit):
            room = None if extra is None else [extra[chunk[j][0]] for j in range(len(chunk))]   # by dataset id
            generator.search.limits = limits_by_id(
                sample, generator.max_len_a, generator.max_len_b if base_len_b is None else base_len_b,
                generator.max_len, generator.min_len, room=room)
        with torch.no_grad():
            hyps = self.task.inference_step(generator, [self.model], sample, constraints=sample.get("constraints"))
        best = [(chunk[sid][0], hyp[0]) for sid, hyp in zip(sample["id"].tolist(), hyps)]
        self.line_scores.update((i, float(h["score"])) for i, h in best)   # what judged constraints compare
        return [(i, self.decode_ids(h["tokens"])) for i, h in best]

    def _decode_constrained(self, chunk, constrained, plain, line_constraints, max_len_b: int):
        """A batch of lines with constraints. The output may be longer than the length limit allows without
        them (max_len_a * source + max_len_b): each line's limit grows by its own constraints' length. fairseq's
        constrained search cannot end a hypothesis before its constraints are met and stops with an assertion
        when the limit comes first; such a batch is decoded again line by line (a line alone gets the same limit
        first, then twice the room), and a line that still cannot meet its constraints is decoded without them
        (counted in ``unconstrained_lines``). So a line's output is what it would be alone."""
        def run(items, extra: dict[int, int]):
            constrained.max_len_b = max_len_b + max(extra.values())   # the widest; each line ends at its own
            try:
                return self._decode(items, constrained, line_constraints, base_len_b=max_len_b, extra=extra)
            finally:
                constrained.max_len_b = max_len_b

        own = {i: sum(len(c) for c in line_constraints[i]) for i, _ in chunk}
        try:
            return run(chunk, own)
        except AssertionError:
            pass
        out = []
        for item in chunk:
            i = item[0]
            if len(chunk) > 1:
                try:
                    out += run([item], {i: own[i]})
                    continue
                except AssertionError:
                    pass
            try:
                out += run([item], {i: 2 * own[i] + 10})
            except AssertionError:
                self.unconstrained_lines.append(i)
                out += self._decode([item], plain, None)
        return out

    def hint_inserter(self, table: str | Path, config=None):
        """A `mwemt.preprocess.hints.HintInserter` for this model's hint encoding with the MWE
        translation table in ``table`` (`translate`'s ``hints``); refused for a model without hints."""
        from mwemt.preprocess.hints import HintConfig, hint_inserter, is_hint_encoding

        encoding = self.preprocess["encoding"]
        if not is_hint_encoding(encoding):
            raise MwemtError(f"{self.model_dir} was trained with encoding {encoding!r}, which takes no hints "
                             "(hints need a model of encoding hints or hints-lemma)")
        return hint_inserter(table, encoding, config or HintConfig(), tgt_lang=self.preprocess["tgt_lang"],
                             lemmatizer=self.preprocess["lemmatizer"])

    # ------------------------------------------------------------ constraints
    def constraint_ids(self, phrases: Sequence[Sequence[str]]) -> list:
        """Target phrases (Moses tokens) as target dictionary ids, segmented by the model's *target*
        subword model, without EOS: what fairseq's constraint packing takes. A word whose pieces include
        one the target dictionary lacks (a piece sentencepiece knows but the training text never
        produced) is segmented again by greedy longest match over the dictionary's pieces; a phrase
        that still needs <unk> is left out (it would force <unk>)."""
        import torch

        unk = self.tgt_dict.unk()
        out = []
        for phrase in phrases:
            words = [w for w in phrase if w and w != "..."]
            if not words:
                continue
            ids: list[int] = []
            for word in words:
                pieces = self.tgt_subword.encode_tokens([word]) if self.tgt_subword is not None else [word]
                word_ids = [self.tgt_dict.index(p) for p in pieces]
                if unk in word_ids:
                    word_ids = self._dictionary_pieces("".join(pieces))
                ids.extend(word_ids)
            if ids and unk not in ids:
                out.append(torch.tensor(ids, dtype=torch.long))
        return out

    def _dictionary_pieces(self, text: str) -> list[int]:
        """``text`` (a word's pieces joined) cut into target dictionary symbols by greedy longest match;
        [unk] when no cut exists."""
        unk, ids, i = self.tgt_dict.unk(), [], 0
        while i < len(text):
            for j in range(len(text), i, -1):
                k = self.tgt_dict.index(text[i:j])
                if k != unk:
                    ids.append(k)
                    i = j
                    break
            else:
                return [unk]
        return ids

    def table_constraints(self, lines: Sequence[str], table, *, min_count: int = 1,
                          sources: Sequence[str] = ("aligned", "dictionary"), input_format: str = "raw",
                          source: str | None = None) -> list[list[tuple[str, ...]]]:
        """Per line, the target phrases an MWE translation table gives its MWEs, forced as the table says
        (`mwemt.nmt.constraints.TableConstraints`, with this model's tokenizer and lemmatizer); ``table`` is a
        table or its file. Judged constraints: `mwemt.nmt.constraints.constrained_translate`."""
        options = ConstraintOptions("unordered", min_count=min_count, sources=tuple(sources))
        return ForcedConstraints(self, table, options).phrases(lines, input_format, source)

    def _max_source_pieces(self) -> int | None:
        """The model's source positions (fairseq's max_source_positions), or None when unbounded."""
        try:
            limit = self.model.max_positions()
        except (AttributeError, NotImplementedError):
            return None
        limit = limit[0] if isinstance(limit, tuple) else limit
        return int(limit) if isinstance(limit, int) and limit > 0 else None

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
    import warnings

    import torch
    from fairseq.modules.multihead_attention import MultiheadAttention

    for module in model.modules():
        if isinstance(module, MultiheadAttention):
            module.skip_embed_dim_check = True
    with warnings.catch_warnings():   # torch (2.13 here) announces that its quantized tensors will go
        warnings.filterwarnings("ignore", message=r"torch\.quantize_per_tensor.* deprecated", category=UserWarning)
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
