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
stage's failure) cancels every submitted job (``scancel``) and waits until the queue has let them go.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import os
import pickle
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mwemt.errors import MwemtError
from mwemt.experiments.cache import DONE, StageCache
from mwemt.experiments.workers import STAGE_LOG, StageCancelled, StageTask, StageWorkers, _portable, execute

SLURM_LOGS = "slurm"            # RUN/slurm/JOBID/: submitit's job files and the job's log
POLL_SECONDS = 0.25             # how often a waiting stage looks for its result file
QUEUE_SECONDS = 1.0             # how often squeue is asked (once for all waiting stages)
RELEASE_SECONDS = 30.0          # how long a cancelled run waits for its jobs to leave the queue
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


class SlurmExecutor:
    """Each stage a Slurm job through submitit; see the module docstring. ``jobs``: jobs in the queue at once."""

    def __init__(self, jobs: int, cache: StageCache, run_dir: Path, settings: Any = None):
        try:
            import submitit
        except ImportError:
            raise MwemtError("the slurm executor needs submitit: pip install 'mwemt[slurm]'") from None
        for program in ("sbatch", "squeue", "scancel"):
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
        self._submitted: dict[str, Any] = {}    # job id -> submitit job, until it has left the queue
        self._cancelled_ids: list[str] = []
        self._queue = SlurmQueue()

    # -- one stage
    def run(self, task: StageTask, started: Started = lambda *a: None, note: Note = lambda text: None) -> dict:
        """The stage's DONE record; its own error is raised here; a job that died is submitted again."""
        stage, system = task.record["stage"], task.record["system"]
        attempts = self.settings.retries + 1
        with self._slots:
            for attempt in range(1, attempts + 1):
                job = self._submit(task)
                if attempt == 1:
                    started(f"submitted: job {job.job_id}")
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
        res = self.settings.resources(stage)
        task = dataclasses.replace(task, threads=res.cpus, ctx=dataclasses.replace(task.ctx, threads=res.cpus))
        ex = self._submitit.SlurmExecutor(folder=self.logs / "%j", max_num_timeout=0)
        params: dict[str, Any] = {"job_name": f"mwemt-{stage}-{system}", "time": res.time,
                                  "cpus_per_task": res.cpus, "mem": res.mem, "stderr_to_stdout": True}
        if res.partition:
            params["partition"] = res.partition
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
                self._forget(job.job_id)
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

    def _forget(self, job_id: str) -> None:
        with self._lock:
            self._submitted.pop(job_id, None)

    # -- the whole run
    def _cancel(self, ids: list[str]) -> None:
        ids = [i for i in ids if i]
        if not ids:
            return
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(["scancel", *ids], capture_output=True, timeout=60)
        with self._lock:
            self._cancelled_ids += ids
            for i in ids:
                self._submitted.pop(i, None)

    def cancel(self) -> None:
        """Cancel every submitted job and submit none any more."""
        with self._lock:
            self.cancelled = True
            ids = list(self._submitted)
        self._cancel(ids)

    def close(self, kill: bool = False) -> None:
        """``kill``: cancel what is still queued or running, and wait until the queue has let it go."""
        if kill:
            self.cancel()
        ids = set(self._cancelled_ids)
        deadline = time.monotonic() + RELEASE_SECONDS
        while ids and time.monotonic() < deadline:
            states = self._queue.states()
            if states is not None and not ids & set(states):
                break
            time.sleep(POLL_SECONDS)


EXECUTORS: dict[str, type] = {"local": LocalExecutor, "slurm": SlurmExecutor}


def make_executor(name: str, *, jobs: int, cache: StageCache, run_dir: Path, settings: Any = None):
    """The executor registered as ``name``; ``settings``: its config section (``slurm``: `SlurmConfig`)."""
    try:
        cls = EXECUTORS[name]
    except KeyError:
        raise MwemtError(f"unknown executor {name!r} (expected one of {', '.join(EXECUTORS)})") from None
    return cls(jobs, cache, run_dir, settings)


__all__ = ["EXECUTORS", "LocalExecutor", "SlurmExecutor", "STAGE_LOG", "make_executor", "slurm_stage_job"]
