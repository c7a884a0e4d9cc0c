"""One way to make an `Annotator` (`mwemt.preprocess.annotate.build_annotator`), and no import cycle
inside `mwemt.preprocess` or `mwemt.evaluate` (issue 43, items 4 and 5)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.records import LexiconEntry

PACKAGE = Path(__file__).resolve().parents[1] / "mwemt"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_annotator_is_made_in_build_annotator_only():
    """Every `Annotator(...)` call of the package is the one in `build_annotator`."""
    calls = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] + [tree]:
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Annotator":
                    calls.append((_module(path), getattr(fn, "name", "<module>"), node.lineno))
    made = {(m, line) for m, _, line in calls}
    where = {(m, line) for m, fn, line in calls if fn == "build_annotator"}
    assert where and made == where, sorted(made - where)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports when it runs (at the top or inside a function), without the
    imports under ``if TYPE_CHECKING:``, which never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found.update(n for n in names if n in modules)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (found := visit(d)):
                return found
        state[m] = 2
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


@pytest.mark.parametrize("package", ["preprocess", "evaluate"])
def test_no_import_cycle_inside(package):
    """No module of ``package`` imports, directly or through others, one that imports it back (the comparison
    report's subpackage, `mwemt.evaluate.compare`, is its own package and left out)."""
    files = {_module(p): p for p in (PACKAGE / package).glob("*.py") if p.name != "__init__.py"}
    graph = {m: _runtime_imports(p, set(files)) - {m} for m, p in files.items()}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_build_annotator_takes_entries_or_a_compiled_lexicon():
    config = AnnotatorConfig("en", filters="none", max_gap=2)
    entries = [LexiconEntry(("take", "care", "of")), LexiconEntry(("give", "up"))]
    compiled = Lexicon(entries, get_lemmatizer("simplemma", "en"), lang="en", name="two")
    text = "She took good care of it and gave it up."
    from_entries = build_annotator(config, entries).annotate_text(text).mwes
    from_lexicon = build_annotator(config, lexicon=compiled)
    assert from_lexicon.lexicon is compiled
    assert [m.lemma for m in from_lexicon.annotate_text(text).mwes] == [m.lemma for m in from_entries]
    assert {m.lemma for m in from_entries} == {"take care of", "give up"}
    with pytest.raises(ValueError):
        build_annotator(config, entries, lexicon=compiled)
