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
import os
import shutil
import tempfile
from pathlib import Path

from mwemt.errors import InputError, MwemtError

FACTOR_SUFFIX = "factor"
PREPROCESS = "preprocess.json"
MANIFEST = "manifest.json"
FILTERS = "filters.json"
CHECKPOINTS = "checkpoints"
TRAIN_LOG = "train.log"
PREFERRED_CHECKPOINTS = ("checkpoint_best.pt", "checkpoint_last.pt")
PREPROCESS_KEYS = ("src_lang", "tgt_lang", "encoding", "factors", "factor_names", "lexicon", "lemmatizer",
                   "max_gap", "subword")


def read_preprocess(model_dir: str | Path) -> dict:
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        what = "is a file, not a directory" if model_dir.exists() else "not found"
        raise MwemtError(f"model directory {model_dir} {what} (expected the directory `mwemt train` writes: "
                         "train one, or give its path)")
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


# ---------------------------------------------------------------- a stand-alone copy (WORKDIR/model)

def manifest_files(model_dir: str | Path) -> list[str] | None:
    """The files of a model directory that its manifest accounts for (paths relative to it: the
    manifest, train.log, the files and checkpoints it hashes); None without a model manifest."""
    try:
        m = json.loads((Path(model_dir) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("kind") != "nmt-model":
        return None
    files, ckpts = m.get("files", {}), m.get("checkpoints", {})
    if not isinstance(files, dict) or not isinstance(ckpts, dict):
        return None
    return sorted({MANIFEST, TRAIN_LOG, *files, *(f"{CHECKPOINTS}/{name}" for name in ckpts)})


def check_published(dest: str | Path) -> None:
    """Refuse to replace ``dest`` unless it is nothing, a link, or a model directory that holds only
    the files its manifest accounts for (what `publish_model_dir` wrote there)."""
    dest = Path(dest)
    if dest.is_symlink() or not dest.exists():
        return
    if not dest.is_dir():
        raise MwemtError(f"{dest}: is a file, not a model directory; move it away or train into another "
                         "working directory")
    listed = manifest_files(dest)
    present = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if not p.is_dir() or p.is_symlink())
    other = [p for p in present if listed is None or p not in listed]
    if other:
        why = f"it has no model {MANIFEST}" if listed is None else f"{', '.join(other[:3])} not from training"
        raise MwemtError(f"{dest} is not a model directory that `mwemt train` wrote ({why}); replacing it could "
                         "destroy files, so move it away or train into another working directory")


def publish_model_dir(model: str | Path, dest: str | Path) -> Path:
    """Make ``dest`` a stand-alone model directory with the files of ``model`` (a train stage's): a
    real directory, not a link, that can be moved or copied anywhere and still translate. Its files
    are hard links to the stage's (no second copy on disk), or copies where the file system cannot
    link. An earlier published directory or link at ``dest`` is replaced (`check_published`); the
    new one is built beside it and renamed into place."""
    from mwemt.fileio import make_directory, new_file_mode

    model, dest = Path(model), Path(dest)
    names = manifest_files(model)
    if names is None:
        raise InputError(f"not a finished model directory (no model {MANIFEST})", model,
                         expected="a model directory written by `mwemt train`")
    check_published(dest)
    make_directory(dest.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent))
    old = None
    try:
        os.chmod(tmp, new_file_mode(directory=True))   # mkdtemp makes 0700
        for name in names:
            src, dst = model / name, tmp / name
            if not src.is_file():
                continue
            dst.parent.mkdir(exist_ok=True)
            try:
                os.link(src, dst)
            except OSError:   # another file system, or links not allowed: a copy
                shutil.copy2(src, dst)
        if dest.is_symlink():   # WORKDIR/model of an older mwemt: a link into the stages
            dest.unlink()
        elif dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=dest.parent))
            os.replace(dest, old / dest.name)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not dest.exists() and (old / dest.name).exists():
            os.replace(old / dest.name, dest)   # put the earlier model back
        raise
    finally:
        if old is not None and dest.exists():
            shutil.rmtree(old, ignore_errors=True)
    return dest
