"""Typed, strict configuration sections, built once from YAML and checked at the edge.

Why: a config is the record of an experiment. A misspelled key that is silently ignored trains the
wrong system and nobody notices; a wrong type that surfaces an hour later in a training log costs
the hour. So every section of a config is a frozen dataclass whose fields carry their type,
default, allowed values or range, and help text (`setting`). `build` turns YAML data into those
objects and refuses, before anything runs, unknown keys (suggesting the nearest valid one),
wrong types, out-of-range values and missing files; every error names the file, the line and the
key path. The same field metadata generates the config reference (`reference_rows`), so the docs
cannot drift from the code.

This module knows nothing about mwemt's sections: it is the machinery. The sections live beside
the code that reads them (`mwemt.nmt.config`, `mwemt.preprocess.annotate`, ...), and
`mwemt.experiments.config` composes them into the experiment schema.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, Union

from mwemt.errors import InputError, MwemtError

PATH_KINDS = ("file", "dir", "exists", "prefix", "any")

# The range of every seed, in configs and on the command line: sentencepiece's random seed is an
# unsigned 32-bit integer and numpy's RandomState (fairseq's batches) takes 0 to 2**32 - 1.
SEED_MAX = 2**32 - 1
# a language code ends file names (PREFIX.CODE): letters and digits, parts joined by - or _ (en, pt_BR, zh-Hans);
# an empty code or one with a / would write ``train.`` or a file in another directory
LANGUAGE_CODE = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*\Z")


# ---------------------------------------------------------------- where a value came from

@dataclass(frozen=True)
class Origin:
    """Where a value was written: its key path and its file and line, or the override that set it."""

    keys: tuple[str, ...]
    file: str | None = None
    line: int | None = None
    note: str | None = None        # e.g. "override 'train.max_epoch=3'"

    @property
    def dotted(self) -> str:
        return ".".join(self.keys) if self.keys else "(top level)"

    def child(self, key: str, line: int | None = None) -> Origin:
        return Origin((*self.keys, str(key)), self.file, line if line is not None else self.line, self.note)


class ConfigError(InputError):
    """A config value that is unknown, of the wrong type, out of range or inconsistent: located."""

    def __init__(self, origin: Origin, problem: str, expected: str | None = None):
        self.origin = origin
        message = f"{origin.dotted}: {problem}"
        if origin.note:
            message = f"{origin.note}: {message}"
        super().__init__(message, origin.file, origin.line, expected)


class Node(dict):
    """A YAML mapping that remembers the origin of itself and of each of its keys."""

    def __init__(self, items: Any = (), origin: Origin | None = None):
        super().__init__(items)
        self.origin = origin or Origin(())
        self.origins: dict[str, Origin] = {}

    def origin_of(self, key: str) -> Origin:
        return self.origins.get(key) or self.origin.child(key)

    def error(self, key: str | None, problem: str, expected: str | None = None) -> ConfigError:
        """A located error about ``key`` of this mapping (or about the mapping itself)."""
        return ConfigError(self.origin if key is None else self.origin_of(key), problem, expected)


class Items(list):
    """A YAML sequence that remembers the origin of each item."""

    def __init__(self, items: Any = (), origin: Origin | None = None):
        super().__init__(items)
        self.origin = origin or Origin(())
        self.origins: list[Origin] = []

    def origin_of(self, index: int) -> Origin:
        return self.origins[index] if index < len(self.origins) else self.origin.child(str(index))


def read_yaml(path: str | Path, *, expected: str = "a YAML mapping") -> Node:
    """Read a YAML file whose top level is a mapping, keeping the line of every key and value.

    Duplicate keys are errors (YAML would keep the last one silently).
    """
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("config file not found", path, expected=expected) from None
    except (IsADirectoryError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the config: {exc}", path, expected=expected) from None
    try:
        loader = yaml.SafeLoader(text)   # refuses control characters (a NUL byte) here, before any node
    except yaml.reader.ReaderError as exc:
        char = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        column = exc.position - text.rfind("\n", 0, exc.position)
        raise InputError(f"not valid YAML: {exc.reason}: {char} at column {column}", path,
                         text.count("\n", 0, exc.position) + 1, expected=expected) from None
    try:
        root = loader.get_single_node()
        data = _convert(loader, root, Origin((), str(path), 1)) if root is not None else Node(origin=Origin((), str(path), 1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", path,
                         mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
    if not isinstance(data, Node):
        raise InputError("the top level is not a mapping", path, 1, expected=expected)
    return data


def _convert(loader, node, origin: Origin) -> Any:
    import yaml

    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)   # merge keys (<<: *anchor)
        out = Node(origin=origin)
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise ConfigError(origin.child(str(key), line), f"keys must be strings, not {type(key).__name__}")
            if key in out:
                raise ConfigError(origin.child(key, line), f"duplicate key (first at line {out.origins[key].line})")
            child = origin.child(key, line)
            out[key] = _convert(loader, value_node, child)
            out.origins[key] = child
        return out
    if isinstance(node, yaml.SequenceNode):
        seq = Items(origin=origin)
        for k, item in enumerate(node.value):
            child = origin.child(str(k), item.start_mark.line + 1)
            seq.append(_convert(loader, item, child))
            seq.origins.append(child)
        return seq
    return loader.construct_object(node, deep=True)


def located(value: Any, origin: Origin) -> Any:
    """Plain data (from an override or from code) as `Node`/`Items` that all point at ``origin``."""
    if isinstance(value, dict):
        out = Node(origin=origin)
        for k, v in value.items():
            out[str(k)] = located(v, origin.child(str(k)))
            out.origins[str(k)] = origin.child(str(k))
        return out
    if isinstance(value, (list, tuple)):
        seq = Items(origin=origin)
        for k, v in enumerate(value):
            seq.append(located(v, origin.child(str(k))))
            seq.origins.append(origin.child(str(k)))
        return seq
    return value


def parse_override(text: str) -> tuple[list[str], Any]:
    """``section.key=value`` -> (key path, YAML-parsed value)."""
    import yaml

    if "=" not in text:
        raise MwemtError(f"override {text!r}: expected section.key=value")
    key, value = text.split("=", 1)
    parts = [p for p in key.strip().split(".") if p]
    if not parts:
        raise MwemtError(f"override {text!r}: empty key")
    try:
        parsed = yaml.safe_load(value) if value.strip() else ""
    except yaml.YAMLError as exc:
        raise MwemtError(f"override {text!r}: the value is not YAML ({exc})") from None
    return parts, parsed


def apply_override(root: Node, text: str) -> None:
    """Set ``section.key=value`` in ``root``, creating mappings on the way; checked later by `build`."""
    parts, value = parse_override(text)
    note = f"override {text!r}"
    node = root
    for k, part in enumerate(parts[:-1]):
        nxt = node.get(part)
        if not isinstance(nxt, Node):
            nxt = Node(origin=Origin(tuple(parts[:k + 1]), note=note))
            node[part] = nxt
            node.origins[part] = nxt.origin
        node = nxt
    origin = Origin(tuple(parts), note=note)
    node[parts[-1]] = located(value, origin)
    node.origins[parts[-1]] = origin


def merge(base: Any, over: Any) -> Any:
    """``over`` on top of ``base``; mappings merge key by key, keeping each key's origin."""
    if isinstance(base, Node) and isinstance(over, Node):
        out = Node(base, over.origin)
        out.origins = dict(base.origins)
        for k, v in over.items():
            out[k] = merge(base[k], v) if k in base else v
            out.origins[k] = over.origin_of(k)
        return out
    return over


def lookup(root: Node, dotted: str) -> Any:
    """The value at a dotted key path, or None."""
    node: Any = root
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


# ---------------------------------------------------------------- declaring settings

def setting(default: Any = MISSING, *, help: str = "", choices: tuple | Callable[[], tuple] | None = None, minimum: float | None = None,
            maximum: float | None = None, greater_than: float | None = None, path: str | None = None, literals: tuple[str, ...] = (),
            default_factory: Any = MISSING, doc_default: str | None = None,
            inherit: str | Callable[[Node], str | None] | None = None, omit_default: bool = False) -> Any:
    """A dataclass field with the metadata `build` checks and `reference_rows` documents.

    ``path``: ``file`` / ``dir`` / ``exists`` (either) must exist, ``prefix`` names files PREFIX.SUFFIX
    that must exist (`Context.prefix_suffixes`), ``any`` is resolved only; ``literals`` are strings accepted as they are instead of a path.
    ``inherit``: the field is the top-level section of that name with this entry's keys on top
    (a callable picks the section from the entry).
    ``omit_default``: `to_plain` leaves the field out while it holds its default, so that a setting
    added to a section later keeps the cache keys of every config that does not use it.
    """
    if path is not None and path not in PATH_KINDS:
        raise ValueError(f"path kind {path!r}")
    meta = {"help": help, "choices": choices, "minimum": minimum, "maximum": maximum,
            "greater_than": greater_than, "path": path,
            "literals": literals, "doc_default": doc_default, "inherit": inherit, "omit_default": omit_default}
    if default_factory is not MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclass
class Context:
    """What building needs besides the data: the document root and how to resolve paths."""

    root: Node
    resolve_path: Callable[[str], Path] = Path
    prefix_suffixes: tuple[str, ...] = ()


# ---------------------------------------------------------------- building

def build(cls: type, value: Any, origin: Origin, ctx: Context) -> Any:
    """An instance of the dataclass ``cls`` from YAML data; every problem is a `ConfigError`."""
    if value is None:
        value = Node(origin=origin)
    if not isinstance(value, dict):
        raise ConfigError(origin, f"expected a mapping, got {_kind(value)}",
                          expected="keys " + ", ".join(f.name for f in _fields(cls)))
    node = value if isinstance(value, Node) else located(value, origin)
    fields = _fields(cls)
    names = [f.name for f in fields]
    for key in node:
        if key not in names:
            raise unknown_key(node, key, names)
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in fields:
        if f.metadata.get("inherit") is not None:
            kwargs[f.name] = _inherited(f, hints[f.name], node, ctx)
        elif f.name in node:
            kwargs[f.name] = convert(hints[f.name], node[f.name], node.origin_of(f.name), f.metadata, ctx)
        elif dataclasses.is_dataclass(hints[f.name]):
            # an absent section is its defaults, built so that its own inherited parts are filled in
            kwargs[f.name] = build(hints[f.name], None, node.origin_of(f.name), ctx)
        elif f.default is MISSING and f.default_factory is MISSING:
            raise node.error(None, f"missing key `{f.name}`", expected=f.metadata.get("help"))
    obj = cls(**kwargs)
    resolve = getattr(obj, "resolve", None)
    return resolve(node, ctx) if callable(resolve) else obj


def _inherited(f: dataclasses.Field, tp: Any, node: Node, ctx: Context) -> Any:
    """A field that is a top-level section with this entry's keys on top (`setting(inherit=...)`)."""
    inherit = f.metadata["inherit"]
    if callable(inherit):
        picked = inherit(node)
        if picked is None:
            if node.get(f.name) is not None:
                raise node.error(f.name, "is not used here")
            return None
        section, cls = picked
    else:
        section, cls = inherit, _dataclass_of(tp)
    base = lookup(ctx.root, section)
    base = base if isinstance(base, Node) else Node(origin=Origin(tuple(section.split("."))))
    own = node.get(f.name)
    if own is not None and not isinstance(own, dict):
        raise node.error(f.name, f"expected a mapping of `{section}` keys, got {_kind(own)}")
    merged = merge(base, own if isinstance(own, Node) else located(own, node.origin_of(f.name))) \
        if own is not None else base
    return build(cls, merged, node.origin_of(f.name), ctx)


def unknown_key(node: Node, key: str, names: list[str]) -> ConfigError:
    """'unknown key; did you mean `nearest`?' with the valid keys listed."""
    near = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f"; did you mean `{near[0]}`?" if near else ""
    return node.error(key, f"unknown key{hint}", expected="one of " + ", ".join(names) if names else "no keys here")


def convert(tp: Any, value: Any, origin: Origin, meta: Any, ctx: Context) -> Any:
    """One value checked against its type annotation and field metadata."""
    meta = meta or {}
    origin_type = typing.get_origin(tp)
    if tp is Any:
        return _plain(value)
    if origin_type in (Union, types.UnionType):
        arms = typing.get_args(tp)
        if value is None:
            if type(None) in arms:
                return None
            raise ConfigError(origin, "must not be empty (null)", expected=describe_type(tp, meta))
        errors = []
        for arm in arms:
            if arm is type(None):
                continue
            try:
                return convert(arm, value, origin, meta, ctx)
            except ConfigError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise ConfigError(origin, f"got {_kind(value)} {value!r}", expected=describe_type(tp, meta))
    if dataclasses.is_dataclass(tp):
        return build(tp, value, origin, ctx)
    if origin_type in (tuple, list):
        args = typing.get_args(tp)
        if not isinstance(value, (list, tuple)):
            raise ConfigError(origin, f"expected a list, got {_kind(value)} {value!r}",
                              expected=describe_type(tp, meta))
        seq = value if isinstance(value, Items) else located(list(value), origin)
        if len(args) == 2 and args[1] is Ellipsis or origin_type is list:
            item_types = [args[0]] * len(seq)
        else:
            item_types = list(args)
            if len(seq) != len(item_types):
                raise ConfigError(origin, f"expected {len(item_types)} items, got {len(seq)}",
                                  expected=describe_type(tp, meta))
        return tuple(convert(t, v, seq.origin_of(k), meta, ctx) for k, (t, v) in enumerate(zip(item_types, seq)))
    if origin_type is dict:
        _, item_type = typing.get_args(tp)
        if not isinstance(value, dict):
            raise ConfigError(origin, f"expected a mapping, got {_kind(value)}", expected=describe_type(tp, meta))
        node = value if isinstance(value, Node) else located(value, origin)
        return {str(k): convert(item_type, v, node.origin_of(k), meta if item_type is not Any else {}, ctx)
                for k, v in node.items()}
    return _scalar(tp, value, origin, meta, ctx)


def _scalar(tp: Any, value: Any, origin: Origin, meta: Any, ctx: Context) -> Any:
    expected = describe_type(tp, meta)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(origin, f"expected true or false, got {_kind(value)} {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(origin, f"expected an integer, got {_kind(value)} {value!r}")
        _check_range(value, origin, meta)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(origin, f"expected a number, got {_kind(value)} {value!r}")
        if not math.isfinite(value):   # every float setting: NaN passes every range check, and is no JSON
            raise ConfigError(origin, f"must be a finite number, got {value!r}", expected=expected)
        _check_range(float(value), origin, meta)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(origin, f"expected a string, got {_kind(value)} {value!r}", expected=expected)
        choices = _choices(meta)
        if choices and value not in choices:
            near = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
            hint = f"; did you mean `{near[0]}`?" if near else ""
            raise ConfigError(origin, f"{value!r} is not allowed{hint}", expected=" | ".join(map(str, choices)))
        if meta.get("path") and value not in meta.get("literals", ()):
            return _path(value, origin, meta["path"], ctx)
        return value
    raise TypeError(f"schema: unsupported type {tp!r} at {origin.dotted}")


def _path(value: str, origin: Origin, kind: str, ctx: Context) -> str:
    if not value.strip():
        raise ConfigError(origin, "empty path")
    p = ctx.resolve_path(value)
    if kind == "file" and not p.is_file():
        what = "a directory, not a file" if p.is_dir() else "not found"
        raise ConfigError(origin, f"file {what}: {p}")
    if kind == "dir" and not p.is_dir():
        raise ConfigError(origin, f"directory not found: {p}")
    if kind == "exists" and not p.exists():
        raise ConfigError(origin, f"not found: {p}")
    if kind == "prefix":
        missing = [f"{p}{s}" for s in ctx.prefix_suffixes if not Path(f"{p}{s}").is_file()]
        if missing:
            raise ConfigError(origin, f"corpus file not found: {', '.join(missing)}",
                              expected="PREFIX" + " and PREFIX".join(ctx.prefix_suffixes))
    return str(p)


def _choices(meta: Any) -> tuple:
    """The allowed values; a callable gives them when asked (e.g. a registry that plugins extend)."""
    choices = meta.get("choices")
    return tuple(choices()) if callable(choices) else tuple(choices or ())


def _check_range(value: float, origin: Origin, meta: Any) -> None:
    lo, hi, above = meta.get("minimum"), meta.get("maximum"), meta.get("greater_than")
    if above is not None and value <= above:
        raise ConfigError(origin, f"must be more than {above}, got {value}")
    if lo is not None and value < lo:
        raise ConfigError(origin, f"must be at least {lo}, got {value}")
    if hi is not None and value > hi:
        raise ConfigError(origin, f"must be at most {hi}, got {value}")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    return type(value).__name__


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _fields(cls: type) -> list[dataclasses.Field]:
    """The fields a config file may set (not the ones the loader fills in itself)."""
    return [f for f in dataclasses.fields(cls) if f.init and not f.metadata.get("internal")]


def _dataclass_of(tp: Any) -> type:
    if dataclasses.is_dataclass(tp):
        return tp
    for arm in typing.get_args(tp):
        if dataclasses.is_dataclass(arm):
            return arm
    raise TypeError(f"schema: {tp!r} is not a section")


# ---------------------------------------------------------------- back to plain data

def to_plain(obj: Any) -> Any:
    """A section (or anything inside one) as JSON-able data: the canonical form for cache keys."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if not _left_out(obj, f)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj


def _left_out(obj: Any, f: dataclasses.Field) -> bool:
    """Whether `to_plain` leaves ``f`` of ``obj`` out: an ``omit_default`` setting at its default."""
    if not f.metadata.get("omit_default"):
        return False
    default = f.default_factory() if f.default_factory is not MISSING else f.default
    return getattr(obj, f.name) == default


# ---------------------------------------------------------------- documentation

@dataclass(frozen=True)
class Row:
    """One documented key: dotted path, type, default, allowed values and help."""

    key: str
    type: str
    default: str
    allowed: str
    help: str


def describe_type(tp: Any, meta: Any = None) -> str:
    meta = meta or {}
    origin_type = typing.get_origin(tp)
    if origin_type in (Union, types.UnionType):
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        text = " or ".join(describe_type(a, meta) for a in arms)
        return text + " or null" if len(arms) < len(typing.get_args(tp)) else text
    if origin_type in (tuple, list):
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis or origin_type is list:
            return f"list of {_plural(describe_type(args[0], meta))}"
        return "[" + ", ".join(describe_type(a, meta) for a in args) + "]"
    if origin_type is dict:
        item = typing.get_args(tp)[1]
        return "mapping" if item is Any else f"mapping of NAME to {describe_type(item, meta)}"
    if dataclasses.is_dataclass(tp):
        return "section"
    if tp is str and meta.get("path"):
        return {"file": "file", "dir": "directory", "exists": "file or directory", "prefix": "corpus prefix",
                "any": "path"}[meta["path"]]
    return {bool: "boolean", int: "integer", float: "number", str: "string", Any: "any"}.get(tp, str(tp))


def _plural(text: str) -> str:
    return {"integer": "integers", "number": "numbers", "string": "strings", "boolean": "booleans",
            "file": "files", "section": "sections"}.get(text, text)


def _default_text(f: dataclasses.Field) -> str:
    if f.metadata.get("doc_default") is not None:
        return f.metadata["doc_default"]
    if f.default is not MISSING:
        value = f.default
    elif f.default_factory is not MISSING:
        value = f.default_factory()
    else:
        return "required"
    if dataclasses.is_dataclass(value):
        return "(section)"
    plain = to_plain(value)
    if plain is None:
        return "null"
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if isinstance(plain, (list, dict)):
        import json

        return json.dumps(plain)
    return str(plain)


def _allowed_text(meta: Any) -> str:
    parts = []
    if _choices(meta):
        parts.append(" \\| ".join(f"`{c}`" for c in _choices(meta)))
    if meta.get("literals"):
        parts.append(" or ".join(f"`{c}`" for c in meta["literals"]))
    lo, hi, above = meta.get("minimum"), meta.get("maximum"), meta.get("greater_than")
    if above is not None:
        parts.append(f"> {above:g}")
    if lo is not None and hi is not None:
        parts.append(f"{lo} to {hi}")
    elif lo is not None:
        parts.append(f"≥ {lo}")
    elif hi is not None:
        parts.append(f"≤ {hi}")
    if meta.get("path") in ("file", "dir", "exists"):
        parts.append("must exist")
    return "; ".join(parts)


def reference_rows(cls: type, prefix: str = "") -> Iterator[Row]:
    """Every key of ``cls`` (nested sections first-level only) as a documentation row."""
    hints = typing.get_type_hints(cls)
    for f in _fields(cls):
        key = f"{prefix}{f.name}"
        meta = f.metadata
        inherit = meta.get("inherit")
        if inherit is not None:
            target = inherit if isinstance(inherit, str) else meta.get("doc_default") or "a section"
            yield Row(key, "section", "", "", f"any keys of `{target}`, on top of the top-level ones. "
                                              + meta.get("help", ""))
            continue
        yield Row(key, describe_type(hints[f.name], meta), _default_text(f), _allowed_text(meta), meta.get("help", ""))


def markdown_section(cls: type, prefix: str, title: str) -> str:
    """A heading, the section's docstring and the table of its own keys (nested sections have their own)."""
    import inspect

    hints = typing.get_type_hints(cls)
    doc = " ".join((inspect.getdoc(cls) or "").split())
    rows = [r for r, f in zip(reference_rows(cls, prefix), _fields(cls))
            if f.metadata.get("inherit") is not None or not _is_section(hints[f.name])]
    sections = [f"`{prefix}{f.name}`" for f in _fields(cls)
                if f.metadata.get("inherit") is None and _is_section(hints[f.name])]
    text = f"## {title}\n\n{doc}\n\n{markdown_table(rows)}\n"
    if sections:
        text += f"\nSections: {', '.join(sections)} (below).\n"
    return text


def _is_section(tp: Any) -> bool:
    if dataclasses.is_dataclass(tp):
        return True
    args = typing.get_args(tp)
    if typing.get_origin(tp) is dict:
        return dataclasses.is_dataclass(args[1])
    return any(dataclasses.is_dataclass(a) for a in args)


def markdown_table(rows: list[Row]) -> str:
    lines = ["| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for r in rows:
        cells = [f"`{r.key}`", r.type, f"`{r.default}`" if r.default else "", r.allowed, r.help]
        lines.append("| " + " | ".join(c.replace("\n", " ").replace("|", "\\|") if k != 3 else c
                                       for k, c in enumerate(cells)) + " |")
    return "\n".join(lines)
