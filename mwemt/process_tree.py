"""Child processes that never outlive their parent, and finding who still holds a file open.

Why: `kill -9` of `mwemt run` cannot run any cleanup code, so a child it started (a stage worker,
`fairseq-train`) must be stopped by the kernel instead, or it keeps writing
into a stage directory that the next run believes is free. On Linux a process can ask to receive a
signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``); the request survives ``exec``, so
`guarded_command` wraps any command line in ``python -m mwemt.process_tree PARENT -- CMD``, which
makes the request and then becomes CMD. A chain of such requests (run -> worker -> fairseq-train)
takes a whole tree down with its root. fairseq-train forks no data-loader processes (``--num-workers 0``,
`mwemt.nmt.train.fairseq_train_args`): PyTorch starts them from a helper thread, whose end would fire a
parent-death signal, and on their own they notice a dead parent only by polling every 5 s. `holders` names
the processes that still have a file open, for error messages about a stage directory some stray process is
still using.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int | None = None) -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux; a no-op elsewhere).

    ``parent``: the pid the parent had; if it is already gone (it died before we asked), exit now.
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def guarded_command(cmd: list[str]) -> list[str]:
    """``cmd`` run so that it dies with the process that starts it (see the module docstring)."""
    return [sys.executable, "-m", "mwemt.process_tree", str(os.getpid()), "--", *cmd]


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    """Signal every process of a process group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def holders(path: str | Path) -> list[tuple[int, str]]:
    """(pid, command line) of every process (of this user) with ``path`` open, from /proc."""
    target = os.path.realpath(path)
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    found.append((int(entry.name), cmdline.strip()))
                    break
            except OSError:
                continue
    return sorted(found)


def _exec_guarded(argv: list[str]) -> None:
    """``PARENT -- CMD...``: die with PARENT, then become CMD."""
    if len(argv) < 3 or argv[1] != "--":
        sys.exit("usage: python -m mwemt.process_tree PARENT_PID -- COMMAND [ARGS...]")
    die_with_parent(int(argv[0]))
    os.execvp(argv[2], argv[2:])


if __name__ == "__main__":
    _exec_guarded(sys.argv[1:])
