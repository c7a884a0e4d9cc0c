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


SPEED_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def cpu_description() -> str:
    """The CPU model, core count and the flags that change numeric speed: benchmarks print it beside
    their numbers, since a number measured on another machine means little without it."""
    model, flags = platform.processor() or "unknown CPU", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    shown = [f for f in SPEED_FLAGS if f in flags]
    return f"{model}; {os.cpu_count()} cores; flags: {', '.join(shown) or 'none of ' + ', '.join(SPEED_FLAGS)}"


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


def file_record(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    return {"path": str(p), "sha256": sha256_file(p), "bytes": p.stat().st_size}


def manifest(kind: str, *, inputs: dict[str, str | Path] | None = None, config: Any = None,
             seed: int | None = None, **fields: Any) -> dict[str, Any]:
    """A manifest dictionary; callers add their own fields (counts, outputs, ...)."""
    m: dict[str, Any] = {
        "kind": kind,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
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
