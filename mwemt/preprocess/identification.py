"""Which identification filters an annotator uses: one options object, one function.

`mwemt.preprocess.annotate.build_annotator`, the one place that makes an `Annotator`, passes the
`IdentificationOptions` of its `AnnotatorConfig` to `filters_for`, so ``mwemt annotate``, the
experiment stages, ``mwemt translate`` and the test-set builders follow the same rule:

- ``filters: auto`` (the default): a saved filter model next to the lexicon
  (``LEXICON-STEM.filters.json``, see `sibling_filters_path`) if there is one; else, for a
  ``.cupt`` lexicon, filters learned from that file now (cross-validated, a few seconds); else,
  if ``raw_corpus`` is given, literal-reading estimates from that corpus
  (`mwemt.preprocess.corpus_filters`); else no filters: today's plain look-up;
- ``filters: none``: no filters;
- ``filters: PATH``: the model saved there (learned or corpus-estimated).

``off`` turns single filters off (``order``, ``gap``, ``inflection``, ``syntax``, ``rate`` for
learned models; ``association``, ``variability`` for corpus estimates). ``max_gap`` None means
"the gap the model was tuned with, else 0".
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import MwemtError

FILTER_SOURCES = ("auto", "none")


@dataclass(frozen=True)
class IdentificationOptions:
    """How MWEs are identified beyond the lexicon look-up (the filters and the look-up's gap)."""

    filters: str = "auto"               # auto | none | path of a saved filter model
    off: tuple[str, ...] = ()           # filters turned off
    max_gap: int | None = None          # None: the filter model's tuned max_gap, else 0
    raw_corpus: str | None = None       # plain text for literal-reading estimates (lexicons without training data)
    context: bool = False               # also learn the contextual classifier (opt-in: slow on CPU)

    def __post_init__(self) -> None:
        if self.max_gap is not None and self.max_gap < 0:
            raise MwemtError("max_gap must be 0 or more")


def sibling_filters_path(lexicon_path: str | Path) -> Path:
    """Where a lexicon's saved filter model lives: ``en.lex.tsv`` -> ``en.lex.filters.json``."""
    p = Path(lexicon_path)
    return p.with_suffix(".filters.json") if p.suffix else p.with_name(p.name + ".filters.json")


def filter_source_files(lexicon_path: str | Path | None, options: IdentificationOptions) -> dict[str, Path]:
    """Every file besides the lexicon that the filters of ``lexicon_path`` would come from: a saved
    model (``filters``) and a raw corpus (``raw_corpus``). Cache keys hash them with the lexicon."""
    files = {}
    if options.filters not in FILTER_SOURCES:
        files["filters"] = Path(options.filters)
    elif options.filters == "auto" and lexicon_path is not None and sibling_filters_path(lexicon_path).is_file():
        files["filters"] = sibling_filters_path(lexicon_path)
    if options.raw_corpus and options.filters == "auto":
        files["raw_corpus"] = Path(options.raw_corpus)
    return {k: p for k, p in files.items() if p.is_file()}


def identification_inputs(lexicon_path: str | Path | None, options: IdentificationOptions) -> dict[str, str]:
    """sha256 of the lexicon and of every file its filters would come from (for cache keys)."""
    from mwemt.fileio import sha256_file

    files = {"lexicon": Path(lexicon_path)} if lexicon_path is not None else {}
    files.update(filter_source_files(lexicon_path, options))
    return {k: sha256_file(p) for k, p in files.items() if p.is_file()}


def resolved_max_gap(max_gap: int | None, model) -> int:
    """The look-up's gap: ``max_gap`` if set, else the one ``model`` was tuned with, else 0."""
    if max_gap is not None:
        return max_gap
    return int(getattr(getattr(model, "thresholds", None), "max_gap", 0) or 0)


_MEMO: dict = {}


def filters_for(lexicon_path: str | Path | None, fmt: str | None, options: IdentificationOptions, *, lexicon=None,
                lang: str = "en", lemmatizer: str = "simplemma", log=None):
    """The filter model for ``lexicon_path`` (None: plain look-up) and the look-up's max_gap.

    ``lexicon_path`` None (entries given in memory, or several lexicon files): only a saved model
    (``filters: PATH``) or raw-corpus estimates apply.

    ``lexicon`` (the compiled `Lexicon`) and ``lang``/``lemmatizer`` are needed only for raw-corpus
    estimates; ``log`` (default stderr) hears what was chosen and how long learning took. Results
    are remembered in the process by the content of their inputs, so the training pipeline that
    annotates and then writes the model directory learns once.
    """
    key = (fmt, options, lang, lemmatizer, tuple(sorted(identification_inputs(lexicon_path, options).items())),
           lexicon.fingerprint() if lexicon is not None and lexicon_path is None else None)
    if key not in _MEMO:
        _MEMO[key] = _filters_for(lexicon_path, fmt, options, lexicon, lang, lemmatizer, log)
    return _MEMO[key]


def _filters_for(lexicon_path, fmt, options, lexicon, lang, lemmatizer, log):
    from mwemt.preprocess.filters import FilterModel, learn_filters_from_cupt

    say = log if log is not None else (lambda msg: print(msg, file=sys.stderr))
    model = None
    if options.filters == "none":
        pass
    elif options.filters != "auto":
        model = load_filter_model(options.filters)
    elif lexicon_path is not None and sibling_filters_path(lexicon_path).is_file():
        model = load_filter_model(sibling_filters_path(lexicon_path))
        say(f"identification filters: {model.thresholds.describe()} (from {sibling_filters_path(lexicon_path)})")
    elif fmt == "cupt" and lexicon_path is not None:
        t0 = time.perf_counter()
        model = learn_filters_from_cupt(lexicon_path, off=_learned_off(options.off), max_gap=options.max_gap,
                                        context=options.context)
        say(f"identification filters learned from {lexicon_path} in {time.perf_counter() - t0:.1f}s: "
            f"{model.thresholds.describe()}")
    elif options.raw_corpus:
        from mwemt.preprocess.corpus_filters import estimate_from_corpus

        if lexicon is None:
            raise MwemtError("raw-corpus estimates need the compiled lexicon")
        model = estimate_from_corpus(lexicon, options.raw_corpus, lang=lang, lemmatizer=lemmatizer)
        say(f"identification filters estimated from {options.raw_corpus}: {model.thresholds.describe()}")
    if model is not None and options.off:
        model = model.without(options.off)
    max_gap = resolved_max_gap(options.max_gap, model)
    if isinstance(model, FilterModel) and options.max_gap is not None and options.max_gap != model.thresholds.max_gap:
        say(f"note: max_gap {options.max_gap} overrides the {model.thresholds.max_gap} the filters were tuned with")
    return model, max_gap


def _learned_off(off) -> tuple[str, ...]:
    from mwemt.preprocess.filters import FILTERS

    unknown = set(off) - set(FILTERS)
    if unknown:
        raise MwemtError(f"unknown filter(s) {', '.join(sorted(unknown))} for a .cupt lexicon; "
                         f"known: {', '.join(FILTERS)}")
    return tuple(off)


def load_filter_model(path: str | Path):
    """A saved filter model of either kind (learned from annotation, or estimated from a corpus)."""
    import json

    from mwemt.preprocess.filters import FilterModel

    p = Path(path)
    try:
        kind = json.loads(p.read_text(encoding="utf-8")).get("kind") if p.is_file() else None
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        kind = None
    if kind is not None and kind != FilterModel.KIND:
        from mwemt.preprocess.corpus_filters import CorpusFilterModel

        if kind == CorpusFilterModel.KIND:
            return CorpusFilterModel.load(p)
    return FilterModel.load(p)
