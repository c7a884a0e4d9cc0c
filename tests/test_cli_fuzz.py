"""Issue 32's fuzzing pass: no CLI option and no config setting takes a value outside its documented range.

Driven by the declarations themselves. Every option of every `mwemt` command (and sub-action) is found
by walking the real parser (`mwemt.cli.build_parser`); a numeric option must have a range-checked type
(`mwemt.cli.argtypes.Number`), so a new ``type=int`` option fails here until it declares its range.
Values just outside and inside each range, and values hypothesis draws on either side, are parsed on
a full command line (required arguments filled in): outside, argparse must exit 2 with the range in
its message; inside, the value must come through. Config settings are walked the same way from the
experiment schema, and checked by the schema's own converter.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from functools import cache
from types import UnionType
from typing import Union

import pytest

from mwemt.cli import build_parser
from mwemt.cli.argtypes import Number, walk_actions


@cache
def parser() -> argparse.ArgumentParser:
    return build_parser()


@cache
def numeric_options() -> list[tuple[tuple[str, ...], argparse.Action]]:
    return [(path, a) for path, a in walk_actions(parser()) if isinstance(a.type, Number)]


def _subparser(path: tuple[str, ...]) -> argparse.ArgumentParser:
    p = parser()
    for name in path:
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        p = sub.choices[name]
    return p


def _dummy(action: argparse.Action) -> list[str]:
    if action.choices:
        value = str(next(iter(action.choices)))
    elif isinstance(action.type, Number):
        value = str(action.type.minimum if action.type.minimum is not None else action.type.maximum)
    else:
        value = "x"
    n = action.nargs
    count = n if isinstance(n, int) else 1
    return [value] * count


@cache
def _required(path: tuple[str, ...]) -> tuple[str, ...]:
    """A command line prefix that satisfies every required argument of the (sub)command at ``path``."""
    p = _subparser(path)
    argv: list[str] = list(path)
    positionals: list[str] = []
    grouped = {id(a) for g in p._mutually_exclusive_groups if g.required for a in g._group_actions[1:]}
    for a in p._actions:
        if isinstance(a, (argparse._SubParsersAction, argparse._HelpAction)) or id(a) in grouped:
            continue
        if not a.option_strings:
            positionals += _dummy(a)
        elif a.required or any(g.required and a is g._group_actions[0] for g in p._mutually_exclusive_groups):
            argv += [a.option_strings[0], *_dummy(a)]
    return (*argv, *positionals)


def _parse(path: tuple[str, ...], action: argparse.Action, text: str):
    argv = [*_required(path), f"{action.option_strings[0]}={text}"]
    return getattr(parser().parse_args(argv), action.dest)


def _outside(t: Number) -> list[float]:
    step = 1 if t.kind is int else 1e-9
    out = []
    if t.above is not None:
        out.append(t.above)
    elif t.minimum is not None:
        out.append(t.minimum - step)
    if t.maximum is not None:
        out.append(t.maximum + step if t.kind is int else t.maximum * (1 + 1e-9) + 1e-9)
    return [v for v in out if not t.accepts(v)]


def _inside(t: Number) -> list[float]:
    values = []
    lo = t.minimum if t.minimum is not None else (t.above + (1 if t.kind is int else 1e-6) if t.above is not None else None)
    for v in (lo, t.maximum):
        if v is not None:
            values.append(v)
    if lo is not None and t.maximum is not None:
        values.append((lo + t.maximum) // 2 if t.kind is int else (lo + t.maximum) / 2)
    elif lo is not None:
        values.append(lo + 1000)
    values += [v for v, _ in t.special]
    return values


def _text(t: Number, v: float) -> str:
    return str(int(v)) if t.kind is int else repr(float(v))


def _ids(options):
    return [" ".join((*path, a.option_strings[0])) for path, a in options]


# ---------------------------------------------------------------- every numeric option declares a range

def test_no_numeric_option_goes_without_a_range():
    unranged = []
    for path, a in walk_actions(parser()):
        if a.type in (int, float) or (a.type is None and isinstance(a.default, (int, float))
                                      and not isinstance(a.default, bool) and a.nargs != 0
                                      and not isinstance(a, (argparse._StoreConstAction, argparse._CountAction))):
            unranged.append(" ".join((*path, a.option_strings[0] if a.option_strings else a.dest)))
    assert not unranged, ("numeric options without a declared range (use mwemt.cli.argtypes): "
                          + ", ".join(unranged))
    assert len(numeric_options()) > 60  # the walk reaches the sub-actions (augment split, meta-eval, ...)


@pytest.mark.parametrize("path,action", numeric_options(), ids=_ids(numeric_options()))
def test_each_range_is_bounded_below_and_shown_in_help(path, action):
    t = action.type
    assert t.minimum is not None or t.above is not None, "every numeric option has a lower bound"
    assert t.describe() in (action.help or "").replace("%%", "%"), "the range is in --help"   # help is a %-template
    assert t.accepts(action.default) if action.default is not None else True, "the default is in range"
    if "seed" in action.dest:
        assert (t.minimum, t.maximum) == (0, 2**32 - 1)


@pytest.mark.parametrize("path,action", numeric_options(), ids=_ids(numeric_options()))
def test_boundaries(path, action, capsys):
    t = action.type
    for v in _outside(t) + [math.nan, math.inf, -math.inf]:
        with pytest.raises(SystemExit) as exc:
            _parse(path, action, _text(t, v) if math.isfinite(v) else str(v))
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {'/'.join(action.option_strings)}: expected {t.describe()}" in err, err
    for text in ("abc", "", "1.5" if t.kind is int else "1,5"):
        with pytest.raises(SystemExit):
            _parse(path, action, text)
        capsys.readouterr()
    for v in _inside(t):
        got = _parse(path, action, _text(t, v))
        assert got == v and type(got) is t.kind


# ---------------------------------------------------------------- hypothesis on either side of each range

try:  # the dev extra installs it; without it the boundary tests above still run
    import hypothesis
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    hypothesis = None


def _values(t: Number, inside: bool):
    if t.kind is int:
        lo = t.minimum if t.minimum is not None else (int(t.above) + 1 if t.above is not None else None)
        if inside:
            return st.integers(min_value=lo, max_value=t.maximum)
        parts = [st.integers(max_value=lo - 1)] if lo is not None else []
        parts += [st.integers(min_value=t.maximum + 1)] if t.maximum is not None else []
        return st.one_of(parts)
    if inside:
        return st.floats(min_value=t.minimum if t.minimum is not None else t.above, max_value=t.maximum,
                         exclude_min=t.above is not None and t.minimum is None, allow_nan=False, allow_infinity=False)
    below = t.above if t.above is not None else t.minimum
    parts = [st.floats(max_value=below, exclude_max=t.above is None, allow_nan=False)] if below is not None else []
    parts += [st.floats(min_value=t.maximum, exclude_min=True, allow_nan=False)] if t.maximum is not None else []
    return st.one_of(parts)


def _hypothesis_test(fn):
    if hypothesis is None:
        return pytest.mark.skip(reason="hypothesis is not installed (pip install -e .[dev])")(fn)
    return hypothesis.settings(max_examples=300, deadline=None,
                               suppress_health_check=[hypothesis.HealthCheck.function_scoped_fixture])(
        hypothesis.given(data=st.data())(fn))


@_hypothesis_test
def test_hypothesis_on_either_side_of_every_range(data, capsys):
    path, action = data.draw(st.sampled_from(numeric_options()), label="option")
    t = action.type
    inside = data.draw(st.booleans(), label="inside")
    value = data.draw(_values(t, inside), label="value")
    text = _text(t, value)
    if inside or t.accepts(t.kind(text)):
        assert _parse(path, action, text) == t.kind(text)
    else:
        with pytest.raises(SystemExit) as exc:
            _parse(path, action, text)
        assert exc.value.code == 2
    capsys.readouterr()


# ---------------------------------------------------------------- config settings (mwemt.schema)

# Numeric settings without a range, and why.
UNBOUNDED_SETTINGS = {
    "TrainConfig.extra_args": "raw fairseq-train arguments, passed through as they are",
}


def _numeric_settings():
    from mwemt.experiments.config import ExperimentConfig

    seen, out = set(), []

    def walk(cls):
        if cls in seen:
            return
        seen.add(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            tp = hints[f.name]
            flat = [tp, *typing.get_args(tp)]
            flat += [b for a in flat for b in typing.get_args(a)]
            for a in flat:
                if dataclasses.is_dataclass(a):
                    walk(a)
            if any(a in (int, float) for a in flat) and f.init and not f.metadata.get("internal"):
                out.append((cls, f, tp))

    walk(ExperimentConfig)
    return out


SETTINGS = _numeric_settings()


@pytest.mark.parametrize("cls,field,tp", SETTINGS, ids=[f"{c.__name__}.{f.name}" for c, f, _ in SETTINGS])
def test_every_numeric_setting_has_a_range_that_build_enforces(cls, field, tp):
    from mwemt.schema import SEED_MAX, ConfigError, Context, Node, Origin, convert

    name = f"{cls.__name__}.{field.name}"
    m = field.metadata
    if name in UNBOUNDED_SETTINGS:
        return
    assert m.get("minimum") is not None or m.get("greater_than") is not None, f"{name}: no lower bound"
    if "seed" in field.name:
        assert (m["minimum"], m["maximum"]) == (0, SEED_MAX)
    arms = [a for a in typing.get_args(tp) if a is not type(None)] if typing.get_origin(tp) in (Union, UnionType) \
        else [tp]
    if typing.get_origin(arms[0]) in (tuple, list):  # numbers in a list: each is checked against the same range
        items = [a for a in typing.get_args(arms[0]) if a is not Ellipsis]
        items = items * 2 if len(items) == 1 else items
        bad = -1 if m.get("minimum") is None else m["minimum"] - 1
        with pytest.raises(ConfigError, match="must be"):
            convert(tp, [t(bad) for t in items], Origin(("k",)), m, Context(Node()))
        return
    scalar = arms[0]
    ctx = Context(Node())
    origin = Origin(("k",))
    lo = m["minimum"] if m.get("minimum") is not None else m["greater_than"]
    outside = [lo if m.get("minimum") is None else lo - (1 if scalar is int else 1e-6)]
    if m.get("maximum") is not None:
        outside.append(m["maximum"] + (1 if scalar is int else 1e-6))
    for v in outside:
        with pytest.raises(ConfigError, match="must be"):
            convert(tp, scalar(v), origin, m, ctx)
    inside = m["minimum"] if m.get("minimum") is not None else m["greater_than"] + (1 if scalar is int else 1e-6)
    assert convert(tp, scalar(inside), origin, m, ctx) == scalar(inside)
    if m.get("maximum") is not None:
        assert convert(tp, scalar(m["maximum"]), origin, m, ctx) == scalar(m["maximum"])
