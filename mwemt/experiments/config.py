"""The experiment config: one YAML file describes data, test sets, systems and every stage's settings.

Why typed and strict: a config is the record of an experiment, so a misspelled key must stop the run,
not train the wrong system. `load_config` builds frozen dataclasses (`ExperimentConfig` and its
sections) once, before any stage runs, and refuses unknown keys anywhere (with the nearest valid
key), wrong types, out-of-range values, missing input files and contradictory settings; every error
names the file, the line and the key path (`mwemt.schema`).

The same schema serves `mwemt run` / `mwemt demo` (every system, every test set) and `mwemt train`
(one system, no test set needed). Paths are relative to the config file; ``package:demo/train``
points into the sample bundled with mwemt (``mwemt/data/demo``). Overrides (``train.max_epoch=3``,
values in YAML) are checked like the file. A system's entry may override any key of the
`preprocess`, `subword`, `prepare`, `model`, `train` and `translate` sections; `reverse` does the
same for the back-translation model. The sections each system trains with are resolved here
(presets applied), so a stage gets exactly the section it reads.

The reference of every key, docs/config.md, is generated from these definitions:
``python -m mwemt.experiments.config --markdown > docs/config.md``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from mwemt.augment.dictionary import DICT_FORMATS
from mwemt.augment.dictionary import FORMS as DICT_AUGMENT_FORMS
from mwemt.augment.ratio import MAX_RATIO
from mwemt.errors import MwemtError
from mwemt.evaluate.base import REFERENCE_MWES
from mwemt.evaluate.compare.buckets import MWE_FREQ_CUTOFFS, WORD_FREQ_CUTOFFS, check_cutoffs
from mwemt.evaluate.mwe_score import AVERAGES
from mwemt.evaluate.registry import metric_class, metric_names
from mwemt.formats import LEXICON_FORMATS, LEXICON_SIDES
from mwemt.nmt.config import ModelConfig, PrepareConfig, TrainConfig, consistency_problems, with_preset
from mwemt.nmt.constraints import (
    ACCEPTANCES,
    CONSTRAINT_MODES,
    CONTEXT_MODELS,
    MAX_FORMS,
    MAX_THRESHOLD,
    RANKINGS,
)
from mwemt.nmt.translate import SOURCE_MWES
from mwemt.preprocess.annotate import ENCODINGS, FACTOR_NAMES, PreprocessConfig
from mwemt.preprocess.hints import TABLE_SOURCES, HintConfig, is_hint_encoding
from mwemt.preprocess.identification import MWE_CONTEXT_SOURCES
from mwemt.preprocess.lemmatize import BACKENDS
from mwemt.preprocess.subword import SubwordConfig
from mwemt.schema import (
    LANGUAGE_CODE,
    SEED_MAX,
    ConfigError,
    Context,
    Node,
    Origin,
    apply_override,
    build,
    located,
    read_yaml,
    setting,
    to_plain,
)

PACKAGE_PREFIX = "package:"
PACKAGE_DATA = Path(__file__).resolve().parents[1] / "data"
AUGMENTS = ("none", "dictionary", "backtranslation", "backtranslation-real")
# the augmentations that select sentences with the back-translation model (the real control pairs the same
# selection with its real sources)
BACKTRANSLATIONS = ("backtranslation", "backtranslation-real")
ROLES = ("general", "mwe")
TRANSLATE_HINTS = ("table", "none")
SPLIT_REST = "split-rest"      # data.monolingual: the target side of the pairs data.train_size left out
SPLIT_TEST = "split-test"      # tests.NAME.source: the pairs data.split.test_size held out
RUN_TABLE = "run"              # tests.NAME.build.table: the run's MWE translation table (`data.mwe_table` or built)
NO_TABLE = "none"              # tests.NAME.build.table: no table (the items carry no alternatives)
MWE_ALTS_MODES = ("testset", "table")   # score.mwe_alternatives: the mode of `mwe-alts` (`mwemt.evaluate.mwe_alts`)
TABLE_METRICS = ("term-use",)  # metrics that read the run's MWE translation table (its translations are the terms)
DICTIONARY_METRICS = ("liter",)   # metrics that read `data.dictionary` (LiTER's word-for-word blocklist)
REVERSE = "reverse"            # the name of the back-translation model's "system"
EXPECTED = "an experiment config: name, src_lang, tgt_lang, data, tests, systems, ..."


# ---------------------------------------------------------------- data and test sets

@dataclass(frozen=True)
class SplitConfig:
    """A deterministic train/valid/test split of one source<TAB>target file, grouped by source sentence
    (`mwemt.augment.corpus.split_tsv`), instead of given corpus prefixes."""

    tsv: str = setting(path="file", help="source<TAB>target file, one pair per line")
    valid_size: int = setting(1000, minimum=0, help="at least this many validation pairs (whole source groups)")
    test_size: int = setting(0, minimum=0, help="at least this many pairs held out as a test split")
    train_size: int = setting(0, minimum=0, help="a seeded sample of this many training pairs (0 = all); samples "
                                                 "of different sizes are nested")
    valid_max: int = setting(0, minimum=0, help="validate on the first N validation pairs only (0 = all)")
    rest_max: int = setting(0, minimum=0, help="keep at most N (seeded) of the pairs train_size left out, "
                                               "the text of `data.monolingual: split-rest` (0 = all)")


@dataclass(frozen=True)
class DataConfig:
    """Training data and the lexicons and dictionaries the systems use."""

    train: str | None = setting(None, path="prefix", help="training corpus: PREFIX.SRC and PREFIX.TGT, raw "
                                                          "text, one sentence per line")
    valid: str | None = setting(None, path="prefix", help="validation corpus prefix (early stopping)")
    split: SplitConfig | None = setting(None, help="instead of `train` and `valid`: split one TSV file "
                                                   "(`data.split.*` keys)")
    train_size: int = setting(0, minimum=0, help="with `train`: a seeded sample of this many training pairs "
                                                 "(0 = all)")
    valid_max: int = setting(0, minimum=0, help="with `valid`: validate on the first N pairs only (0 = all)")
    lexicon: str | None = setting(None, path="exists", help="source-language MWE lexicon; needed by systems "
                                                          "with an `encoding` other than none")
    lexicon_format: str = setting("auto", choices=LEXICON_FORMATS, help="format of `lexicon` (auto: .cupt by "
                                                                        "extension, oewn/wn-aligned by header)")
    lexicon_side: str = setting("source", choices=LEXICON_SIDES, help="the column of a wn-aligned lexicon "
                                                                      "that holds the source language")
    dictionary: str | None = setting(None, path="file", help="bilingual MWE dictionary, needed by "
                                                             "`augment: dictionary` systems")
    dictionary_format: str = setting("auto", choices=DICT_FORMATS, help="format of `dictionary`")
    monolingual: str | None = setting(None, path="file", literals=(SPLIT_REST,),
                                      help="target-language text for back-translation, or `split-rest`: "
                                           "the target side of the pairs `train_size` left out")
    target_lexicon: str | None = setting(None, path="exists", help="target-language MWEs: select back-"
                                                                 "translation sentences; the tesla metrics")
    target_lexicon_format: str = setting("auto", choices=LEXICON_FORMATS, help="format of `target_lexicon`")
    mwe_table: str | None = setting(None, path="file", doc_default="built in the run",
                                    help="MWE translation table (JSONL, `mwemt.testsets.mwe_table`) for inline hints "
                                         "and the dictionary's sense filter; by default built in the run from the "
                                         "training pairs (word alignment of `lexicon`'s MWEs) plus `dictionary`")

    def resolve(self, node: Node, ctx: Context) -> DataConfig:
        if self.split is not None:
            for key in ("train", "valid", "train_size", "valid_max"):
                if key in node:
                    raise node.error(key, "cannot be combined with `split` (use the keys of data.split)")
        elif not (self.train and self.valid):
            raise node.error(None, "needs `train` and `valid` corpus prefixes, or a `split` section",
                             expected="train: PREFIX (PREFIX.SRC + PREFIX.TGT), valid: PREFIX")
        return self


@dataclass(frozen=True)
class TestBuildConfig:
    """An MWE test built inside the run as `mwemt testset build` builds one
    (`mwemt.testsets.build`): the lexicon's MWEs in the test pairs, their reference
    translations by word alignment, a diverse selection that shares no sentence (nor a near-duplicate)
    with the training data, and an idiomatic/literal part per MWE. MWEs are identified as the systems
    identify them: with the run's `preprocess` section (lemmatizer, max_gap, identification filters)."""

    __test__ = False  # not a pytest class

    lexicon: str | None = setting(None, path="exists", doc_default="data.lexicon",
                                  help="source-language MWE lexicon")
    lexicon_format: str = setting("auto", choices=LEXICON_FORMATS, doc_default="data.lexicon_format with "
                                  "data.lexicon", help="format of `lexicon`")
    max_per_type: int = setting(3, minimum=0, help="at most this many occurrences of one MWE type (0 = no cap)")
    select: int = setting(0, minimum=0, help="stop once this many MWEs are selected, new types first (0 = every "
                                             "sentence the cap allows)")
    compositionality: str | None = setting(None, path="file", help="predicted compositionality (mwe<TAB>score) "
                                                                   "that puts MWEs in the idiomatic part")
    idiomatic_below: float | None = setting(None, minimum=0.0, maximum=1.0, doc_default="lowest tertile",
                                            help="predicted compositionality at or under which an MWE is "
                                                 "idiomatic")
    idiomatic_confidence: float | None = setting(0.5, minimum=0.0, maximum=1.0,
                                                 help="identification confidence at or above which an occurrence "
                                                      "is idiomatic (null: not used)")
    alignment_extra: int = setting(50000, minimum=0, help="training pairs added to the aligner's input for its "
                                                          "statistics (0 = none)")
    samplers: int = setting(3, minimum=1, help="eflomal's independent samplers")
    table: str | None = setting(None, path="file", literals=(RUN_TABLE, NO_TABLE),
                                doc_default="run or none",
                                help="MWE translation table whose translations complete partial alignments and "
                                     "become each MWE's `alternatives` (what `mwe-alts` credits; `mwemt testset build "
                                     "--table`): `run` (the run's table: `data.mwe_table`, else the one the run "
                                     "builds once from the training pairs), `none`, or a table file (JSONL). Left "
                                     "out: `run` where the run has a table anyway (`data.mwe_table`, or a system that "
                                     "reads one) or the test scores `mwe-alts`, else `none`")
    mwe_context: str = setting("none", path="file", literals=MWE_CONTEXT_SOURCES,
                               help="the MWE-in-context classifier (docs/identification.md) judges each lexicon match "
                                    "of the test pairs and drops those under its threshold, so that literal look-alikes "
                                    "do not become test MWEs: none (the run's `preprocess` identification only, as the "
                                    "systems'), auto (the bundled model where the lexicon is OEWN or wn-aligned English "
                                    "and no other filter model applies: `mwemt testset build`'s default), bundled, or "
                                    "a model file")
    mwe_threshold: float | None = setting(None, minimum=0.0, maximum=1.0, doc_default="the model's",
                                          help="with `mwe_context`: keep matches with P(MWE) at or above this (the "
                                               "model's own threshold was chosen on development data; 0 keeps every "
                                               "match)")

    def resolve(self, node: Node, ctx: Context) -> TestBuildConfig:
        if self.mwe_threshold is not None and self.mwe_context == "none":
            raise node.error("mwe_threshold", "is the MWE-in-context classifier's threshold: set `mwe_context` too")
        return self


@dataclass(frozen=True)
class TestConfig:
    """One test set: a source and reference file, an MWE-annotated test set, or the TED MWE annotation."""

    source: str | None = setting(None, path="file", literals=(SPLIT_TEST,),
                                 help="source text, one sentence per line, or `split-test`: the pairs "
                                      "data.split.test_size held out (source and reference)")
    reference: str | None = setting(None, path="file", help="reference translations, line-aligned with `source`")
    testset: str | None = setting(None, path="file", help="MWE-annotated test set (JSONL, `mwemt testset`)")
    from_ted: str | None = setting(None, path="file", help="the TED MWE annotation (pairs TSV), converted by "
                                                           "`mwemt.testsets.testset`; with `source` and "
                                                           "`reference` as the TED text")
    compositionality: str | None = setting(None, path="file", help="mwe<TAB>score TSV for tesla-comp")
    build: TestBuildConfig | None = setting(None, help="build an MWE test from `source` and `reference` (or "
                                                       "`split-test`) inside the run (`tests.NAME.build.*` keys)")
    mwe_compositionality: str | None = setting(None, path="file", help="mwe<TAB>score compositionality of the "
                                                                       "test set's source MWEs (e.g. `ted-en.tsv` of "
                                                                       "results/compositionality/scripts/compositionality_report.py): the "
                                                                       "comparison report's tertile buckets, and the "
                                                                       "MWE score per tertile in results.md")
    role: str = setting("general", choices=ROLES, help="general or MWE-focused test (the results table's "
                                                       "grouping)")
    metrics: tuple[str, ...] = setting(("bleu", "chrf"), choices=metric_names, help="metrics to compute")
    max_items: int = setting(0, minimum=0, help="use only the first N sentences (0 = all)")
    sample: int = setting(0, minimum=0, help="use a seeded sample of N sentences, kept in their order (0 = all; "
                                             "for files sorted by length, such as Tatoeba's)")
    annotator: str = setting("FINAL", help="with `from_ted`: the annotator column to read")
    all_sentences: bool = setting(False, help="with `from_ted`: score every TED sentence, not only the "
                                              "annotated ones")
    lowercase: bool | None = setting(None, doc_default="top-level lowercase",
                                     help="compare case-insensitively (BLEU, chrF)")

    def resolve(self, node: Node, ctx: Context) -> TestConfig:
        from_split = self.source == SPLIT_TEST
        if from_split and self.reference:
            raise node.error("reference", "`source: split-test` brings its own references; remove `reference`")
        if self.testset:   # its items hold the sources and references: a second text would be ignored silently
            other = next((k for k in ("source", "reference", "from_ted") if getattr(self, k)), None)
            if other is not None:
                raise node.error(other, f"`testset` brings its own sources and references, so `{other}` would be "
                                        "ignored (only `testset` is scored)",
                                 expected="either `testset` (JSONL), or `source` and `reference` (with `from_ted` "
                                          "for the TED annotation), not both")
        if not (self.testset or self.from_ted or from_split or (self.source and self.reference)):
            raise node.error(None, "needs `source` and `reference`, `source: split-test`, `testset` (JSONL) or "
                                   "`from_ted`")
        if self.sample and self.max_items:
            raise node.error("sample", "choose `sample` (a seeded sample) or `max_items` (the first N), not both")
        if self.build is not None and (self.testset or self.from_ted):
            raise node.error("build", "builds a test set from `source` and `reference`: remove `testset`/`from_ted`")
        needs_mwes = [m for m in self.metrics if metric_class(m).reference_kind == REFERENCE_MWES]
        if needs_mwes and not (self.testset or self.from_ted or self.build):
            what = "the MWE score" if any(m.startswith("mwe") for m in needs_mwes) else " and ".join(needs_mwes)
            raise node.error("metrics", f"{what} needs an MWE-annotated test set (`testset`, `from_ted` or `build`): "
                                        f"{', '.join(needs_mwes)} read(s) the reference translations of its MWEs")
        return self


# ---------------------------------------------------------------- augmentation, translation, scores

@dataclass(frozen=True)
class DictionaryOptions:
    """+dictionary: MWE dictionary entries added as training pairs (`mwemt.augment.dictionary`)."""

    ratio: float = setting(0.10, greater_than=0.0, maximum=MAX_RATIO, help="synthetic pairs / original training pairs")
    mwe_only: bool = setting(True, help="only entries whose source side has two or more words")
    lemmatizer: str = setting("simplemma", choices=BACKENDS, help="lemmatizer of the deduplication key")
    drop_identical: bool = setting(False, help="drop pairs whose two sides are the same text (Latin taxa)")
    sense_filter: bool = setting(False, help="keep a pair only when the MWE translation table (`data.mwe_table`) "
                                             "attests its translation for the MWE by alignment of the training pairs")
    sense_min_count: int = setting(1, minimum=0, help="least alignment count of the attesting translation")
    form: str = setting("entries", choices=DICT_AUGMENT_FORMS,
                        help="entries (the dictionary pairs), sentences (pairs of the corpus's left-out pool, "
                             "`data.train_size`, that show a kept pair in context) or both")
    max_sentences_per_pair: int = setting(3, minimum=1, help="context sentence pairs per dictionary pair at most")
    allow_repeat: bool = setting(True, help="repeat candidates to reach the ratio (false: each once, the shortfall "
                                            "reported)")


@dataclass(frozen=True)
class BacktranslationOptions:
    """+back-translation: target sentences with MWEs translated by the reverse model
    (`mwemt.augment.backtranslate`)."""

    ratio: float = setting(0.10, greater_than=0.0, maximum=MAX_RATIO, help="synthetic pairs / original training pairs")
    beam: int = setting(5, minimum=1, help="beam size of the reverse model")
    batch_size: int = setting(64, minimum=1, help="sentences per batch of the reverse model")
    tag: str = setting("", help="prefix of every synthetic source, e.g. '<BT>' (tagged back-translation)")
    max_length_ratio: float = setting(2.0, minimum=1.0, help="drop pairs whose token counts differ by more "
                                                             "than this factor")
    max_tokens: int = setting(80, minimum=1, help="skip monolingual sentences longer than this")
    chunk_size: int = setting(512, minimum=1, help="sentences translated per round until the ratio is met")
    lemmatizer: str = setting("simplemma", choices=BACKENDS, help="lemmatizer of the target MWE matching")
    max_gap: int = setting(0, minimum=0, help="gap allowed inside target MWEs")


@dataclass(frozen=True)
class AugmentConfig:
    """Settings of the two augmentations; a system's `augment_options` overrides them."""

    dictionary: DictionaryOptions = setting(default_factory=DictionaryOptions, help="+dictionary settings")
    backtranslation: BacktranslationOptions = setting(default_factory=BacktranslationOptions,
                                                      help="+back-translation settings")


# the translate keys only judged constraints read (besides constraint_threshold and constraint_tune_extra)
JUDGED_ONLY = ("constraint_candidates", "constraint_mwe_context", "constraint_ranking", "constraint_forms",
               "constraint_acceptance")


@dataclass(frozen=True)
class TranslateConfig:
    """Translation of the test sets (`mwemt.nmt.translate.Translator`)."""

    beam: int = setting(5, minimum=1, help="beam size")
    batch_size: int = setting(64, minimum=1, help="sentences per batch")
    threads: int = setting(1, minimum=0, help="torch CPU threads (0 = the job's share of the cores, see "
                                              "`mwemt run --jobs`); speed only, not part of the cache key")
    source_mwes: str = setting("identified", choices=SOURCE_MWES,
                               help="what the model is told about the source's MWEs: what the lexicon identifies, "
                                    "or none (an ablation: IOB tags all O and lemma factors the words' lemmas; "
                                    "wws joins nothing)")
    hints: str = setting("table", choices=TRANSLATE_HINTS,
                         help="hint encodings: inline hints from the MWE translation table (never the reference), "
                              "or none (an ablation: the hint model without hints)")
    constraints: str = setting("none", choices=("none",) + CONSTRAINT_MODES,
                               help="lexically constrained decoding (fairseq's constrained beam search, Post & Vilar "
                                    "2018) with the MWE translation table (`data.mwe_table`, else the run's): each "
                                    "source MWE the table lists must appear in the output as its best translation, "
                                    "anywhere (unordered) or in source order (ordered); judged: only MWEs in context "
                                    "the plain output missed, the model's best candidate, kept within "
                                    "`constraint_threshold` (docs/nmt.md); none = plain beam search. "
                                    "Needs no model of its own: e.g. constrained-decoding: {model_of: baseline, "
                                    "translate: {constraints: unordered}}")
    constraint_min_count: int = setting(1, minimum=0, help="least alignment count of a table translation used as a "
                                                           "constraint (dictionary translations qualify while "
                                                           "`constraint_sources` has dictionary)")
    constraint_sources: tuple[str, ...] = setting(TABLE_SOURCES, choices=TABLE_SOURCES,
                                                  help="table translations used as constraints: attested by "
                                                       "alignment, listed by the dictionary, or both")
    constraint_candidates: int = setting(3, minimum=1, help="constraints: judged: candidate translations per MWE, "
                                                            "each decoded once")
    constraint_threshold: float | None = setting(None, minimum=-MAX_THRESHOLD, maximum=MAX_THRESHOLD,
                                                 doc_default="tuned on the validation split",
                                                 help="constraints: judged: the largest drop of the length-normalized "
                                                      "model score a constrained output may cost; unset, stage "
                                                      "constraint-tune finds it on the validation split (the largest "
                                                      "threshold at no loss of validation BLEU), never on a test set")
    constraint_mwe_context: str = setting("bundled", choices=CONTEXT_MODELS,
                                          help="constraints: judged: which table matches are MWEs: the bundled "
                                               "MWE-in-context classifier (English), none (every match), or "
                                               "in-context (look-alike rules, then the classifier with the entries' "
                                               "categories at a recall-first threshold; docs/nmt.md)")
    constraint_ranking: str = setting("count", choices=RANKINGS, omit_default=True,
                                      help="constraints: judged: rank an MWE's candidates by alignment count, then "
                                           "target frequency, or one per sense by fit to the line's source context "
                                           "(context: the contexts of the training pairs behind the table's counts, "
                                           "stage sense-data; docs/nmt.md)")
    constraint_forms: int = setting(1, minimum=1, maximum=MAX_FORMS, omit_default=True,
                                    help="constraints: judged: each candidate with up to this many inflected forms "
                                         "in all (the others attested in the training target with the same lemmas, "
                                         "stage sense-data), each decoded once; 1 = the table's form only")
    constraint_acceptance: str = setting("plain", choices=ACCEPTANCES, omit_default=True,
                                         help="constraints: judged: which constrained outputs may be kept: plain "
                                              "(those within the tuned threshold) or guarded (never one the "
                                              "degenerate-output check flags: a loop, far too long, a fragment "
                                              "appended after a sentence end; and the threshold is the median "
                                              "no-loss point of seeded resamples of the tuning lines; docs/nmt.md)")
    constraint_tune_extra: int = setting(0, minimum=0, maximum=100_000, omit_default=True,
                                         help="constraints: judged, tuned: besides the validation split, tune on up "
                                              "to this many pairs the training sample left out (`split-rest`, never "
                                              "a test set) whose source has an MWE of the table: a validation split "
                                              "has few lines to constrain (cpu-science-2's: 18 of 1,002)")

    def resolve(self, node: Node, ctx: Context) -> TranslateConfig:
        if self.constraints != "judged":
            # what only judged constraints read is refused elsewhere, not ignored
            if self.constraint_threshold is not None:
                raise node.error("constraint_threshold", "judges constraints: set `constraints: judged`")
            for f in dataclasses.fields(self):
                if f.name in JUDGED_ONLY and getattr(self, f.name) != f.default:
                    raise node.error(f.name, f"is read by judged constraints only (constraints: {self.constraints} "
                                             "reads no candidates and no MWE-in-context model): set `constraints: "
                                             f"judged`, or drop {f.name}")
        if self.constraint_tune_extra and (self.constraints != "judged" or self.constraint_threshold is not None):
            raise node.error("constraint_tune_extra", "tunes the threshold of judged constraints: set "
                                                      "`constraints: judged` and leave `constraint_threshold` unset")
        return self


@dataclass(frozen=True)
class ScoreConfig:
    """Scoring every system on every test set, with a paired bootstrap against the baseline."""

    bootstrap: int = setting(1000, minimum=20, help="bootstrap resamples (fewer than 20 can give no p-value below "
                                                   "0.05 and no 95% interval)")
    bootstrap_seed: int = setting(12345, minimum=0, maximum=SEED_MAX, help="bootstrap seed (sacrebleu's default)")
    mwe_average: str = setting("sentence", choices=AVERAGES, help="the MWE score averages over sentences or "
                                                                  "over MWEs")
    mwe_alternatives: str = setting(MWE_ALTS_MODES[0], choices=MWE_ALTS_MODES,
                                    help="what metric `mwe-alts` credits besides the reference (`mwe` is always the "
                                         "single reference): testset (the alternatives the test items carry; a test "
                                         "built in the run gets them from the run's table, `tests.NAME.build.table`) "
                                         "or table (those plus every translation of the MWE's type in the run's MWE "
                                         "translation table); the mode is in the score's signature (`alts:`)")
    baseline: str | None = setting(None, doc_default="the first system",
                                   help="the system the others are tested against")


@dataclass(frozen=True)
class ReportConfig:
    """The comparison report (`mwemt compare`) of every system against the baseline, one per test set,
    in RUN/report/TEST/; its bootstrap is the `score` section's, so its scores are the results table's."""

    enabled: bool = setting(True, help="write the reports (index.html, report.md, report.json)")
    tests: tuple[str, ...] = setting((), doc_default="every test set", help="the test sets to report on")
    hit_threshold: float = setting(1.0, greater_than=0.0, maximum=1.0,
                                   help="MWE score from which an MWE occurrence counts as translated")
    examples: int = setting(8, minimum=0, help="example sentences per system and direction (wins, losses)")
    mwe_freq_buckets: tuple[int, ...] = setting(MWE_FREQ_CUTOFFS, minimum=1, help="cutoffs of the MWE training-frequency "
                                                                       "buckets (increasing, from 1)")
    word_freq_buckets: tuple[int, ...] = setting(WORD_FREQ_CUTOFFS, minimum=1, help="cutoffs of the word-frequency buckets "
                                                                         "(compare-mt's)")
    max_gap: int = setting(3, minimum=0, help="MWE counts in the training source: most tokens between two "
                                              "components")

    def resolve(self, node: Node, ctx: Context) -> ReportConfig:
        for key in ("mwe_freq_buckets", "word_freq_buckets"):
            try:
                check_cutoffs(getattr(self, key), key)
            except ValueError as exc:
                raise node.error(key, str(exc)) from None
        return self

    def applies_to(self, tests: Iterable[str]) -> list[str]:
        """The test sets reported on, in config order (none when disabled)."""
        return [t for t in tests if self.enabled and (not self.tests or t in self.tests)]


# ---------------------------------------------------------------- where stages run

SLURM_STAGES = ("corpus", "testdata", "augment", "annotate", "subword", "prepare", "train", "translate", "score",
                "report")


def _executor_names() -> tuple[str, ...]:
    from mwemt.experiments.executors import EXECUTORS

    return tuple(EXECUTORS)


def _check_mem(value: str | None, node: Node, key: str) -> None:
    import re

    if value is not None and not re.fullmatch(r"[1-9][0-9]*[KMGT]?", value):
        raise node.error(key, f"{value!r} is not an amount of memory", expected="e.g. 500M, 8G (sbatch --mem)")


@dataclass(frozen=True)
class SlurmResources:
    """What the Slurm job of one kind of stage asks for; a key left null takes the value of the `slurm`
    section (the default of every stage)."""

    DEFAULTS: ClassVar[dict[str, Any] | None] = None   # None: the `slurm` section's, as for the keys

    partition: str | None = setting(None, doc_default="slurm.partition", help="partition (sbatch --partition)")
    account: str | None = setting(None, doc_default="slurm.account", help="account (sbatch --account)")
    time: int | None = setting(None, minimum=1, doc_default="slurm.time", help="time limit in minutes")
    cpus: int | None = setting(None, minimum=1, doc_default="slurm.cpus",
                               help="CPU cores (--cpus-per-task; the stage's torch threads where its config leaves "
                                    "them open)")
    mem: str | None = setting(None, doc_default="slurm.mem", help="memory, e.g. 8G (--mem)")
    gpus: int | None = setting(None, minimum=0, doc_default="slurm.gpus", help="GPUs (--gpus-per-node)")

    def resolve(self, node: Node, ctx: Context) -> SlurmResources:
        _check_mem(self.mem, node, "mem")
        return self


@dataclass(frozen=True)
class TrainResources(SlurmResources):
    """The Slurm job of a training: a GPU (where the partition has one) and a day by default (`train.device:
    auto` then trains on the GPU). A key left null takes its default here, not the `slurm` section's, as far
    as the partition's nodes have it."""

    DEFAULTS: ClassVar[dict[str, Any] | None] = {"time": 1440, "cpus": 4, "mem": "16G", "gpus": 1}

    time: int | None = setting(None, minimum=1, doc_default="1440, at most the partition's time limit",
                               help="time limit in minutes")
    cpus: int | None = setting(None, minimum=1, doc_default="4, at most a node's CPUs",
                               help="CPU cores (fairseq's data loading; `train.threads` on a CPU)")
    mem: str | None = setting(None, doc_default="16G, at most a node's memory", help="memory (--mem)")
    gpus: int | None = setting(None, minimum=0, doc_default="1 where the partition has GPUs, else 0",
                               help="GPUs (--gpus-per-node); 0 trains on the CPU")


@dataclass(frozen=True)
class SlurmConfig:
    """`executor: slurm` (or `mwemt run --executor slurm`): every stage is a Slurm job, submitted through
    submitit as soon as its inputs are ready. The keys here are every stage's defaults; `slurm.STAGE`
    (corpus, testdata, augment, annotate, subword, prepare, train, translate, score, report) overrides them
    for one kind of stage; any other stage takes these. A resource left null is what the partition gives (its
    default here, or less where no node of the partition has that much: `sinfo`); one set is asked for as it
    is, and a run whose request no node can meet stops before it submits a job. None of it is part of a
    stage's key: a grid moves between local and Slurm runs."""

    DEFAULTS: ClassVar[dict[str, Any]] = {"time": 120, "cpus": 2, "mem": "8G", "gpus": 0}

    partition: str | None = setting(None, doc_default="the cluster's default", help="partition of every stage")
    account: str | None = setting(None, doc_default="your default account", help="account charged for the jobs")
    time: int | None = setting(None, minimum=1, doc_default="120, at most the partition's time limit",
                               help="time limit in minutes")
    cpus: int | None = setting(None, minimum=1, doc_default="2, at most a node's CPUs", help="CPU cores per job")
    mem: str | None = setting(None, doc_default="8G, at most a node's memory",
                              help="memory per job, e.g. 8G (sbatch --mem)")
    gpus: int | None = setting(None, minimum=0, doc_default="0", help="GPUs per job")
    retries: int = setting(2, minimum=0, help="how often a job that died without a result (killed, time limit, "
                                              "node failure) is submitted again; a stage's own error is not retried")
    grace: float = setting(60.0, minimum=0, help="seconds a job may be gone from the queue before its result "
                                                 "file appears (a shared file system's delay); then it failed")
    setup: tuple[str, ...] = setting((), help="shell lines each job runs first, e.g. `module load cuda`")
    corpus: SlurmResources = setting(default_factory=SlurmResources)
    testdata: SlurmResources = setting(default_factory=SlurmResources)
    augment: SlurmResources = setting(default_factory=SlurmResources)
    annotate: SlurmResources = setting(default_factory=SlurmResources)
    subword: SlurmResources = setting(default_factory=SlurmResources)
    prepare: SlurmResources = setting(default_factory=SlurmResources)
    train: TrainResources = setting(default_factory=TrainResources)
    translate: SlurmResources = setting(default_factory=SlurmResources)
    score: SlurmResources = setting(default_factory=SlurmResources)
    report: SlurmResources = setting(default_factory=SlurmResources)

    @property
    def stages(self) -> tuple[str, ...]:
        return SLURM_STAGES

    def resolve(self, node: Node, ctx: Context) -> SlurmConfig:
        _check_mem(self.mem, node, "mem")
        return self

    def request(self, stage: str):
        """What the job of one kind of stage asks for (`executors.SlurmRequest`): each resource as it is set,
        with the key that sets it, or unset with its default; the executor fits it to the partition."""
        from mwemt.experiments.executors import SlurmAsk, SlurmRequest

        own = getattr(self, stage) if stage in SLURM_STAGES else SlurmResources()

        def ask(name: str) -> SlurmAsk:
            if getattr(own, name) is not None or (own.DEFAULTS is not None and name in own.DEFAULTS):
                return SlurmAsk(f"slurm.{stage}.{name}", getattr(own, name), (own.DEFAULTS or {}).get(name))
            return SlurmAsk(f"slurm.{name}", getattr(self, name), self.DEFAULTS.get(name))

        return SlurmRequest(partition=ask("partition"), account=own.account or self.account, time=ask("time"),
                            cpus=ask("cpus"), mem=ask("mem"), gpus=ask("gpus"))


# ---------------------------------------------------------------- systems

def _augment_section(node: Node) -> tuple[str, type] | None:
    kind = node.get("augment")
    if kind == "dictionary":
        return "augment.dictionary", DictionaryOptions
    if kind in BACKTRANSLATIONS:   # the real control selects exactly as back-translation does
        return "augment.backtranslation", BacktranslationOptions
    return None


def _nmt_resolve(section: Any, node: Node, ctx: Context, encoding: str) -> Any:
    """Presets applied and cross-section rules checked, errors located where the value was written."""
    model, train = with_preset(section.model, section.train)
    for dotted, problem in consistency_problems(section.prepare, model, train, joint_subword=section.subword.joint,
                                                n_factors=len(FACTOR_NAMES[encoding])):
        where = _locate(dotted, node, ctx.root)
        if where.keys[:len(node.origin.keys)] != node.origin.keys:   # a top-level value, wrong for this entry
            problem += f" (for {node.origin.dotted})"
        raise ConfigError(where, problem)
    return replace(section, model=model, train=train)


def _locate(dotted: str, *nodes: Node) -> Origin:
    """Where ``dotted`` was written: in the first node that has it (a system's entry, then the top level)."""
    parts = dotted.split(".")
    for base in nodes:
        value: Any = base
        for part in parts[:-1]:
            value = value.get(part) if isinstance(value, Node) else None
        if isinstance(value, Node) and parts[-1] in value:
            return value.origin_of(parts[-1])
    return nodes[0].origin.child(dotted)


@dataclass(frozen=True)
class SystemConfig:
    """One system of the grid (Zaninello & Birch 2020): how its source is encoded and its training
    data augmented, and the sections it trains with (the top-level ones with this entry's keys on top)."""

    encoding: str = setting("none", choices=ENCODINGS, help="none (plain text), wws (contiguous MWEs joined "
                                                            "into one token), iob (surface|lemma|tag factors) or "
                                                            "iob-constant (surface|-|O: iob's architecture, no MWE "
                                                            "information; an ablation), hints or hints-lemma "
                                                            "(inline target hints with a 0/1/2 factor: `hints`)")
    augment: str = setting("none", choices=AUGMENTS, help="none, + MWE dictionary pairs, + back-translated MWE "
                                                          "sentences, or backtranslation-real (the control: the "
                                                          "sentences back-translation selects, with their real "
                                                          "sources; options of `augment.backtranslation`)")
    augment_options: DictionaryOptions | BacktranslationOptions | None = setting(
        None, inherit=_augment_section, doc_default="augment.dictionary` or `augment.backtranslation",
        help="(by `augment`)")
    preprocess: PreprocessConfig = setting(default_factory=PreprocessConfig, inherit="preprocess")
    subword: SubwordConfig = setting(default_factory=SubwordConfig, inherit="subword")
    prepare: PrepareConfig = setting(default_factory=PrepareConfig, inherit="prepare")
    model: ModelConfig = setting(default_factory=ModelConfig, inherit="model")
    train: TrainConfig = setting(default_factory=TrainConfig, inherit="train")
    translate: TranslateConfig = setting(default_factory=TranslateConfig, inherit="translate")
    hints: HintConfig = setting(default_factory=HintConfig, inherit="hints")
    model_of: str | None = setting(None, help="a decoding variant: translate with this other system's trained "
                                              "model (nothing is trained) and this entry's `translate` keys, e.g. "
                                              "iob-no-mwes: {model_of: iob, translate: {source_mwes: none}}")

    def resolve(self, node: Node, ctx: Context) -> SystemConfig:
        if self.model_of is not None:
            extra = sorted(set(node) - VARIANT_KEYS)
            if extra:
                raise node.error(extra[0], f"a `model_of` variant reuses {self.model_of}'s model: only "
                                           f"{' and '.join(sorted(VARIANT_KEYS))} may be set")
        own = node.get("hints")
        if own is not None and not is_hint_encoding(self.encoding):
            raise node.error("hints", f"encoding {self.encoding} takes no hints: this system would ignore its `hints` "
                                      "keys (hints are for encodings hints and hints-lemma); drop them")
        check_hint_keys(self.hints, own)
        return _nmt_resolve(self, node, ctx, self.encoding)


# the hints keys that only one version of the hints reads (`HintConfig`)
HINT_VERSION_KEYS = {1: ("rate",), 2: ("matched_rate", "plain_copy")}


def check_hint_keys(hints: HintConfig, own: Any) -> None:
    """Refuse a key written in the `hints` mapping ``own`` that the version in effect does not read (version 2
    reads matched_rate and plain_copy, not rate; version 1 the other way round). Only keys written in ``own``
    itself count: a system's version 2 leaves the top-level section's rate, the default of version-1 systems,
    unread on purpose."""
    if not isinstance(own, Node):
        return
    version = 2 if hints.v2 else 1
    for other, keys in HINT_VERSION_KEYS.items():
        for key in keys:
            if other != version and key in own:
                raise own.error(key, f"is read by hints version {other} only, and this section's version is {version} "
                                     f"(which reads {', '.join(HINT_VERSION_KEYS[version])} instead): drop {key}, or "
                                     f"set version: {other}")


VARIANT_KEYS = frozenset({"model_of", "translate"})


@dataclass(frozen=True)
class ReverseConfig:
    """The reverse (target -> source) model that back-translation systems share: plain text, trained on
    the training pairs swapped; the top-level sections with these keys on top."""

    preprocess: PreprocessConfig = setting(default_factory=PreprocessConfig, inherit="preprocess")
    subword: SubwordConfig = setting(default_factory=SubwordConfig, inherit="subword")
    prepare: PrepareConfig = setting(default_factory=PrepareConfig, inherit="prepare")
    model: ModelConfig = setting(default_factory=ModelConfig, inherit="model")
    train: TrainConfig = setting(default_factory=TrainConfig, inherit="train")

    encoding: ClassVar[str] = "none"     # back-translation reads plain text

    def resolve(self, node: Node, ctx: Context) -> ReverseConfig:
        systems = ctx.root.get("systems")
        needed = isinstance(systems, dict) and any(isinstance(s, dict) and s.get("augment") in BACKTRANSLATIONS
                                                    for s in systems.values())
        if not needed:   # never trained: presets only, so that settings meant for the systems do not fail here
            model, train = with_preset(self.model, self.train)
            return replace(self, model=model, train=train)
        return _nmt_resolve(self, node, ctx, "none")


# ---------------------------------------------------------------- the whole experiment

PLAIN_NAME = "a plain name for the run directory runs/NAME (no / or \\, not empty, not . or ..), e.g. paper-small"


def plain_name_problem(name: str) -> str | None:
    """What keeps ``name`` from being one directory name inside runs/ (None: nothing): empty, `.` or `..`,
    a path separator, a control character."""
    if not name.strip():
        return f"{name!r} is empty: the run directory runs/NAME would be runs/ itself"
    if name in (".", ".."):
        return f"{name!r} is not a name: the run directory runs/{name} would not be a directory inside runs/"
    if "/" in name or "\\" in name:
        return (f"{name!r} has a path separator: the run directory runs/NAME would be somewhere else (another place "
                "is `mwemt run --run-dir DIR`)")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        return f"{name!r} has a control character"
    return None


@dataclass(frozen=True)
class ExperimentConfig:
    """An experiment: its data, test sets, systems and every stage's settings."""

    name: str = setting("experiment", help="label for logs and results, and the default run directory runs/NAME: a "
                                           "plain name (no / or \\, not empty, not . or ..)")
    seed: int = setting(1, minimum=0, maximum=SEED_MAX, help="seeds the corpus sample, augmentation, sentencepiece and fairseq")
    src_lang: str = setting("en", help="source language code")
    tgt_lang: str = setting("it", help="target language code")
    lowercase: bool = setting(False, help="lowercase training and test text (e.g. for lowercased test sets)")
    data: DataConfig = setting(default_factory=DataConfig, help="training data, lexicons, dictionary")
    tests: dict[str, TestConfig] = setting(default_factory=dict, help="test sets by name (`mwemt run` needs "
                                                                      "at least one)")
    augment: AugmentConfig = setting(default_factory=AugmentConfig, help="augmentation settings")
    preprocess: PreprocessConfig = setting(default_factory=PreprocessConfig, help="source annotation")
    subword: SubwordConfig = setting(default_factory=SubwordConfig, help="sentencepiece")
    prepare: PrepareConfig = setting(default_factory=PrepareConfig, help="binarization")
    model: ModelConfig = setting(default_factory=ModelConfig, help="the fairseq model")
    train: TrainConfig = setting(default_factory=TrainConfig, help="fairseq-train")
    translate: TranslateConfig = setting(default_factory=TranslateConfig, help="test-set translation")
    hints: HintConfig = setting(default_factory=HintConfig, help="inline target hints (encodings hints, hints-lemma)")
    score: ScoreConfig = setting(default_factory=ScoreConfig, help="scoring")
    report: ReportConfig = setting(default_factory=ReportConfig, help="the comparison report of each test set")
    systems: dict[str, SystemConfig] = setting(default_factory=dict, doc_default="required",
                                               help="the systems by name, e.g. baseline: {}, iob: {encoding: iob}")
    reverse: ReverseConfig = setting(default_factory=ReverseConfig, help="the back-translation model")
    executor: str = setting("local", choices=_executor_names,
                            help="where the stages run: local (worker processes on this machine) or slurm (a Slurm "
                                 "job each); `mwemt run --executor` overrides it; results and stage keys do not "
                                 "depend on it")
    slurm: SlurmConfig = setting(default_factory=SlurmConfig, help="Slurm jobs' resources (`executor: slurm`)")
    source: str = dataclasses.field(default="", metadata={"internal": True})   # the config file

    def resolve(self, node: Node, ctx: Context) -> ExperimentConfig:
        problem = plain_name_problem(self.name)
        if problem:   # the default run directory is runs/NAME: a path here would move it (or make it runs/)
            raise node.error("name", problem, expected=PLAIN_NAME)
        systems = node.get("systems")
        if not self.systems:
            raise node.error("systems", "no systems", expected="systems: {baseline: {}, ...}")
        if REVERSE in self.systems:
            raise systems.error(REVERSE, f"`{REVERSE}` is the back-translation model's name; rename the system")
        if self.src_lang == self.tgt_lang:
            raise node.error("tgt_lang", "src_lang and tgt_lang must differ")
        data = node.get("data") if isinstance(node.get("data"), Node) else node
        check_hint_keys(self.hints, node.get("hints"))
        for name, s in self.systems.items():
            if s.model_of is not None:
                entry = systems.get(name)
                if s.model_of not in self.systems or self.systems[s.model_of].model_of is not None:
                    trained = [k for k, v in self.systems.items() if v.model_of is None]
                    raise entry.error("model_of", f"{s.model_of!r} is not a trained system of this config",
                                      expected=", ".join(trained))
            if s.encoding != "none" and not self.data.lexicon:
                raise systems.error(name, f"encoding {s.encoding} needs data.lexicon (the source-language MWEs)")
            if s.model_of is None and s.train.mwe_loss_weight != 1.0 and not self.data.lexicon:
                raise systems.error(name, "train.mwe_loss_weight needs data.lexicon (it finds the training "
                                          "sentences with MWEs)")
            if s.augment == "dictionary" and not self.data.dictionary:
                raise systems.error(name, "uses the dictionary but data.dictionary is not set")
            if s.augment == "backtranslation-real" and self.data.monolingual != SPLIT_REST:
                raise systems.error(name, "backtranslation-real reads the real sources of the selected sentences: "
                                          "it needs data.monolingual: split-rest (both sides of the left-out pairs)")
            if s.augment == "dictionary" and s.augment_options.form != "entries" and not self.corpus_train_size:
                raise systems.error(name, "dictionary sentences come from the pairs the training sample leaves out: "
                                          "set data.train_size or data.split.train_size")
            if s.translate.constraint_tune_extra and not self.corpus_train_size:
                raise systems.error(name, "translate.constraint_tune_extra tunes on the pairs the training sample "
                                          "leaves out: set data.train_size or data.split.train_size (without a "
                                          "sample no pair is left out, and the setting would add nothing)")
            if s.translate.constraints != "none" and not (self.data.mwe_table or self.data.lexicon):
                raise systems.error(name, "constrained decoding needs an MWE translation table: data.mwe_table, or "
                                          "data.lexicon to build one")
            if s.augment == "dictionary" and s.augment_options.sense_filter and not (self.data.mwe_table
                                                                                    or self.data.lexicon):
                raise systems.error(name, "the dictionary's sense filter needs an MWE translation table: "
                                          "data.mwe_table, or data.lexicon to build one")
            if s.augment in BACKTRANSLATIONS:
                if not self.data.monolingual:
                    raise systems.error(name, "uses back-translation but data.monolingual is not set")
                if not self.data.target_lexicon:
                    raise systems.error(name, "back-translation needs data.target_lexicon (target-language "
                                              "MWEs select the sentences)")
        if (self.reverse.train.mwe_loss_weight != 1.0
                and any(s.augment in BACKTRANSLATIONS for s in self.systems.values())):
            raise node.error("reverse", "the back-translation model does not weigh MWE sentences: set "
                                        "reverse.train.mwe_loss_weight to 1 (or set the weight per system)")
        for name, t in self.tests.items():
            tests = node.get("tests")
            if t.source == SPLIT_TEST and not (self.data.split and self.data.split.test_size):
                raise tests.error(name, "`source: split-test` needs data.split with test_size > 0")
            if t.build is not None and not (t.build.lexicon or self.data.lexicon):
                raise tests.error(name, "`build` needs build.lexicon or data.lexicon")
            entry = tests.get(name)
            if t.build is not None and t.build.table == RUN_TABLE and not self.can_have_table:
                raise entry.get("build").error("table", "the run's MWE translation table needs data.mwe_table, or "
                                                        "data.lexicon to build one")
            table_metrics = [m for m in t.metrics if m in self.table_metrics]
            if table_metrics and not self.can_have_table:
                raise entry.error("metrics", f"{table_metrics[0]} reads the run's MWE translation table: set "
                                             "data.mwe_table, or data.lexicon to build one")
            dict_metrics = [m for m in t.metrics if m in DICTIONARY_METRICS]
            if dict_metrics and not self.data.dictionary:
                raise entry.error("metrics", f"{dict_metrics[0]} reads the bilingual dictionary: set data.dictionary")
        if self.data.monolingual == SPLIT_REST and not self.corpus_train_size:
            raise data.error("monolingual", "split-rest needs a training sample that leaves pairs out "
                                            "(data.train_size or data.split.train_size)")
        baseline = self.score.baseline or next(iter(self.systems))
        if baseline not in self.systems:
            score = node.get("score") if isinstance(node.get("score"), Node) else node
            raise score.error("baseline", f"{baseline!r} is not a system", expected=", ".join(self.systems))
        unknown = [t for t in self.report.tests if t not in self.tests]
        if unknown:
            report = node.get("report") if isinstance(node.get("report"), Node) else node
            raise report.error("tests", f"{', '.join(map(repr, unknown))} is not a test set",
                               expected=", ".join(self.tests) or "a name under `tests:`")
        tests_resolved = {name: self._with_build_table(t) for name, t in self.tests.items()}
        return replace(self, score=replace(self.score, baseline=baseline), tests=tests_resolved)

    def _with_build_table(self, t: TestConfig) -> TestConfig:
        """``build.table`` left open: `run` where the run has an MWE translation table anyway (`has_table`)
        or the test scores `mwe-alts` (the alternatives it credits come from the table), else `none`."""
        if t.build is None or t.build.table is not None:
            return t
        table = RUN_TABLE if self.can_have_table and (self.has_table or "mwe-alts" in t.metrics) else NO_TABLE
        return replace(t, build=replace(t.build, table=table))

    @property
    def table_metrics(self) -> tuple[str, ...]:
        """The metrics that read the run's MWE translation table (`mwe-alts` too with `score.mwe_alternatives: table`)."""
        return TABLE_METRICS + (("mwe-alts",) if self.score.mwe_alternatives == "table" else ())

    @property
    def can_have_table(self) -> bool:
        """Whether the run can have an MWE translation table: given, or built from data.lexicon."""
        return bool(self.data.mwe_table or self.data.lexicon)

    @property
    def has_table(self) -> bool:
        """Whether the run has an MWE translation table whatever the tests: `data.mwe_table`, or one of the
        systems needs the run to build one (hint encodings, the dictionary's sense filter, constrained decoding)."""
        return bool(self.data.mwe_table) or any(self.system_needs_table(s) for s in self.systems)

    def system_needs_table(self, system: str) -> bool:
        """Whether ``system`` reads the run's MWE translation table (its model's hints or sense filter, or its
        constrained decoding)."""
        s, trained = self.systems[system], self.systems[self.trained_system(system)]
        return (is_hint_encoding(trained.encoding) or s.translate.constraints != "none"
                or (trained.augment == "dictionary" and trained.augment_options.sense_filter))

    @property
    def corpus_train_size(self) -> int:
        return self.data.split.train_size if self.data.split is not None else self.data.train_size

    def lowercase_test(self, test: str) -> bool:
        t = self.tests[test]
        return self.lowercase if t.lowercase is None else t.lowercase

    def trained_system(self, system: str) -> str:
        """The system whose trained model ``system`` translates with (itself, unless a `model_of` variant)."""
        return self.systems[system].model_of or system

    def seed_groups(self, systems: Iterable[str]) -> dict[str, list[str]]:
        """Systems that differ only in ``train.seed`` (and variants of such models with the same decoding
        settings), in the order given: the first member names the group. Groups of one are left out. The
        results report each group's seed spread."""
        keys: dict[str, Any] = {}

        def key(name: str) -> Any:
            if name not in keys:
                s = self.systems[name]
                if s.model_of is not None:
                    keys[name] = ("variant", key(s.model_of), _canonical(to_plain(s.translate)))
                else:
                    keys[name] = ("trained", _canonical(to_plain(replace(s, train=replace(s.train, seed=None)))))
            return keys[name]

        groups: dict[Any, list[str]] = {}
        for name in systems:
            groups.setdefault(key(name), []).append(name)
        return {members[0]: members for members in groups.values() if len(members) > 1}

    def training_seed(self, system: str) -> int:
        """The seed the model ``system`` translates with was trained with (its ``train.seed``, else the run's)."""
        seed = self.systems[self.trained_system(system)].train.seed
        return self.seed if seed is None else seed

    def seed_baselines(self, systems: Sequence[str]) -> dict[str, str | None]:
        """Each member of a seed group other than the baseline's (the group of ``systems[0]``) -> the member of
        the baseline's group trained with the same seed (`training_seed`; None when that group has none): the
        baseline the results' seed section tests it against. Empty without a baseline group."""
        groups = self.seed_groups(systems)
        base = next((members for members in groups.values() if systems and systems[0] in members), None)
        if base is None:
            return {}
        by_seed: dict[int, str] = {}
        for name in base:
            by_seed.setdefault(self.training_seed(name), name)
        return {name: by_seed.get(self.training_seed(name)) for members in groups.values() if members is not base
                for name in members}

    def model_sections(self, system: str) -> SystemConfig | ReverseConfig:
        """The sections a system's model trains with (``reverse``: the back-translation model's)."""
        return self.reverse if system == REVERSE else self.systems[system]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# ---------------------------------------------------------------- loading

def resolve_path(value: str, base: Path) -> Path:
    if value.startswith(PACKAGE_PREFIX):
        return PACKAGE_DATA / value[len(PACKAGE_PREFIX):]
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def load_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> ExperimentConfig:
    """Read, override, check and resolve a config file; every problem is a located `ConfigError`."""
    path = Path(path)
    root = read_yaml(path, expected=EXPECTED)
    for text in overrides:
        apply_override(root, text)
    return build_config(root, base_dir=path.resolve().parent, source=str(path.resolve()))


def config_from_data(data: dict, base_dir: str | Path = ".", overrides: list[str] | tuple[str, ...] = (),
                     name: str = "<config>") -> ExperimentConfig:
    """The same as `load_config` for a config given as Python data (paths relative to ``base_dir``)."""
    root = located(data, Origin((), name))
    for text in overrides:
        apply_override(root, text)
    return build_config(root, base_dir=Path(base_dir).resolve(), source=name)


def build_config(root: Node, *, base_dir: Path, source: str) -> ExperimentConfig:
    langs = [root.get(k, d) for k, d in (("src_lang", "en"), ("tgt_lang", "it"))]
    for key, lang in zip(("src_lang", "tgt_lang"), langs):   # it ends file names (PREFIX.CODE): checked before
        if isinstance(lang, str) and not LANGUAGE_CODE.match(lang):   # the data files are looked for with it
            raise root.error(key, f"{lang!r} is not a language code",
                             expected="a code such as en, pt_BR or zh-Hans (letters and digits: it ends file names)")
    suffixes = tuple(f".{lang}" for lang in langs if isinstance(lang, str))
    ctx = Context(root, resolve_path=lambda value: resolve_path(value, base_dir), prefix_suffixes=suffixes)
    cfg = build(ExperimentConfig, root, root.origin, ctx)
    return replace(cfg, source=source)


def require_tests(cfg: ExperimentConfig) -> None:
    """A full run scores test sets: refuse a config without any before anything runs."""
    if not cfg.tests:
        raise MwemtError(f"{cfg.source}: no test sets (a `tests:` section with at least one test set is needed "
                         "to score the systems)")


def markdown_reference() -> str:
    """docs/config.md: every key of the config, generated from the schema (never edit it by hand)."""
    from mwemt.nmt.config import PRESETS
    from mwemt.schema import markdown_section

    parts = [
        "# Config reference",
        "",
        "<!-- generated by `python -m mwemt.experiments.config --markdown > docs/config.md`; do not edit -->",
        "",
        "One YAML file describes an experiment: `mwemt run` and `mwemt demo` run every system and score every "
        "test set, `mwemt train` trains one system (`--system NAME`; no test set needed). Paths are relative to "
        "the config file, and `package:demo/...` points into the sample bundled with mwemt. Every key is "
        "checked before anything runs: an unknown key (with the nearest valid one suggested), a wrong type, a "
        "value out of range, a missing input file or contradictory settings stop the command with the file, "
        "line and key path. Overrides on the command line (`--set train.max_epoch=3`, values in YAML) are "
        "checked the same way. `--dry-run` prints the resolved config: every default filled in, every "
        "system's sections merged and its model preset applied. Examples: `configs/demo.yaml` (annotated), "
        "`configs/paper-small.yaml`, `configs/nmt-tiny.yaml` (one system).",
        "",
    ]
    parts.append(markdown_section(ExperimentConfig, "", "Top level"))
    for key, cls in (("data", DataConfig), ("data.split", SplitConfig), ("tests.NAME", TestConfig),
                     ("tests.NAME.build", TestBuildConfig),
                     ("augment.dictionary", DictionaryOptions), ("augment.backtranslation", BacktranslationOptions),
                     ("preprocess", PreprocessConfig), ("hints", HintConfig), ("subword", SubwordConfig),
                     ("prepare", PrepareConfig),
                     ("model", ModelConfig)):
        parts.append(markdown_section(cls, key + ".", f"`{key}`"))
    presets = ["Presets (`model.preset`); all train with Adam (0.9, 0.98), inverse-sqrt warm-up, label "
               "smoothing 0.1 and clip-norm 1.0:", "", "| preset | arch | lr | warm-up | dropout |",
               "|---|---|---|---|---|"]
    presets += [f"| `{name}` | `{p['arch']}` | {p['lr']} | {p['warmup_updates']} | {p['dropout']} |"
                for name, p in PRESETS.items()]
    parts.append("\n".join(presets) + "\n")
    for key, cls in (("train", TrainConfig), ("translate", TranslateConfig), ("score", ScoreConfig),
                     ("report", ReportConfig), ("systems.NAME", SystemConfig), ("reverse", ReverseConfig),
                     ("slurm", SlurmConfig), ("slurm.STAGE", SlurmResources), ("slurm.train", TrainResources)):
        parts.append(markdown_section(cls, key + ".", f"`{key}`"))
    return "\n".join(parts)


if __name__ == "__main__":   # python -m mwemt.experiments.config --markdown
    import sys

    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m mwemt.experiments.config --markdown > docs/config.md")
    sys.stdout.write(markdown_reference())
