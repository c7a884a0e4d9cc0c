"""The stage functions of an experiment: each is ``fn(ctx) -> {output name: path}`` (see runner).

They are thin: every step calls the library function that does it (`mwemt.augment`,
`mwemt.preprocess`, `mwemt.nmt`, `mwemt.evaluate`), reading only ``ctx.inputs`` and
``ctx.config``, writing only inside ``ctx.out``. ``ctx.config`` is the stage's own section, a
frozen dataclass defined here next to its stage: it holds exactly the settings the stage reads and
nothing else, no input path, so its canonical serialization plus the hashes of the inputs is the
stage's cache key (a change to one setting reruns only the stages that read it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.experiments.config import BacktranslationOptions, DictionaryOptions, ReportConfig
from mwemt.fileio import iter_parallel, read_lines, write_lines
from mwemt.nmt.config import PrepareConfig
from mwemt.nmt.train import FairseqJob
from mwemt.preprocess.annotate import FACTOR_NAMES, AnnotatorConfig, PreprocessConfig
from mwemt.preprocess.hints import HintConfig, is_hint_encoding
from mwemt.preprocess.subword import SubwordConfig
from mwemt.provenance import portable_path, write_json
from mwemt.sampling import nested_sample_indices, sample_indices
from mwemt.schema import to_plain
from mwemt.testsets.aligned import SpanRules

# ---------------------------------------------------------------- data


@dataclass(frozen=True)
class CorpusSection:
    """Languages, seed and sizes of the training and validation pairs (sizes 0 = everything)."""

    src_lang: str
    tgt_lang: str
    seed: int
    lowercase: bool = False
    train_size: int = 0
    valid_max: int = 0
    rest_max: int = 0
    valid_size: int = 0      # a split TSV only
    test_size: int = 0


def corpus_stage(ctx) -> dict:
    """Training and validation pairs: a deterministic split of a TSV (`mwemt.augment.corpus`), or
    given corpus prefixes; optionally a seeded subsample of the training pairs and lowercasing."""
    from mwemt.augment.corpus import read_corpus, split_tsv, write_corpus

    c: CorpusSection = ctx.config
    src, tgt = c.src_lang, c.tgt_lang
    test: list[tuple[str, str]] = []
    if "tsv" in ctx.inputs:
        split_dir = ctx.out / "split"
        split_tsv(ctx.inputs["tsv"], split_dir, valid_size=c.valid_size, test_size=c.test_size, seed=c.seed,
                  src_lang=src, tgt_lang=tgt)
        train = read_corpus(split_dir / "train", src, tgt)
        valid = read_corpus(split_dir / "valid", src, tgt)
        test = read_corpus(split_dir / "test", src, tgt) if c.test_size else []
    else:
        train = list(iter_parallel(ctx.inputs["train_src"], ctx.inputs["train_tgt"]))
        valid = list(iter_parallel(ctx.inputs["valid_src"], ctx.inputs["valid_tgt"]))
    n_all = len(train)
    rest: list[tuple[str, str]] = []
    if c.train_size > n_all:
        import logging

        logging.getLogger(__name__).warning("data.train_size is %d, but the training data has only %d pairs: "
                                            "training on all %d", c.train_size, n_all, n_all)
    if c.train_size and c.train_size < len(train):
        keep = set(nested_sample_indices(len(train), c.train_size, c.seed))   # nested across sizes
        rest = [p for i, p in enumerate(train) if i not in keep]
        train = [p for i, p in enumerate(train) if i in keep]
        if c.rest_max and c.rest_max < len(rest):
            rest = [rest[i] for i in sample_indices(len(rest), c.rest_max, c.seed + 1)]
    if c.valid_max and c.valid_max < len(valid):
        valid = valid[:c.valid_max]
    if c.lowercase:
        train = [(s.lower(), t.lower()) for s, t in train]
        valid = [(s.lower(), t.lower()) for s, t in valid]
    write_corpus(ctx.out / "train", train, src, tgt)
    write_corpus(ctx.out / "valid", valid, src, tgt)
    # the target side of the training pairs left out by train_size: monolingual text for back-translation;
    # the source side: the real sources of backtranslation-real, the dictionary's context sentences
    write_lines(ctx.out / f"rest.{tgt}", [t for _, t in rest])
    write_lines(ctx.out / f"rest.{src}", [s for s, _ in rest])
    # the held-out test pairs of a split (raw case: each test set lowercases itself)
    write_corpus(ctx.out / "test", test, src, tgt)
    write_json(ctx.out / "corpus.json", {"train_pairs_available": n_all, "train_pairs": len(train),
                                         "valid_pairs": len(valid), "rest_pairs": len(rest),
                                         "test_pairs": len(test), "config": to_plain(c)})
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}",
            "valid_src": f"valid.{src}", "valid_tgt": f"valid.{tgt}", "rest_tgt": f"rest.{tgt}",
            "rest_src": f"rest.{src}", "test_src": f"test.{src}", "test_tgt": f"test.{tgt}"}


@dataclass(frozen=True)
class TestBuildSection:
    """How an MWE test set is built inside the run (`mwemt.testsets.build`)."""

    __test__ = False  # not a pytest class

    src_lang: str
    tgt_lang: str
    seed: int
    preprocess: PreprocessConfig      # the run's: the same MWE identification as the systems'
    lexicon_format: str = "auto"
    lexicon_side: str = "source"
    max_per_type: int = 3
    select: int = 0
    idiomatic_below: float | None = None
    idiomatic_confidence: float | None = 0.5
    alignment_extra: int = 50000
    samplers: int = 3
    span_rules: str = SpanRules().signature()   # the builder's reference span rules: a rule change rebuilds the test


@dataclass(frozen=True)
class ContextTestBuildSection(TestBuildSection):
    """A `TestBuildSection` whose annotator also judges each match with the MWE-in-context classifier
    (`tests.NAME.build.mwe_context`; the model is the ``mwe_context`` input). A class of its own so that
    the key of a build without it stays what it was (`mwemt.schema.to_plain` serializes every field)."""

    __test__ = False  # not a pytest class

    mwe_context: str = "auto"              # auto | bundled | file (the model file is the `mwe_context` input)
    mwe_threshold: float | None = None     # None: the model's own threshold


def build_annotator_config(c: TestBuildSection, inputs: Mapping[str, str | Path]) -> AnnotatorConfig:
    """The annotator of a test build: the run's identification (`lexicon_annotator`), plus the
    MWE-in-context classifier of a `ContextTestBuildSection`."""
    config = lexicon_annotator(c.preprocess, c.src_lang, c.lexicon_format, c.lexicon_side, inputs)
    if isinstance(c, ContextTestBuildSection):
        model = str(inputs["mwe_context"]) if c.mwe_context == "file" else c.mwe_context
        config = replace(config, mwe_context=model, mwe_threshold=c.mwe_threshold)
    return config


@dataclass(frozen=True)
class TestDataSection:
    """How one test set is read: its size limit, case and (TED) annotation settings, or how it is built."""

    lowercase: bool = False
    max_items: int = 0
    annotator: str = "FINAL"
    all_sentences: bool = False
    build: TestBuildSection | None = None
    sample: int = 0          # a seeded sample of this many sentences (0 = all)
    seed: int = 1


def build_testset_stage(ctx, c: TestBuildSection, lowercase: bool):
    """The items of a ``tests.NAME.build`` test: `mwemt testset build` on the test pairs, selected
    against the training pairs; writes README.md (the test's report) and build.json."""
    from mwemt.formats import read_compositionality
    from mwemt.preprocess.annotate import build_annotator
    from mwemt.testsets.align import AlignConfig, default_cache_dir, tokenize_side
    from mwemt.testsets.build import TestsetBuildConfig, build_testset
    from mwemt.testsets.report import render_markdown
    from mwemt.testsets.select import SelectionConfig

    def cased(lines: list[str]) -> list[str]:
        return [x.lower() for x in lines] if lowercase else lines

    src, tgt = cased(read_lines(ctx.inputs["source"])), cased(read_lines(ctx.inputs["reference"]))
    if len(src) != len(tgt):
        raise MwemtError(f"test {ctx.system}: {len(src)} source lines but {len(tgt)} references")
    annotator = build_annotator(build_annotator_config(c, ctx.inputs))
    train = list(iter_parallel(ctx.inputs["train_src"], ctx.inputs["train_tgt"]))
    extra = None
    if c.alignment_extra:
        sample = train[:c.alignment_extra]
        extra = (tokenize_side([s for s, _ in sample], c.src_lang, False),
                 tokenize_side([t for _, t in sample], c.tgt_lang, False))
    config = TestsetBuildConfig(tgt_lang=c.tgt_lang, align=AlignConfig(samplers=c.samplers),
                                selection=SelectionConfig(c.max_per_type, c.select, c.seed),
                                idiomatic_below=c.idiomatic_below, idiomatic_confidence=c.idiomatic_confidence)
    comp = read_compositionality(ctx.inputs["compositionality"]) if "compositionality" in ctx.inputs else None
    rest = read_lines(ctx.inputs["rest_tgt"]) if "rest_tgt" in ctx.inputs else []
    table = None
    if "table" in ctx.inputs:   # `build.table`: completes partial alignments; each MWE's alternatives
        from mwemt.testsets.mwe_table import MweTranslationTable

        table = MweTranslationTable.read(ctx.inputs["table"])
    built = build_testset([(k, s, t) for k, (s, t) in enumerate(zip(src, tgt), 1)], annotator, config,
                          extra=extra, cache_dir=default_cache_dir(), compositionality=comp,
                          training_source=[s for s, _ in train], training_target=[t for _, t in train] + rest,
                          progress=lambda msg: print(f"  {ctx.system}: {msg}", flush=True), table=table)
    with_alts = sum(1 for it in built.items for m in it.mwes if m.alternatives)
    n_mwes = sum(len(it.mwes) for it in built.items)
    notes = [f"Built inside `mwemt run` by `mwemt.testsets.build` from {len(src):,} held-out pairs; "
             f"annotator {annotator.signature}; {built.alignment_signature}.",
             built.selection.summary() + "." if built.selection else "",
             f"MWE translation table {table.signature()}: {with_alts:,} of {n_mwes:,} MWEs carry alternatives."
             if table is not None else "No MWE translation table: the MWEs carry no alternatives."]
    (ctx.out / "README.md").write_text(render_markdown(built.stats, f"MWE test set {ctx.system}", notes),
                                       encoding="utf-8")
    write_json(ctx.out / "build.json", {"config": to_plain(c), "annotator": annotator.signature,
                                        "table": table.signature() if table is not None else None,
                                        "mwes_with_alternatives": with_alts, **built.manifest_fields()})
    return built.items


def testdata_stage(ctx) -> dict:
    """One test set as source lines, reference lines and (for MWE test sets) the JSONL items."""
    from mwemt.formats import read_testset, write_testset

    c: TestDataSection = ctx.config
    items = None
    if c.build is not None:
        items = build_testset_stage(ctx, c.build, c.lowercase)
    elif "testset" in ctx.inputs:
        items = read_testset(ctx.inputs["testset"])
    elif "from_ted" in ctx.inputs:
        from mwemt.testsets.testset import build_ted_testset, read_ted_pairs

        rows = read_ted_pairs(ctx.inputs["from_ted"], annotator=c.annotator)
        ted_src = read_lines(ctx.inputs["source"]) if "source" in ctx.inputs else None
        ted_ref = read_lines(ctx.inputs["reference"]) if "reference" in ctx.inputs else None
        items, report = build_ted_testset(rows, ted_sources=ted_src, ted_references=ted_ref,
                                          all_sentences=c.all_sentences, pairs_name=str(ctx.inputs["from_ted"]))
        write_json(ctx.out / "testset.report.json", report.to_dict())
    if items is not None:
        if c.max_items:
            items = items[:c.max_items]
        items = _sampled(items, c)
        # the text as given where the test set kept it (a built test: its items are Moses tokens), so that
        # systems translate raw text and BLEU/chrF compare detokenized output with raw references
        sources = [it.meta.get("raw_source") or it.source for it in items]
        references = [it.meta.get("raw_reference") or it.reference for it in items]
        write_testset(ctx.out / "testset.jsonl", items)
    else:
        sources = read_lines(ctx.inputs["source"])
        references = read_lines(ctx.inputs["reference"])
        if len(sources) != len(references):
            raise MwemtError(f"test {ctx.system}: {len(sources)} source lines but {len(references)} references")
        if c.max_items:
            sources, references = sources[:c.max_items], references[:c.max_items]
        sources, references = _sampled(sources, c), _sampled(references, c)
    if c.lowercase:
        sources = [s.lower() for s in sources]
    write_lines(ctx.out / "source.txt", sources)
    write_lines(ctx.out / "reference.txt", references)
    out = {"source": "source.txt", "reference": "reference.txt"}
    if items is not None:
        out["testset"] = "testset.jsonl"
    return out


def _sampled(items: list, c: TestDataSection) -> list:
    """A seeded sample of ``c.sample`` items in their original order (all of them when 0 or fewer)."""
    if not c.sample or c.sample >= len(items):
        return items
    keep = sorted(sample_indices(len(items), c.sample, c.seed))
    return [items[i] for i in keep]


# ---------------------------------------------------------------- augmentation

@dataclass(frozen=True)
class DictionarySection:
    """+dictionary: the languages, seed, case, dictionary format and the augmentation's options."""

    src_lang: str
    tgt_lang: str
    seed: int
    lowercase: bool
    dictionary_format: str
    options: DictionaryOptions


def dictionary_stage(ctx) -> dict:
    """+dictionary: training pairs plus MWE dictionary pairs (`mwemt.augment.dictionary`)."""
    from mwemt.augment.dictionary import DictionaryConfig, augment_with_dictionary

    c: DictionarySection = ctx.config
    src, tgt = c.src_lang, c.tgt_lang
    prefix = _link_prefix(ctx, "in", src, tgt)
    o = c.options
    conf = DictionaryConfig(ratio=o.ratio, seed=c.seed, fmt=c.dictionary_format,
                            mwe_only=o.mwe_only, lemmatizer=o.lemmatizer, src_lang=src, tgt_lang=tgt,
                            drop_identical=o.drop_identical, sense_filter=o.sense_filter,
                            sense_min_count=o.sense_min_count, form=o.form,
                            max_sentences_per_pair=o.max_sentences_per_pair, allow_repeat=o.allow_repeat)
    table = None
    if o.sense_filter:
        from mwemt.testsets.mwe_table import MweTranslationTable

        table = MweTranslationTable.read(ctx.inputs["table"])
    pool = None
    if o.form != "entries":   # the pairs the training sample left out, cased as the training pairs
        pool = ctx.out / "_input" / "pool"
        for key, lang in (("rest_src", src), ("rest_tgt", tgt)):
            lines = read_lines(ctx.inputs[key])
            write_lines(Path(f"{pool}.{lang}"), [x.lower() for x in lines] if c.lowercase else lines)
    augment_with_dictionary(ctx.inputs["dictionary"], prefix, ctx.out / "train", conf, progress=ctx.progress,
                            table=table, table_path=ctx.inputs.get("table"), pool_prefix=pool)
    if c.lowercase:
        _lowercase_corpus(ctx.out / "train", src, tgt)
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}", "manifest": "train.manifest.json"}


@dataclass(frozen=True)
class BacktranslationSection:
    """+back-translation: the languages, seed, case, target lexicon format and the augmentation's options."""

    src_lang: str
    tgt_lang: str
    seed: int
    lowercase: bool
    target_lexicon_format: str
    options: BacktranslationOptions


def backtranslation_stage(ctx) -> dict:
    """+back-translation: training pairs plus target-language MWE sentences translated by the reverse
    model (`mwemt.augment.backtranslate`)."""
    from mwemt.augment.backtranslate import (
        BacktranslationConfig,
        NmtReverseModel,
        augment_with_backtranslation,
    )

    c: BacktranslationSection = ctx.config
    o = c.options
    src, tgt = c.src_lang, c.tgt_lang
    prefix = _link_prefix(ctx, "in", src, tgt)
    mono = ctx.inputs["monolingual"]
    if c.lowercase:
        mono = ctx.out / "_input" / "mono.lower.txt"
        write_lines(mono, [x.lower() for x in read_lines(ctx.inputs["monolingual"])])
    translator = NmtReverseModel(ctx.inputs["model"], beam=o.beam, seed=c.seed, batch_size=o.batch_size)
    conf = BacktranslationConfig(ratio=o.ratio, seed=c.seed, tag=o.tag, max_length_ratio=o.max_length_ratio,
                                 max_tokens=o.max_tokens, chunk_size=o.chunk_size,
                                 lexicon_format=c.target_lexicon_format, lemmatizer=o.lemmatizer,
                                 max_gap=o.max_gap, src_lang=src, tgt_lang=tgt)
    augment_with_backtranslation(mono, ctx.inputs["target_lexicon"], prefix, ctx.out / "train", translator, conf,
                                 progress=ctx.progress)
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}", "manifest": "train.manifest.json"}


def backtranslation_real_stage(ctx) -> dict:
    """backtranslation-real: the sentences the back-translation stage selected (its manifest), paired
    with their real sources from the corpus's left-out pairs (`mwemt.augment.backtranslate.
    augment_with_real_translations`)."""
    from mwemt.augment.backtranslate import augment_with_real_translations

    c: BacktranslationSection = ctx.config
    src, tgt = c.src_lang, c.tgt_lang
    prefix = _link_prefix(ctx, "in", src, tgt)
    mono, mono_src = Path(ctx.inputs["monolingual"]), Path(ctx.inputs["monolingual_source"])
    if c.lowercase:   # as the back-translation stage read them
        mono, mono_src = ctx.out / "_input" / "mono.lower.txt", ctx.out / "_input" / "mono_source.lower.txt"
        write_lines(mono, [x.lower() for x in read_lines(ctx.inputs["monolingual"])])
        write_lines(mono_src, [x.lower() for x in read_lines(ctx.inputs["monolingual_source"])])
    augment_with_real_translations(ctx.inputs["bt_manifest"], mono_src, mono, prefix, ctx.out / "train",
                                   src_lang=src, tgt_lang=tgt, tag=c.options.tag)
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}", "manifest": "train.manifest.json"}


@dataclass(frozen=True)
class MweTableSection:
    """The MWE translation table of a run (`mwemt.testsets.mwe_table`): the training pairs aligned
    (eflomal), each source MWE's aligned translation counted, the dictionary's translations added."""

    src_lang: str
    tgt_lang: str
    lexicon_format: str
    lexicon_side: str
    preprocess: PreprocessConfig
    dictionary_format: str = "auto"
    samplers: int = 3


def _aligned_training_pairs(c, inputs):
    """The training pairs with text on both sides, annotated with the lexicon and aligned (eflomal, its cache): what
    the mwe_table and sense-data stages read. Returns (annotator, annotated sources, target tokens, links)."""
    from mwemt.preprocess.annotate import build_annotator
    from mwemt.testsets.align import AlignConfig, align, default_cache_dir, tokenize_side

    annotator = build_annotator(lexicon_annotator(c.preprocess, c.src_lang, c.lexicon_format, c.lexicon_side, inputs))
    pairs = [(s, t) for s, t in iter_parallel(inputs["train_src"], inputs["train_tgt"], allow_empty=True)
             if s.strip() and t.strip()]
    sentences = [annotator.annotate_text(s) for s, _ in pairs]
    tgt = tokenize_side([t for _, t in pairs], c.tgt_lang, c.preprocess.pretokenized)
    links = align([s.tokens for s in sentences], tgt, config=AlignConfig(samplers=c.samplers),
                  cache_dir=default_cache_dir())
    return annotator, sentences, tgt, links


def mwe_table_stage(ctx) -> dict:
    """Annotate the training sources with the lexicon, align the pairs (eflomal, its cache), build
    the table from the alignment (`MweTranslationTable.build_from_alignment`) and add the dictionary."""
    from mwemt.testsets.mwe_table import MweTranslationTable, read_dictionary

    c: MweTableSection = ctx.config
    annotator, sentences, tgt, links = _aligned_training_pairs(c, ctx.inputs)
    table, counts = MweTranslationTable.build_from_alignment(
        sentences, tgt, links, provenance={"built_by": "mwemt run (mwe_table stage)", "annotator": annotator.signature,
                                           "pairs": len(sentences), "config": to_plain(c)})
    n_dict = 0
    if "dictionary" in ctx.inputs:
        n_dict = table.add_dictionary(read_dictionary(ctx.inputs["dictionary"], c.dictionary_format), lang=c.tgt_lang)
    table.write(ctx.out / "table.jsonl")
    write_json(ctx.out / "table.json", {"signature": table.signature(), "alignment": counts,
                                        "dictionary_entries": n_dict, "keys": len(table),
                                        "translations": table.n_translations(), "config": to_plain(c)})
    return {"table": "table.jsonl", "summary": "table.json"}


@dataclass(frozen=True)
class SenseDataSection(MweTableSection):
    """The sense contexts and target forms of a run's MWE table (issue 42; `mwemt.testsets.senses`,
    `mwemt.testsets.forms`): the table stage's annotation and alignment again, every counted occurrence's source
    context kept."""


def sense_data_stage(ctx) -> dict:
    """The mwe_table stage's work again (the same annotation; the alignment from eflomal's cache), keeping the
    source context of every counted occurrence (`SenseContextBuilder`, weights tuned on the training pairs),
    and the training target's forms of the ``table`` input's translations (`FormIndex`). Reads the training
    pairs, the lexicon, the dictionary and the table; never a test set."""
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.testsets.forms import FormIndex
    from mwemt.testsets.mwe_table import MweTranslationTable
    from mwemt.testsets.senses import DictionarySenses, SenseContextBuilder

    c: SenseDataSection = ctx.config
    table = MweTranslationTable.read(ctx.inputs["table"])
    annotator, sentences, tgt, links = _aligned_training_pairs(c, ctx.inputs)
    builder = SenseContextBuilder([s.lemmas for s in sentences])
    recount, _ = MweTranslationTable.build_from_alignment(sentences, tgt, links, observe=builder.observe)
    lem_t = get_lemmatizer("simplemma", c.tgt_lang)
    tgt_lemmas = [[x.casefold() for x in lem_t.lemmatize([w.casefold() for w in t])] for t in tgt]
    senses = (DictionarySenses.read(ctx.inputs["dictionary"], lang=c.tgt_lang, keys=table.keys())
              if "dictionary" in ctx.inputs else None)
    contexts = builder.build(tgt_lemmas, senses, target_lemmatizer=lem_t,
                             provenance={"table": table.signature(), "recounted": recount.signature(),
                                         "pairs": len(sentences)})
    contexts.write(ctx.out / "senses.jsonl.gz")
    forms = FormIndex.build(table, tgt, tgt_lemmas, lemmatizer=lem_t, provenance={"table": table.signature()})
    forms.write(ctx.out / "forms.jsonl.gz")
    write_json(ctx.out / "sense_data.json", {"table": table.signature(), "recounted": recount.signature(),
                                             "senses": contexts.signature(), "forms": forms.signature(),
                                             "tuning": contexts.provenance.get("tuning"),
                                             "dictionary_tuning": contexts.provenance.get("dictionary_tuning")})
    return {"senses": "senses.jsonl.gz", "forms": "forms.jsonl.gz", "summary": "sense_data.json"}


def _link_prefix(ctx, name: str, src: str, tgt: str) -> Path:
    """Give the training files a common prefix inside the stage directory (hard links, or copies)."""
    import os
    import shutil

    d = ctx.out / "_input"
    d.mkdir(parents=True, exist_ok=True)
    for key, lang in (("train_src", src), ("train_tgt", tgt)):
        dst = d / f"{name}.{lang}"
        if dst.exists():
            dst.unlink()
        try:
            os.link(ctx.inputs[key], dst)
        except OSError:
            shutil.copyfile(ctx.inputs[key], dst)
    return d / name


def _lowercase_corpus(prefix: Path, src: str, tgt: str) -> None:
    for lang in (src, tgt):
        p = Path(f"{prefix}.{lang}")
        write_lines(p, [x.lower() for x in read_lines(p)])


# ---------------------------------------------------------------- annotate, subword, prepare, train
# One model's data and training, each step in its own stage directory, so every step is cached by
# the content of its own inputs and the settings it reads: more epochs retrain but reuse the
# annotated, segmented and binarized data.

SPLITS = ("train", "valid")
SIDES = ("src", "tgt")


@dataclass(frozen=True)
class AnnotateSection:
    """How a model's source is annotated: languages, encoding, how the lexicon is read, `preprocess`."""

    src_lang: str
    tgt_lang: str
    encoding: str
    lexicon_format: str
    lexicon_side: str
    preprocess: PreprocessConfig

    def annotator(self, inputs: Mapping[str, str | Path]) -> AnnotatorConfig:
        """The annotator of this section on a stage's input files (`lexicon_annotator`); no lexicon
        for a plain-text system."""
        lexicon = inputs.get("lexicon") if self.encoding != "none" else None
        return lexicon_annotator(self.preprocess, self.src_lang, self.lexicon_format, self.lexicon_side,
                                 {**inputs, "lexicon": lexicon} if lexicon else {})

    def filter_inputs(self, lexicon: str | Path | None) -> dict[str, Path]:
        """The files besides the lexicon that the identification filters come from (`filter_files`)."""
        if lexicon is None or self.encoding == "none":
            return {}
        return filter_files(self.preprocess, self.src_lang, self.lexicon_format, self.lexicon_side, lexicon)


def lexicon_annotator(preprocess: PreprocessConfig, lang: str, lexicon_format: str, lexicon_side: str,
                      inputs: Mapping[str, str | Path]) -> AnnotatorConfig:
    """The annotator of a `preprocess` section on a stage's input files: ``lexicon``, and ``filters``
    / ``raw_corpus`` when the identification filters come from files (`filter_files`)."""
    lexicon = inputs.get("lexicon")
    config = AnnotatorConfig.of(preprocess, lang=lang, lexicon=(lexicon,) if lexicon else (),
                                lexicon_format=lexicon_format, lexicon_side=lexicon_side)
    if lexicon and "filters" in inputs:
        config = replace(config, filters=str(inputs["filters"]))
    if lexicon and "raw_corpus" in inputs:
        config = replace(config, raw_corpus=str(inputs["raw_corpus"]))
    return config


def filter_files(preprocess: PreprocessConfig, lang: str, lexicon_format: str, lexicon_side: str,
                 lexicon: str | Path) -> dict[str, Path]:
    """The files besides the lexicon that the identification filters come from (a saved filter
    model, a raw corpus), as stage inputs: their content is part of the cache key."""
    from mwemt.preprocess.identification import filter_source_files

    config = lexicon_annotator(preprocess, lang, lexicon_format, lexicon_side, {"lexicon": lexicon})
    return filter_source_files(lexicon, config.identification)


def annotate_stage(ctx) -> dict:
    """Source side: MWE annotation in the system's encoding; target side: Moses tokens."""
    import logging

    from tqdm import tqdm

    from mwemt.preprocess.annotate import annotate_pairs, build_annotator, describe_filters

    c: AnnotateSection = ctx.config
    annotator = build_annotator(c.annotator(ctx.inputs), log=logging.getLogger(__name__).info)
    out, stats = {}, {}
    for split in SPLITS:
        src_path = ctx.inputs[f"{split}_src"]
        pairs = iter_parallel(src_path, ctx.inputs[f"{split}_tgt"], allow_empty=True)
        pairs = tqdm(pairs, desc=f"annotate {split}", unit=" lines", disable=not ctx.progress, dynamic_ncols=True)
        done = annotate_pairs(annotator, pairs, c.encoding, c.tgt_lang, c.preprocess.confidence_buckets)
        if not done.source:
            raise InputError(f"no non-empty sentence pairs in the {split} split", src_path)
        for side, lang, lines in (("src", c.src_lang, done.source), ("tgt", c.tgt_lang, done.target)):
            out[f"{split}_{side}"] = f"text/{split}.tok.{lang}"
            write_lines(ctx.out / out[f"{split}_{side}"], lines)
        stats[split] = {"pairs": len(done.source), "dropped_empty": done.dropped_empty, "mwes": done.report.mwes,
                        "sentences_with_mwe": done.report.sentences_with_mwe,
                        "removed_by_filter": dict(sorted(done.report.removed_by_filter.items()))}
        logging.getLogger(__name__).info("annotate %s: %d pairs, %d MWEs, %d empty pairs dropped", split,
                                         len(done.source), done.report.mwes, done.dropped_empty)
    if annotator.filters is not None:   # the model the source went through, for the model directory
        annotator.filters.save(ctx.out / "filters.json")
        out["filters"] = "filters.json"
    write_json(ctx.out / "annotate.json", {"annotator": annotator.signature, "counts": stats,
                                           "filters": describe_filters(annotator.filters)})
    return out


@dataclass(frozen=True)
class HintAnnotateSection:
    """A hint system's annotation (encoding hints / hints-lemma): `annotate` plus the `hints` section
    and the seed that picks the hinted training sentences."""

    annotate: AnnotateSection
    hints: HintConfig
    seed: int


def hint_annotate_stage(ctx) -> dict:
    """Source side: MWE annotation with inline target hints from the MWE translation table (input
    ``hint_table``) on a seeded share of the sentences, only where a hint matches the reference
    (`mwemt.preprocess.hints.annotate_hint_pairs`; `hints.version` 2: denser, dictionary translations
    first, each hinted training pair also once plain); target side: Moses tokens. Writes hints.json
    with the counts (hints by table source, plain copies) and examples of every split."""
    import logging

    from mwemt.preprocess.annotate import build_annotator, describe_filters
    from mwemt.preprocess.hints import annotate_hint_pairs, hint_inserter

    c: HintAnnotateSection = ctx.config
    a = c.annotate
    annotator = build_annotator(a.annotator(ctx.inputs), log=logging.getLogger(__name__).info)
    inserter = hint_inserter(ctx.inputs["hint_table"], a.encoding, c.hints, tgt_lang=a.tgt_lang,
                             lemmatizer=a.preprocess.lemmatizer)
    out, stats, hint_stats = {}, {}, {}
    for split in SPLITS:
        src_path = ctx.inputs[f"{split}_src"]
        pairs = iter_parallel(src_path, ctx.inputs[f"{split}_tgt"], allow_empty=True)
        # version 2's plain copies of the hinted pairs: training only (a validation pair counts once)
        done, report = annotate_hint_pairs(annotator, pairs, a.tgt_lang, inserter, c.seed,
                                           plain_copies=split == "train")
        if not done.source:
            raise InputError(f"no non-empty sentence pairs in the {split} split", src_path)
        for side, lang, lines in (("src", a.src_lang, done.source), ("tgt", a.tgt_lang, done.target)):
            out[f"{split}_{side}"] = f"text/{split}.tok.{lang}"
            write_lines(ctx.out / out[f"{split}_{side}"], lines)
        stats[split] = {"pairs": len(done.source), "dropped_empty": done.dropped_empty, "mwes": done.report.mwes,
                        "sentences_with_mwe": done.report.sentences_with_mwe, "plain_copies": report.plain_copies}
        hint_stats[split] = report.as_dict()
        by_source = ", ".join(f"{n} {label}" for label, n in hint_stats[split]["hint_sources"].items())
        logging.getLogger(__name__).info("hints %s: %d of %d sentences hinted (%d with a matching hint), %d MWEs "
                                         "(%s), %d plain copies", split, report.hinted_sentences, report.sentences,
                                         report.eligible, report.hinted_mwes, by_source, report.plain_copies)
    if annotator.filters is not None:
        annotator.filters.save(ctx.out / "filters.json")
        out["filters"] = "filters.json"
    write_json(ctx.out / "annotate.json", {"annotator": annotator.signature, "counts": stats,
                                           "filters": describe_filters(annotator.filters)})
    write_json(ctx.out / "hints.json", {"hints": inserter.describe(), "seed": c.seed, "splits": hint_stats})
    out["hints"] = "hints.json"
    return out


@dataclass(frozen=True)
class SubwordSection:
    """Sentencepiece of one model: languages, seed, encoding (how many factors) and `subword`."""

    src_lang: str
    tgt_lang: str
    seed: int
    encoding: str
    subword: SubwordConfig


def subword_stage(ctx) -> dict:
    """Sentencepiece trained on this model's annotated training text; factors ride on the pieces."""
    from mwemt.preprocess.subword import SubwordModel, apply_file, frequent_mwe_tokens

    c: SubwordSection = ctx.config
    sub = c.subword
    n = len(FACTOR_NAMES[c.encoding])
    common = {"vocab_size": sub.vocab_size, "model_type": sub.model_type, "seed": c.seed,
              "input_sentence_size": sub.input_sentence_size}
    i = ctx.inputs
    spm = ctx.out / "spm"
    word_pieces: list[str] = []
    if sub.mwe_pieces_min_count:   # joined MWEs of the training source as single pieces
        frequent = frequent_mwe_tokens([i["train_src"]], sub.mwe_pieces_min_count, sub.mwe_pieces_max,
                                       factored=n > 1)
        word_pieces = [t for t, _ in frequent]
        write_json(ctx.out / "mwe_pieces.json", {"min_count": sub.mwe_pieces_min_count, "max": sub.mwe_pieces_max,
                                                 "pieces": len(frequent), "counts": dict(frequent)})
    if sub.joint:
        # the target has one factor: its tokens never contain an unescaped '|', so the surface is the token
        src_sp = tgt_sp = SubwordModel.train([i["train_src"], i["train_tgt"]], factored=n > 1,
                                             word_pieces=word_pieces, **common)
        src_sp.save(spm / "spm")
        models = {"src_model": "spm/spm.model", "tgt_model": "spm/spm.model"}
    else:
        src_sp = SubwordModel.train([i["train_src"]], factored=n > 1, word_pieces=word_pieces, **common)
        src_sp.save(spm / "spm.src")
        tgt_sp = SubwordModel.train([i["train_tgt"]], **common)
        tgt_sp.save(spm / "spm.tgt")
        models = {"src_model": "spm/spm.src.model", "tgt_model": "spm/spm.tgt.model"}
    out = dict(models)
    for split in SPLITS:
        for side, lang, model in (("src", c.src_lang, src_sp), ("tgt", c.tgt_lang, tgt_sp)):
            out[f"{split}_{side}"] = f"text/{split}.sp.{lang}"
            factors = n if side == "src" else 1
            apply_file(model, i[f"{split}_{side}"], ctx.out / out[f"{split}_{side}"], factors=factors,
                       iob=sub.iob if factors > 1 and not is_hint_encoding(c.encoding) else "copy",
                       progress=ctx.progress)
    return out


@dataclass(frozen=True)
class PrepareSection:
    """Binarization of one model's data: languages, encoding (factor names) and `prepare`."""

    src_lang: str
    tgt_lang: str
    encoding: str
    prepare: PrepareConfig


def prepare_stage(ctx) -> dict:
    """Binarize for fairseq (`mwemt.nmt.prepare`), one dictionary per source factor."""
    from mwemt.nmt.prepare import prepare

    c: PrepareSection = ctx.config
    i = ctx.inputs
    names = FACTOR_NAMES[c.encoding]
    prepare({split: (i[f"{split}_src"], i[f"{split}_tgt"]) for split in SPLITS}, ctx.out / "data-bin",
            src_lang=c.src_lang, tgt_lang=c.tgt_lang, joined=c.prepare.joined_dictionary, factors=len(names),
            factor_names=list(names), threshold=c.prepare.threshold, overwrite=True, progress=ctx.progress,
            mwe_flags={"train": i["train_flags"]} if "train_flags" in i else None)
    return {"data": "data-bin"}


@dataclass(frozen=True)
class MweFlagsSection:
    """Which training sentences the MWE-weighted loss weighs (`train.mwe_loss_*`): those with an MWE as
    the lexicon and `preprocess` identify it, all of them or only those with an idiomatic one."""

    src_lang: str
    tgt_lang: str
    lexicon_format: str
    lexicon_side: str
    preprocess: PreprocessConfig
    sentences: str = "any"                # any | idiomatic
    idiomatic_below: float | None = None  # None: the lowest tertile of the scores of the MWE types found


def mwe_flags_stage(ctx) -> dict:
    """One 0/1 flag per training pair, line-aligned with the annotate stage's output: the pairs are
    annotated by the same `annotate_pairs` (so the same empty pairs are dropped), in the IOB encoding
    whatever the system's, and a sentence is flagged when it has an MWE (``any``) or an MWE whose
    predicted compositionality is at or under the threshold (``idiomatic``). `prepare_stage` binarizes
    the flags beside the data for the criterion `mwe_weighted_label_smoothed_cross_entropy`."""
    from mwemt.formats import normalize_mwe, read_compositionality
    from mwemt.preprocess.annotate import annotate_pairs, build_annotator
    from mwemt.preprocess.encode import decode_iob
    from mwemt.testsets.select import lower_tertile

    c: MweFlagsSection = ctx.config
    annotator = build_annotator(lexicon_annotator(c.preprocess, c.src_lang, c.lexicon_format, c.lexicon_side,
                                                  ctx.inputs))
    pairs = iter_parallel(ctx.inputs["train_src"], ctx.inputs["train_tgt"], allow_empty=True)
    done = annotate_pairs(annotator, pairs, "iob", c.tgt_lang)
    sentence_mwes = [{normalize_mwe(m.lemma) for m in decode_iob(line.split())[1]} for line in done.source]
    found = set().union(*sentence_mwes) if sentence_mwes else set()
    threshold, scores = None, {}
    if c.sentences == "idiomatic":
        scores = {normalize_mwe(k): v for k, v in read_compositionality(ctx.inputs["compositionality"]).items()}
        threshold = c.idiomatic_below
        if threshold is None:
            threshold = lower_tertile(scores[t] for t in found if t in scores)
        idiomatic = {t for t in found if t in scores and threshold is not None and scores[t] <= threshold}
        flags = [bool(m & idiomatic) for m in sentence_mwes]
    else:
        flags = [bool(m) for m in sentence_mwes]
    write_lines(ctx.out / "train.flags", ["1" if f else "0" for f in flags])
    write_json(ctx.out / "mwe_flags.json", {
        "annotator": annotator.signature, "sentences": len(flags), "flagged": sum(flags),
        "sentences_with_mwe": sum(1 for m in sentence_mwes if m), "mwe_types_found": len(found),
        "mwe_types_with_score": sum(1 for t in found if t in scores), "idiomatic_below": threshold,
        "config": to_plain(c)})
    return {"train_flags": "train.flags", "summary": "mwe_flags.json"}


@dataclass(frozen=True)
class TrainSection:
    """fairseq-train (`job`) and what the model directory records about the data it was trained on:
    the source annotation (`annotate`) and the IOB mode of the subword step."""

    job: FairseqJob
    annotate: AnnotateSection
    subword_iob: str


def train_stage(ctx) -> dict:
    """fairseq-train, then the model directory that `Translator` loads: dictionaries, subword models,
    lexicon, preprocess.json. An interrupted train stage starts again from an empty directory (the
    runner), not from fairseq's last checkpoint: that resume is not bit-identical (docs/experiments.md)."""
    from mwemt.nmt.train import finish_model_dir, run_fairseq_train

    c: TrainSection = ctx.config
    i = ctx.inputs
    model_dir = ctx.out / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    summary = run_fairseq_train(c.job, i["data"], model_dir, progress=ctx.progress)
    finish_model_dir(model_dir, data_bin=i["data"], src_model=i["src_model"], tgt_model=i["tgt_model"],
                     annotation=c.annotate.annotator(i), encoding=c.annotate.encoding,
                     confidence_buckets=c.annotate.preprocess.confidence_buckets, subword_iob=c.subword_iob,
                     tgt_lang=c.job.tgt_lang, summary=summary, config=to_plain(c), seed=c.job.seed)
    write_json(ctx.out / "training.json", {k: v for k, v in summary.items() if k != "command"})
    return {"model": "model", "summary": "training.json"}


# ---------------------------------------------------------------- translation


@dataclass(frozen=True)
class TranslateSection:
    """Decoding settings of a test-set translation (CPU threads are a run-time parameter, not here)."""

    tgt_lang: str
    beam: int
    batch_size: int
    source_mwes: str = "identified"
    hints: HintConfig | None = None   # a hint model decoded with hints from the `hint_table` input
    constraints: ConstraintSection | None = None   # constrained decoding with the `constraint_table` input


@dataclass(frozen=True)
class ConstraintSection:
    """Lexically constrained decoding with an MWE translation table, forced as the table says
    (`mwemt.nmt.constraints.TableConstraints`)."""

    order: str                       # unordered | ordered | judged (`JudgedConstraintSection`)
    min_count: int = 1
    sources: tuple[str, ...] = ("aligned", "dictionary")

    def options(self, threshold: float | None = None):
        from mwemt.nmt.constraints import ConstraintOptions

        return ConstraintOptions(self.order, min_count=self.min_count, sources=tuple(self.sources),
                                 threshold=threshold)


@dataclass(frozen=True)
class JudgedConstraintSection(ConstraintSection):
    """Judged constraints (`mwemt.nmt.constraints.JudgedConstraints`). A class of its own so that the key of a
    forced-constraints stage stays what it was. ``threshold`` None: the ``constraint_threshold`` input (the
    tuning record of `constraint_tune_stage`, made from the validation split only)."""

    candidates: int = 3
    threshold: float | None = None
    mwe_context: str = "bundled"
    ranking: str = field(default="count", metadata={"omit_default": True})   # issue 42: needs the senses input
    forms: int = field(default=1, metadata={"omit_default": True})           # issue 42: needs the forms input
    acceptance: str = field(default="plain", metadata={"omit_default": True})  # issue 42: plain | guarded

    def options(self, threshold: float | None = None, inputs: Mapping | None = None):
        """The options of this section; ``inputs``: the stage's, which hold the sense contexts and target forms
        (``constraint_senses``, ``constraint_forms``) when the ranking or the forms need them."""
        from mwemt.nmt.constraints import ConstraintOptions

        inputs = inputs or {}
        files = {"senses_file": str(inputs["constraint_senses"]) if "constraint_senses" in inputs else None,
                 "forms_file": str(inputs["constraint_forms"]) if "constraint_forms" in inputs else None}
        return ConstraintOptions("judged", min_count=self.min_count, sources=tuple(self.sources),
                                 candidates=self.candidates, mwe_context=self.mwe_context,
                                 threshold=self.threshold if threshold is None else threshold,
                                 ranking=self.ranking, forms=self.forms, acceptance=self.acceptance, **files)


def translate_stage(ctx) -> dict:
    """A test source translated by a model directory (`mwemt.nmt.translate.Translator`), which
    annotates and segments the raw text exactly as the model's training data was; with constraints,
    through `mwemt.nmt.constraints.constrained_translate` (what `mwemt translate --constraints` runs)."""
    from mwemt.nmt.constraints import constrained_translate, read_threshold
    from mwemt.nmt.translate import Translator

    c: TranslateSection = ctx.config
    lines = read_lines(ctx.inputs["source"])
    translator = Translator.load(ctx.inputs["model"], threads=ctx.params.get("threads") or ctx.threads)
    hints = translator.hint_inserter(ctx.inputs["hint_table"], c.hints) if c.hints is not None else None
    decode = dict(beam=c.beam, batch_size=c.batch_size, source_mwes=c.source_mwes, progress=ctx.progress,
                  source=str(ctx.inputs["source"]), hints=hints)
    out = {}
    if c.constraints is None:
        hyps = translator.translate(lines, **decode)
    else:   # the lines constrained, accepted and rejected, and each line's constraints in its output
        tuned = ctx.inputs.get("constraint_threshold")
        threshold = read_threshold(tuned) if tuned is not None else None
        options = (c.constraints.options(threshold, ctx.inputs) if isinstance(c.constraints, JudgedConstraintSection)
                   else c.constraints.options(threshold))
        hyps, report = constrained_translate(translator, lines, ctx.inputs["constraint_table"], options, **decode)
        write_lines(ctx.out / "constraints.tsv", ["\t".join(" ".join(p) for p in line) for line in report.per_line])
        write_json(ctx.out / "constraints.json", {**report.to_json(), "config": to_plain(c.constraints)})
        out = {"constraints": "constraints.tsv"}   # constraints.json beside it
    write_lines(ctx.out / "hyp.txt", [" ".join(h.split()) for h in hyps])
    return {"hyp": "hyp.txt", **out}


@dataclass(frozen=True)
class ConstraintTuneSection:
    """The threshold of judged constraints, tuned on the validation split (`constraint_tune_stage`)."""

    beam: int
    batch_size: int
    source_mwes: str
    constraints: JudgedConstraintSection
    lowercase: bool = False
    extra: int = field(default=0, metadata={"omit_default": True})   # + left-out pairs with table MWEs
    seed: int = field(default=1, metadata={"omit_default": True})    # which of them (a seeded sample)


def constraint_tune_stage(ctx) -> dict:
    """The judged-constraints threshold (`mwemt.nmt.constraints.tune_threshold`). Its inputs are the model, the
    MWE table and the VALIDATION split (``valid_src``, ``valid_tgt``), with ``extra`` also a seeded sample of
    the pairs the training sample left out (``rest_src``, ``rest_tgt``: training-split pairs no model saw) whose
    source has an MWE of the table: no test set is an input, so none can be read."""
    from mwemt.nmt.constraints import tune_threshold, write_threshold
    from mwemt.nmt.translate import Translator

    c: ConstraintTuneSection = ctx.config
    i = ctx.inputs
    sources, references = read_lines(i["valid_src"]), read_lines(i["valid_tgt"])
    translator = Translator.load(i["model"], threads=ctx.params.get("threads") or ctx.threads)
    added = 0
    if c.extra:
        more_src, more_tgt = _pairs_with_table_mwes(translator, i["rest_src"], i["rest_tgt"], i["constraint_table"],
                                                    c.extra, c.seed)
        sources, references, added = sources + more_src, references + more_tgt, len(more_src)
    record = tune_threshold(translator, sources, references, i["constraint_table"], c.constraints.options(inputs=i),
                            lowercase=c.lowercase, beam=c.beam, batch_size=c.batch_size, source_mwes=c.source_mwes)
    record["validation"] = {"source": portable_path(i["valid_src"]), "reference": portable_path(i["valid_tgt"])}
    if c.extra:
        record["validation"]["left_out_pairs_with_mwes"] = {
            "source": portable_path(i["rest_src"]), "reference": portable_path(i["rest_tgt"]), "asked": c.extra,
            "used": added, "seed": c.seed}
    write_threshold(ctx.out / "threshold.json", record)
    return {"threshold": "threshold.json"}


def _pairs_with_table_mwes(translator, src: Path, tgt: Path, table: Path, n: int, seed: int):
    """Up to ``n`` pairs of ``src``/``tgt`` (a seeded order) whose source has an MWE with a table translation."""
    import random

    from mwemt.nmt.constraints import ConstraintOptions, ForcedConstraints

    sources, targets = read_lines(src), read_lines(tgt)
    if len(sources) != len(targets):
        raise MwemtError(f"{src} has {len(sources)} lines and {tgt} {len(targets)}")
    order = list(range(len(sources)))
    random.Random(seed).shuffle(order)
    finder = ForcedConstraints(translator, table, ConstraintOptions("unordered"))   # the table read once
    picked: list[int] = []
    for k in range(0, len(order), 512):
        chunk = order[k:k + 512]
        found = finder.phrases([sources[j] for j in chunk])
        picked += [j for j, c in zip(chunk, found) if c]
        if len(picked) >= n:
            break
    picked = sorted(picked[:n])
    return [sources[j] for j in picked], [targets[j] for j in picked]


# ---------------------------------------------------------------- scores


@dataclass(frozen=True)
class ScoreSection:
    """One test set's scoring: metrics, systems (the baseline first), language, case, bootstrap.
    ``seed_baselines``: (system, its same-seed baseline) pairs of a grid with seed groups
    (`ExperimentConfig.seed_baselines`), each system also tested against the baseline trained with its
    seed; left out of the key while empty, so that a grid without seed groups keeps its score stages."""

    metrics: tuple[str, ...]
    systems: tuple[str, ...]
    lang: str
    lowercase: bool
    bootstrap: int
    bootstrap_seed: int
    mwe_average: str
    target_lexicon_format: str
    seed_baselines: tuple[tuple[str, str], ...] = field(default=(), metadata={"omit_default": True})
    # the MWE metrics' aligner (`MweAlignSettings.describe` of the default settings, `score_aligner`): in the
    # key, so that a change of aligner scores again; "" (left out of the key) for a test without MWE metrics
    mwe_align: str = field(default="", metadata={"omit_default": True})


def score_aligner(metrics: Sequence[str]) -> str:
    """The `ScoreSection.mwe_align` of a test scored with ``metrics``: the default aligner's signature
    value where a metric reads alignments, else ""."""
    from mwemt.evaluate.mwe_score import MweAlignSettings
    from mwemt.evaluate.registry import MetricOptions, metric_class

    if not any(metric_class(m).uses_alignments for m in metrics):
        return ""
    return MweAlignSettings(MetricOptions().mwe_align).describe()


@dataclass(frozen=True)
class DictionaryScoreSection(ScoreSection):
    """A `ScoreSection` whose metrics read the bilingual dictionary (LiTER, input ``dictionary``): its
    format too. A class of its own so that the key of a score stage without such a metric stays
    what it was (`mwemt.schema.to_plain` serializes every field)."""

    dictionary_format: str = "auto"


def metric_options(c: ScoreSection, inputs: Mapping[str, str | Path]):
    """The `MetricOptions` of a score or report stage: the section's settings and the metrics' files
    (term use's table ``terms``, LiTER's ``dictionary``, the ``mwe_table`` of `score.mwe_alternatives:
    table`). ``mwe`` stays the single-reference score; ``mwe-alts`` credits the alternatives the test
    items carry, and the table's translations where it has one (`mwemt.evaluate.mwe_alts`)."""
    from mwemt.evaluate.registry import MetricOptions

    return MetricOptions(lang=c.lang, lowercase=c.lowercase, mwe_average=c.mwe_average,
                         terms=str(inputs["terms"]) if "terms" in inputs else None,
                         dictionary=str(inputs["dictionary"]) if "dictionary" in inputs else None,
                         mwe_table=str(inputs["mwe_table"]) if "mwe_table" in inputs else None,
                         dictionary_format=getattr(c, "dictionary_format", "auto"))


def score_stage(ctx) -> dict:
    """Every system on one test set with the configured metrics and a paired bootstrap against the
    baseline (`mwemt.evaluate.scoring.score_systems`)."""
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.breakdown import run_breakdown
    from mwemt.evaluate.inputs import load_score_inputs
    from mwemt.evaluate.registry import build_metric
    from mwemt.evaluate.report import format_score_table, score_run_dict
    from mwemt.evaluate.scoring import score_systems
    from mwemt.fileio import write_text

    c: ScoreSection = ctx.config
    inputs = load_score_inputs([(s, ctx.inputs[f"hyp.{s}"]) for s in c.systems], ref=ctx.inputs["reference"],
                               testset=ctx.inputs.get("testset"), lexicon=ctx.inputs.get("target_lexicon"),
                               lexicon_format=c.target_lexicon_format,
                               compositionality=ctx.inputs.get("compositionality"), lang=c.lang)
    options = metric_options(c, ctx.inputs)
    bootstrap = BootstrapSettings(c.bootstrap, c.bootstrap_seed)
    metrics = [build_metric(m, options, inputs) for m in c.metrics]
    inputs, aligned = _given_alignments(metrics, inputs, ctx.out, getattr(c, "mwe_align", ""))
    run = score_systems(inputs, metrics, options, bootstrap=bootstrap)
    scores = score_run_dict(run)
    if c.seed_baselines:
        _same_seed_tests(run, scores, c.seed_baselines, bootstrap)
    if ctx.inputs.get("mwe_compositionality") is not None and "mwe" in c.metrics and inputs.testset is not None:
        scores["compositionality_breakdown"] = run_breakdown(run, inputs, ctx.inputs["mwe_compositionality"], bootstrap)
    write_json(ctx.out / "scores.json", scores)
    write_text(ctx.out / "scores.txt", format_score_table(run))
    return {"scores": "scores.json", "table": "scores.txt", **aligned}


ALIGNMENTS_DIR = "alignments"   # the score stage's alignments/SYSTEM.align.gz


def _given_alignments(built: list, inputs, out: Path, expected: str = ""):
    """The MWE metrics' alignments, made once per system and scored as given: each system's hypotheses
    aligned to the test set's sources by the metrics' aligner (`mwemt.evaluate.mwe_score.hypothesis_alignments`;
    by default the lexical aligner, whose one model per test is learned from the test's sources and
    references, so every system of the test is aligned line by line with the same model), written as
    alignments/SYSTEM.align.gz (`mwemt.evaluate.mwe_score.write_alignments`: the links, sentences the
    aligner skipped, and the aligner's signature) and read back, so that every MWE metric of the test
    scores the very links published with the run (`mwemt score --align FILE` rescores them bit for bit
    without aligning; the lexical aligner would give the same links again, eflomal would not).
    ``expected``: the aligner the score section names (`ScoreSection.mwe_align`), checked. Returns the
    inputs with those alignments and the stage's output entry (none without an aligned MWE metric)."""
    from mwemt.evaluate.mwe_score import ALIGNERS, read_alignments, write_alignments

    metrics = [m for m in built if m.uses_alignments]
    if not metrics or inputs.testset is None:
        return inputs, {}
    aligner = metrics[0]
    if aligner.compat is not None or aligner.align.mode not in ALIGNERS:
        return inputs, {}
    origin = aligner.align.describe()
    differ = [m.key for m in metrics if m.compat is not None or m.align.mode != aligner.align.mode
              or m.align.describe() != origin]
    if differ:   # one alignment file per system serves every MWE metric of the test
        raise MwemtError(f"the MWE metrics {', '.join(m.key for m in metrics)} do not share one aligner "
                         f"({', '.join(differ)} differ from {origin}); score them in separate tests")
    if expected and expected != origin:
        raise MwemtError(f"the score stage's configuration names the aligner {expected}, but its MWE metrics align "
                         f"with {origin}")
    sources = [item.source for item in inputs.testset]
    references = [item.reference for item in inputs.testset]
    systems = []
    for system in inputs.systems:
        links, _ = aligner.align_hypotheses(sources, [aligner.moses_tokens(h) for h in system.hyps], references)
        path = out / ALIGNMENTS_DIR / f"{system.name}.align.gz"
        write_alignments(path, links, origin)
        systems.append(replace(system, alignments=read_alignments(path)))
    return replace(inputs, systems=systems), {"alignments": ALIGNMENTS_DIR}


def _same_seed_tests(run, scores: dict, pairs: tuple[tuple[str, str], ...], bootstrap) -> None:
    """Each system of ``pairs`` tested against its same-seed baseline (the baseline trained with its seed)
    by the paired bootstrap of the table (same resamples), written into its row of ``scores`` as
    ``seed_baseline`` and ``seed_p_value``: what ``mwemt score --paired-bs`` gives with that baseline
    first."""
    from mwemt.evaluate.bootstrap import paired_bootstrap

    index = {name: k for k, name in enumerate(run.systems)}
    by_baseline: dict[str, list[str]] = {}
    for system, baseline in pairs:
        by_baseline.setdefault(baseline, []).append(system)
    for result in run.metrics:
        rows = scores["metrics"][result.key]["systems"]
        for baseline, systems in by_baseline.items():
            tested = paired_bootstrap(result.metric, [result.stats[index[s]] for s in (baseline, *systems)], bootstrap)
            for system, outcome in zip(systems, tested[1:]):
                rows[system].update({"seed_baseline": baseline, "seed_p_value": outcome.p_value})


# ---------------------------------------------------------------- the comparison report


@dataclass(frozen=True)
class ReportSection:
    """One test set's comparison report: the settings of its score stage (so the report's aggregate
    scores are the results table's), the source language and dictionary format, and `report`."""

    score: ScoreSection
    src_lang: str
    dictionary_format: str
    report: ReportConfig


def report_stage(ctx) -> dict:
    """Every system against the baseline on one test set (`mwemt.evaluate.compare`): MWE hit rates by
    bucket (training frequency from the corpus's training pairs), the per-MWE table, examples, word
    accuracy; written as index.html, report.md and report.json in ``report/``."""
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.compare import CompareSettings, compare_systems, load_compare_inputs, write_report
    from mwemt.provenance import manifest

    c: ReportSection = ctx.config
    s, r, i = c.score, c.report, ctx.inputs
    inputs = load_compare_inputs([(name, i[f"hyp.{name}"]) for name in s.systems], ref=i["reference"],
                                 testset=i.get("testset"), src=i["source"], train_src=i["train_src"],
                                 train_tgt=i["train_tgt"], mwe_compositionality=i.get("mwe_compositionality"),
                                 dictionary=i.get("dictionary"), dictionary_format=c.dictionary_format,
                                 tesla_lexicon=i.get("target_lexicon"), tesla_lexicon_format=s.target_lexicon_format,
                                 tesla_compositionality=i.get("compositionality"), lang=s.lang, src_lang=c.src_lang)
    settings = CompareSettings(r.hit_threshold, r.mwe_freq_buckets, r.word_freq_buckets, r.max_gap, r.examples,
                               BootstrapSettings(s.bootstrap, s.bootstrap_seed), c.src_lang)
    options = metric_options(s, i)
    report = compare_systems(inputs, list(s.metrics), options, settings, progress=ctx.progress,
                             provenance=manifest("run report", inputs=i, config=to_plain(c), seed=s.bootstrap_seed))
    if ctx.run_dir is not None:   # name the run's files relative to it: the report may be published elsewhere
        report["inputs"] = {k: _relative(v, ctx.run_dir) for k, v in report["inputs"].items()}
        for record in report["provenance"].get("inputs", {}).values():
            record["path"] = _relative(record["path"], ctx.run_dir)
    write_report(ctx.out / "report", report)
    return {"report": "report"}


def _relative(path: str, base: Path) -> str:
    """A report's input path, relative to the run directory (``../``-paths for inputs outside it), never absolute."""
    return portable_path(Path(path).resolve(), base)
