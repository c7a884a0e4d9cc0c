"""Stage workers: the processes that run stages, and the lock that keeps a stage directory to one.

Why processes: most stages are Python (annotation, binarization, beam search) and would share one
core under the GIL; a stage in a worker process of its own runs truly in parallel with the others,
with the torch threads of its share of the cores. The workers are forked when the run starts
(before any thread exists), so each imports torch and fairseq once, not once per stage.

Each worker is a session of its own: a Ctrl-C on the terminal reaches only `mwemt`, which decides,
and a worker with everything it starts is one process group, killed whole. It also makes each job a
scheduling entity of its own: Linux shares the CPU fairly between sessions (autogroup), so with one
session a run would get one share of a busy machine however many jobs it ran.

Why they cannot outlive the run: each worker asks the kernel to kill it when `mwemt` dies
(`mwemt.process_tree.die_with_parent`), and `fairseq-train` does the same towards its worker. A stage
holds ``stages/STAGE/SYSTEM/KEY.lock`` while it runs, and its worker passes that lock on as the
standard input of every process it starts (fairseq-train, fairseq's data loader, torchrun's
workers), so the lock is held for as long as any process of the stage lives. A new run therefore
sees a stray process of an earlier run, waits a few seconds for it to die and otherwise refuses,
naming it; two processes never write into one stage directory.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import pickle
import queue
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mwemt.errors import MwemtError
from mwemt.process_tree import die_with_parent, holders, kill_group
from mwemt.processes import resolve_device, signals_deferred, worker_context

LOCK_WAIT_SECONDS = 30.0   # a stray process killed with its parent lets go within seconds
STAGE_LOG = "stage.log"


class StageCancelled(Exception):
    """The run is stopping (an interrupt, or another stage failed): this stage was not run."""


@dataclass
class StageTask:
    """What a worker needs to run one stage and write its DONE."""

    fn: Callable
    ctx: Any                 # runner.StageContext
    record: dict             # the DONE record so far: stage, system, key, config, inputs
    threads: int             # the job's share of the cores
    device: str = "cpu"      # the device setting (auto/cpu/cuda) of the model the stage runs (`StageWorkers.run`)


def lock_path(directory: Path) -> Path:
    return directory.with_name(directory.name + ".lock")


def acquire_stage_lock(directory: Path, wait: float | None = None) -> int:
    """An open, exclusively locked descriptor of the stage's lock file; waits up to ``wait`` seconds
    for another holder (a stray process of a killed run) and then raises a `MwemtError` naming it."""
    path = lock_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + (LOCK_WAIT_SECONDS if wait is None else wait)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                who = "; ".join(f"pid {pid}: {cmd[:120]}" for pid, cmd in holders(path)) or "another process"
                raise MwemtError(f"stage directory {directory} is still in use ({who}), probably a process left "
                                 f"over from an interrupted run; stop it (kill PID) and run again") from None
            time.sleep(0.2)


@contextlib.contextmanager
def _redirected(stdin_fd: int, log: Path):
    """fd 0 = the stage lock (inherited by every child: see the module docstring); fd 1 and 2 = log."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(stdin_fd, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        for fd, copy in enumerate(saved):
            os.dup2(copy, fd)
            os.close(copy)


def _set_threads(n: int) -> None:
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def execute(task: StageTask, cache) -> dict:
    """Run one stage in this (worker) process: lock, empty directory, the stage function, DONE."""
    directory: Path = task.ctx.out
    fd = acquire_stage_lock(directory)
    try:
        cache.clear_partial(directory)
        with _redirected(fd, directory / STAGE_LOG):
            _set_threads(task.threads)
            t0 = time.monotonic()
            try:
                outputs = task.fn(task.ctx)
            except BaseException:
                traceback.print_exc()       # into stage.log; the error itself goes to the parent
                raise
            record = {**task.record, "elapsed_seconds": round(time.monotonic() - t0, 3),
                      "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
            return cache.finish(directory, record, outputs or {}).record
    finally:
        os.close(fd)


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling, else an error of the same kind carrying its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        if isinstance(exc, MwemtError):
            return MwemtError(str(exc))
        return RuntimeError("".join(traceback.format_exception(exc)).rstrip())


def _serve(conn, cache, parent: int, others: list) -> None:
    """A worker's loop: run the stages it is sent, reply ``(True, DONE record)`` or ``(False, error)``."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent decides what an interrupt stops
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)
    for c in others:
        c.close()
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        task = pickle.loads(data)
        if task is None:
            return
        try:
            reply = (True, execute(task, cache))
        except BaseException as exc:  # noqa: BLE001 - the parent raises it
            reply = (False, _portable(exc))
        conn.send(reply)


class StageWorkers:
    """``n`` forked worker processes; `run` (from any thread) hands a stage to an idle one.

    A stage that runs a model on a GPU (``StageTask.device == "cuda"``) runs instead in a fresh
    interpreter started for it (`mwemt.processes.worker_context`), in the idle worker's slot: CUDA
    cannot be used in a forked process. The run's own process never initializes CUDA
    (`mwemt.processes.resolve_device`), so whichever process a stage runs in may.
    """

    def __init__(self, n: int, cache):
        ctx = worker_context("cpu")
        self.cache = cache
        self._fresh: dict[int, Any] = {}   # slot -> the fresh interpreter running a GPU stage there
        self.procs: list = []
        self.conns: list = []
        self._idle: queue.Queue = queue.Queue()
        self._busy: set[int] = set()
        self.cancelled = False
        try:
            for i in range(n):
                mine, theirs = ctx.Pipe(duplex=True)
                proc = ctx.Process(target=_serve, args=(theirs, cache, os.getpid(), [*self.conns, mine]),
                                   name=f"mwemt-stage-worker-{i}")   # not daemonic: stages fork children
                proc.start()
                theirs.close()
                self.procs.append(proc)
                self.conns.append(mine)
                self._idle.put(i)
        except BaseException:
            self.close(kill=True)
            raise

    def run(self, task: StageTask, started: Callable[[], None] = lambda: None) -> dict:
        """The stage's DONE record; its error is raised here. An interrupt kills its worker.

        ``started`` is called when an idle worker has been found for the stage.
        """
        device = resolve_device(task.device)   # cpu or cuda, decided without initializing CUDA here
        i = self._idle.get()
        if i is None or self.cancelled:
            self._idle.put(None)
            raise StageCancelled(task.record["stage"])
        self._busy.add(i)
        started()
        proc, conn = self.procs[i], self.conns[i]
        try:
            try:
                payload = pickle.dumps(task)
            except (pickle.PicklingError, AttributeError, TypeError) as exc:
                raise MwemtError(f"stage {task.record['stage']}: its function and settings go to a worker "
                                 f"process, so the function must be defined at module level ({exc})") from None
            if device != "cpu":
                proc, conn = self._start_fresh(i, device)
            conn.send_bytes(payload)
            ok, value = conn.recv()
        except (EOFError, OSError):
            self._busy.discard(i)
            self._end_fresh(i)
            if self.cancelled:
                raise StageCancelled(task.record["stage"]) from None
            code = proc.exitcode
            raise MwemtError(f"stage {task.record['stage']} ({task.record['system']}): its worker process died"
                             + (f" (signal {-code})" if code and code < 0 else "")
                             + f"; see {task.ctx.out / STAGE_LOG}") from None
        except BaseException:
            self._kill(i)
            raise
        self._end_fresh(i)
        self._busy.discard(i)
        self._idle.put(i)
        if not ok:
            raise value
        return value

    def _start_fresh(self, i: int, device: str):
        """A fresh interpreter for one stage on ``device``, in slot ``i``; (process, its pipe)."""
        ctx = worker_context(device)
        mine, theirs = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=_serve, args=(theirs, self.cache, os.getpid(), []),
                           name=f"mwemt-stage-{device}-{i}")
        with signals_deferred():
            proc.start()
            self._fresh[i] = (proc, mine)
        theirs.close()
        return proc, mine

    def _end_fresh(self, i: int) -> None:
        """Let slot ``i``'s fresh interpreter finish (it has sent its reply) and reap it."""
        fresh = self._fresh.pop(i, None)
        if fresh is None:
            return
        proc, conn = fresh
        with contextlib.suppress(OSError):
            conn.send_bytes(pickle.dumps(None))
        proc.join(timeout=30)
        if proc.exitcode is None:
            kill_group(proc.pid)
            proc.kill()
            proc.join()
        conn.close()

    def cancel(self) -> None:
        """Stop every running stage now (its whole process group) and refuse new ones."""
        self.cancelled = True
        for i in list(self._busy):
            self._kill(i)
        for _ in self.procs:
            self._idle.put(None)

    def _kill(self, i: int) -> None:
        self._busy.discard(i)
        fresh = self._fresh.get(i)
        if fresh is not None:   # a GPU stage's fresh interpreter (reaped by `_end_fresh`); the worker stays idle
            kill_group(fresh[0].pid)
            with contextlib.suppress(Exception):
                fresh[0].kill()
            return
        kill_group(self.procs[i].pid)
        with contextlib.suppress(Exception):
            self.procs[i].kill()

    def close(self, kill: bool = False) -> None:
        """Stop the workers (asked to finish, or killed) and reap them all."""
        if kill:
            self.cancel()
        for i in list(self._fresh):
            self._end_fresh(i)
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send_bytes(pickle.dumps(None))
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.exitcode is None:
                kill_group(proc.pid)
                proc.kill()
                proc.join()
        for conn in self.conns:
            conn.close()
        self.procs, self.conns = [], []
