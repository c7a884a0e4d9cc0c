"""Where a run's stages execute: worker processes on this machine, or Slurm jobs (`EXECUTORS`).

The runner (`mwemt.experiments.runner`) decides *what* runs: it computes each stage's key, looks it up
in the cache and hands a stage that must run to its executor as a `StageTask`. An executor only
decides *where* the stage function runs; every executor runs it through `workers.execute` (the stage
lock, an empty directory, the function, DONE last), so the stage keys, the cache and the results are
the same whichever executor ran a stage, and a grid can move between them and resume on either.

``local``: the forked stage workers of `mwemt.experiments.workers`, ``--jobs`` at a time.

``slurm``: each stage is one Slurm job, submitted through submitit (``pip install 'mwemt[slurm]'``) as
soon as the runner reaches it, i.e. when its inputs are ready; the run directory must be on a file
system the compute nodes share, and the Python that runs `mwemt` must exist there too. The job runs
`slurm_stage_job`, which returns the stage's DONE record, or the stage's own exception (a bad input),
raised here as it would be locally. Waiting does not trust submitit alone: without an accounting
database (``sacct``) submitit cannot tell that a job was killed before it wrote its result, and would
wait for ever. So the executor watches ``squeue`` itself: a job that has left the queue without a
result file failed (at once when ``sacct`` names a failed state, else after ``slurm.grace`` seconds);
it is reported with its log and submitted again, up to ``slurm.retries`` times. Such a job never
wrote DONE (`workers.execute` writes it last), so it is never taken for done. Ctrl-C (or another
stage's failure) cancels every submitted job (``scancel``); however the run ends, it waits until the
queue has let every job it submitted go (one that gave its result and lingers is cancelled too).

Resources: before the first job, the executor reads the nodes of each partition (``sinfo``) and fits
every kind of stage's request (`SlurmRequest`, from the config's ``slurm`` section) to them (`fit`): a
resource left unset is its default or as much of it as a node has (a GPU only where the partition has
GPU GRES); one set that no node of the partition has stops the run there, naming the setting.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mwemt.errors import MwemtError
from mwemt.experiments.cache import DONE, StageCache
from mwemt.experiments.workers import STAGE_LOG, StageCancelled, StageTask, StageWorkers, _portable, execute

SLURM_LOGS = "slurm"            # RUN/slurm/JOBID/: submitit's job files and the job's log
POLL_SECONDS = 0.25             # how often a waiting stage looks for its result file
QUEUE_SECONDS = 1.0             # how often squeue is asked (once for all waiting stages)
RELEASE_SECONDS = 120.0         # how long a run waits for its jobs to leave the queue (a job cancelled while
                                # running leaves after the cluster's KillWait, 30 s by default)
LINGER_SECONDS = 10.0           # a job that gave its result, still queued this long after the run ended, is cancelled
RESEND_SECONDS = 5.0            # how often scancel is sent again to a cancelled job still pending or running
SLURM_DEFAULT_JOBS = 100        # stage jobs in the queue at once unless --jobs says otherwise
FAILED_STATES = ("BOOT_FAIL", "CANCELLED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                 "TIMEOUT")

Started = Callable[..., None]   # started(text="running ...")
Note = Callable[[str], None]


class LocalExecutor(StageWorkers):
    """Stages in ``jobs`` forked worker processes on this machine (`mwemt.experiments.workers`)."""

    def __init__(self, jobs: int, cache: StageCache, run_dir: Path, settings: Any = None):
        super().__init__(jobs, cache)

    def run(self, task: StageTask, started: Started = lambda *a: None, note: Note = lambda text: None) -> dict:
        return super().run(task, started)


# ---------------------------------------------------------------- slurm

def slurm_stage_job(task: StageTask, cache: StageCache) -> tuple[bool, Any]:
    """What a Slurm job runs: the stage, as a stage worker runs it. ``(True, DONE record)``, or ``(False,
    the stage's exception)``: a stage's error is a result, so the run reports it in the stage's words.
    Anything else (a signal, SystemExit) ends the job without a result: it died."""
    import logging

    # the stage's output goes to its stage.log, which the run shows; submitit's notes on the signals a
    # cancelled job gets ("Bypassing signal SIGTERM") would land there too
    logging.getLogger("submitit").setLevel(logging.ERROR)
    job = {"executor": "slurm", "job": os.environ.get("SLURM_JOB_ID", ""), "node": socket.gethostname()}
    task = dataclasses.replace(task, record={**task.record, "slurm": job})
    try:
        return True, execute(task, cache)
    except Exception as exc:  # noqa: BLE001 - returned to the run, which raises it
        return False, _portable(exc)


class SlurmQueue:
    """This user's jobs in the queue (``squeue``), asked at most once a second for all waiting stages."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at = -1e9
        self._states: dict[str, str] | None = None
        self.error = ""

    def states(self) -> dict[str, str] | None:
        """job id -> state of every queued job (a pending job's with the reason); None when squeue does
        not answer (try again later)."""
        with self._lock:
            if time.monotonic() - self._at >= QUEUE_SECONDS:
                self._at = time.monotonic()
                try:
                    out = subprocess.run(["squeue", "-h", "-u", getpass.getuser(), "-o", "%i|%T|%r"],
                                         capture_output=True, text=True, timeout=60)
                except (OSError, subprocess.TimeoutExpired) as exc:
                    self._states, self.error = None, str(exc)
                else:
                    if out.returncode == 0:
                        self._states = {}
                        for line in out.stdout.splitlines():
                            job, state, reason = (line.strip().split("|", 2) + ["", ""])[:3]
                            # why a job waits (Resources, Priority; PartitionConfig: it never will)
                            pending = state == "PENDING" and reason not in ("", "None")
                            self._states[job] = f"{state} ({reason})" if pending else state
                        self.error = ""
                    else:
                        self._states, self.error = None, out.stderr.strip()
            return self._states


def final_state(job_id: str) -> str:
    """The job's state in the accounting database (``sacct``), or '' when there is none."""
    try:
        out = subprocess.run(["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "State"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = out.stdout.split("\n") if out.returncode == 0 else []
    return next((ln.strip() for ln in lines if ln.strip()), "")


def _failed(state: str) -> bool:
    return state.split(" ")[0] in FAILED_STATES


# -- what a job asks for, fitted to the partition

@dataclass(frozen=True)
class SlurmAsk:
    """One resource of a stage's job: ``value`` as the config sets it, or None (unset: the partition gives
    ``default``, or as much of it as a node has), and ``key``, the setting that sets it (named in errors)."""

    key: str
    value: Any = None
    default: Any = None


@dataclass(frozen=True)
class SlurmRequest:
    """What the job of one kind of stage asks for (`config.SlurmConfig.request`); time in minutes, mem as
    sbatch writes it (8G)."""

    partition: SlurmAsk
    account: str | None
    time: SlurmAsk
    cpus: SlurmAsk
    mem: SlurmAsk
    gpus: SlurmAsk


@dataclass(frozen=True)
class SlurmNode:
    """One node of one partition, as ``sinfo`` reports it; ``time_limit`` is the partition's (minutes, None:
    none), ``default``: the partition is the cluster's default."""

    name: str
    partition: str
    default: bool
    cpus: int
    mem_mb: int
    gpus: int
    time_limit: int | None


@dataclass(frozen=True)
class JobResources:
    """What one job is submitted with (sbatch's --partition, --account, --time, --cpus-per-task, --mem,
    --gpus-per-node); ``partition`` is the one the job runs in, named even where it is the default."""

    partition: str
    account: str | None
    time: int
    cpus: int
    mem: str
    gpus: int

    def summary(self) -> str:
        gpus = f"{self.gpus} GPU{'s' if self.gpus > 1 else ''}" if self.gpus else "no GPU"
        return f"{self.partition}: {self.cpus} CPU{'s' if self.cpus > 1 else ''}, {self.mem}, {gpus}, {self.time} min"


SINFO = ["sinfo", "--all", "--noheader", "--Node", "--format", "%P|%N|%c|%m|%G|%l"]
_UNITS_MB = {"M": 1, "G": 1024, "T": 1024 * 1024}


def mem_mb(text: str) -> int:
    """sbatch's --mem (8G, 500M, 2048: megabytes) in megabytes, rounded up."""
    m = re.fullmatch(r"([0-9]+)([KMGT]?)", text.strip().upper())
    if m is None:
        raise ValueError(f"{text!r} is not an amount of memory")
    number, unit = int(m.group(1)), m.group(2) or "M"
    return -(-number // 1024) if unit == "K" else number * _UNITS_MB[unit]


def gres_gpus(text: str) -> int:
    """The GPUs of a node's GRES as sinfo writes it (``gpu:4``, ``gpu:a100:2(S:0-1),mps:200``, ``(null)``)."""
    total = 0
    for item in re.split(r",(?![^(]*\))", text.strip()):
        fields = re.sub(r"\(.*?\)", "", item).split(":")
        if fields[0] == "gpu":
            count = fields[-1] if len(fields) > 1 else "1"
            total += int(count) if count.isdigit() else 1
    return total


def time_minutes(text: str) -> int | None:
    """A Slurm time limit (``infinite``, ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH[:MM[:SS]]``) in whole minutes;
    None for no limit."""
    text = text.strip()
    if text.lower() in ("infinite", "unlimited", "n/a", ""):
        return None
    days, _, rest = text.rpartition("-")
    parts = [int(x) for x in rest.split(":")]
    if days:   # D-HH, D-HH:MM, D-HH:MM:SS
        hours, minutes, seconds = (parts + [0, 0])[:3]
    elif len(parts) == 3:
        hours, minutes, seconds = parts
    else:      # MM or MM:SS
        hours, minutes, seconds = 0, parts[0], (parts[1] if len(parts) > 1 else 0)
    return (int(days or 0) * 24 + hours) * 60 + minutes + seconds // 60


def parse_sinfo(text: str) -> list[SlurmNode]:
    """The nodes of `SINFO`'s output, one per node and partition."""
    nodes = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.strip().split("|")
        try:
            partition, name, cpus, mem, gres, limit = fields
            nodes.append(SlurmNode(name=name, partition=partition.rstrip("*"), default=partition.endswith("*"),
                                   cpus=int(cpus), mem_mb=int(mem), gpus=gres_gpus(gres),
                                   time_limit=time_minutes(limit)))
        except ValueError:
            raise MwemtError(f"sinfo's line {n} is not PARTITION|NODE|CPUS|MEMORY|GRES|TIMELIMIT: {line!r}") from None
    return nodes


def cluster_nodes() -> list[SlurmNode]:
    """Every node of every partition, asked of ``sinfo``."""
    try:
        out = subprocess.run(SINFO, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MwemtError(f"the slurm executor could not ask Slurm for its nodes (sinfo): {exc}") from None
    if out.returncode != 0:
        raise MwemtError(f"the slurm executor could not ask Slurm for its nodes (sinfo): {out.stderr.strip()}")
    return parse_sinfo(out.stdout)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def fit(request: SlurmRequest, nodes: Iterable[SlurmNode]) -> JobResources:
    """The job's resources: each one set is checked against the nodes of its partition (a `MwemtError` names
    the setting when no node has it), each one unset is its default or as much as a node has. GPUs are
    fitted first, then CPUs on the nodes with those GPUs, then memory on the nodes with both."""
    nodes = list(nodes)
    partitions = sorted({n.partition for n in nodes})
    ask = request.partition
    if ask.value is None:
        name = next((n.partition for n in nodes if n.default), None)
        if name is None:
            raise MwemtError(f"{ask.key} is not set and the cluster has no default partition: set it to one of "
                             f"{', '.join(partitions) or '(none: sinfo lists no node)'}")
    else:
        name = ask.value
        if name not in partitions:
            raise MwemtError(f"{ask.key} is {name}, but the cluster has no partition {name} with nodes (sinfo lists "
                             f"{', '.join(partitions) or 'none'})")
    pool = whole = [n for n in nodes if n.partition == name]
    having = ""    # which of its nodes are left, where not all: " with 1 GPU", " with 2 CPUs and 1 GPU"

    def choose(ask: SlurmAsk, have: Callable[[SlurmNode], int], want: Callable[[Any], int],
               shown: Callable[[int], str], unit: str) -> int:
        nonlocal pool
        most = max(have(n) for n in pool)
        if ask.value is None:
            value = min(want(ask.default), most)
        else:
            value = want(ask.value)
            if value > most:
                has = (f"the largest node of partition {name}{having} has {shown(most)}" if most else
                       f"no node of partition {name}{having} has {unit}")
                raise MwemtError(f"{ask.key} is {ask.value}, but {has}: ask for at most {shown(most)}, choose another "
                                 f"partition, or leave {ask.key} unset for what the partition gives")
        pool = [n for n in pool if have(n) >= value]
        return value

    gpus = choose(request.gpus, lambda n: n.gpus, int, lambda v: _plural(v, "GPU"), "a GPU (GRES gpu)")
    having = f" with {_plural(gpus, 'GPU')}" if len(pool) < len(whole) else ""
    cpus = choose(request.cpus, lambda n: n.cpus, int, lambda v: _plural(v, "CPU"), "a CPU")
    if len(pool) < len(whole):
        having = f" with {_plural(cpus, 'CPU')}" + (f" and {_plural(gpus, 'GPU')}" if gpus else "")
    mb = choose(request.mem, lambda n: n.mem_mb, mem_mb, lambda v: f"{v}M", "memory")
    mem = request.mem.value or (request.mem.default if mem_mb(request.mem.default) == mb else f"{mb}M")
    limits = {n.time_limit for n in whole}
    limit = None if None in limits else max(limits)
    time_ask = request.time
    if time_ask.value is None:
        minutes = time_ask.default if limit is None else max(1, min(time_ask.default, limit))
    elif limit is not None and time_ask.value > limit:
        raise MwemtError(f"{time_ask.key} is {time_ask.value} minutes, but partition {name} allows at most {limit}: "
                         f"ask for at most {limit}, choose another partition, or leave {time_ask.key} unset")
    else:
        minutes = time_ask.value
    return JobResources(partition=name, account=request.account, time=minutes, cpus=cpus, mem=mem, gpus=gpus)


class SlurmExecutor:
    """Each stage a Slurm job through submitit; see the module docstring. ``jobs``: jobs in the queue at once."""

    def __init__(self, jobs: int, cache: StageCache, run_dir: Path, settings: Any = None):
        try:
            import submitit
        except ImportError:
            raise MwemtError("the slurm executor needs submitit: pip install 'mwemt[slurm]'") from None
        for program in ("sbatch", "squeue", "scancel", "sinfo"):
            if shutil.which(program) is None:
                raise MwemtError(f"the slurm executor needs Slurm's {program} on PATH (is this a Slurm login "
                                 f"node? scripts/slurm-local.sh up starts a local cluster)")
        if settings is None:   # the config layer (above this one) makes it: `config.SlurmConfig`
            raise MwemtError("the slurm executor needs its settings (the config's `slurm` section)")
        self._submitit = submitit
        self.settings = settings
        self.cache = cache
        self.logs = Path(run_dir) / SLURM_LOGS
        self.cancelled = False
        self._slots = threading.BoundedSemaphore(jobs)
        self._lock = threading.Lock()
        self._submitted: dict[str, Any] = {}    # job id -> submitit job, until its result is in or it has left
        self._queued: set[str] = set()          # every job submitted, until it is seen to have left the queue
        self._cancelled_ids: set[str] = set()
        self._queue = SlurmQueue()
        # every kind of stage's resources, fitted before the first job: a request no node meets stops here
        nodes = cluster_nodes()
        self._resources = {stage: fit(settings.request(stage), nodes) for stage in (*settings.stages, "")}

    def resources(self, stage: str) -> JobResources:
        """The resources the job of ``stage`` is submitted with (any stage the config does not name: the
        `slurm` section's, as fitted for the key "")."""
        return self._resources.get(stage) or self._resources[""]

    # -- one stage
    def run(self, task: StageTask, started: Started = lambda *a: None, note: Note = lambda text: None) -> dict:
        """The stage's DONE record; its own error is raised here; a job that died is submitted again."""
        stage, system = task.record["stage"], task.record["system"]
        attempts = self.settings.retries + 1
        with self._slots:
            for attempt in range(1, attempts + 1):
                job = self._submit(task)
                if attempt == 1:
                    started(f"submitted: job {job.job_id} ({self.resources(stage).summary()})")
                else:
                    note(f"submitted again: job {job.job_id} (attempt {attempt} of {attempts})")
                try:
                    ok, value = self._wait(job, note)
                except BaseException:
                    self._cancel([job.job_id])
                    raise
                if ok is not None:
                    if ok:
                        return value
                    raise value
                log = self._log(job)
                done = self._done_record(task.ctx.out)    # killed after its DONE: the stage did finish
                if done is not None:
                    note(f"job {job.job_id} ended without a result ({value}) after writing its DONE; log {log}")
                    return done
                if attempt < attempts:
                    note(f"job {job.job_id} died without a result ({value}); log {log}; submitting it again")
        raise MwemtError(f"stage {stage} ({system}): its Slurm job died without a result {attempts} time(s), the "
                         f"last one job {job.job_id} ({value}); see its log {log}")

    def _submit(self, task: StageTask):
        if self.cancelled:
            raise StageCancelled(task.record["stage"])
        stage, system = task.record["stage"], task.record["system"]
        res = self.resources(stage)
        task = dataclasses.replace(task, threads=res.cpus, ctx=dataclasses.replace(task.ctx, threads=res.cpus))
        ex = self._submitit.SlurmExecutor(folder=self.logs / "%j", max_num_timeout=0)
        params: dict[str, Any] = {"job_name": f"mwemt-{stage}-{system}", "time": res.time,
                                  "cpus_per_task": res.cpus, "mem": res.mem, "stderr_to_stdout": True,
                                  "partition": res.partition}
        if res.account:
            params["account"] = res.account
        if res.gpus:
            params["gpus_per_node"] = res.gpus
        if self.settings.setup:
            params["setup"] = list(self.settings.setup)
        ex.update_parameters(**params)
        with self._lock:   # no job is submitted after a cancel has collected the ids to scancel
            if self.cancelled:
                raise StageCancelled(stage)
            try:
                job = ex.submit(slurm_stage_job, task, self.cache)
            except Exception as exc:  # noqa: BLE001 - sbatch's refusal, in its words
                raise MwemtError(f"stage {stage} ({system}): Slurm refused the job: {str(exc).strip()}") from None
            self._submitted[job.job_id] = job
            self._queued.add(job.job_id)
        return job

    def _wait(self, job, note: Note) -> tuple[bool | None, Any]:
        """``(True, DONE)`` or ``(False, the stage's exception)`` from the job's result, or ``(None, state)``
        when the job left the queue without one."""
        result = job.paths.result_pickle
        shown, gone, asked, state = None, None, 0.0, ""
        while True:
            if self.cancelled:
                raise StageCancelled(job.job_id)
            if result.exists():
                self._forget(job.job_id, left=False)   # still in the queue a moment: `close` waits for it
                outcome, payload = self._read(result)
                if outcome == "success":
                    return payload
                lines = [ln for ln in str(payload).strip().splitlines() if ln.strip()]
                return None, f"failed outside the stage: {lines[-1] if lines else 'no trace'}"
            states = self._queue.states()
            if states is not None:
                state = states.get(job.job_id)
                if state is not None:
                    gone = None
                    if state != shown:
                        note(f"job {job.job_id} {state}")
                        shown = state
                else:
                    gone = gone if gone is not None else time.monotonic()
                    waited = time.monotonic() - gone
                    if waited >= 1.0 and time.monotonic() - asked >= 2.0:   # sacct, every 2 s
                        state, asked = final_state(job.job_id), time.monotonic()
                    if (state and _failed(state)) or waited >= self.settings.grace:
                        self._forget(job.job_id)
                        return None, state or "state unknown: no accounting database (sacct)"
            time.sleep(POLL_SECONDS)

    @staticmethod
    def _read(path: Path) -> tuple[str, Any]:
        for _ in range(20):     # a result file still being written (a shared file system)
            try:
                with open(path, "rb") as fh:
                    return pickle.load(fh)
            except (EOFError, pickle.UnpicklingError):
                time.sleep(0.5)
        raise MwemtError(f"unreadable Slurm job result {path}")

    def _done_record(self, directory: Path) -> dict | None:
        entry = self.cache.lookup(directory.parent.parent.name, directory.name, prefer_system=directory.parent.name)
        if entry is not None and entry.directory == directory and (directory / DONE).exists():
            return entry.record
        return None

    def _log(self, job) -> Path:
        return Path(job.paths.stdout)

    def _forget(self, job_id: str, left: bool = True) -> None:
        with self._lock:
            self._submitted.pop(job_id, None)
            if left:
                self._queued.discard(job_id)

    # -- the whole run
    def _cancel(self, ids: Iterable[str]) -> None:
        ids = [i for i in ids if i]
        if not ids:
            return
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):   # sent again by `close` while queued
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
        with self._lock:
            self._cancelled_ids.update(ids)
            for i in ids:
                self._submitted.pop(i, None)

    def cancel(self) -> None:
        """Cancel every submitted job that has not given its result, and submit none any more."""
        with self._lock:
            self.cancelled = True
            ids = list(self._submitted)
        self._cancel(ids)

    def close(self, kill: bool = False) -> None:
        """Wait until every job this run submitted has left the queue, however the run ends. ``kill``: cancel
        what is still pending or running first. A job that gave its result and is still queued after
        `LINGER_SECONDS` (an epilogue, a `slurm.setup` trap) is cancelled too; a cancelled job still pending or
        running is sent scancel again every `RESEND_SECONDS`. After `RELEASE_SECONDS` the ones left are named
        on stderr."""
        if kill:
            self.cancel()
        start = time.monotonic()
        sent = start
        while True:
            with self._lock:
                ours = set(self._queued)
            states = self._queue.states()
            if states is not None:
                with self._lock:
                    self._queued -= ours - set(states)    # seen to have left
                ours &= set(states)
                if not ours:
                    return
            now = time.monotonic()
            if now - start >= RELEASE_SECONDS:
                break
            if states is not None and now - start >= LINGER_SECONDS:
                lingering = {i for i in ours if i not in self._cancelled_ids}
                again = {i for i in ours & self._cancelled_ids
                         if not states[i].startswith("COMPLETING") and now - sent >= RESEND_SECONDS}
                if lingering or again:
                    self._cancel(sorted(lingering | again))
                    sent = now
            time.sleep(POLL_SECONDS)
        print(f"mwemt: Slurm job(s) {', '.join(sorted(ours))} of this run still in the queue after "
              f"{RELEASE_SECONDS:.0f} s (scancel was sent; see squeue)", file=sys.stderr, flush=True)


EXECUTORS: dict[str, type] = {"local": LocalExecutor, "slurm": SlurmExecutor}


def make_executor(name: str, *, jobs: int, cache: StageCache, run_dir: Path, settings: Any = None):
    """The executor registered as ``name``; ``settings``: its config section (``slurm``: `SlurmConfig`)."""
    try:
        cls = EXECUTORS[name]
    except KeyError:
        raise MwemtError(f"unknown executor {name!r} (expected one of {', '.join(EXECUTORS)})") from None
    return cls(jobs, cache, run_dir, settings)


__all__ = ["EXECUTORS", "JobResources", "LocalExecutor", "SlurmAsk", "SlurmExecutor", "SlurmNode", "SlurmRequest",
           "STAGE_LOG", "cluster_nodes", "fit", "make_executor", "parse_sinfo", "slurm_stage_job"]
