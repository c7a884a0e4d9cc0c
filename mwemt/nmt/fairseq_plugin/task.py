"""The `factored_translation` task: translation with one binarized stream per source factor.

Data directory layout (written by `mwemt prepare`)::

    dict.SRC.txt  dict.TGT.txt          words and target, as for `translation`
    dict.SRC.factor1.txt ...            one dictionary per extra source factor
    SPLIT.SRC-TGT.SRC.{bin,idx}         word stream
    SPLIT.SRC-TGT.SRC.factor1.{bin,idx} factor streams, token-aligned with the words
    SPLIT.SRC-TGT.TGT.{bin,idx}
    factors.json                        factor names (optional; for messages)
    SPLIT.SRC-TGT.mweflags.npy          optional: one 0/1 flag per sentence, "has an (idiomatic) MWE",
                                        read by the criterion mwe_weighted_label_smoothed_cross_entropy

With one factor the task *is* the stock translation task: same datasets, same 2-D batches.

``--autocast-bf16`` runs forward passes (training, validation, generation) under
``torch.autocast(bfloat16)``: matrix products in bf16, weights, gradients and optimizer state in
fp32, so checkpoints and resumed runs are those of fp32 training. fairseq's own ``--bf16`` casts the
model itself, implies ``--tpu`` and fails on CPU. Attention then takes fairseq's own
bmm/softmax path: PyTorch's fused CPU attention is 2-8x slower in bf16 than in fp32 at these sizes.
"""

# no `from __future__ import annotations`: fairseq reads the config dataclass field types at run time
import contextlib
import json
import logging
import os
from dataclasses import dataclass, field

import torch
from fairseq import utils
from fairseq.data import data_utils
from fairseq.tasks import register_task
from fairseq.tasks.translation import TranslationConfig, TranslationTask, load_langpair_dataset

from mwemt.errors import MwemtError
from mwemt.nmt.fairseq_plugin.data import FactoredLanguagePairDataset, check_factor_alignment
from mwemt.nmt.modeldir import factor_lang

logger = logging.getLogger(__name__)

def count_factors(data_dir: str, src: str) -> int:
    n = 1
    while os.path.exists(os.path.join(data_dir, f"dict.{factor_lang(src, n)}.txt")):
        n += 1
    return n


def factor_names(data_dir: str, n: int) -> list[str]:
    path = os.path.join(data_dir, "factors.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            names = json.load(fh).get("names", [])
        if len(names) == n:
            return list(names)
    return ["word"] + [f"factor{k}" for k in range(1, n)]


@dataclass
class FactoredTranslationConfig(TranslationConfig):
    source_factors: int = field(
        default=0, metadata={"help": "number of source streams including the words; 0 = as many as the "
                                     "data directory has dictionaries (dict.SRC.factorK.txt)"})
    autocast_bf16: bool = field(
        default=False, metadata={"help": "run forward passes under torch.autocast(bfloat16), weights and "
                                         "optimizer in fp32 (CPUs with avx512_bf16/amx_bf16)"})
    stop_min_improvement: float = field(
        default=0.0, metadata={"help": "early stopping: a validation improves on the best only by more than "
                                       "this (absolute; mwemt.nmt.fairseq_plugin.stopping)"})
    stop_patience_updates: int = field(
        default=0, metadata={"help": "early stopping: stop at the first validation this many updates after the "
                                     "last improvement, instead of after --patience validations (0 = --patience)"})


@register_task("factored_translation", dataclass=FactoredTranslationConfig)
class FactoredTranslationTask(TranslationTask):
    """Translation whose source tokens carry extra factors (lemma, IOB tag, ...)."""

    cfg: FactoredTranslationConfig

    def __init__(self, cfg, src_dict, tgt_dict, factor_dicts):
        super().__init__(cfg, src_dict, tgt_dict)
        self.factor_dicts = factor_dicts  # index 0 is the word dictionary
        self.mwe_flags: dict = {}         # split -> per-sentence 0/1 tensor (`_load_mwe_flags`)
        self.factor_names = factor_names(utils.split_paths(cfg.data)[0], len(factor_dicts))

    @property
    def n_factors(self) -> int:
        return len(self.factor_dicts)

    @classmethod
    def setup_task(cls, cfg, **kwargs):
        base = TranslationTask.setup_task(cfg, **kwargs)
        data_dir = utils.split_paths(cfg.data)[0]
        found = count_factors(data_dir, cfg.source_lang)
        n = cfg.source_factors or found
        if n > found:
            raise MwemtError(f"--source-factors {n} but {data_dir} has dictionaries for {found} source "
                             f"stream(s) (dict.{cfg.source_lang}.txt, dict.{cfg.source_lang}.factorK.txt)")
        cfg.source_factors = n
        dicts = [base.src_dict] + [cls.load_dictionary(os.path.join(data_dir, f"dict.{factor_lang(cfg.source_lang, k)}.txt"))
                                   for k in range(1, n)]
        for k, d in enumerate(dicts):
            if (d.pad(), d.eos()) != (base.src_dict.pad(), base.src_dict.eos()):
                raise MwemtError(f"factor {k} dictionary uses other special symbols than the word dictionary")
        logger.info("source factors: %d (%s)", n, ", ".join(f"{len(d)} types" for d in dicts))
        return cls(cfg, base.src_dict, base.tgt_dict, dicts)

    def load_dataset(self, split, epoch=1, combine=False, **kwargs):
        paths = utils.split_paths(self.cfg.data)
        if split != self.cfg.train_subset:
            paths = paths[:1]
        data_path = paths[(epoch - 1) % len(paths)]
        src, tgt = self.cfg.source_lang, self.cfg.target_lang
        base = load_langpair_dataset(
            data_path, split, src, self.src_dict, tgt, self.tgt_dict, combine=False,
            dataset_impl=self.cfg.dataset_impl, upsample_primary=self.cfg.upsample_primary,
            left_pad_source=self.cfg.left_pad_source, left_pad_target=self.cfg.left_pad_target,
            max_source_positions=self.cfg.max_source_positions,
            max_target_positions=self.cfg.max_target_positions,
            load_alignments=self.cfg.load_alignments, truncate_source=self.cfg.truncate_source,
            num_buckets=self.cfg.num_batch_buckets, shuffle=(split != "test"),
            pad_to_multiple=self.cfg.required_seq_len_multiple)
        self.mwe_flags.pop(split, None)
        if self.n_factors == 1:
            self.datasets[split] = base
            self._load_mwe_flags(split, data_path, len(base))
            return
        if self.cfg.truncate_source or self.cfg.num_batch_buckets:
            raise MwemtError("--truncate-source and --num-batch-buckets are not supported with source factors")
        streams = []
        for k in range(1, self.n_factors):
            prefix = os.path.join(data_path, f"{split}.{src}-{tgt}.{factor_lang(src, k)}")
            ds = data_utils.load_indexed_dataset(prefix, self.factor_dicts[k], self.cfg.dataset_impl)
            if ds is None:
                raise MwemtError(f"split '{split}': factor stream {prefix}.bin/.idx not found "
                                 f"(the '{self.factor_names[k]}' factor); re-run `mwemt prepare`")
            streams.append(ds)
        check_factor_alignment(base.src_sizes, [s.sizes for s in streams], self.factor_names[1:], split)
        self.datasets[split] = FactoredLanguagePairDataset(
            base.src, base.src_sizes, self.src_dict, streams, self.factor_dicts[1:],
            tgt=base.tgt, tgt_sizes=base.tgt_sizes, tgt_dict=self.tgt_dict,
            left_pad_source=self.cfg.left_pad_source, left_pad_target=self.cfg.left_pad_target,
            align_dataset=base.align_dataset, shuffle=(split != "test"),
            pad_to_multiple=self.cfg.required_seq_len_multiple)
        self._load_mwe_flags(split, data_path, len(base))

    # ------------------------------------------------------------ MWE sentence flags (weighted loss)
    def _load_mwe_flags(self, split: str, data_path: str, n_sentences: int) -> None:
        """The split's per-sentence MWE flags, when `mwemt prepare` wrote them (checked against its size)."""
        import numpy as np

        from mwemt.nmt.prepare import mwe_flags_file

        path = os.path.join(data_path, mwe_flags_file(split, self.cfg.source_lang, self.cfg.target_lang))
        if not os.path.exists(path):
            return
        flags = np.load(path)
        if flags.ndim != 1 or len(flags) != n_sentences:
            raise MwemtError(f"{path}: {flags.shape} MWE flags for {n_sentences} sentences of split '{split}' "
                             "(expected one flag per sentence; re-run `mwemt prepare`)")
        self.mwe_flags[split] = torch.from_numpy(flags.astype("uint8"))

    def attach_mwe_flags(self, sample, criterion) -> None:
        """Training batches carry their sentences' MWE flags for a criterion that weighs them."""
        if not getattr(criterion, "needs_mwe_flags", False) or not sample or "id" not in sample:
            return
        flags = self.mwe_flags.get(self.cfg.train_subset)
        if flags is None:
            raise MwemtError(f"criterion {type(criterion).__name__} weighs MWE sentences but the data directory "
                             f"has no {self.cfg.train_subset} MWE flags (`mwemt prepare` with MWE flags: "
                             "train.mwe_loss_weight in the config)")
        sample["mwe_flags"] = flags[sample["id"].cpu()].to(sample["id"].device)

    def build_dataset_for_inference(self, src_tokens, src_lengths, constraints=None):
        """``src_tokens``: 1-D word tensors (one factor) or ``(length, factors)`` tensors."""
        if self.n_factors == 1:
            return super().build_dataset_for_inference(src_tokens, src_lengths, constraints)
        for i, t in enumerate(src_tokens):
            if t.dim() != 2 or t.size(1) != self.n_factors:
                got = 1 if t.dim() == 1 else t.size(-1)
                raise MwemtError(f"input sentence {i + 1} has {got} factor(s) per token but the model "
                                 f"expects {self.n_factors} ({', '.join(self.factor_names)})")
        words = [t[:, 0] for t in src_tokens]
        streams = [[t[:, k] for t in src_tokens] for k in range(1, self.n_factors)]
        return FactoredLanguagePairDataset(words, src_lengths, self.src_dict, streams, self.factor_dicts[1:],
                                           tgt_dict=self.tgt_dict, constraints=constraints,
                                           left_pad_source=self.cfg.left_pad_source)

    # ------------------------------------------------------------ bf16 autocast
    def autocast(self, model):
        """The forward-pass context: bf16 autocast when ``--autocast-bf16``, else nothing."""
        if not getattr(self.cfg, "autocast_bf16", False):
            return contextlib.nullcontext()
        return torch.autocast(next(model.parameters()).device.type, dtype=torch.bfloat16)

    def build_model(self, cfg, from_checkpoint=False):
        model = super().build_model(cfg, from_checkpoint)
        if getattr(self.cfg, "autocast_bf16", False):
            from fairseq.modules.multihead_attention import MultiheadAttention

            for module in model.modules():
                if isinstance(module, MultiheadAttention):
                    module.skip_embed_dim_check = True   # fairseq's bmm attention, not torch's fused one
        return model

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        self.attach_mwe_flags(sample, criterion)
        if not getattr(self.cfg, "autocast_bf16", False):
            return super().train_step(sample, model, criterion, optimizer, update_num, ignore_grad)
        model.train()
        model.set_num_updates(update_num)
        with self.autocast(model):                       # the forward pass only; backward follows its dtypes
            loss, sample_size, logging_output = criterion(model, sample)
        if ignore_grad:
            loss *= 0
        optimizer.backward(loss)
        return loss, sample_size, logging_output

    def valid_step(self, sample, model, criterion):
        with self.autocast(model):
            return super().valid_step(sample, model, criterion)

    def inference_step(self, generator, models, sample, prefix_tokens=None, constraints=None):
        with self.autocast(models[0]):
            return super().inference_step(generator, models, sample, prefix_tokens, constraints)

    def get_batch_iterator(self, dataset, *args, **kwargs):
        # fairseq-fixed drops up to (multiple - 1) of the longest sentences when batches must be
        # a multiple of 8; validation and generation must see every sentence
        args = list(args)
        if len(args) >= 5:
            args[4] = 1
        else:
            kwargs["required_batch_size_multiple"] = 1
        return super().get_batch_iterator(dataset, *args, **kwargs)
