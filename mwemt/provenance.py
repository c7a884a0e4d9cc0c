"""Provenance for everything a run writes: versions, input hashes, config, seed."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from mwemt import __version__
from mwemt.fileio import atomic_write, sha256_file

_PACKAGES = ("mwemt", "sacremoses", "simplemma", "sentencepiece", "sacrebleu", "rapidfuzz", "numpy",
             "scipy", "torch", "fairseq-fixed", "gensim", "nltk", "rdflib", "eflomal")


def versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    out = {"python": platform.python_version(), "mwemt": __version__}
    for name in _PACKAGES + extra:
        if name == "mwemt":
            continue
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def portable_path(path: str | Path, start: str | Path | None = None) -> str:
    """A path as manifests and results record it: never absolute, so that nothing published names the
    machine that made it. An absolute ``path`` becomes relative to ``start`` (default: the working
    directory, the repository root where mwemt is usually started); a relative one is kept as given."""
    if not os.path.isabs(path):
        return str(path)
    return os.path.relpath(Path(path).resolve(), Path(start if start is not None else os.getcwd()).resolve())


def command_line(argv: list[str] | None = None) -> str:
    """The command as it is recorded: the program by its name (``mwemt``, not the virtual environment's
    absolute path to it) and every absolute path argument made relative, as `portable_path` does."""
    argv = list(sys.argv if argv is None else argv)
    if not argv:
        return ""
    words = [os.path.basename(argv[0]) if os.path.isabs(argv[0]) else argv[0]]
    for arg in argv[1:]:
        key, eq, value = arg.partition("=")
        if eq and os.path.isabs(value):
            words.append(f"{key}={portable_path(value)}")
        else:
            words.append(portable_path(arg) if os.path.isabs(arg) else arg)
    return " ".join(words)


def file_record(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    return {"path": portable_path(p), "sha256": sha256_file(p), "bytes": p.stat().st_size}


def manifest(kind: str, *, inputs: dict[str, str | Path] | None = None, config: Any = None,
             seed: int | None = None, **fields: Any) -> dict[str, Any]:
    """A manifest dictionary; callers add their own fields (counts, outputs, ...)."""
    m: dict[str, Any] = {
        "kind": kind,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": command_line(),
        "versions": versions(),
    }
    if seed is not None:
        m["seed"] = seed
    if config is not None:
        m["config"] = config
    if inputs:
        m["inputs"] = {k: file_record(v) for k, v in inputs.items()}
    m.update(fields)
    return m


def write_json(path: str | Path, obj: Any) -> None:
    with atomic_write(path) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2, sort_keys=False)
        fh.write("\n")
