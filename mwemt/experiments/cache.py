"""Content-addressed stage cache: a stage reruns only when its inputs or its configuration change.

A stage's key is the SHA-256 of its name, its configuration section, the content hashes of its
input files and the mwemt version. Its outputs live in ``RUN/stages/<stage>/<system>/<key>/`` and a
``DONE`` file, written last and atomically, holds the hashes of what it produced. A directory
without ``DONE`` is an unfinished (killed) stage and is never trusted.

Two systems whose stage has the same key share one result: the cache is looked up by key across
every system's directory, so e.g. a reverse model trained once serves every system that needs it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mwemt import __version__
from mwemt.errors import MwemtError
from mwemt.fileio import sha256_file
from mwemt.provenance import write_json

DONE = "DONE"
KEY_LENGTH = 16


def canonical_json(obj: Any) -> str:
    """The one serialization hashed for configuration sections (sorted keys, no whitespace)."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except (TypeError, ValueError) as exc:
        raise MwemtError(f"configuration is not JSON-serializable: {exc}") from None


class HashCache:
    """sha256 of files, remembered by (path, size, mtime) so big inputs are read once per run."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int, int], str] = {}

    def file(self, path: str | Path) -> str:
        p = Path(path)
        try:
            st = p.stat()
        except FileNotFoundError:
            raise MwemtError(f"stage input not found: {p}") from None
        key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
        if key not in self._seen:
            self._seen[key] = sha256_file(p)
        return self._seen[key]

    def path(self, path: str | Path) -> str:
        """A file's hash, or for a directory the hash of its sorted (relative name, file hash) list."""
        p = Path(path)
        if p.is_dir():
            h = hashlib.sha256()
            for f in sorted(x for x in p.rglob("*") if x.is_file() and not x.name.startswith(".")):
                h.update(f.relative_to(p).as_posix().encode("utf-8") + b"\0" + self.file(f).encode() + b"\n")
            return h.hexdigest()
        return self.file(p)


def stage_key(stage: str, config: Any, input_hashes: dict[str, str], version: str = __version__) -> str:
    payload = canonical_json({"stage": stage, "config": config, "inputs": input_hashes, "mwemt": version})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:KEY_LENGTH]


@dataclass
class CacheEntry:
    """A finished stage: its directory and what its DONE file recorded."""

    directory: Path
    record: dict

    def output(self, name: str) -> Path:
        try:
            return self.directory / self.record["outputs"][name]["path"]
        except KeyError:
            raise MwemtError(f"stage {self.record.get('stage')} has no output {name!r}") from None

    @property
    def outputs(self) -> dict[str, Path]:
        return {name: self.directory / o["path"] for name, o in self.record["outputs"].items()}


class StageCache:
    """Finds and records finished stages under ``root`` (``RUN/stages``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.hashes = HashCache()

    def directory(self, stage: str, system: str, key: str) -> Path:
        return self.root / stage / system / key

    def lookup(self, stage: str, key: str, prefer_system: str | None = None) -> CacheEntry | None:
        """The finished entry with this key (the preferred system's first), verified against DONE."""
        stage_dir = self.root / stage
        if not stage_dir.is_dir():
            return None
        candidates = sorted(stage_dir.glob(f"*/{key}/{DONE}"))
        if prefer_system is not None:
            candidates.sort(key=lambda p: p.parent.parent.name != prefer_system)
        for done in candidates:
            entry = self._read(done)
            if entry is not None:
                return entry
        return None

    def _read(self, done: Path) -> CacheEntry | None:
        try:
            record = json.loads(done.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        directory = done.parent
        for o in record.get("outputs", {}).values():
            if not (directory / o["path"]).exists():
                return None  # someone deleted an output: not a valid cache entry any more
        return CacheEntry(directory, record)

    def finish(self, directory: Path, record: dict, outputs: dict[str, str | Path]) -> CacheEntry:
        """Hash the outputs and write DONE last; returns the entry."""
        out_records = {}
        for name, path in outputs.items():
            p = Path(path)
            if not p.is_absolute():
                p = directory / p
            if not p.exists():
                raise MwemtError(f"stage {record.get('stage')} did not produce its output {name!r} ({p})")
            try:
                rel = p.resolve().relative_to(directory.resolve())
            except ValueError:
                raise MwemtError(f"stage {record.get('stage')} output {p} is outside its directory") from None
            out_records[name] = {"path": rel.as_posix(), "sha256": self.hashes.path(p)}
        record = {**record, "outputs": out_records}
        write_json(directory / DONE, record)
        return CacheEntry(directory, record)

    @staticmethod
    def clear_partial(directory: Path) -> None:
        """Remove what a killed attempt left behind (there is no DONE, so none of it is trusted)."""
        import shutil

        if directory.exists() and not (directory / DONE).exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True, exist_ok=True)


def output_hash(entry: CacheEntry, name: str) -> str:
    return entry.record["outputs"][name]["sha256"]

