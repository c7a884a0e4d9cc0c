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
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from mwemt.augment.dictionary import DICT_FORMATS
from mwemt.errors import MwemtError
from mwemt.evaluate.compare.buckets import MWE_FREQ_CUTOFFS, WORD_FREQ_CUTOFFS, check_cutoffs
from mwemt.evaluate.mwe_score import AVERAGES
from mwemt.evaluate.registry import metric_names
from mwemt.formats import LEXICON_FORMATS, LEXICON_SIDES
from mwemt.nmt.config import ModelConfig, PrepareConfig, TrainConfig, consistency_problems, with_preset
from mwemt.nmt.translate import SOURCE_MWES
from mwemt.preprocess.annotate import ENCODINGS, FACTOR_NAMES, PreprocessConfig
from mwemt.preprocess.lemmatize import BACKENDS
from mwemt.preprocess.subword import SubwordConfig
from mwemt.schema import (
    ConfigError,
    Context,
    Node,
    Origin,
    apply_override,
    build,
    located,
    read_yaml,
    setting,
)

PACKAGE_PREFIX = "package:"
PACKAGE_DATA = Path(__file__).resolve().parents[1] / "data"
AUGMENTS = ("none", "dictionary", "backtranslation")
ROLES = ("general", "mwe")
SPLIT_REST = "split-rest"      # data.monolingual: the target side of the pairs data.train_size left out
SPLIT_TEST = "split-test"      # tests.NAME.source: the pairs data.split.test_size held out
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
    (`mwemt.preprocess.testset_build`): the lexicon's MWEs in the test pairs, their reference
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


@dataclass(frozen=True)
class TestConfig:
    """One test set: a source and reference file, an MWE-annotated test set, or the TED MWE annotation."""

    source: str | None = setting(None, path="file", literals=(SPLIT_TEST,),
                                 help="source text, one sentence per line, or `split-test`: the pairs "
                                      "data.split.test_size held out (source and reference)")
    reference: str | None = setting(None, path="file", help="reference translations, line-aligned with `source`")
    testset: str | None = setting(None, path="file", help="MWE-annotated test set (JSONL, `mwemt testset`)")
    from_ted: str | None = setting(None, path="file", help="the TED MWE annotation (pairs TSV), converted by "
                                                           "`mwemt.preprocess.testset`; with `source` and "
                                                           "`reference` as the TED text")
    compositionality: str | None = setting(None, path="file", help="mwe<TAB>score TSV for tesla-comp")
    build: TestBuildConfig | None = setting(None, help="build an MWE test from `source` and `reference` (or "
                                                       "`split-test`) inside the run (`tests.NAME.build.*` keys)")
    mwe_compositionality: str | None = setting(None, path="file", help="mwe<TAB>score compositionality of the "
                                                                       "test set's source MWEs (e.g. `ted-en.tsv` of "
                                                                       "scripts/compositionality_report.py): the "
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
        if not (self.testset or self.from_ted or from_split or (self.source and self.reference)):
            raise node.error(None, "needs `source` and `reference`, `source: split-test`, `testset` (JSONL) or "
                                   "`from_ted`")
        if self.sample and self.max_items:
            raise node.error("sample", "choose `sample` (a seeded sample) or `max_items` (the first N), not both")
        if self.build is not None and (self.testset or self.from_ted):
            raise node.error("build", "builds a test set from `source` and `reference`: remove `testset`/`from_ted`")
        if any(m.startswith("mwe") for m in self.metrics) and not (self.testset or self.from_ted or self.build):
            raise node.error("metrics", "the MWE score needs an MWE-annotated test set (`testset`, `from_ted` or "
                                        "`build`)")
        return self


# ---------------------------------------------------------------- augmentation, translation, scores

@dataclass(frozen=True)
class DictionaryOptions:
    """+dictionary: MWE dictionary entries added as training pairs (`mwemt.augment.dictionary`)."""

    ratio: float = setting(0.10, greater_than=0.0, help="synthetic pairs / original training pairs")
    mwe_only: bool = setting(True, help="only entries whose source side has two or more words")
    lemmatizer: str = setting("simplemma", choices=BACKENDS, help="lemmatizer of the deduplication key")


@dataclass(frozen=True)
class BacktranslationOptions:
    """+back-translation: target sentences with MWEs translated by the reverse model
    (`mwemt.augment.backtranslate`)."""

    ratio: float = setting(0.10, greater_than=0.0, help="synthetic pairs / original training pairs")
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


@dataclass(frozen=True)
class ScoreConfig:
    """Scoring every system on every test set, with a paired bootstrap against the baseline."""

    bootstrap: int = setting(1000, minimum=1, help="bootstrap resamples")
    bootstrap_seed: int = setting(12345, help="bootstrap seed (sacrebleu's default)")
    mwe_average: str = setting("sentence", choices=AVERAGES, help="the MWE score averages over sentences or "
                                                                  "over MWEs")
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
    mwe_freq_buckets: tuple[int, ...] = setting(MWE_FREQ_CUTOFFS, help="cutoffs of the MWE training-frequency "
                                                                       "buckets (increasing, from 1)")
    word_freq_buckets: tuple[int, ...] = setting(WORD_FREQ_CUTOFFS, help="cutoffs of the word-frequency buckets "
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


# ---------------------------------------------------------------- systems

def _augment_section(node: Node) -> tuple[str, type] | None:
    kind = node.get("augment")
    if kind == "dictionary":
        return "augment.dictionary", DictionaryOptions
    if kind == "backtranslation":
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
                                                            "information; an ablation)")
    augment: str = setting("none", choices=AUGMENTS, help="none, + MWE dictionary pairs, or + back-translated "
                                                          "MWE sentences")
    augment_options: DictionaryOptions | BacktranslationOptions | None = setting(
        None, inherit=_augment_section, doc_default="augment.dictionary` or `augment.backtranslation",
        help="(by `augment`)")
    preprocess: PreprocessConfig = setting(default_factory=PreprocessConfig, inherit="preprocess")
    subword: SubwordConfig = setting(default_factory=SubwordConfig, inherit="subword")
    prepare: PrepareConfig = setting(default_factory=PrepareConfig, inherit="prepare")
    model: ModelConfig = setting(default_factory=ModelConfig, inherit="model")
    train: TrainConfig = setting(default_factory=TrainConfig, inherit="train")
    translate: TranslateConfig = setting(default_factory=TranslateConfig, inherit="translate")
    model_of: str | None = setting(None, help="a decoding variant: translate with this other system's trained "
                                              "model (nothing is trained) and this entry's `translate` keys, e.g. "
                                              "iob-no-mwes: {model_of: iob, translate: {source_mwes: none}}")

    def resolve(self, node: Node, ctx: Context) -> SystemConfig:
        if self.model_of is not None:
            extra = sorted(set(node) - VARIANT_KEYS)
            if extra:
                raise node.error(extra[0], f"a `model_of` variant reuses {self.model_of}'s model: only "
                                           f"{' and '.join(sorted(VARIANT_KEYS))} may be set")
        return _nmt_resolve(self, node, ctx, self.encoding)


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
        needed = isinstance(systems, dict) and any(isinstance(s, dict) and s.get("augment") == "backtranslation"
                                                    for s in systems.values())
        if not needed:   # never trained: presets only, so that settings meant for the systems do not fail here
            model, train = with_preset(self.model, self.train)
            return replace(self, model=model, train=train)
        return _nmt_resolve(self, node, ctx, "none")


# ---------------------------------------------------------------- the whole experiment

@dataclass(frozen=True)
class ExperimentConfig:
    """An experiment: its data, test sets, systems and every stage's settings."""

    name: str = setting("experiment", help="label for logs and results; default run directory runs/NAME")
    seed: int = setting(1, help="seeds the corpus sample, augmentation, sentencepiece and fairseq")
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
    score: ScoreConfig = setting(default_factory=ScoreConfig, help="scoring")
    report: ReportConfig = setting(default_factory=ReportConfig, help="the comparison report of each test set")
    systems: dict[str, SystemConfig] = setting(default_factory=dict, doc_default="required",
                                               help="the systems by name, e.g. baseline: {}, iob: {encoding: iob}")
    reverse: ReverseConfig = setting(default_factory=ReverseConfig, help="the back-translation model")
    source: str = dataclasses.field(default="", metadata={"internal": True})   # the config file

    def resolve(self, node: Node, ctx: Context) -> ExperimentConfig:
        systems = node.get("systems")
        if not self.systems:
            raise node.error("systems", "no systems", expected="systems: {baseline: {}, ...}")
        if REVERSE in self.systems:
            raise systems.error(REVERSE, f"`{REVERSE}` is the back-translation model's name; rename the system")
        if self.src_lang == self.tgt_lang:
            raise node.error("tgt_lang", "src_lang and tgt_lang must differ")
        data = node.get("data") if isinstance(node.get("data"), Node) else node
        for name, s in self.systems.items():
            if s.model_of is not None:
                entry = systems.get(name)
                if s.model_of not in self.systems or self.systems[s.model_of].model_of is not None:
                    trained = [k for k, v in self.systems.items() if v.model_of is None]
                    raise entry.error("model_of", f"{s.model_of!r} is not a trained system of this config",
                                      expected=", ".join(trained))
            if s.encoding != "none" and not self.data.lexicon:
                raise systems.error(name, f"encoding {s.encoding} needs data.lexicon (the source-language MWEs)")
            if s.augment == "dictionary" and not self.data.dictionary:
                raise systems.error(name, "uses the dictionary but data.dictionary is not set")
            if s.augment == "backtranslation":
                if not self.data.monolingual:
                    raise systems.error(name, "uses back-translation but data.monolingual is not set")
                if not self.data.target_lexicon:
                    raise systems.error(name, "back-translation needs data.target_lexicon (target-language "
                                              "MWEs select the sentences)")
        for name, t in self.tests.items():
            tests = node.get("tests")
            if t.source == SPLIT_TEST and not (self.data.split and self.data.split.test_size):
                raise tests.error(name, "`source: split-test` needs data.split with test_size > 0")
            if t.build is not None and not (t.build.lexicon or self.data.lexicon):
                raise tests.error(name, "`build` needs build.lexicon or data.lexicon")
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
        return replace(self, score=replace(self.score, baseline=baseline))

    @property
    def corpus_train_size(self) -> int:
        return self.data.split.train_size if self.data.split is not None else self.data.train_size

    def lowercase_test(self, test: str) -> bool:
        t = self.tests[test]
        return self.lowercase if t.lowercase is None else t.lowercase

    def trained_system(self, system: str) -> str:
        """The system whose trained model ``system`` translates with (itself, unless a `model_of` variant)."""
        return self.systems[system].model_of or system

    def model_sections(self, system: str) -> SystemConfig | ReverseConfig:
        """The sections a system's model trains with (``reverse``: the back-translation model's)."""
        return self.reverse if system == REVERSE else self.systems[system]


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
                     ("preprocess", PreprocessConfig), ("subword", SubwordConfig), ("prepare", PrepareConfig),
                     ("model", ModelConfig)):
        parts.append(markdown_section(cls, key + ".", f"`{key}`"))
    presets = ["Presets (`model.preset`); all train with Adam (0.9, 0.98), inverse-sqrt warm-up, label "
               "smoothing 0.1 and clip-norm 1.0:", "", "| preset | arch | lr | warm-up | dropout |",
               "|---|---|---|---|---|"]
    presets += [f"| `{name}` | `{p['arch']}` | {p['lr']} | {p['warmup_updates']} | {p['dropout']} |"
                for name, p in PRESETS.items()]
    parts.append("\n".join(presets) + "\n")
    for key, cls in (("train", TrainConfig), ("translate", TranslateConfig), ("score", ScoreConfig),
                     ("report", ReportConfig), ("systems.NAME", SystemConfig), ("reverse", ReverseConfig)):
        parts.append(markdown_section(cls, key + ".", f"`{key}`"))
    return "\n".join(parts)


if __name__ == "__main__":   # python -m mwemt.experiments.config --markdown
    import sys

    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m mwemt.experiments.config --markdown > docs/config.md")
    sys.stdout.write(markdown_reference())
