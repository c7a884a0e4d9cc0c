"""The training config (YAML): schema, defaults, presets and validation.

A config has these sections (every key optional unless marked; defaults shown)::

    name: my-system            # label for logs and the manifest
    seed: 1                    # seeds sentencepiece and fairseq
    src_lang: en               # required
    tgt_lang: it               # required
    data:                      # raw (untokenised) parallel text, one sentence per line
      train: {src: PATH, tgt: PATH}            # required
      valid: {src: PATH, tgt: PATH}            # required (early stopping)
      max_train_lines: 0                       # >0: use only N training pairs ...
      train_sample: first                      # ... the first N, or a seeded random sample (random)
    preprocess:                # how source text is annotated (repeated by `mwemt translate`)
      encoding: none           # none | wws (words-with-spaces) | iob (surface|lemma|tag factors)
      lexicon: null            # MWE lexicon file (needed for wws/iob)
      lexicon_format: auto     # auto | list | bilingual | oewn | wn-aligned | cupt
      lexicon_side: source     # for wn-aligned lexicons
      lemmatizer: simplemma    # simplemma | wordnet | spacy | none
      max_gap: 0               # gaps allowed inside an MWE match
      pretokenized: false      # input is already tokenised (split on spaces only)
    subword:
      vocab_size: 8000
      model_type: bpe          # bpe | unigram
      joint: true              # one model for both sides (else one per side)
      iob: copy                # copy | bio: the IOB tag of continuation pieces
      input_sentence_size: 0   # >0: train sentencepiece on a sample of N lines
    prepare:
      joined_dictionary: true  # one fairseq dictionary for source words and target (needs joint)
      threshold: 0             # drop symbols seen fewer times
    model:
      preset: tiny             # tiny | small | paper-small | base | lstm (see PRESETS)
      arch: null               # a fairseq arch name overriding the preset's
      factor_combine: concat   # concat | sum
      factor_embed_dims: null  # e.g. [48, 8, 8]; default: embed/8 per extra factor
      share: decoder           # none | decoder (tie decoder in/out) | all (also source=target; joined dict)
      dropout: null            # override the preset
      args: {}                 # any other fairseq model flag, e.g. {encoder_layers: 4}
    train:
      max_tokens: 4096
      lr: null                 # preset default
      warmup_updates: null     # preset default
      max_epoch: 10
      max_update: 0            # 0 = no limit
      patience: 3              # validations without improvement before stopping (-1: never)
      early_stop: bleu         # bleu | loss: the validation metric for best checkpoint and patience
      eval_beam: 1             # beam for validation BLEU
      eval_max_len: [1.2, 10]  # validation outputs are at most a*source length+b tokens
      validate_interval_updates: 0
      update_freq: 1
      threads: 1               # CPU threads per process (see docs/nmt.md: on a shared box 1 is fastest)
      precision: auto          # auto | fp32 | bf16: bf16 autocast on CPUs with native bf16 (avx512_bf16/amx_bf16)
      device: auto             # auto | cpu | cuda
      distributed_world_size: 1  # >1: fairseq's data-parallel training (GPUs; CPU uses gloo via torchrun)
      log_interval: 50
      extra_args: []           # raw fairseq-train flags appended last
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mwemt.errors import MwemtError

DEFAULTS: dict[str, Any] = {
    "name": "nmt",
    "seed": 1,
    "src_lang": None,
    "tgt_lang": None,
    "data": {"train": None, "valid": None, "max_train_lines": 0, "train_sample": "first"},
    "preprocess": {"encoding": "none", "lexicon": None, "lexicon_format": "auto", "lexicon_side": "source",
                   "lemmatizer": "simplemma", "max_gap": 0, "pretokenized": False},
    "subword": {"vocab_size": 8000, "model_type": "bpe", "joint": True, "iob": "copy",
                "input_sentence_size": 0},
    "prepare": {"joined_dictionary": True, "threshold": 0},
    "model": {"preset": "tiny", "arch": None, "factor_combine": "concat", "factor_embed_dims": None,
              "share": "decoder", "dropout": None, "args": {}},
    "train": {"max_tokens": 4096, "lr": None, "warmup_updates": None, "max_epoch": 10, "max_update": 0,
              "patience": 3, "early_stop": "bleu", "eval_beam": 1, "eval_max_len": [1.2, 10],
              "validate_interval_updates": 0,
              "update_freq": 1, "threads": 1, "precision": "auto", "device": "auto", "distributed_world_size": 1,
              "log_interval": 50, "extra_args": []},
}

# Model presets: arch and the optimisation that suits it. tiny = tests and the demo (seconds to
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

ENCODINGS = ("none", "wws", "iob")
PRECISIONS = ("auto", "fp32", "bf16")
FACTORS = {"none": 1, "wws": 1, "iob": 3}
FACTOR_NAMES = {"none": ["word"], "wws": ["word"], "iob": ["word", "lemma", "tag"]}


def _merge(base: dict, over: dict, where: str) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key not in base:
            raise MwemtError(f"config: unknown key '{where}{key}' (known: {', '.join(base)})")
        if isinstance(base[key], dict) and key not in ("args",) and base[key] and value is not None:
            if not isinstance(value, dict):
                raise MwemtError(f"config: '{where}{key}' must be a mapping")
            out[key] = _merge(base[key], value, f"{where}{key}.")
        else:
            out[key] = value
    return out


def resolve(config: dict, base_dir: str | Path | None = None) -> dict:
    """Defaults filled in, presets applied, paths made absolute (relative to ``base_dir``), checked."""
    if not isinstance(config, dict):
        raise MwemtError("config: the top level must be a mapping")
    cfg = _merge(DEFAULTS, config, "")
    for key in ("src_lang", "tgt_lang"):
        if not cfg[key]:
            raise MwemtError(f"config: '{key}' is required")
    if cfg["src_lang"] == cfg["tgt_lang"]:
        raise MwemtError("config: src_lang and tgt_lang must differ")
    base = Path(base_dir) if base_dir else Path.cwd()

    def path(p):
        return None if p is None else str((base / p).resolve()) if not Path(p).is_absolute() else str(p)

    for split in ("train", "valid"):
        pair = cfg["data"][split]
        if not isinstance(pair, dict) or set(pair) != {"src", "tgt"}:
            raise MwemtError(f"config: 'data.{split}' must be {{src: PATH, tgt: PATH}}")
        cfg["data"][split] = {k: path(v) for k, v in pair.items()}
    if cfg["data"]["train_sample"] not in ("first", "random"):
        raise MwemtError("config: data.train_sample must be first or random")
    pre = cfg["preprocess"]
    if pre["encoding"] not in ENCODINGS:
        raise MwemtError(f"config: preprocess.encoding {pre['encoding']!r}: choose one of {', '.join(ENCODINGS)}")
    if pre["encoding"] != "none" and not pre["lexicon"]:
        raise MwemtError(f"config: preprocess.encoding {pre['encoding']} needs preprocess.lexicon")
    pre["lexicon"] = path(pre["lexicon"])
    sub = cfg["subword"]
    if sub["iob"] not in ("copy", "bio"):
        raise MwemtError("config: subword.iob must be copy or bio")
    if cfg["prepare"]["joined_dictionary"] and not sub["joint"]:
        raise MwemtError("config: prepare.joined_dictionary needs subword.joint (one vocabulary for both sides)")
    model = cfg["model"]
    if model["preset"] not in PRESETS:
        raise MwemtError(f"config: model.preset {model['preset']!r}: choose one of {', '.join(PRESETS)}")
    if model["share"] not in ("none", "decoder", "all"):
        raise MwemtError("config: model.share must be none, decoder or all")
    if model["share"] == "all" and not cfg["prepare"]["joined_dictionary"]:
        raise MwemtError("config: model.share all needs prepare.joined_dictionary")
    if model["factor_combine"] not in ("concat", "sum"):
        raise MwemtError("config: model.factor_combine must be concat or sum")
    tr = cfg["train"]
    if tr["early_stop"] not in ("bleu", "loss"):
        raise MwemtError("config: train.early_stop must be bleu or loss")
    if tr["precision"] not in PRECISIONS:
        raise MwemtError(f"config: train.precision {tr['precision']!r}: choose one of {', '.join(PRECISIONS)}")
    if tr["device"] not in ("auto", "cpu", "cuda"):
        raise MwemtError("config: train.device must be auto, cpu or cuda")
    if not tr["max_epoch"] and not tr["max_update"]:
        raise MwemtError("config: set train.max_epoch or train.max_update")
    preset = PRESETS[model["preset"]]
    model["arch"] = model["arch"] or preset["arch"]
    if model["dropout"] is None:
        model["dropout"] = preset["dropout"]
    tr["lr"] = preset["lr"] if tr["lr"] is None else tr["lr"]
    tr["warmup_updates"] = preset["warmup_updates"] if tr["warmup_updates"] is None else tr["warmup_updates"]
    cfg["factors"] = FACTORS[pre["encoding"]]
    cfg["factor_names"] = FACTOR_NAMES[pre["encoding"]]
    dims = model["factor_embed_dims"]
    if dims is not None:
        if isinstance(dims, str):
            dims = [int(x) for x in dims.split(",")]
        if len(dims) != cfg["factors"]:
            raise MwemtError(f"config: model.factor_embed_dims has {len(dims)} sizes but encoding "
                             f"{pre['encoding']} gives {cfg['factors']} factor(s) ({', '.join(cfg['factor_names'])})")
        model["factor_embed_dims"] = [int(d) for d in dims]
    return cfg


def load_config(path: str | Path) -> dict:
    """Read a YAML config; relative paths inside it are relative to the current directory."""
    import yaml

    from mwemt.errors import InputError

    p = Path(path)
    if not p.is_file():
        raise InputError("config file not found", p)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        raise InputError(f"not valid YAML: {exc}", p, line + 1 if line is not None else None) from None
    try:
        return resolve(data or {})
    except MwemtError as exc:
        raise InputError(str(exc), p) from None
