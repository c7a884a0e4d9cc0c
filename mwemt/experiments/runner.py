"""Run stages through the cache, several at once, with one progress line per stage and a run manifest.

A stage is a function ``fn(ctx) -> {output name: path}`` of its input files and its configuration
section; it writes only inside ``ctx.out``. `Runner.stage` computes the stage's key, returns the
cached outputs when a finished stage with that key exists, and otherwise runs the function in a
stage worker process (`mwemt.experiments.workers`) that writes DONE last. Killing a run at any point
therefore loses at most the stages that were running; the next run starts them again from an empty
directory and reuses everything finished, so an interrupted run ends with the same results as an
uninterrupted one. (Training, too, starts again: fairseq's resume from its last checkpoint is not
bit-identical to training on, see docs/experiments.md.)

Stages run in parallel when the pipeline calls `Runner.parallel` (independent systems, test sets)
and the runner has more than one job: each job is a worker with its share of the cores. Two calls
of a stage with one key (two systems needing the same reverse model) run it once.

Where a stage's function runs is its executor's business (`mwemt.experiments.executors`: worker
processes here, or Slurm jobs); everything above (keys, cache, DONE, the manifest) is the same for all.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from mwemt import __version__
from mwemt.errors import MwemtError
from mwemt.experiments.cache import CacheEntry, StageCache, stage_key
from mwemt.experiments.display import StageDisplay
from mwemt.experiments.executors import make_executor
from mwemt.experiments.workers import STAGE_LOG, StageCancelled, StageTask
from mwemt.processes import recording_the_stop, usable_cores
from mwemt.provenance import command_line, versions, write_json
from mwemt.schema import to_plain

T = TypeVar("T")


def default_jobs() -> int:
    """The number of cores this process may use."""
    return usable_cores()


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
    threads: int = 1         # this job's share of the cores (torch threads where the config leaves it open)


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
    """Executes stages of one run directory; holds an exclusive lock on it while alive.

    ``jobs``: how many stages may run at once (worker processes); each gets ``cores // jobs``
    threads. Results do not depend on it. ``executor``: where stages run (`executors.EXECUTORS`),
    ``executor_settings`` its config section (``slurm``: `config.SlurmConfig`).
    """

    def __init__(self, run_dir: str | Path, *, config: Any = None, seed: int = 1, total: int | None = None,
                 progress: bool = True, log: TextIO | None = None, jobs: int = 1, executor: str = "local",
                 executor_settings: Any = None):
        if jobs < 1:
            raise MwemtError(f"jobs must be at least 1, not {jobs}")
        self.run_dir = Path(run_dir).absolute()   # stage functions may return paths built from ctx.out
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.cache = StageCache(self.run_dir / "stages")
        self.config = config
        self.seed = seed
        self.total = total
        self.progress = progress
        self.log = log if log is not None else sys.stderr
        self.jobs = jobs
        self.executor = executor
        self.executor_settings = executor_settings
        self.threads = max(1, default_jobs() // jobs)
        self.records: list[StageRecord] = []
        self._known: dict[str, str] = {}   # resolved output path -> hash recorded in DONE
        self._count = 0
        self._started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        self._lock_fh = None
        self._mutex = threading.RLock()
        self._running: dict[str, threading.Event] = {}   # key -> set when that stage has ended
        self._workers: Any = None   # the executor (`executors.make_executor`)
        self._display: StageDisplay | None = None
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
        for stale in self.run_dir.glob(".*.part"):   # a manifest or results file being written when killed
            stale.unlink(missing_ok=True)
        try:
            # local workers are forked now, before any thread exists
            self._workers = make_executor(self.executor, jobs=self.jobs, cache=self.cache, run_dir=self.run_dir,
                                          settings=self.executor_settings)
            live = self.progress and hasattr(self.log, "isatty") and self.log.isatty()
            self._display = StageDisplay(self.log, live=live)
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc) -> None:
        status = "finished" if exc[0] is None else ("interrupted" if issubclass(exc[0], KeyboardInterrupt)
                                                    else "failed")
        if self._workers is not None:
            self._workers.close(kill=exc[0] is not None)
            self._workers = None
        if self._display is not None:
            self._display.close()
            self._display = None
        with recording_the_stop():   # after Ctrl-C the manifest must still say `interrupted`
            self.write_manifest(status)
        if self._lock_fh is not None:
            fcntl.flock(self._lock_fh, fcntl.LOCK_UN)
            self._lock_fh.close()
            self._lock_fh = None

    # -- parallel calls
    def parallel(self, calls: list[Callable[[], T]]) -> list[T]:
        """Every call's result, in order; the calls run in threads when this runner has several jobs.

        The first failure stops the run: the other calls' running stages are killed (their stage
        directories have no DONE and start again next time) and that failure is raised.
        """
        if self.jobs == 1 or len(calls) <= 1:
            return [call() for call in calls]
        results: list[Any] = [None] * len(calls)
        errors: list[BaseException] = []

        def work(k: int) -> None:
            try:
                results[k] = calls[k]()
            except StageCancelled:
                pass
            except BaseException as exc:  # noqa: BLE001 - raised in the calling thread below
                with self._mutex:
                    errors.append(exc)
                self.cancel()

        threads = [threading.Thread(target=work, args=(k,), name=f"mwemt-pipeline-{k}", daemon=True)
                   for k in range(len(calls))]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.2)
        except BaseException:
            self.cancel()
            for t in threads:
                t.join(10)
            raise
        if errors:
            raise errors[0]
        if self._workers is not None and self._workers.cancelled:
            raise StageCancelled("the run was stopped")
        return results

    def cancel(self) -> None:
        """Kill the running stages and start no new one (an interrupt, or a failed stage)."""
        if self._workers is not None:
            self._workers.cancel()

    # -- stages
    def input_hash(self, path: Path) -> str:
        known = self._known.get(str(path.resolve()))
        return known if known is not None else self.cache.hashes.path(path)

    def stage(self, name: str, system: str, fn: StageFn, *, inputs: dict[str, str | Path] | None = None,
              config: Any = None, params: dict | None = None, device: str | None = None) -> CacheEntry:
        """Run (or reuse) one stage and return its finished cache entry.

        ``config`` (the stage's section, a frozen dataclass) is part of the key in its canonical form
        (`mwemt.schema.to_plain`); ``params`` (e.g. thread counts) are not, so they must not change
        what the stage produces. ``fn`` runs in a worker process: a module-level function.
        ``device``: the device setting (auto, cpu, cuda) of the model the stage runs, if it runs one;
        its executor decides the process from it (locally: a fresh interpreter for a GPU, else a fork).
        """
        config = {} if config is None else config
        inputs_p, hashes, key = self._key(name, system, inputs, config)
        while True:
            with self._mutex:
                if self._workers is None or self._workers.cancelled:
                    raise StageCancelled(name)
                entry = self.cache.lookup(name, key, prefer_system=system)
                busy = self._running.get(key) if entry is None else None
                if entry is None and busy is None:
                    self._running[key] = threading.Event()
                    break
            if entry is not None:
                return self._reuse(name, system, key, entry)
            busy.wait()   # the same stage with the same key runs for another system: share its result
        try:
            return self._run(name, system, key, fn, inputs_p, hashes, config, params, device)
        finally:
            with self._mutex:
                self._running.pop(key).set()

    def _next_label(self, name: str, system: str) -> str:
        with self._mutex:
            self._count += 1
            return self._label(self._count, name, system)

    def _reuse(self, name: str, system: str, key: str, entry: CacheEntry) -> CacheEntry:
        owner = entry.directory.parent.name
        status = "cached" if owner == system else "shared"
        note = "" if owner == system else f" (same inputs as {owner})"
        self._print(f"{self._next_label(name, system)} {status:<8}{note}")
        self._remember(name, system, key, status, 0.0, entry)
        return entry

    def _run(self, name: str, system: str, key: str, fn: StageFn, inputs_p: dict[str, Path],
             hashes: dict[str, str], config: Any, params: dict | None, device: str | None = None) -> CacheEntry:
        directory = self.cache.directory(name, system, key)
        ctx = StageContext(name, system, inputs_p, config, directory, self.seed, self.progress, dict(params or {}),
                           self.run_dir, self.threads)
        record = {"stage": name, "system": system, "key": key, "config": to_plain(config),
                  "inputs": {k: {"path": str(p), "sha256": hashes[k]} for k, p in inputs_p.items()},
                  "mwemt": __version__}
        workers, display = self._workers, self._display
        assert workers is not None and display is not None
        label, t0 = "", 0.0

        def started(text: str = "running ...") -> None:   # a worker took the stage (or it was submitted)
            nonlocal label, t0
            label, t0 = self._next_label(name, system), time.monotonic()
            self._print(f"{label} {text}")
            display.start(key, label, f"  {name} {system}: ", directory / STAGE_LOG)

        def note(text: str) -> None:     # the executor's news of the stage (a Slurm job's state)
            self._print(f"{label} {text}")

        try:
            done = workers.run(StageTask(fn, ctx, record, self.threads, device or "cpu"), started, note)
        except BaseException as exc:
            display.finish(key)
            if label:
                how = ("interrupted" if isinstance(exc, KeyboardInterrupt) else
                       "stopped" if workers.cancelled else "FAILED")
                self._print(f"{label} {how} after {time.monotonic() - t0:.1f}s"
                            + (" (no DONE written; the next run redoes this stage)" if how != "FAILED" else ""))
            raise
        display.finish(key)
        elapsed = time.monotonic() - t0
        entry = CacheEntry(directory, done)
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

    def _label(self, count: int, name: str, system: str) -> str:
        total = f"/{self.total}" if self.total else ""
        width = len(str(self.total)) if self.total else 2
        return f"[{count:>{width}}{total}] {name:<12} {system:<16}"

    def _print(self, text: str) -> None:
        if self._display is not None:
            self._display.message(text)
        else:
            print(text, file=self.log, flush=True)

    def _remember(self, name: str, system: str, key: str, status: str, elapsed: float,
                  entry: CacheEntry) -> None:
        with self._mutex:
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
        with self._mutex:
            self._write_manifest(status)

    def _write_manifest(self, status: str) -> None:
        m = {"kind": "experiment", "status": status, "started": self._started, "executor": self.executor,
             "updated": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
             "command": command_line(), "seed": self.seed, "versions": versions(),
             "config": self.config,
             "stages": [r.__dict__ for r in self.records], **self.extra}
        write_json(self.run_dir / "manifest.json", m)

