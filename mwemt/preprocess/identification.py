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
learned models; ``association``, ``variability`` for corpus estimates; ``mwe-context`` for the
MWE-in-context model, which then still gives every occurrence its probability). ``max_gap`` None
means "the gap the model was tuned with, else 0".

``mwe_context`` judges each match in its sentence with the MWE-in-context classifier
(`mwemt.preprocess.mwe_context`), learned for lexicons without annotated data:

- ``none``: not used (the default of ``mwemt annotate``);
- ``auto`` (the default of ``mwemt testset build``): the bundled model when the lexicon is read in
  the format it was trained for (OEWN or WordNet-aligned), the language is the model's, no other
  filter model applies and filters are not turned off (``filters: none``);
- ``bundled``, or the path of a model: that model, for any lexicon, instead of other filters.

``mwe_threshold`` replaces the model's threshold (chosen on development data).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import MwemtError

FILTER_SOURCES = ("auto", "none")
MWE_CONTEXT_SOURCES = ("none", "auto", "bundled")
MWE_CONTEXT_FORMATS = ("oewn", "wn-aligned")  # lexicons the bundled model was trained for (OEWN entries)
MWE_CONTEXT_LANG = "en"


@dataclass(frozen=True)
class IdentificationOptions:
    """How MWEs are identified beyond the lexicon look-up (the filters and the look-up's gap)."""

    filters: str = "auto"               # auto | none | path of a saved filter model
    off: tuple[str, ...] = ()           # filters turned off
    max_gap: int | None = None          # None: the filter model's tuned max_gap, else 0
    raw_corpus: str | None = None       # plain text for literal-reading estimates (lexicons without training data)
    context: bool = False               # also learn the contextual classifier (opt-in: slow on CPU)
    mwe_context: str = "none"           # none | auto | bundled | path of an MWE-in-context model
    mwe_threshold: float | None = None  # None: the model's threshold

    def __post_init__(self) -> None:
        if self.max_gap is not None and self.max_gap < 0:
            raise MwemtError("max_gap must be 0 or more")
        if self.mwe_threshold is not None and not 0.0 <= self.mwe_threshold <= 1.0:
            raise MwemtError(f"the MWE-in-context threshold must be in [0, 1], not {self.mwe_threshold}")


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
    if options.mwe_context not in MWE_CONTEXT_SOURCES:
        files["mwe_context"] = Path(options.mwe_context)
    elif options.mwe_context != "none":
        from mwemt.preprocess.mwe_context import BUNDLED

        files["mwe_context"] = BUNDLED
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
    context_model = _mwe_context_model(options, fmt, lang, model is not None)
    if context_model is not None:
        if model is not None:
            say(f"note: the MWE-in-context model replaces the identification filters ({model.signature})")
        model = context_model
        say(f"MWE-in-context model: {model.thresholds.describe()} ({model.signature})")
    if model is not None and options.off:
        model = model.without(options.off)
    max_gap = resolved_max_gap(options.max_gap, model)
    if isinstance(model, FilterModel) and options.max_gap is not None and options.max_gap != model.thresholds.max_gap:
        say(f"note: max_gap {options.max_gap} overrides the {model.thresholds.max_gap} the filters were tuned with")
    return model, max_gap


def _mwe_context_model(options: IdentificationOptions, fmt: str | None, lang: str, other_filters: bool):
    """The MWE-in-context model ``options`` ask for (None: none), with its threshold set."""
    from mwemt.preprocess.mwe_context import bundled_model

    source = options.mwe_context
    if source == "none":
        return None
    if source == "auto":
        if (other_filters or options.filters == "none" or fmt not in MWE_CONTEXT_FORMATS
                or lang != MWE_CONTEXT_LANG):
            return None
        model = bundled_model()
    elif source == "bundled":
        model = bundled_model()
    else:
        model = load_filter_model(source)
        from mwemt.preprocess.mwe_context import MweContextModel

        if not isinstance(model, MweContextModel):
            raise MwemtError(f"{source}: not an MWE-in-context model (a file written by scripts/train_mwe_context.py)")
    return model.with_threshold(options.mwe_threshold) if options.mwe_threshold is not None else model


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
    if p.suffix == ".gz":
        from mwemt.preprocess.mwe_context import MweContextModel

        return MweContextModel.load(p)
    try:
        kind = json.loads(p.read_text(encoding="utf-8")).get("kind") if p.is_file() else None
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        kind = None
    if kind is not None and kind != FilterModel.KIND:
        from mwemt.preprocess.corpus_filters import CorpusFilterModel
        from mwemt.preprocess.mwe_context import MweContextModel

        for model_class in (CorpusFilterModel, MweContextModel):
            if kind == model_class.KIND:
                return model_class.load(p)
    return FilterModel.load(p)
