"""The pipeline: the grid of Zaninello & Birch (2020), or one system of it, as cached stages.

For every system: corpus -> [augment] -> annotate -> subword -> prepare -> train; then every test
set's raw source is translated by the model directory (which annotates and segments it exactly as
its training data was: `mwemt.nmt.translate.Translator`); finally every test set is scored for all
systems at once (the baseline first, for the paired bootstrap), each test set gets its comparison
report (`mwemt.evaluate.compare`, published in RUN/report/TEST/) and results.{md,json,csv,png}
are written in the run directory. `run_experiment` does all of it (`mwemt run`, `mwemt demo`);
`train_system` runs the same steps for one system up to its trained model (`mwemt train`). Both
use one `Runner`: the same stage cache, lock and manifest, so there is one pipeline.

Sharing: stages are looked up by key across systems, so work is done once wherever inputs and
configuration coincide: the corpus split and test data for everybody; the reverse (IT->EN) model
for every back-translation system; and annotate/subword/prepare of the baseline and of a system
that differs from it only after training. Each system has its *own* subword models, trained on
its own training data (+dictionary and +back-translation change the training text, and the
words-with-spaces tokens change the source vocabulary), which is what the paper's systems did.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from mwemt.errors import MwemtError
from mwemt.experiments import stages as S
from mwemt.experiments.cache import CacheEntry
from mwemt.experiments.config import (
    BACKTRANSLATIONS,
    DICTIONARY_METRICS,
    NO_TABLE,
    REVERSE,
    RUN_TABLE,
    SPLIT_REST,
    SPLIT_TEST,
    ExperimentConfig,
    require_tests,
)
from mwemt.experiments.publish import PublishedTest, check_publish_target, publish_run
from mwemt.experiments.results import (
    SetScores,
    build_results,
    constraint_counts,
    count_degenerate,
    recorded_path,
    write_results,
)
from mwemt.experiments.runner import Runner
from mwemt.fileio import file_in_the_way, refuse_unwritable
from mwemt.nmt.train import FairseqJob
from mwemt.preprocess.annotate import FACTOR_NAMES
from mwemt.preprocess.hints import is_hint_encoding
from mwemt.processes import resolve_device
from mwemt.schema import to_plain

MODEL_LINK = "model"     # WORKDIR/model: where `mwemt train` puts (a stand-alone copy of) the trained model
REPORT_DIR = "report"    # RUN/report/TEST/: the comparison report of each test set


class Pipeline:
    """The steps of one run directory, in pipeline order; each method runs (or reuses) its stages."""

    def __init__(self, runner: Runner, cfg: ExperimentConfig):
        self.runner = runner
        self.cfg = cfg
        self._corpus: CacheEntry | None = None
        self._reverse: CacheEntry | None = None
        self._corpus_lock = threading.Lock()    # systems run in threads (`Runner.parallel`)
        self._reverse_lock = threading.Lock()
        self._table: Path | None = None
        self._table_lock = threading.Lock()
        self._sense_data: CacheEntry | None = None   # stage sense-data (issue 42), built on first use
        self._sense_lock = threading.Lock()
        self.scored: dict[str, PublishedTest] = {}   # what each test set was scored with (for publishing)

    # ---- shared data
    def corpus(self) -> CacheEntry:
        """Training and validation pairs of every system (split, sampled, lowercased as configured)."""
        with self._corpus_lock:
            if self._corpus is None:
                self._corpus = self._corpus_stage()
        return self._corpus

    def _corpus_stage(self) -> CacheEntry:
        cfg, data = self.cfg, self.cfg.data
        size = data.split or data
        section = S.CorpusSection(cfg.src_lang, cfg.tgt_lang, cfg.seed, cfg.lowercase,
                                  train_size=size.train_size, valid_max=size.valid_max,
                                  rest_max=data.split.rest_max if data.split else 0,
                                  valid_size=data.split.valid_size if data.split else 0,
                                  test_size=data.split.test_size if data.split else 0)
        if data.split is not None:
            inputs = {"tsv": data.split.tsv}
        else:
            src, tgt = cfg.src_lang, cfg.tgt_lang
            inputs = {"train_src": f"{data.train}.{src}", "train_tgt": f"{data.train}.{tgt}",
                      "valid_src": f"{data.valid}.{src}", "valid_tgt": f"{data.valid}.{tgt}"}
        return self.runner.stage("corpus", "shared", S.corpus_stage, config=section, inputs=inputs)

    def test_data(self) -> dict[str, CacheEntry]:
        """Every test set as source, reference and (MWE test sets) JSONL items."""
        out = {}
        cfg = self.cfg
        for name, t in cfg.tests.items():
            inputs = {k: getattr(t, k) for k in ("source", "reference", "testset", "from_ted") if getattr(t, k)}
            if t.source == SPLIT_TEST:
                inputs["source"], inputs["reference"] = self.corpus().output("test_src"), self.corpus().output("test_tgt")
            build = None
            if t.build is not None:
                b = t.build
                lexicon = b.lexicon or cfg.data.lexicon
                settings = dict(lexicon_format=b.lexicon_format if b.lexicon else cfg.data.lexicon_format,
                                lexicon_side="source" if b.lexicon else cfg.data.lexicon_side,
                                max_per_type=b.max_per_type, select=b.select,
                                idiomatic_below=b.idiomatic_below, idiomatic_confidence=b.idiomatic_confidence,
                                alignment_extra=b.alignment_extra, samplers=b.samplers)
                if b.mwe_context != "none":   # the MWE-in-context classifier: its model is an input
                    from mwemt.preprocess.mwe_context import BUNDLED

                    kind = b.mwe_context if b.mwe_context in ("auto", "bundled") else "file"
                    build = S.ContextTestBuildSection(cfg.src_lang, cfg.tgt_lang, cfg.seed, cfg.preprocess,
                                                      **settings, mwe_context=kind, mwe_threshold=b.mwe_threshold)
                    inputs["mwe_context"] = BUNDLED if kind != "file" else b.mwe_context
                else:
                    build = S.TestBuildSection(cfg.src_lang, cfg.tgt_lang, cfg.seed, cfg.preprocess, **settings)
                corpus = self.corpus()
                inputs.update(lexicon=lexicon, train_src=corpus.output("train_src"),
                              train_tgt=corpus.output("train_tgt"), rest_tgt=corpus.output("rest_tgt"),
                              **S.filter_files(cfg.preprocess, cfg.src_lang, build.lexicon_format,
                                               build.lexicon_side, lexicon))
                if b.compositionality:
                    inputs["compositionality"] = b.compositionality
                if b.table == RUN_TABLE:   # the run's one table (the same the systems and term use read)
                    inputs["table"] = self.mwe_table()
                elif b.table not in (None, NO_TABLE):
                    inputs["table"] = b.table
            section = S.TestDataSection(cfg.lowercase, t.max_items, t.annotator, t.all_sentences, build,
                                        sample=t.sample, seed=cfg.seed if t.sample else 1)
            out[name] = self.runner.stage("testdata", name, S.testdata_stage, config=section, inputs=inputs)
        return out

    # ---- one system
    def training_files(self, system: str) -> dict[str, Path]:
        """The system's training pairs: the corpus's, or the corpus's plus synthetic pairs."""
        corpus = self.corpus()
        files = {k: corpus.output(k) for k in ("train_src", "train_tgt")}
        s, cfg = self.cfg.systems[system], self.cfg
        if s.augment == "dictionary":
            o = s.augment_options
            section = S.DictionarySection(cfg.src_lang, cfg.tgt_lang, cfg.seed, cfg.lowercase,
                                          cfg.data.dictionary_format, o)
            inputs = {**files, "dictionary": cfg.data.dictionary}
            if o.sense_filter:
                inputs["table"] = self.mwe_table()
            if o.form != "entries":   # context sentences from the pairs the training sample left out
                inputs.update(rest_src=self._rest_source(), rest_tgt=corpus.output("rest_tgt"))
            entry = self.runner.stage("augment", system, S.dictionary_stage, config=section, inputs=inputs)
        elif s.augment in BACKTRANSLATIONS:
            reverse = self.reverse_model()
            mono = corpus.output("rest_tgt") if cfg.data.monolingual == SPLIT_REST else cfg.data.monolingual
            section = S.BacktranslationSection(cfg.src_lang, cfg.tgt_lang, cfg.seed, cfg.lowercase,
                                               cfg.data.target_lexicon_format, s.augment_options)
            # backtranslation-real runs the same stage (shared by key with a back-translation system of the
            # same options): the same selection, then the real sources of the selected sentences
            entry = self.runner.stage("augment", system, S.backtranslation_stage, config=section,
                                      inputs={**files, "monolingual": mono, "target_lexicon": cfg.data.target_lexicon,
                                              "model": reverse.output("model")},
                                      device="auto")   # decodes with the reverse model: a GPU when there is one
            if s.augment == "backtranslation-real":
                entry = self.runner.stage("augment-real", system, S.backtranslation_real_stage, config=section,
                                          inputs={**files, "monolingual": mono, "monolingual_source": self._rest_source(),
                                                  "bt_manifest": entry.output("manifest")})
        else:
            return files
        return {k: entry.output(k) for k in ("train_src", "train_tgt")}

    def _rest_source(self) -> Path:
        """The source side of the pairs the training sample left out (the corpus stage's ``rest_src``)."""
        corpus = self.corpus()
        if "rest_src" not in corpus.outputs:
            raise MwemtError(f"the corpus stage in {corpus.directory} was cached by an older mwemt without the "
                             "left-out sources; remove that directory and run again")
        return corpus.output("rest_src")

    def mwe_table(self) -> Path:
        """The MWE translation table of the run: `data.mwe_table`, or built once from the training pairs
        (`stages.mwe_table_stage`: alignment of the lexicon's MWEs, plus the dictionary)."""
        cfg = self.cfg
        if cfg.data.mwe_table:
            return Path(cfg.data.mwe_table)
        with self._table_lock:
            if self._table is None:
                corpus = self.corpus()
                section = S.MweTableSection(cfg.src_lang, cfg.tgt_lang, cfg.data.lexicon_format, cfg.data.lexicon_side,
                                            cfg.preprocess, cfg.data.dictionary_format)
                inputs = {"train_src": corpus.output("train_src"), "train_tgt": corpus.output("train_tgt"),
                          "lexicon": Path(cfg.data.lexicon),
                          **S.filter_files(cfg.preprocess, cfg.src_lang, cfg.data.lexicon_format,
                                           cfg.data.lexicon_side, cfg.data.lexicon)}
                if cfg.data.dictionary:
                    inputs["dictionary"] = Path(cfg.data.dictionary)
                entry = self.runner.stage("mwe_table", "shared", S.mwe_table_stage, config=section, inputs=inputs)
                self._table = entry.output("table")
        return self._table

    def reverse_model(self) -> CacheEntry:
        """The target -> source model of back-translation, trained once, on plain text."""
        with self._reverse_lock:
            if self._reverse is None:
                corpus = self.corpus()
                files = {"train_src": corpus.output("train_tgt"), "train_tgt": corpus.output("train_src"),
                         "valid_src": corpus.output("valid_tgt"), "valid_tgt": corpus.output("valid_src")}
                self._reverse = self.model(REVERSE, files)
        return self._reverse

    def system_files(self, system: str) -> dict[str, Path]:
        """The system's training pairs (augmented or not) and the validation pairs."""
        corpus = self.corpus()
        return {**self.training_files(system), "valid_src": corpus.output("valid_src"),
                "valid_tgt": corpus.output("valid_tgt")}

    def system_model(self, system: str) -> CacheEntry:
        """The trained model of one system (its train stage; a `model_of` variant's is the other system's)."""
        system = self.cfg.trained_system(system)
        return self.model(system, self.system_files(system))

    def model(self, system: str, files: dict[str, Path]) -> CacheEntry:
        """annotate -> subword -> prepare -> train for one model; returns its train stage."""
        section, inputs = self.model_data(system, files)
        return self.runner.stage("train", system, S.train_stage, config=section, inputs=inputs,
                                 device=section.job.train.device)

    def model_data(self, system: str, files: dict[str, Path]) -> tuple[S.TrainSection, dict[str, Path]]:
        """annotate -> subword -> prepare for one model; returns its train stage's section and inputs.

        Each stage's key holds only the sections it reads, so e.g. more epochs retrain but reuse
        the annotated, segmented and binarized data.
        """
        cfg, sections = self.cfg, self.cfg.model_sections(system)
        encoding = sections.encoding
        src, tgt = (cfg.tgt_lang, cfg.src_lang) if system == REVERSE else (cfg.src_lang, cfg.tgt_lang)
        uses_lexicon = encoding != "none"
        lexicon = {"lexicon": Path(cfg.data.lexicon)} if uses_lexicon and cfg.data.lexicon else {}
        annotate = S.AnnotateSection(src, tgt, encoding, cfg.data.lexicon_format if uses_lexicon else "auto",
                                     cfg.data.lexicon_side if uses_lexicon else "source", sections.preprocess)
        filter_files = annotate.filter_inputs(lexicon.get("lexicon"))
        if is_hint_encoding(encoding):   # inline hints from the run's MWE translation table
            ann = self.runner.stage("annotate", system, S.hint_annotate_stage,
                                    config=S.HintAnnotateSection(annotate, sections.hints, cfg.seed),
                                    inputs={**files, **lexicon, **filter_files, "hint_table": self.mwe_table()})
        else:
            ann = self.runner.stage("annotate", system, S.annotate_stage, config=annotate,
                                    inputs={**files, **lexicon, **filter_files})
        split_files = ("train_src", "train_tgt", "valid_src", "valid_tgt")
        sw = self.runner.stage("subword", system, S.subword_stage,
                               config=S.SubwordSection(src, tgt, cfg.seed, encoding, sections.subword),
                               inputs={k: ann.output(k) for k in split_files})
        flags = {}
        if sections.train.mwe_loss_weight != 1.0:   # the MWE-weighted loss: which training sentences weigh more
            flags = {"train_flags": self.mwe_flags(system, files, src, tgt).output("train_flags")}
        prep = self.runner.stage("prepare", system, S.prepare_stage,
                                 config=S.PrepareSection(src, tgt, encoding, sections.prepare),
                                 inputs={**{k: sw.output(k) for k in split_files}, **flags})
        # the compositionality file is the flags stage's input (hashed there): its path is not a training setting
        train = replace(sections.train, mwe_loss_compositionality=None)
        job = FairseqJob(sections.model, train, src, tgt, len(FACTOR_NAMES[encoding]),
                         cfg.seed if train.seed is None else train.seed)
        subword_iob = "copy" if is_hint_encoding(encoding) else sections.subword.iob   # hint factors: copied
        return S.TrainSection(job, annotate, subword_iob), {
            "data": prep.output("data"), "src_model": sw.output("src_model"), "tgt_model": sw.output("tgt_model"),
            **lexicon, **({"filters": ann.output("filters")} if "filters" in ann.outputs else {})}

    def mwe_flags(self, system: str, files: dict[str, Path], src: str, tgt: str) -> CacheEntry:
        """The MWE flags of a system's training pairs (`stages.mwe_flags_stage`), for train.mwe_loss_weight."""
        cfg, sections = self.cfg, self.cfg.model_sections(system)
        t = sections.train
        section = S.MweFlagsSection(src, tgt, cfg.data.lexicon_format, cfg.data.lexicon_side, sections.preprocess,
                                    t.mwe_loss_sentences, t.mwe_loss_idiomatic_below)
        inputs = {"train_src": files["train_src"], "train_tgt": files["train_tgt"], "lexicon": Path(cfg.data.lexicon),
                  **S.filter_files(sections.preprocess, src, cfg.data.lexicon_format, cfg.data.lexicon_side,
                                   cfg.data.lexicon)}
        if t.mwe_loss_sentences == "idiomatic":
            inputs["compositionality"] = Path(t.mwe_loss_compositionality)
        return self.runner.stage("mweflags", system, S.mwe_flags_stage, config=section, inputs=inputs)

    def translations(self, system: str, model: CacheEntry, tests: dict[str, CacheEntry]) -> dict[str, Path]:
        """Every test source translated by the system's model: test name -> hypothesis file."""
        t = self.cfg.systems[system].translate
        trained = self.cfg.systems[self.cfg.trained_system(system)]
        hints, extra = None, {}
        if is_hint_encoding(trained.encoding) and t.hints == "table":   # hints from the table, never a reference
            hints, extra = trained.hints, {"hint_table": self.mwe_table()}
        constraints = None
        if t.constraints != "none":   # lexically constrained decoding with the same table (never a reference)
            constraints = self.constraint_section(t)
            extra["constraint_table"] = self.mwe_table()
            extra.update(self.sense_inputs(constraints))
            if t.constraints == "judged" and t.constraint_threshold is None:   # tuned on the validation split
                extra["constraint_threshold"] = self.constraint_threshold(system, model, constraints)
        section = S.TranslateSection(self.cfg.tgt_lang, t.beam, t.batch_size, t.source_mwes, hints=hints,
                                     constraints=constraints)

        def translate(name: str, test: CacheEntry) -> Path:
            hyp = self.runner.stage("translate", f"{system}.{name}", S.translate_stage, config=section,
                                    inputs={"source": test.output("source"), "model": model.output("model"),
                                            **extra},
                                    params={"threads": t.threads},   # CPU threads: speed only, not in the key
                                    device="auto")   # `Translator.load`'s device: a GPU when there is one
            return hyp.output("hyp")

        names = list(tests)
        hyps = self.runner.parallel([lambda n=n: translate(n, tests[n]) for n in names])
        return dict(zip(names, hyps))

    @staticmethod
    def constraint_section(t) -> S.ConstraintSection:
        """A system's constraints as its translate stages see them (forced, or judged)."""
        if t.constraints != "judged":
            return S.ConstraintSection(t.constraints, t.constraint_min_count, tuple(t.constraint_sources))
        return S.JudgedConstraintSection("judged", t.constraint_min_count, tuple(t.constraint_sources),
                                         t.constraint_candidates, t.constraint_threshold, t.constraint_mwe_context,
                                         t.constraint_ranking, t.constraint_forms, t.constraint_acceptance)

    def sense_inputs(self, constraints) -> dict[str, Path]:
        """The sense contexts and target forms a judged section reads (issue 42), from stage sense-data."""
        if not isinstance(constraints, S.JudgedConstraintSection):
            return {}
        out = {}
        if constraints.ranking != "count":
            out["constraint_senses"] = self.sense_data().output("senses")
        if constraints.forms > 1:
            out["constraint_forms"] = self.sense_data().output("forms")
        return out

    def sense_data(self) -> CacheEntry:
        """The sense contexts and target forms of the run's MWE table (`stages.sense_data_stage`), built once
        from the training pairs the table was built from."""
        cfg = self.cfg
        with self._sense_lock:
            if self._sense_data is None:
                if cfg.data.mwe_table:
                    raise MwemtError("translate.constraint_ranking context and constraint_forms read the sense "
                                     "contexts and forms of the run's own MWE table: drop data.mwe_table")
                corpus = self.corpus()
                section = S.SenseDataSection(cfg.src_lang, cfg.tgt_lang, cfg.data.lexicon_format,
                                             cfg.data.lexicon_side, cfg.preprocess, cfg.data.dictionary_format)
                inputs = {"train_src": corpus.output("train_src"), "train_tgt": corpus.output("train_tgt"),
                          "lexicon": Path(cfg.data.lexicon), "table": self.mwe_table(),
                          **S.filter_files(cfg.preprocess, cfg.src_lang, cfg.data.lexicon_format,
                                           cfg.data.lexicon_side, cfg.data.lexicon)}
                if cfg.data.dictionary:
                    inputs["dictionary"] = Path(cfg.data.dictionary)
                self._sense_data = self.runner.stage("sense-data", "shared", S.sense_data_stage, config=section,
                                                     inputs=inputs)
        return self._sense_data

    def constraint_threshold(self, system: str, model: CacheEntry, constraints: S.JudgedConstraintSection) -> Path:
        """The judged-constraints threshold of a system, tuned on the validation split (stage constraint-tune):
        its inputs are the model, the MWE table and the corpus's validation pairs; never a test set."""
        t, corpus = self.cfg.systems[system].translate, self.corpus()
        section = S.ConstraintTuneSection(t.beam, t.batch_size, t.source_mwes, constraints, self.cfg.lowercase,
                                          t.constraint_tune_extra, self.cfg.seed)
        extra = {}
        if t.constraint_tune_extra:   # + left-out training-split pairs with table MWEs (never a test set)
            if "rest_tgt" not in corpus.outputs:
                raise MwemtError(f"translate.constraint_tune_extra of system {system} tunes on the pairs the "
                                 "training sample left out: it needs data.split with a train_size (and rest_max)")
            extra = {"rest_src": self._rest_source(), "rest_tgt": corpus.output("rest_tgt")}
        entry = self.runner.stage("constraint-tune", system, S.constraint_tune_stage, config=section,
                                  inputs={"model": model.output("model"), "constraint_table": self.mwe_table(),
                                          **self.sense_inputs(constraints),
                                          "valid_src": corpus.output("valid_src"),
                                          "valid_tgt": corpus.output("valid_tgt"), **extra},
                                  params={"threads": t.threads}, device="auto")
        return entry.output("threshold")

    # ---- scores and reports
    def scores(self, systems: list[str], tests: dict[str, CacheEntry],
               hyps: dict[str, dict[str, Path]]) -> list[SetScores]:
        """Every test set scored for all systems, the baseline first."""
        seeds = tuple((s, b) for s, b in self.cfg.seed_baselines(systems).items() if b not in (None, systems[0]))

        def score(name: str, t) -> SetScores:
            section, inputs = self.score_section(name, systems), self.score_inputs(name, systems, tests, hyps)
            section = replace(section, seed_baselines=seeds)   # same-seed tests (a grid with seed groups only)
            entry = self.runner.stage("score", name, S.score_stage, config=section, inputs=inputs)
            self.scored[name] = PublishedTest(section, {k: Path(v) for k, v in inputs.items()},
                                              tests[name].directory, entry.outputs.get("alignments"))
            return SetScores(name, t.role, json.loads(entry.output("scores").read_text(encoding="utf-8")))

        return self.runner.parallel([lambda n=n, t=t: score(n, t) for n, t in self.cfg.tests.items()])

    def score_section(self, test: str, systems: list[str]) -> S.ScoreSection:
        cfg, sc = self.cfg, self.cfg.score
        metrics = cfg.tests[test].metrics
        fields = (metrics, tuple(systems), cfg.tgt_lang, cfg.lowercase_test(test), sc.bootstrap, sc.bootstrap_seed,
                  sc.mwe_average, cfg.data.target_lexicon_format)
        aligner = {"mwe_align": S.score_aligner(metrics)}   # the MWE metrics' aligner, in the stage key
        if any(m in DICTIONARY_METRICS for m in metrics):   # LiTER reads the dictionary: its format is a setting
            return S.DictionaryScoreSection(*fields, dictionary_format=cfg.data.dictionary_format, **aligner)
        return S.ScoreSection(*fields, **aligner)

    def score_inputs(self, test: str, systems: list[str], tests: dict[str, CacheEntry],
                     hyps: dict[str, dict[str, Path]]) -> dict[str, Path]:
        """What scoring one test set reads: every hypothesis, the references, the MWE test set, TESLA's data,
        the compositionality of the test set's MWEs (the MWE score by tertile)."""
        cfg, t = self.cfg, self.cfg.tests[test]
        inputs = {f"hyp.{s}": hyps[test][s] for s in systems}
        inputs["reference"] = tests[test].output("reference")
        if "testset" in tests[test].outputs:
            inputs["testset"] = tests[test].output("testset")
        if t.compositionality:
            inputs["compositionality"] = t.compositionality
        if t.mwe_compositionality and "mwe" in t.metrics:   # the MWE score per compositionality tertile
            inputs["mwe_compositionality"] = t.mwe_compositionality
        if cfg.data.target_lexicon and {"tesla-comp", "tesla-01"} & set(t.metrics):
            inputs["target_lexicon"] = cfg.data.target_lexicon
        if "term-use" in t.metrics:   # the given translations: the run's MWE translation table (the hints' source)
            inputs["terms"] = self.mwe_table()
        if "mwe-alts" in t.metrics and cfg.score.mwe_alternatives == "table":   # mwe-alts: the table's translations too
            inputs["mwe_table"] = self.mwe_table()
        if cfg.data.dictionary and any(m in DICTIONARY_METRICS for m in t.metrics):   # LiTER's blocklist
            inputs["dictionary"] = cfg.data.dictionary
        return inputs

    def reports(self, systems: list[str], tests: dict[str, CacheEntry],
                hyps: dict[str, dict[str, Path]]) -> dict[str, Path]:
        """The comparison report of each test set `report` names, published in RUN/report/TEST/:
        test name -> its index.html. MWE frequencies are counted in the corpus's training pairs
        (before augmentation: the data every system shares)."""
        from mwemt.evaluate.compare import publish_report

        cfg, corpus = self.cfg, self.corpus()

        def report(name: str) -> Path:
            inputs = {**self.score_inputs(name, systems, tests, hyps), "source": tests[name].output("source"),
                      "train_src": corpus.output("train_src"), "train_tgt": corpus.output("train_tgt")}
            if cfg.data.dictionary:
                inputs["dictionary"] = cfg.data.dictionary
            if cfg.tests[name].mwe_compositionality:
                inputs["mwe_compositionality"] = cfg.tests[name].mwe_compositionality
            section = S.ReportSection(self.score_section(name, systems), cfg.src_lang, cfg.data.dictionary_format,
                                      cfg.report)
            entry = self.runner.stage("report", name, S.report_stage, config=section, inputs=inputs)
            paths = publish_report(entry.output("report"), self.runner.run_dir / REPORT_DIR / name)
            return paths["index.html"]

        names = reported_tests(cfg, systems)
        return dict(zip(names, self.runner.parallel([lambda n=n: report(n) for n in names])))


# ---------------------------------------------------------------- the commands

def ordered_systems(cfg: ExperimentConfig, systems: list[str] | None = None) -> list[str]:
    """The systems to run, the baseline first (it is always run: the others are tested against it)."""
    names = list(systems or cfg.systems)
    unknown = [s for s in names if s not in cfg.systems]
    if unknown:
        raise MwemtError(f"systems {', '.join(unknown)} are not in the config (it has {', '.join(cfg.systems)})")
    baseline = cfg.score.baseline or names[0]
    return [baseline] + [s for s in names if s != baseline]


def count_stages(cfg: ExperimentConfig, systems: list[str], *, with_tests: bool = True) -> int:
    """How many stages a run of ``systems`` visits (for the [k/N] progress labels)."""
    n_tests = len(cfg.tests) if with_tests else 0
    n = 1 + n_tests                                                     # corpus, test data
    trained = [cfg.systems[cfg.trained_system(s)] for s in systems]
    if any(t.augment in BACKTRANSLATIONS for t in trained):
        n += 4                                                          # the reverse model
    tests_use_table = with_tests and any(set(cfg.table_metrics) & set(t.metrics)
                                         or (t.build is not None and t.build.table == RUN_TABLE)
                                         for t in cfg.tests.values())
    if not cfg.data.mwe_table and (any(cfg.system_needs_table(s) for s in systems) or tests_use_table):
        n += 1                                                          # the MWE translation table
    if with_tests and any(cfg.systems[s].translate.constraints == "judged"
                          and (cfg.systems[s].translate.constraint_ranking != "count"
                               or cfg.systems[s].translate.constraint_forms > 1) for s in systems):
        n += 1                                                          # the table's sense contexts and forms
    for s in systems:
        augment = cfg.systems[cfg.trained_system(s)].augment
        n += 4 + (augment != "none") + (augment == "backtranslation-real") + n_tests   # model, augment, translations
        t = cfg.systems[s].translate
        if with_tests and t.constraints == "judged" and t.constraint_threshold is None:
            n += 1                                                      # judged constraints' validation tuning
        if cfg.systems[cfg.trained_system(s)].train.mwe_loss_weight != 1.0:
            n += 1                                                      # the MWE flags of the weighted loss
    return n + n_tests + (len(reported_tests(cfg, systems)) if with_tests else 0)   # scores, reports


def reported_tests(cfg: ExperimentConfig, systems: list[str]) -> list[str]:
    """The test sets that get a comparison report: those `report` names, and none for a single system (a
    comparison needs a baseline and another system; the scores and the results table are written anyway)."""
    return cfg.report.applies_to(cfg.tests) if len(systems) > 1 else []


def one_system_note(cfg: ExperimentConfig, systems: list[str]) -> str | None:
    """The line that says a run's comparison reports are skipped because it has one system, or None."""
    if len(systems) > 1 or not cfg.report.applies_to(cfg.tests):
        return None
    return (f"mwemt run: one system ({systems[0]}): no comparison report (a comparison needs two or more "
            "systems); the scores and the results table are written as usual")


def check_devices(cfg: ExperimentConfig, systems: list[str]) -> None:
    """Before any stage runs: every system trains on a device this machine has."""
    for system in systems:
        resolve_device(cfg.model_sections(system).train.device,
                       "train.device" + (f" of system {system}" if len(cfg.systems) > 1 else ""))


def run_experiment(cfg: ExperimentConfig, run_dir: str | Path, *, systems: list[str] | None = None,
                   progress: bool = True, log: TextIO | None = None, plot: bool = True,
                   publish: str | Path | None = None, jobs: int = 1) -> dict:
    """Run (or resume) the whole grid; returns the results dictionary (also written to RUN/results.*).

    ``publish``: a directory that gets the results with every hypothesis and reference and the
    commands that rescore them (`mwemt.experiments.publish`). ``jobs``: how many stages run at once
    (independent systems and test sets); the results do not depend on it.
    """
    require_tests(cfg)
    check_targets(run_dir, publish)
    names = ordered_systems(cfg, systems)
    if cfg.executor == "local":   # elsewhere the devices are the compute nodes' (`train.device: auto`)
        check_devices(cfg, names)
    run_dir = Path(run_dir)
    t0 = time.monotonic()
    note = one_system_note(cfg, names)
    if note:
        print(note, file=log if log is not None else sys.stderr, flush=True)
    with Runner(run_dir, config=to_plain(cfg), seed=cfg.seed, total=count_stages(cfg, names), progress=progress,
                log=log if log is not None else sys.stderr, jobs=jobs, executor=cfg.executor,
                executor_settings=cfg.slurm) as runner:
        pipe = Pipeline(runner, cfg)
        tests, _ = runner.parallel([pipe.test_data, pipe.corpus])
        per_system = runner.parallel([lambda s=s: pipe.translations(s, pipe.system_model(s), tests) for s in names])
        hyps: dict[str, dict[str, Path]] = {t: {} for t in cfg.tests}
        for system, translated in zip(names, per_system):
            for test, hyp in translated.items():
                hyps[test][system] = hyp
        scores, reports = runner.parallel([lambda: pipe.scores(names, tests, hyps),
                                           lambda: pipe.reports(names, tests, hyps)])
        results = build_results(scores, name=cfg.name, baseline=names[0], meta=_run_meta(cfg, run_dir, runner, t0),
                                reports={t: str(p.relative_to(runner.run_dir)) for t, p in reports.items()},
                                seed_groups=cfg.seed_groups(names), seed_baselines=cfg.seed_baselines(names),
                                constraints=_constraint_reports(hyps), degenerate=_degenerate(tests, hyps))
        runner.extra["results"] = {k: str(v) for k, v in write_results(run_dir, results, plot=plot).items()}
        if publish is not None:
            publish_run(runner.run_dir, publish, {t: pipe.scored[t] for t in cfg.tests},   # config order
                        reports=results.get("reports"))
            runner.extra["published"] = str(publish)
    return results


def _degenerate(tests: dict[str, CacheEntry], hyps: dict[str, dict[str, Path]]) -> dict[str, dict]:
    """test -> its degenerate lines per system (`count_degenerate`: loops, over-long outputs, appended fragments),
    judged against the test's source text (read from the test-data stage; loops only where it has none)."""
    return {test: count_degenerate(tests[test].outputs.get("source"), tests[test].output("reference"), systems)
            for test, systems in hyps.items()}


def _constraint_reports(hyps: dict[str, dict[str, Path]]) -> dict[str, dict[str, dict]]:
    """system -> test -> the counts of its constrained decoding, from the translate stage's constraints.json
    (written beside the hypotheses by `stages.translate_stage`), for the systems that decode with constraints."""
    out: dict[str, dict[str, dict]] = {}
    for test, systems in hyps.items():
        for system, hyp in systems.items():
            report = Path(hyp).with_name("constraints.json")
            if report.is_file():
                out.setdefault(system, {})[test] = constraint_counts(json.loads(report.read_text(encoding="utf-8")))
    return out


def check_targets(run_dir: str | Path, publish: str | Path | None = None) -> None:
    """Refuse, before any work (and in a dry run), a run directory that could not be made or written and a
    ``publish`` directory that would fail or write into the run (`check_publish_target`)."""
    blocker = file_in_the_way(run_dir)
    if blocker is not None:
        raise MwemtError(f"--run-dir {run_dir}: a part of this path is a file, not a directory: {blocker} (expected "
                         "a directory the run may create, or one an earlier run of this config wrote)")
    refuse_unwritable(run_dir, "--run-dir")
    if publish is not None:   # a publish that would fail (or write into the run) is refused before any work
        check_publish_target(publish, run_dir)


def _run_meta(cfg: ExperimentConfig, run_dir: Path, runner: Runner, t0: float) -> dict:
    return {"config": recorded_path(cfg.source), "run directory": recorded_path(run_dir), "seed": cfg.seed,
            "compute time of all stages": f"{runner.compute_seconds / 60:.1f} min",
            "wall time of this invocation": f"{(time.monotonic() - t0) / 60:.1f} min"}


def train_system(cfg: ExperimentConfig, system: str, workdir: str | Path, *, progress: bool = True,
                 log: TextIO | None = None) -> Path:
    """Run the pipeline of one system up to its trained model; returns WORKDIR/model, a stand-alone copy.

    The same stages, cache, lock and manifest as `run_experiment`: a rerun resumes (an interrupted
    training starts again), and a finished model with unchanged data and settings is not trained again.
    """
    workdir = Path(workdir)
    _check_model_link(workdir / MODEL_LINK)
    check_devices(cfg, [system])
    with Runner(workdir, config=to_plain(cfg), seed=cfg.seed, total=count_stages(cfg, [system], with_tests=False),
                progress=progress, log=log if log is not None else sys.stderr) as runner:
        model = Pipeline(runner, cfg).system_model(system).output("model")
        return publish_model(model, workdir / MODEL_LINK)


def prepare_system(cfg: ExperimentConfig, system: str, workdir: str | Path, *, progress: bool = True,
                   log: TextIO | None = None) -> tuple[FairseqJob, Path, Path]:
    """The data stages of one system (cached), without training: fairseq-train's job, its binarized
    data and the model directory its train stage uses (for printing the fairseq command)."""
    with Runner(Path(workdir), config=to_plain(cfg), seed=cfg.seed, progress=progress,
                log=log if log is not None else sys.stderr) as runner:
        pipe = Pipeline(runner, cfg)
        system = cfg.trained_system(system)
        section, inputs = pipe.model_data(system, pipe.system_files(system))
        directory = runner.directory_for("train", system, inputs=inputs, config=section)
    return section.job, Path(inputs["data"]), directory / "model"


def publish_model(model: Path, link: Path) -> Path:
    """Make ``link`` (e.g. WORKDIR/model) a stand-alone copy of a trained model directory (hard links
    to the train stage's files): it still translates after `mv` or `cp -r` (`publish_model_dir`)."""
    from mwemt.nmt.modeldir import publish_model_dir

    return publish_model_dir(model, link)


def _check_model_link(link: Path) -> None:
    from mwemt.nmt.modeldir import check_published

    check_published(link)
