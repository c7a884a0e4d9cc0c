"""The NMT sections of a config: `prepare`, `model` and `train`, typed, with the model presets.

Why here: these sections are read by `mwemt.nmt` alone (binarization and fairseq-train), so their
keys, defaults, ranges and help text live beside the code that uses them. `mwemt.experiments.config`
composes them into the experiment schema (documented in docs/config.md, generated from these
definitions); a system may override any key of them.

A preset fixes the architecture and the optimization that suits it; every preset value can be
overridden (``model.arch``, ``model.dropout``, ``train.lr``, ``train.warmup_updates``).
`with_preset` fills in what the config left to the preset, so a resolved section says exactly
what fairseq gets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mwemt.processes import DEVICES
from mwemt.schema import SEED_MAX, setting

# Model presets: arch and the optimization that suits it. tiny = tests and the demo (seconds to
# minutes on CPU); small = the CPU science experiment (128-dim 3+3, about 25 min for 1,900 updates on
# 100k pairs); paper-small = the larger CPU grid; base = GPU; lstm = the paper's shallow RNN.
PRESETS: dict[str, dict[str, Any]] = {
    "tiny": {"arch": "factored_transformer_tiny", "lr": 1e-3, "warmup_updates": 100, "dropout": 0.1},
    "small": {"arch": "factored_transformer_small", "lr": 1e-3, "warmup_updates": 300, "dropout": 0.1},
    "paper-small": {"arch": "factored_transformer_paper_small", "lr": 7e-4, "warmup_updates": 1000,
                    "dropout": 0.1},
    "base": {"arch": "factored_transformer", "lr": 5e-4, "warmup_updates": 4000, "dropout": 0.1},
    "lstm": {"arch": "factored_lstm", "lr": 1e-3, "warmup_updates": 200, "dropout": 0.2},
}
FACTOR_COMBINE = ("concat", "sum")
SHARE = ("none", "decoder", "all")
EARLY_STOP = ("bleu", "loss")
PRECISIONS = ("auto", "fp32", "bf16")
MWE_LOSS_SENTENCES = ("any", "idiomatic")


@dataclass(frozen=True)
class PrepareConfig:
    """Binarization for fairseq (`mwemt.nmt.prepare`): one dictionary per source factor."""

    joined_dictionary: bool = setting(True, help="one fairseq dictionary for source words and target "
                                                 "(needs `subword.joint`)")
    threshold: int = setting(0, minimum=0, help="map symbols seen fewer times than this to <unk>")


@dataclass(frozen=True)
class ModelConfig:
    """The fairseq model: a preset and what to change about it."""

    preset: str = setting("tiny", choices=tuple(PRESETS),
                          help="tiny (64-dim 2+2 transformer), small (128-dim 3+3), paper-small (256-dim "
                               "3+3), base (transformer-base, GPU), lstm (the paper's 1+1-layer RNN)")
    arch: str | None = setting(None, doc_default="the preset's", help="a fairseq architecture name instead of "
                                                                      "the preset's")
    factor_combine: str = setting("sum", choices=FACTOR_COMBINE,
                                  help="join the source factor embeddings by sum (every table full size, so the "
                                       "words keep the baseline's embedding) or by concatenation (the words give "
                                       "up the factors' dimensions: docs/experiments.md, IOB ablations)")
    factor_embed_dims: tuple[int, ...] | None = setting(
        None, minimum=1, doc_default="concat: embed/8 per extra factor; sum: embed each",
        help="embedding size of each source factor, words first, e.g. [48, 8, 8]; one per factor of the "
             "system's encoding")
    share: str = setting("decoder", choices=SHARE,
                         help="tie the decoder's input and output embeddings (decoder), and the encoder's "
                              "too (all: needs `prepare.joined_dictionary`)")
    dropout: float | None = setting(None, minimum=0.0, maximum=1.0, doc_default="the preset's",
                                    help="dropout probability")
    args: dict[str, Any] = setting(default_factory=dict,
                                   help="any other fairseq model flag, e.g. {encoder_layers: 4} "
                                        "(true = a bare flag); counts (*_layers, *_dim, *_heads, *_hidden_size) "
                                        "must be positive integers")


@dataclass(frozen=True)
class TrainConfig:
    """fairseq-train: Adam (0.9, 0.98), inverse-sqrt warm-up, label smoothing 0.1, clip-norm 1.0."""

    max_tokens: int = setting(4096, minimum=1, help="tokens per batch; at least the longest training or "
                                                    "validation pair in pieces (checked before training starts)")
    lr: float | None = setting(None, greater_than=0.0, doc_default="the preset's", help="peak learning rate")
    warmup_updates: int | None = setting(None, minimum=0, doc_default="the preset's",
                                         help="updates of linear warm-up")
    max_epoch: int = setting(10, minimum=0, help="stop after this many epochs (0 = no limit)")
    max_update: int = setting(0, minimum=0, help="stop after this many updates (0 = no limit)")
    patience: int = setting(3, minimum=-1, help="validations without improvement before stopping (-1: never)")
    patience_updates: int = setting(0, minimum=0, omit_default=True,
                                    help="stop at the first validation that comes this many updates or more after "
                                         "the last improvement (by more than min_improvement) of train.early_stop: "
                                         "patience counted in updates, so epoch-end and interval validations count "
                                         "alike; replaces train.patience (0 = train.patience, in validations)")
    min_improvement: float = setting(0.0, minimum=0.0, omit_default=True,
                                     help="the least improvement of train.early_stop that resets the patience: "
                                          "validation loss lower, or BLEU higher, than the best so far by more "
                                          "than this (absolute: loss in fairseq's base-2 units, BLEU in points); "
                                          "0 = fairseq's rule (any strict improvement). checkpoint_best.pt stays "
                                          "the best validation whatever its margin")
    early_stop: str = setting("bleu", choices=EARLY_STOP,
                              help="the validation metric that picks checkpoint_best.pt and drives patience")
    eval_beam: int = setting(1, minimum=1, help="beam size of validation BLEU")
    eval_max_len: tuple[float, int] = setting((1.2, 10), minimum=0, help="[a, b]: validation outputs have at most "
                                                              "a * source length + b tokens")
    validate_interval_updates: int = setting(0, minimum=0, help="also validate (and save) every N updates "
                                                                "(0 = at epoch ends only)")
    average_last: int = setting(0, minimum=0, omit_default=True,
                                help="average the weights of the last N checkpoints (those of epoch ends and of "
                                     "validate_interval_updates) into checkpoints/checkpoint_best.pt, the one "
                                     "`mwemt translate` loads; fairseq's own best is kept as "
                                     "checkpoint_best_single.pt and training.json records what was averaged "
                                     "(0 = no averaging: translate with the best checkpoint)")
    update_freq: int = setting(1, minimum=1, help="accumulate gradients over N batches")
    threads: int = setting(1, minimum=1, help="CPU threads per process (OMP/MKL); on a shared machine 1 is "
                                              "fastest")
    precision: str = setting("auto", choices=PRECISIONS,
                             help="arithmetic of the forward passes: bf16 autocast (weights and optimizer "
                                  "stay fp32) or fp32; auto = bf16 on CPUs with avx512_bf16/amx_bf16, fp32 "
                                  "elsewhere (the choice and its reason go into train.log and the manifest)")
    device: str = setting("auto", choices=DEVICES, help="where to train (auto: a GPU if there is one)")
    distributed_world_size: int = setting(1, minimum=1, help=">1: fairseq's data-parallel training (GPUs; "
                                                             "CPU processes via torchrun and gloo)")
    seed: int | None = setting(None, minimum=0, maximum=SEED_MAX, doc_default="the run's seed",
                               help="fairseq's seed (initialization, batch order, dropout); a second seed of one "
                                    "system measures how far training noise alone moves its scores")
    log_interval: int = setting(50, minimum=1, help="updates between progress log lines")
    mwe_loss_weight: float = setting(1.0, greater_than=0.0,
                                     help="the MWE-weighted loss (Liu et al. 2023): the training loss of a sentence "
                                          "with an MWE (see mwe_loss_sentences) is multiplied by this weight, the "
                                          "others by 1 (criterion mwe_weighted_label_smoothed_cross_entropy; "
                                          "validation stays unweighted); 1 = the stock loss. The sentences are "
                                          "found with data.lexicon and the `preprocess` section, whatever the "
                                          "system's encoding")
    mwe_loss_sentences: str = setting("any", choices=MWE_LOSS_SENTENCES,
                                      help="which sentences weigh mwe_loss_weight: any = with an MWE the lexicon "
                                           "identifies; idiomatic = with an MWE whose predicted compositionality "
                                           "(mwe_loss_compositionality) is at or under mwe_loss_idiomatic_below")
    mwe_loss_compositionality: str | None = setting(None, path="file",
                                                    help="mwe<TAB>score predicted compositionality of the lexicon's "
                                                         "MWEs (needed by mwe_loss_sentences: idiomatic)")
    mwe_loss_idiomatic_below: float | None = setting(None, minimum=0.0, maximum=1.0,
                                                     doc_default="the lowest tertile of the MWE types found",
                                                     help="predicted compositionality at or under which an MWE "
                                                          "is idiomatic (mwe_loss_sentences: idiomatic)")
    extra_args: tuple[str | int | float, ...] = setting((), help="raw fairseq-train arguments, appended last")


def with_preset(model: ModelConfig, train: TrainConfig) -> tuple[ModelConfig, TrainConfig]:
    """Both sections with every value left to the preset filled in from ``model.preset``."""
    p = PRESETS[model.preset]
    model = replace(model, arch=model.arch or p["arch"],
                    dropout=p["dropout"] if model.dropout is None else model.dropout)
    train = replace(train, lr=p["lr"] if train.lr is None else train.lr,
                    warmup_updates=p["warmup_updates"] if train.warmup_updates is None else train.warmup_updates)
    return model, train


def consistency_problems(prepare: PrepareConfig, model: ModelConfig, train: TrainConfig, *, joint_subword: bool,
                         n_factors: int) -> list[tuple[str, str]]:
    """Settings that contradict each other: (dotted key, problem) pairs, empty when all is well."""
    problems = []
    if prepare.joined_dictionary and not joint_subword:
        problems.append(("prepare.joined_dictionary", "needs subword.joint (one vocabulary for both sides); "
                                                      "set it to false"))
    if model.share == "all" and not prepare.joined_dictionary:
        problems.append(("model.share", "`all` needs prepare.joined_dictionary"))
    if not train.max_epoch and not train.max_update:
        problems.append(("train.max_epoch", "set train.max_epoch or train.max_update (both are 0: no limit)"))
    if train.mwe_loss_weight != 1.0 and train.mwe_loss_sentences == "idiomatic" and not train.mwe_loss_compositionality:
        problems.append(("train.mwe_loss_sentences", "`idiomatic` needs train.mwe_loss_compositionality (an "
                                                     "mwe<TAB>score file of predicted compositionality)"))
    problems += model_args_problems(model.args)
    if train.average_last == 1:
        problems.append(("train.average_last", "1 would translate with the last checkpoint instead of the best; "
                                               "set 0 (no averaging) or at least 2"))
    if train.min_improvement > 0 and train.patience < 1 and not train.patience_updates:
        problems.append(("train.min_improvement", f"has no patience to apply to (train.patience {train.patience}, "
                                                  "train.patience_updates 0); set either"))
    dims = model.factor_embed_dims
    if dims is not None and len(dims) != n_factors:
        problems.append(("model.factor_embed_dims", f"has {len(dims)} sizes but the system's encoding gives "
                                                    f"{n_factors} source factor(s)"))
    elif dims is not None and model.factor_combine == "sum" and len(set(dims)) > 1:
        problems.append(("model.factor_embed_dims", f"{list(dims)}: with factor_combine sum every factor has the "
                                                    "encoder's embedding size; set factor_combine: concat to give "
                                                    "the factors their own sizes"))
    return problems


# fairseq model flags that count something (layers, heads, dimensions): fairseq builds a model from a
# negative count without a word (encoder_layers: -2 trains a model with no encoder layer)
COUNT_ARG_SUFFIXES = ("_layers", "_dim", "_heads", "_hidden_size")


def model_args_problems(args: dict[str, Any]) -> list[tuple[str, str]]:
    """(dotted key, problem) for each count in ``model.args`` that is not a positive integer."""
    problems = []
    for key, value in args.items():
        if not str(key).endswith(COUNT_ARG_SUFFIXES):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append((f"model.args.{key}", f"{value!r}: a count of layers, heads or dimensions must be a "
                                                  "positive integer"))
    return problems
