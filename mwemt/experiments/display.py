"""Progress of several stages at once: one line per running stage, messages printed above them.

Why: with ``--jobs 2`` two stages write progress bars at the same time, and two tqdm bars on one
terminal overwrite each other. So a stage never writes to the terminal: its worker sends stdout and
stderr to the stage's own ``stage.log`` (kept: a record of what the stage printed), and this display
reads those logs. The last bar state of a stage becomes its status line; a finished line that is
not a bar (a log message, a validation row) is printed once, above the status lines, prefixed with
the stage. On a terminal the status lines are redrawn in place; elsewhere (a log file, CI) only the
messages and the stage lines are printed.
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

REFRESH_SECONDS = 0.2


@dataclass
class _Running:
    label: str
    prefix: str
    log: Path
    started: float = field(default_factory=time.monotonic)
    offset: int = 0
    pending: str = ""
    status: str = ""


def split_output(text: str) -> tuple[list[str], str, str]:
    """(finished message lines, the latest bar state, the unfinished rest) of a stage's output.

    A line is a message unless it was written over a bar: tqdm draws with carriage returns, so a
    line holding '\\r' is a bar's final state, except when the piece before the last one is a
    run of spaces (tqdm.write clears the bar with spaces, then writes the message).
    """
    *lines, rest = text.split("\n")
    messages: list[str] = []
    status = ""
    for line in lines:
        pieces = line.split("\r")
        last = pieces[-1].rstrip()
        if len(pieces) == 1 or (pieces[-2] and not pieces[-2].strip()):
            if last.strip():
                messages.append(last)
        elif last.strip():
            status = last.strip()
    bar = next((p.strip() for p in reversed(rest.split("\r")) if p.strip()), "")
    return messages, bar or status, rest


class StageDisplay:
    """Stage lines and the output of running stages on one stream (see the module docstring)."""

    def __init__(self, stream: TextIO, live: bool):
        self.stream = stream
        self.live = live
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self._drawn = 0
        self._last_block: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="mwemt-stage-display", daemon=True)
        self._thread.start()

    def start(self, ident: str, label: str, prefix: str, log: Path) -> None:
        """A stage began: ``label`` heads its status line, ``prefix`` its messages, ``log`` is read."""
        with self._lock:
            self._running[ident] = _Running(label, prefix, log)

    def finish(self, ident: str) -> None:
        """A stage ended: print what its log still holds, drop its status line."""
        with self._lock:
            run = self._running.pop(ident, None)
            out = self._collect(run, final=True) if run is not None else []
            self._draw(out)

    def message(self, text: str) -> None:
        with self._lock:
            self._draw([text])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        with self._lock:
            out = []
            for run in self._running.values():
                out += self._collect(run, final=True)
            self._running.clear()
            self._draw(out)

    # -- internals (called with the lock held)
    def _loop(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            with self._lock:
                out = []
                for run in self._running.values():
                    out += self._collect(run)
                self._draw(out)

    def _collect(self, run: _Running, final: bool = False) -> list[str]:
        try:
            with open(run.log, "rb") as fh:
                fh.seek(run.offset)
                data = fh.read()
        except OSError:
            data = b""
        run.offset += len(data)
        text = run.pending + data.decode("utf-8", errors="replace")
        if final and text and not text.endswith("\n"):
            text += "\n"
        messages, status, run.pending = split_output(text)
        if status:
            run.status = status
        return [f"{run.prefix}{m}" for m in messages]

    def _draw(self, messages: list[str]) -> None:
        if not self.live:
            if messages:
                self.stream.write("".join(m + "\n" for m in messages))
                self.stream.flush()
            return
        width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
        now = time.monotonic()
        block = [_fit(f"{r.label} {now - r.started:6.0f}s  {r.status}", width) for r in self._running.values()]
        if not messages and block == self._last_block:
            return
        self._last_block = block
        up = f"\x1b[{self._drawn}F" if self._drawn else ""
        self.stream.write(up + "\x1b[J" + "".join(m + "\n" for m in messages) + "".join(b + "\n" for b in block))
        self.stream.flush()
        self._drawn = len(block)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
