"""Run stages through the cache, with one progress line per stage and a run manifest.

A stage is a function ``fn(ctx) -> {output name: path}`` of its input files and its configuration
section; it writes only inside ``ctx.out``. `Runner.stage` computes the stage's key, returns the
cached outputs when a finished stage with that key exists, and otherwise runs the function and
writes DONE. Killing a run at any point therefore loses at most the stage that was running; the
next run picks up there (stages marked ``resumable`` get their partial directory back, e.g. to
continue training from the last checkpoint; others start from an empty directory).
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mwemt import __version__
from mwemt.errors import MwemtError
from mwemt.experiments.cache import CacheEntry, StageCache, stage_key
from mwemt.provenance import versions, write_json
from mwemt.schema import to_plain


@dataclass
class StageContext:
    """What a stage function gets: named input paths, its config section and its output directory."""

    stage: str
    system: str
    inputs: dict[str, Path]
    config: Any              # the stage's section (a frozen dataclass)
    out: Path
    seed: int
    progress: bool = True
    params: dict = field(default_factory=dict)   # run-time settings that do not change the result
    run_dir: Path | None = None                  # the run directory (to name files relative to it)


StageFn = Callable[[StageContext], dict[str, "str | Path"]]


@dataclass
class StageRecord:
    stage: str
    system: str
    key: str
    status: str              # ran | cached | shared
    elapsed: float           # seconds spent in this invocation
    compute_seconds: float   # seconds the stage took when it ran (recorded in DONE)
    directory: str
    outputs: dict[str, str] = field(default_factory=dict)


class Runner:
    """Executes stages of one run directory; holds an exclusive lock on it while alive."""

    def __init__(self, run_dir: str | Path, *, config: Any = None, seed: int = 1, total: int | None = None,
                 progress: bool = True, log: TextIO | None = None):
        self.run_dir = Path(run_dir).absolute()   # stage functions may return paths built from ctx.out
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.cache = StageCache(self.run_dir / "stages")
        self.config = config
        self.seed = seed
        self.total = total
        self.progress = progress
        self.log = log if log is not None else sys.stderr
        self.records: list[StageRecord] = []
        self._known: dict[str, str] = {}   # resolved output path -> hash recorded in DONE
        self._count = 0
        self._started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        self._lock_fh = None
        self.extra: dict[str, Any] = {}   # more manifest fields (e.g. the results files)

    # -- lifecycle
    def __enter__(self) -> Runner:
        self._lock_fh = open(self.run_dir / ".lock", "w")
        try:
            fcntl.flock(self._lock_fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_fh.close()
            raise MwemtError(f"another mwemt command is using {self.run_dir}; wait for it or choose another "
                             f"directory") from None
        return self

    def __exit__(self, *exc) -> None:
        status = "finished" if exc[0] is None else ("interrupted" if exc[0] is KeyboardInterrupt else "failed")
        self.write_manifest(status)
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    # -- stages
    def input_hash(self, path: Path) -> str:
        known = self._known.get(str(path.resolve()))
        return known if known is not None else self.cache.hashes.path(path)

    def stage(self, name: str, system: str, fn: StageFn, *, inputs: dict[str, str | Path] | None = None,
              config: Any = None, resumable: bool = False, params: dict | None = None) -> CacheEntry:
        """Run (or reuse) one stage and return its finished cache entry.

        ``config`` (the stage's section, a frozen dataclass) is part of the key in its canonical form
        (`mwemt.schema.to_plain`); ``params`` (e.g. thread counts) are not, so they must not change
        what the stage produces.
        """
        config = {} if config is None else config
        inputs_p, hashes, key = self._key(name, system, inputs, config)
        self._count += 1
        label = self._label(name, system)
        entry = self.cache.lookup(name, key, prefer_system=system)
        if entry is not None:
            owner = entry.directory.parent.name
            status = "cached" if owner == system else "shared"
            note = "" if owner == system else f" (same inputs as {owner})"
            self._print(f"{label} {status:<8}{note}")
            self._remember(name, system, key, status, 0.0, entry)
            return entry
        directory = self.cache.directory(name, system, key)
        resuming = resumable and directory.exists() and any(directory.iterdir())
        if not resumable:
            self.cache.clear_partial(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._print(f"{label} {'resuming' if resuming else 'running'} ...")
        ctx = StageContext(name, system, inputs_p, config, directory, self.seed, self.progress, dict(params or {}),
                           self.run_dir)
        t0 = time.monotonic()
        try:
            outputs = fn(ctx)
        except KeyboardInterrupt:
            self._print(f"{label} interrupted after {time.monotonic() - t0:.1f}s (no DONE written; "
                        f"rerun to {'resume' if resumable else 'redo'} this stage)")
            raise
        except BaseException:
            self._print(f"{label} FAILED after {time.monotonic() - t0:.1f}s")
            raise
        elapsed = time.monotonic() - t0
        record = {"stage": name, "system": system, "key": key, "config": to_plain(config),
                  "inputs": {k: {"path": str(p), "sha256": hashes[k]} for k, p in inputs_p.items()},
                  "elapsed_seconds": round(elapsed, 3), "mwemt": __version__,
                  "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        entry = self.cache.finish(directory, record, outputs or {})
        self._print(f"{label} done     {elapsed:.1f}s")
        self._remember(name, system, key, "ran", elapsed, entry)
        return entry

    def directory_for(self, name: str, system: str, *, inputs: dict[str, str | Path] | None = None,
                      config: Any = None) -> Path:
        """Where the stage would run (or ran), without running it."""
        return self.cache.directory(name, system, self._key(name, system, inputs, config)[2])

    def _key(self, name: str, system: str, inputs: dict[str, str | Path] | None,
             config: Any) -> tuple[dict[str, Path], dict[str, str], str]:
        inputs_p = {k: Path(v) for k, v in (inputs or {}).items()}
        for k, p in inputs_p.items():
            if not p.exists():
                raise MwemtError(f"stage {name} ({system}): input {k!r} not found: {p}")
        hashes = {k: self.input_hash(p) for k, p in sorted(inputs_p.items())}
        return inputs_p, hashes, stage_key(name, to_plain(config) if config is not None else {}, hashes)

    def _label(self, name: str, system: str) -> str:
        total = f"/{self.total}" if self.total else ""
        width = len(str(self.total)) if self.total else 2
        return f"[{self._count:>{width}}{total}] {name:<12} {system:<16}"

    def _print(self, text: str) -> None:
        print(text, file=self.log, flush=True)

    def _remember(self, name: str, system: str, key: str, status: str, elapsed: float,
                  entry: CacheEntry) -> None:
        for o in entry.record["outputs"].values():
            self._known[str((entry.directory / o["path"]).resolve())] = o["sha256"]
        self.records.append(StageRecord(name, system, key, status, round(elapsed, 3),
                                        float(entry.record.get("elapsed_seconds", elapsed)),
                                        str(entry.directory.relative_to(self.run_dir)),
                                        {k: o["sha256"] for k, o in entry.record["outputs"].items()}))
        self.write_manifest("running")

    # -- manifest
    @property
    def compute_seconds(self) -> float:
        """What the stages of this run cost when they ran, cached or not (shared ones counted once)."""
        seen: dict[str, float] = {}
        for r in self.records:
            seen[r.directory] = r.compute_seconds
        return sum(seen.values())

    def write_manifest(self, status: str) -> None:
        m = {"kind": "experiment", "status": status, "started": self._started,
             "updated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
             "command": " ".join(sys.argv), "seed": self.seed, "versions": versions(),
             "config": self.config,
             "stages": [r.__dict__ for r in self.records], **self.extra}
        write_json(self.run_dir / "manifest.json", m)

