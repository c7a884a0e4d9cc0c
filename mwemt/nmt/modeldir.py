"""A model directory: everything `mwemt translate` needs, and nothing outside it.

Layout::

    MODEL/
      checkpoints/checkpoint_best.pt  checkpoint_last.pt   fairseq checkpoints (last = resume point)
      dict.SRC.txt dict.SRC.factorK.txt dict.TGT.txt       fairseq dictionaries
      factors.json                                         factor names
      spm.src.model spm.tgt.model (or one spm.model)       sentencepiece models
      lexicon.txt                                          the MWE lexicon the source was annotated with
      filters.json                                         its identification filters (when any were used)
      preprocess.json                                      how raw text becomes model input
      manifest.json                                        config, versions, hashes, training summary
      train.log                                            fairseq's log

``preprocess.json`` keys: ``src_lang``, ``tgt_lang``, ``encoding`` (iob | wws | none), ``factors``,
``factor_names``, ``lexicon`` ({file, format, sha256} or null), ``lemmatizer``, ``max_gap``,
``subword`` ({source, target, iob}); ``filters`` ({file, sha256, signature} or null) and
``confidence_buckets`` (IOB tags with confidence buckets; 0 = none), both absent in directories
written before identification filters existed; ``max_gap`` is then the gap the filters used.
"""

from __future__ import annotations

import json
from pathlib import Path

from mwemt.errors import InputError, MwemtError

FACTOR_SUFFIX = "factor"
PREPROCESS = "preprocess.json"
MANIFEST = "manifest.json"
FILTERS = "filters.json"
CHECKPOINTS = "checkpoints"
PREFERRED_CHECKPOINTS = ("checkpoint_best.pt", "checkpoint_last.pt")
PREPROCESS_KEYS = ("src_lang", "tgt_lang", "encoding", "factors", "factor_names", "lexicon", "lemmatizer",
                   "max_gap", "subword")


def read_preprocess(model_dir: str | Path) -> dict:
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise MwemtError(f"model directory {model_dir} not found (train one with `mwemt train`)")
    path = model_dir / PREPROCESS
    if not path.exists():
        raise InputError("missing model file", path,
                         expected=f"a model directory written by `mwemt train` (with {PREPROCESS})")
    try:
        conf = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", path) from None
    missing = [k for k in PREPROCESS_KEYS if k not in conf]
    if missing:
        raise InputError(f"missing keys {', '.join(missing)}", path, expected=", ".join(PREPROCESS_KEYS))
    return conf


def find_checkpoint(model_dir: str | Path, checkpoint: str | None = None) -> Path:
    """The checkpoint to translate with: the one asked for, else best, else last."""
    model_dir = Path(model_dir)
    if checkpoint:
        for p in (Path(checkpoint), model_dir / checkpoint, model_dir / CHECKPOINTS / checkpoint):
            if p.is_file():
                return p
        raise InputError("missing model file: checkpoint not found", checkpoint,
                         expected=f"a .pt file in {model_dir / CHECKPOINTS}")
    for name in PREFERRED_CHECKPOINTS:
        p = model_dir / CHECKPOINTS / name
        if p.is_file():
            return p
    raise InputError("missing model file: no checkpoint", model_dir / CHECKPOINTS,
                     expected=" or ".join(PREFERRED_CHECKPOINTS) + " (has training finished?)")


def model_file(model_dir: str | Path, name: str, what: str) -> Path:
    p = Path(model_dir) / name
    if not p.is_file():
        raise InputError(f"missing model file ({what})", p, expected="a complete model directory from `mwemt train`")
    return p


def factor_lang(src: str, k: int) -> str:
    """The pseudo language code of source factor ``k`` (``en.factor1``); factor 0 is ``src`` itself."""
    return src if k == 0 else f"{src}.{FACTOR_SUFFIX}{k}"


def read_checkpoint(ckpt: Path, model_dir: Path) -> dict:
    """A fairseq checkpoint's state, loaded on the CPU; a truncated or corrupt file is an `InputError`."""
    from fairseq import checkpoint_utils

    try:
        state = checkpoint_utils.load_checkpoint_to_cpu(str(ckpt), arg_overrides={"data": str(model_dir)})
    except (MwemtError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - torch and pickle raise many types for a damaged file
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputError(f"cannot load the checkpoint ({type(exc).__name__}: {first})", ckpt, expected="a complete checkpoint written by `mwemt train`; truncated or damaged? "
                         "train again, or pick another with --checkpoint") from None
    if not isinstance(state, dict) or not {"cfg", "model"} <= state.keys() or state["cfg"] is None:
        raise InputError("not a fairseq checkpoint (no cfg and model entries)", ckpt,
                         expected="a checkpoint written by `mwemt train`")
    return state


def check_dictionary(path: Path) -> None:
    """Raise `InputError` at the first line of a fairseq dictionary that is not ``TOKEN COUNT [#fairseq:overwrite]``."""
    with open(path, encoding="utf-8", errors="strict") as fh:
        try:
            for lineno, line in enumerate(fh, 1):
                entry = line.rstrip("\n")
                if entry.endswith(" #fairseq:overwrite"):
                    entry = entry[: -len(" #fairseq:overwrite")]
                token, sep, count = entry.rpartition(" ")
                if not sep or not token or not count.lstrip("-").isdigit():
                    raise InputError(f"dictionary line {entry[:60]!r}", path, lineno,
                                     expected="'TOKEN COUNT' lines of a fairseq dictionary; the model directory "
                                              "is damaged")
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid UTF-8 ({exc.reason})", path, expected="a UTF-8 fairseq dictionary") from None
