"""Metric names -> metric classes, after fairseq's registries.

A metric class registers itself with ``@register_metric("name", ...)`` (one class may serve several
names: ``chrf`` and ``chrf++``, the three TESLA variants) and builds itself from `MetricOptions` and
the loaded score inputs in its ``from_options``. Everything that turns a metric name into a metric
(`mwemt score`, the experiment runner) goes through `build_metric`, so adding a metric is one
decorated class and nothing else. The built-in metric modules are imported on the first look-up;
a plugin registers its metric by importing `register_metric` and being imported before scoring.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from mwemt.errors import MwemtError

if TYPE_CHECKING:
    from mwemt.evaluate.base import Metric
    from mwemt.evaluate.inputs import ScoreInputs

BUILTIN_METRIC_MODULES = ("mwemt.evaluate.sacrebleu_metrics", "mwemt.evaluate.mwe_score",
                          "mwemt.evaluate.mwe_precision", "mwemt.evaluate.mwe_parts",
                          "mwemt.evaluate.tesla", "mwemt.evaluate.liter", "mwemt.evaluate.term_use",
                          "mwemt.evaluate.mwe_alts", "mwemt.evaluate.mwe_verdict")

_REGISTRY: dict[str, type[Metric]] = {}
_builtins_loaded = False

M = TypeVar("M", bound="type[Metric]")


class UnknownMetricError(MwemtError):
    """A metric name that no class is registered under."""

    def __init__(self, name: str, known: Sequence[str]):
        self.name = name
        self.known = tuple(known)
        close = difflib.get_close_matches(name, self.known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        super().__init__(f"unknown metric {name!r}{hint}; known metrics: {', '.join(self.known)}")


@dataclass(frozen=True)
class MetricOptions:
    """Settings that metrics are built from (data such as lexicons comes with the score inputs).

    Each metric reads the fields it understands; the ``mwe_`` fields belong to the MWE score and the
    ``tesla_`` fields to the TESLA-like metrics.
    """

    lang: str = "en"  # target language: tokenization, lemmas, function words
    lowercase: bool = False  # BLEU/chrF
    mwe_case_sensitive: bool = False
    mwe_average: str = "sentence"  # one of mwemt.evaluate.mwe_score.AVERAGES
    mwe_pretokenized: bool = False
    # "lex" (line-stable, the default), "eflomal" (each through the shared alignment cache), "none" or a
    # mwemt.evaluate.mwe_score.MweAlignSettings
    mwe_align: object = "lex"
    mwe_matching: object = None  # a mwemt.evaluate.mwe_match.MweMatching; None = the MWE score's default
    mwe_precision: float | None = None  # None = the MWE score's default
    mwe_wordnet: str | None = None  # OMW .tab wordnet of the target language, for synonym matching
    mwe_compat: str | None = None  # "zaninello2020": the published scorer's rules
    # "none" (single reference), "testset" (the test items' alternatives) or "table" (those and --mwe-table's)
    mwe_alternatives: str = "none"
    mwe_table: str | None = None  # an MWE translation table (mwemt.testsets.mwe_table), JSONL
    mwe_table_min_count: int = 1  # least alignment count of a table translation that counts (dictionary: always)
    dictionary: str | None = None  # bilingual dictionary (LiTER's blocklist; mwemt.testsets.mwe_table.read_dictionary)
    dictionary_format: str = "auto"  # auto, bilingual or wn-aligned
    terms: str | None = None  # term use: an MWE translation table, or a source<TAB>target terms file
    term_match: str = "exact"  # term use matching: "exact" (tokens) or "lemma" (inflection-tolerant)
    tesla_wordnet: bool = True
    tesla_default: float | str | None = None  # tesla-comp's weight of MWEs without a prediction (None: its default)


def register_metric(*names: str) -> Callable[[M], M]:
    """Class decorator: register a `Metric` subclass under one or more (lower-case) names."""
    if not names:
        raise ValueError("register_metric needs at least one name")

    def decorate(cls: M) -> M:
        for name in names:
            if name != name.lower() or "," in name or not name.strip():
                raise ValueError(f"metric name {name!r} must be lower case, without commas")
            if _REGISTRY.get(name, cls) is not cls:
                raise ValueError(f"metric name {name!r} is already registered to {_REGISTRY[name].__name__}")
            _REGISTRY[name] = cls
        return cls

    return decorate


def _load_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        for module in BUILTIN_METRIC_MODULES:
            importlib.import_module(module)
        _builtins_loaded = True


def _rank(name: str) -> int:
    module = _REGISTRY[name].__module__
    return BUILTIN_METRIC_MODULES.index(module) if module in BUILTIN_METRIC_MODULES else len(BUILTIN_METRIC_MODULES)


def metric_names() -> tuple[str, ...]:
    """Every registered metric name: the built-in ones in a fixed order, then the others in the
    order they were registered."""
    _load_builtins()
    return tuple(sorted(_REGISTRY, key=_rank))  # a stable sort keeps each module's own order


def metric_class(name: str) -> type[Metric]:
    """The class registered as ``name``; `UnknownMetricError` (with the known names) otherwise."""
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownMetricError(name, metric_names()) from None


def parse_metric_names(text: str | Sequence[str]) -> list[str]:
    """Comma-separated (or listed) metric names, lower-cased and checked: known, none twice."""
    items = text.split(",") if isinstance(text, str) else list(text)
    names = [str(n).strip().lower() for n in items if str(n).strip()]
    if not names:
        raise MwemtError(f"no metric named; choose from {', '.join(metric_names())}")
    for name in names:
        metric_class(name)
    if len(set(names)) != len(names):
        raise MwemtError(f"a metric is listed twice in {', '.join(names)}")
    return names


def build_metric(name: str, options: MetricOptions | None = None, inputs: ScoreInputs | None = None) -> Metric:
    """The metric registered as ``name``, built from ``options`` and the loaded ``inputs``."""
    return metric_class(name).from_options(name, options or MetricOptions(), inputs)
