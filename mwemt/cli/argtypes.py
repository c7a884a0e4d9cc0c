"""Range-checked argparse types: every numeric option of `mwemt` declares the values it takes.

An option's ``type`` is a `Number`. It converts the text, refuses a value outside its range (a
non-finite number too), and says what it expected, which argparse prints as
``argument --workers: expected an integer from 1 to 2 (the cores this process may use), got
'100000'`` with exit status 2, before the command does any work. A few options also take a
value outside the range with a meaning of its own (``--topk -1``: all tokens); `Number.special`
lists them. `document_ranges` appends each range to its option's --help, so the help, the check
and the fuzzing test (tests/test_cli_fuzz.py, which walks every option of every command) all read
the same declaration.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from mwemt.processes import usable_cores
from mwemt.schema import LANGUAGE_CODE, SEED_MAX


@dataclass(frozen=True)
class Number:
    """An argparse type for an integer (``kind=int``) or a number (``kind=float``) in a range.

    ``minimum``/``maximum`` are inclusive bounds (None: unbounded); ``above`` is an exclusive lower
    bound (a ratio > 0). ``special`` holds (value, meaning) pairs accepted outside the range.
    ``why`` says where an upper bound comes from (shown in errors and help).
    """

    kind: type = int
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    special: tuple[tuple[float, str], ...] = ()
    why: str = ""

    def in_range(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.above is not None and value <= self.above:
            return False
        if self.minimum is not None and value < self.minimum:
            return False
        return self.maximum is None or value <= self.maximum

    def accepts(self, value: float) -> bool:
        return self.in_range(value) or any(value == v for v, _ in self.special)

    def range_text(self) -> str:
        """``from 1 to 16``, ``≥ 0``, ``> 0 and ≤ 10``: the range alone."""
        lo = f"> {_fmt(self.above)}" if self.above is not None else (
            f"≥ {_fmt(self.minimum)}" if self.minimum is not None else None)
        if self.minimum is not None and self.maximum is not None and self.above is None:
            text = f"from {_fmt(self.minimum)} to {_fmt(self.maximum)}"
        elif lo and self.maximum is not None:
            text = f"{lo} and ≤ {_fmt(self.maximum)}"
        elif lo:
            text = lo
        elif self.maximum is not None:
            text = f"≤ {_fmt(self.maximum)}"
        else:
            text = "any value"
        if self.why:
            text += f" ({self.why})"
        return text

    def describe(self) -> str:
        """``an integer from 1 to 16, or -1 (all)``: what the option expects."""
        unbounded = self.minimum is None and self.maximum is None and self.above is None
        kind = "an integer" if self.kind is int else "a finite number" if unbounded else "a number"
        text = f"{kind} {self.range_text()}" if not unbounded or self.why else kind
        for value, meaning in self.special:
            text += f", or {_fmt(value)} ({meaning})"
        return text

    def __call__(self, text: str) -> int | float:
        try:
            value = self.kind(text.strip())
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}") from None
        if not self.accepts(value):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}")
        return value


def _fmt(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def int_range(minimum: int | None = None, maximum: int | None = None, *, special: dict[int, str] | None = None,
              why: str = "") -> Number:
    """An integer in [minimum, maximum] (either may be None), plus the ``special`` values."""
    return Number(int, minimum, maximum, special=tuple((special or {}).items()), why=why)


def float_range(minimum: float | None = None, maximum: float | None = None, *, above: float | None = None,
                special: dict[float, str] | None = None, why: str = "") -> Number:
    """A finite number in [minimum, maximum], or > ``above``, plus the ``special`` values."""
    return Number(float, minimum, maximum, above, tuple((special or {}).items()), why)


def positive_int(maximum: int | None = None, why: str = "") -> Number:
    """1 or more."""
    return int_range(1, maximum, why=why)


def non_negative_int(maximum: int | None = None, why: str = "") -> Number:
    """0 or more."""
    return int_range(0, maximum, why=why)


def seed() -> Number:
    """A random seed: 0 to 2**32 - 1, what every consumer (sentencepiece, numpy, fairseq) takes."""
    return int_range(0, SEED_MAX)


def language_code(text: str) -> str:
    """A language code that ends file names (PREFIX.CODE): letters and digits, parts joined by - or _. An empty
    code or one with a / would write ``train.`` or a file in another directory."""
    if not LANGUAGE_CODE.match(text):
        raise argparse.ArgumentTypeError(f"expected a language code such as en, pt_BR or zh-Hans (letters and digits: "
                                         f"it ends file names), got {text!r}")
    return text


def workers(*, zero: str | None = None) -> Number:
    """Processes or threads: 1 to the cores this process may use (more only oversubscribes the
    machine); ``zero`` gives 0 a meaning (e.g. one per core)."""
    return int_range(1, usable_cores(), special={0: zero} if zero else None,
                     why="the cores this process may use")


def walk_actions(parser: argparse.ArgumentParser):
    """(command path, action) for every option of ``parser`` and its subcommands, recursively."""
    def walk(p: argparse.ArgumentParser, path: tuple[str, ...]):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, (*path, name))
            else:
                yield path, action
    yield from walk(parser, ())


def document_ranges(parser: argparse.ArgumentParser) -> None:
    """Append each ranged option's range to its --help text (and its subcommands', recursively)."""
    for _, action in walk_actions(parser):
        if isinstance(action.type, Number) and action.help is not argparse.SUPPRESS:
            rng = action.type.describe().replace("%", "%%")
            if rng not in (action.help or ""):
                action.help = f"{action.help or ''} [{rng}]".strip()
