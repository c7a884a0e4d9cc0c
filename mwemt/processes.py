"""Interrupts that clean up, and worker processes that never outlive them.

Why: a command stopped with Ctrl-C (SIGINT), `kill` (SIGTERM) or a closed terminal (SIGHUP) must
end within seconds, remove its partial outputs and leave no process behind. Python only turns
SIGINT into an exception; SIGTERM and SIGHUP kill it on the spot, so `finally` blocks never run
and temporary files and worker processes stay. And `multiprocessing.Pool` can hang for ever when
it is interrupted: its workers share queue locks, and a worker stopped while it holds one leaves
the pool's shutdown waiting on that lock.

So:

- `signals_unwind` (the `mwemt` command wraps every run in it) turns SIGTERM and SIGHUP into
  `Terminated`, a `KeyboardInterrupt`, so that every cleanup path written for Ctrl-C runs for them
  too. A second signal while the first is still unwinding does not wait for it: it deletes the
  partial files `mwemt.fileio` knows of, kills the tracked children and exits at once.
- `ordered_map` runs a function over tasks on forked workers, each with a pipe of its own: no lock
  is shared, so killing a worker can never block the others or the parent. Workers ignore SIGINT
  (the parent decides), die with their parent (``PR_SET_PDEATHSIG`` on Linux) and are killed and
  reaped whenever the map ends early, by an exception or an interrupt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator

from mwemt.errors import MwemtError
from mwemt.process_tree import die_with_parent

_UNWIND_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)


class Terminated(KeyboardInterrupt):
    """The process was asked to stop by a signal other than SIGINT (SIGTERM, SIGHUP)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


# ---------------------------------------------------------------- devices: where a model runs, and in what process

DEVICES = ("auto", "cpu", "cuda")
_CUDA_COUNT_ENV = "MWEMT_CUDA_DEVICES"   # "host|CUDA_VISIBLE_DEVICES|count": a probe's answer, inherited by children


def cuda_device_count() -> int:
    """How many CUDA GPUs torch would find here, found without initializing CUDA in this process.

    Why: once a process has asked CUDA anything (``torch.cuda.is_available()`` included), a process it
    forks cannot use CUDA ("Cannot re-initialize CUDA in forked subprocess"). `mwemt run` forks its
    stage workers, so it must never ask. A CPU build of torch answers 0 at once; a CUDA build is asked
    in a fresh interpreter, once: the answer is kept in the environment (keyed by host and
    ``CUDA_VISIBLE_DEVICES``, so a Slurm job on another node, or with other GPUs, asks again).
    In a process that has already initialized CUDA, torch is asked directly.
    """
    import socket

    import torch

    if not torch.backends.cuda.is_built():
        return 0
    if torch.cuda.is_initialized():
        return torch.cuda.device_count()
    where = f"{socket.gethostname()}|{os.environ.get('CUDA_VISIBLE_DEVICES', '')}|"
    known = os.environ.get(_CUDA_COUNT_ENV, "")
    if known.startswith(where) and known[len(where):].isdigit():
        return int(known[len(where):])
    import subprocess

    try:
        out = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.device_count())"],
                             capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        count = int(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else 0
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        count = 0
    os.environ[_CUDA_COUNT_ENV] = f"{where}{count}"
    return count


def resolve_device(device: str, key: str = "device") -> str:
    """auto -> cuda or cpu; cuda without a GPU torch can use is refused here, before any work
    (``key`` names the setting in the message). Never initializes CUDA (`cuda_device_count`)."""
    if device not in DEVICES:
        raise MwemtError(f"{key} is {device!r} (expected one of {', '.join(DEVICES)})")
    if device == "cpu":
        return "cpu"
    gpus = cuda_device_count()
    if device == "auto":
        return "cuda" if gpus else "cpu"
    if not gpus:
        import torch

        raise MwemtError(f"{key} is cuda, but torch {torch.__version__} finds no CUDA GPU on this machine "
                         f"(expected {key} cpu or auto)")
    return "cuda"


def worker_context(device: str = "cpu"):
    """The multiprocessing context for a worker process that runs on ``device``: forked for CPU work
    (it inherits what the parent imported and built: fast to start), a fresh interpreter ("spawn") for
    GPU work, since CUDA cannot be used in a forked process once its parent has touched it. Every
    worker process of mwemt is started through here."""
    import multiprocessing as mp

    return mp.get_context("spawn" if device == "cuda" else "fork")


def usable_cores() -> int:
    """The cores this process may use (its CPU affinity), at least 1: the most workers worth forking."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def interrupt_exit_code(exc: BaseException) -> int:
    """The shell convention for a run stopped by a signal: 128 + signal number (130 for Ctrl-C)."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


def signal_name(exc: BaseException) -> str:
    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name


def stopped_while_starting(exc: BaseException, prog: str = "mwemt") -> int:
    """Say that a stop signal ended the command before it began its work; the exit code to return."""
    print(f"{prog}: stopped by {signal_name(exc)} while starting; nothing was written", file=sys.stderr)
    return interrupt_exit_code(exc)


# ---------------------------------------------------------------- children to kill on a forced exit

_CHILDREN: dict[int, object] = {}  # pid -> a process object with kill()


def track_child(proc) -> None:
    """Remember a child process (anything with ``pid`` and ``kill()``) so a forced exit kills it."""
    _CHILDREN[proc.pid] = proc


def untrack_child(proc) -> None:
    _CHILDREN.pop(proc.pid, None)


def kill_tracked_children() -> None:
    for proc in list(_CHILDREN.values()):
        with contextlib.suppress(Exception):
            proc.kill()
    _CHILDREN.clear()


# ---------------------------------------------------------------- signals


_FORCE_EXIT_CLEANUPS: list[Callable[[], None]] = []


def on_force_exit(cleanup: Callable[[], None]) -> None:
    """Run ``cleanup`` when a second signal forces an exit (`mwemt.fileio` registers the removal of
    its partial files here, so this bottom module imports nothing above it)."""
    if cleanup not in _FORCE_EXIT_CLEANUPS:
        _FORCE_EXIT_CLEANUPS.append(cleanup)


def _force_exit(signum: int) -> None:
    """A second signal: no more waiting for cleanup code, clean up the essentials and go."""
    for cleanup in _FORCE_EXIT_CLEANUPS:
        with contextlib.suppress(Exception):
            cleanup()
    kill_tracked_children()
    with contextlib.suppress(Exception):
        sys.stderr.write(f"\nmwemt: {signal.Signals(signum).name} again: stopped at once\n")
        sys.stderr.flush()
    os._exit(128 + signum)


@contextlib.contextmanager
def signals_unwind() -> Iterator[None]:
    """Within the block, SIGINT raises KeyboardInterrupt and SIGTERM/SIGHUP raise `Terminated`;
    a second signal exits at once (`_force_exit`). Previous handlers come back afterwards."""
    global _stop_signal
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        global _stop_signal
        if _stop_signal is not None:
            _force_exit(signum)
        _stop_signal = signum
        if not _deferred:
            raise _stop_exception(signum)

    previous = {}
    for sig in (signal.SIGINT, *_UNWIND_SIGNALS):
        if signal.getsignal(sig) is signal.SIG_IGN:
            continue  # started with the signal ignored (nohup, a background job): keep it so
        previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        _stop_signal = None


# The signal that asked this process to stop, if one did. A handler's exception can be lost: Python
# only reports ("Exception ignored in ...") what is raised inside a __del__, a weakref callback or an
# at-fork hook. So the places that commit work (`mwemt.fileio.atomic_write` before it renames its
# output into place, the worker pool between tasks) call `raise_if_stopped` as well.
_stop_signal: int | None = None
_deferred = False  # inside `signals_deferred`: a handler records the signal and raises nothing


def _stop_exception(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


def raise_if_stopped() -> None:
    """Raise the interrupt again if a stop signal arrived and its exception was swallowed (not inside
    `recording_the_stop`)."""
    if _stop_signal is not None and not _recording_stop:
        raise _stop_exception(_stop_signal)


_recording_stop = False  # inside `recording_the_stop`


@contextlib.contextmanager
def recording_the_stop() -> Iterator[None]:
    """Let the block write the record of how the run ended (a manifest saying ``interrupted``) although
    a stop signal has arrived: `raise_if_stopped`, which keeps outputs from being committed after one,
    stays quiet here. A second signal still exits at once."""
    global _recording_stop
    old, _recording_stop = _recording_stop, True
    try:
        yield
    finally:
        _recording_stop = old


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold off SIGINT, SIGTERM and SIGHUP for the block; their exception is raised when it ends.

    Around a fork: a signal arriving in the middle of it would otherwise run the Python handler in
    an at-fork hook of the parent, where its exception is swallowed with a traceback on stderr, or
    in the new child before it has set its own handlers. The signals are blocked (the child starts
    with them blocked) and a handler already due runs without raising.
    """
    global _deferred
    sigs = {signal.SIGINT, *_UNWIND_SIGNALS}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    _deferred = True
    try:
        yield
    finally:
        _deferred = False
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    raise_if_stopped()


# ---------------------------------------------------------------- worker processes


def _serve(fn: Callable, state: object, conn, inherited: list, parent: int) -> None:
    """A worker's loop: receive a task, send back ``(True, result)`` or ``(False, error)``.

    Started with the stop signals blocked (`signals_deferred`): they are unblocked once the worker
    has its own handlers.
    """
    global _stop_signal, _deferred
    _stop_signal, _deferred = None, False
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the parent decides
    for sig in _UNWIND_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)  # not the parent's handler, inherited through fork
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, *_UNWIND_SIGNALS})
    die_with_parent(parent)  # exits at once if the parent died before we could ask
    for c in inherited:
        c.close()
    while True:
        try:
            more, task = conn.recv()  # (True, task), or (False, None): stop
        except (EOFError, OSError):
            return
        if not more:
            return
        try:
            reply = (True, fn(state, task))
        except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
            exc.worker_traceback = "".join(traceback.format_exception(exc)).rstrip()  # type: ignore[attr-defined]
            reply = (False, exc)
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable result or exception
            what = "error" if not reply[0] else "result"
            detail = getattr(reply[1], "worker_traceback", repr(exc)) if not reply[0] else repr(exc)
            conn.send((False, RuntimeError(f"a worker's {what} could not be sent back: {detail}")))


class WorkerPool:
    """``workers`` forked processes running ``fn(state, task)``; ``state`` is inherited, never pickled.

    Use it as a context manager: leaving the block (normally or not) stops and reaps every worker.
    """

    def __init__(self, fn: Callable, state: object, workers: int):
        ctx = worker_context("cpu")   # CPU work on inherited state: forked
        self.procs: list = []
        self.conns: list = []
        try:
            for _ in range(workers):
                mine, theirs = ctx.Pipe(duplex=True)
                proc = ctx.Process(target=_serve, args=(fn, state, theirs, [*self.conns, mine], os.getpid()),
                                   daemon=True)
                try:
                    with signals_deferred():
                        proc.start()
                        track_child(proc)
                        self.procs.append(proc)
                        self.conns.append(mine)
                finally:
                    theirs.close()
        except BaseException:
            self.close(kill=True)
            raise

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close(kill=exc_type is not None)

    def close(self, kill: bool = True) -> None:
        """Stop the workers: ask them to finish, or (``kill``) SIGKILL them; then reap them all."""
        if not kill:
            for conn in self.conns:
                with contextlib.suppress(OSError):
                    conn.send((False, None))
            for proc in self.procs:
                proc.join(timeout=5)
        for proc in self.procs:
            if proc.exitcode is None:
                with contextlib.suppress(Exception):
                    proc.kill()
        for proc in self.procs:
            proc.join()
            untrack_child(proc)
        for conn in self.conns:
            conn.close()
        self.procs, self.conns = [], []

    def imap(self, tasks: Iterable, window: int | None = None) -> Iterator:
        """Results of ``tasks`` in input order; at most ``window`` (default 2 per worker) tasks are
        sent out or done-but-not-yet-yielded, so memory stays flat however long the input.

        A task is only sent to an idle worker, which is waiting to read it, so no send can block
        on a worker that is itself blocked sending its result.
        """
        from multiprocessing.connection import wait

        window = window or 2 * len(self.procs)
        idle = list(range(len(self.procs)))
        running: dict[int, int] = {}  # worker -> task number
        done: dict[int, object] = {}
        it = iter(tasks)
        sent = yielded = 0
        exhausted = False
        while True:
            raise_if_stopped()
            while idle and not exhausted and sent < yielded + window:
                task = next(it, _END)
                if task is _END:
                    exhausted = True
                    break
                w = idle.pop()
                self.conns[w].send((True, task))
                running[w] = sent
                sent += 1
            while yielded in done:
                yield done.pop(yielded)
                yielded += 1
            if not running:
                if exhausted:
                    return
                continue  # everything sent has been yielded: send more before waiting
            for conn in wait([self.conns[w] for w in running]):
                w = self.conns.index(conn)
                try:
                    ok, value = conn.recv()
                except (EOFError, OSError):
                    code = self.procs[w].exitcode
                    raise MwemtError(f"worker process {self.procs[w].pid} died"
                                     + (f" (exit code {code})" if code is not None else "")
                                     + "; out of memory?") from None
                if not ok:
                    raise value  # type: ignore[misc]
                done[running.pop(w)] = value
                idle.append(w)


_END = object()


def ordered_map(fn: Callable, tasks: Iterable, workers: int, state: object = None) -> Iterator:
    """``fn(state, task)`` for every task, in order, on ``workers`` forked processes (in this
    process when ``workers`` <= 1). ``state`` (an annotator, an index) is inherited, never pickled.

    An exception in ``fn`` is raised here (a `MwemtError` as it is, anything else as a RuntimeError
    carrying the worker's traceback). Workers are reaped when the iteration ends, is interrupted or
    is closed; call ``close()`` on the iterator (or use `contextlib.closing`) when abandoning it.
    """
    if workers <= 1:
        for task in tasks:
            yield fn(state, task)
        return
    with WorkerPool(fn, state, workers) as pool:
        yield from pool.imap(tasks)


def _call(state: tuple, task: None):
    fn, args = state
    return fn(*args)


def call_in_child(fn: Callable, *args):
    """``fn(*args)`` in a forked child process; its result (or exception) comes back here.

    For long calls into C code that never return to the interpreter (sentencepiece training):
    Python runs signal handlers only between bytecodes, so Ctrl-C would wait for the whole call.
    Here the parent waits on a pipe and stays interruptible; an interrupt kills the child.
    """
    with WorkerPool(_call, (fn, args), 1) as pool:
        return next(pool.imap([None]))
