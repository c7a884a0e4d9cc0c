"""The stage functions of an experiment: each is ``fn(ctx) -> {output name: path}`` (see runner).

They are thin: every step calls the library function that does it (`mwemt.augment`,
`mwemt.preprocess`, `mwemt.nmt`, `mwemt.evaluate`), reading only ``ctx.inputs`` and
``ctx.config`` (never the run-wide ``ctx.seed``: a seed a stage uses is in its config) and writing
only inside ``ctx.out``, so a stage's key fully describes its result.
"""

from __future__ import annotations

import random
from dataclasses import fields
from pathlib import Path

from mwemt.errors import MwemtError
from mwemt.fileio import iter_parallel, read_lines, write_lines
from mwemt.provenance import write_json

# ---------------------------------------------------------------- data


def corpus_stage(ctx) -> dict:
    """Training and validation pairs: a deterministic split of a TSV (`mwemt.augment.corpus`), or
    given corpus prefixes; optionally a seeded subsample of the training pairs and lowercasing."""
    from mwemt.augment.corpus import read_corpus, split_tsv, write_corpus

    c = ctx.config
    src, tgt = c["src_lang"], c["tgt_lang"]
    if "tsv" in ctx.inputs:
        split_dir = ctx.out / "split"
        split_tsv(ctx.inputs["tsv"], split_dir, valid_size=int(c["valid_size"]), test_size=int(c.get("test_size", 0)),
                  seed=int(c["seed"]), src_lang=src, tgt_lang=tgt)
        train = read_corpus(split_dir / "train", src, tgt)
        valid = read_corpus(split_dir / "valid", src, tgt)
    else:
        train = list(iter_parallel(ctx.inputs["train_src"], ctx.inputs["train_tgt"]))
        valid = list(iter_parallel(ctx.inputs["valid_src"], ctx.inputs["valid_tgt"]))
    n_all = len(train)
    size = c.get("train_size")
    rest: list[tuple[str, str]] = []
    if size and int(size) < len(train):
        keep = set(random.Random(int(c["seed"])).sample(range(len(train)), int(size)))
        rest = [p for i, p in enumerate(train) if i not in keep]
        train = [p for i, p in enumerate(train) if i in keep]
        if c.get("rest_max") and int(c["rest_max"]) < len(rest):
            rest = [rest[i] for i in sorted(random.Random(int(c["seed"]) + 1).sample(range(len(rest)),
                                                                                     int(c["rest_max"])))]
    if c.get("valid_max") and int(c["valid_max"]) < len(valid):
        valid = valid[: int(c["valid_max"])]
    if c.get("lowercase"):
        train = [(s.lower(), t.lower()) for s, t in train]
        valid = [(s.lower(), t.lower()) for s, t in valid]
    write_corpus(ctx.out / "train", train, src, tgt)
    write_corpus(ctx.out / "valid", valid, src, tgt)
    # the target side of the training pairs left out by train_size: monolingual text for back-translation
    write_lines(ctx.out / f"rest.{tgt}", [t for _, t in rest])
    write_json(ctx.out / "corpus.json", {"train_pairs_available": n_all, "train_pairs": len(train),
                                         "valid_pairs": len(valid), "rest_pairs": len(rest), "config": c})
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}",
            "valid_src": f"valid.{src}", "valid_tgt": f"valid.{tgt}", "rest_tgt": f"rest.{tgt}"}


def testdata_stage(ctx) -> dict:
    """One test set as source lines, reference lines and (for MWE test sets) the JSONL items."""
    from mwemt.formats import read_testset, write_testset

    c = ctx.config
    lower = bool(c.get("lowercase"))
    items = None
    if "testset" in ctx.inputs:
        items = read_testset(ctx.inputs["testset"])
    elif "from_ted" in ctx.inputs:
        from mwemt.preprocess.testset import build_ted_testset, read_ted_pairs

        rows = read_ted_pairs(ctx.inputs["from_ted"], annotator=c.get("annotator", "FINAL"))
        ted_src = read_lines(ctx.inputs["source"]) if "source" in ctx.inputs else None
        ted_ref = read_lines(ctx.inputs["reference"]) if "reference" in ctx.inputs else None
        items, report = build_ted_testset(rows, ted_sources=ted_src, ted_references=ted_ref,
                                          all_sentences=bool(c.get("all_sentences")),
                                          pairs_name=str(ctx.inputs["from_ted"]))
        write_json(ctx.out / "testset.report.json", report.to_dict())
    if items is not None:
        if c.get("max_items"):
            items = items[: int(c["max_items"])]
        sources = [it.source for it in items]
        references = [it.reference for it in items]
        write_testset(ctx.out / "testset.jsonl", items)
    else:
        sources = read_lines(ctx.inputs["source"])
        references = read_lines(ctx.inputs["reference"])
        if len(sources) != len(references):
            raise MwemtError(f"test {ctx.system}: {len(sources)} source lines but {len(references)} references")
        if c.get("max_items"):
            sources, references = sources[: int(c["max_items"])], references[: int(c["max_items"])]
    if lower:
        sources = [s.lower() for s in sources]
    write_lines(ctx.out / "source.txt", sources)
    write_lines(ctx.out / "reference.txt", references)
    out = {"source": "source.txt", "reference": "reference.txt"}
    if items is not None:
        out["testset"] = "testset.jsonl"
    return out


# ---------------------------------------------------------------- augmentation


def dictionary_stage(ctx) -> dict:
    """+dictionary: training pairs plus MWE dictionary pairs (`mwemt.augment.dictionary`)."""
    from mwemt.augment.dictionary import DictionaryConfig, augment_with_dictionary

    c = ctx.config
    src, tgt = c["src_lang"], c["tgt_lang"]
    prefix = _link_prefix(ctx, "in", src, tgt)
    conf = DictionaryConfig(ratio=float(c.get("ratio", 0.1)), seed=int(c["seed"]), fmt=c.get("format", "auto"),
                            mwe_only=bool(c.get("mwe_only", True)), lemmatizer=c.get("lemmatizer", "simplemma"),
                            src_lang=src, tgt_lang=tgt)
    augment_with_dictionary(ctx.inputs["dictionary"], prefix, ctx.out / "train", conf, progress=ctx.progress)
    if c.get("lowercase"):
        _lowercase_corpus(ctx.out / "train", src, tgt)
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}", "manifest": "train.manifest.json"}


def backtranslation_stage(ctx) -> dict:
    """+back-translation: training pairs plus target-language MWE sentences translated by the reverse
    model (`mwemt.augment.backtranslate`)."""
    from mwemt.augment.backtranslate import (
        BacktranslationConfig,
        NmtReverseModel,
        augment_with_backtranslation,
    )

    c = ctx.config
    src, tgt = c["src_lang"], c["tgt_lang"]
    prefix = _link_prefix(ctx, "in", src, tgt)
    mono = ctx.inputs["monolingual"]
    if c.get("lowercase"):
        mono = ctx.out / "_input" / "mono.lower.txt"
        write_lines(mono, [x.lower() for x in read_lines(ctx.inputs["monolingual"])])
    translator = NmtReverseModel(ctx.inputs["model"], beam=int(c.get("beam", 5)), seed=int(c["seed"]),
                                 batch_size=int(c.get("batch_size", 64)))
    known = {f.name for f in fields(BacktranslationConfig)}
    extra = {k: v for k, v in c.items() if k in known and k not in ("seed", "src_lang", "tgt_lang", "lexicon_format")}
    conf = BacktranslationConfig(**extra, seed=int(c["seed"]), src_lang=src, tgt_lang=tgt,
                                 lexicon_format=c.get("target_lexicon_format", "auto"))
    augment_with_backtranslation(mono, ctx.inputs["target_lexicon"], prefix, ctx.out / "train", translator, conf,
                                 progress=ctx.progress)
    return {"train_src": f"train.{src}", "train_tgt": f"train.{tgt}", "manifest": "train.manifest.json"}


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
# Each wraps one step of `mwemt.nmt.train` (the code `mwemt train` runs), in its own stage directory,
# so every step is cached by the content of its own inputs and the config sections it reads.

NMT_SECTIONS = ("preprocess", "subword", "prepare", "model", "train")
UNUSED_LEXICON = "/lexicon-not-read-by-this-step"


def nmt_config(c: dict, train: tuple[Path, Path], valid: tuple[Path, Path], lexicon: Path | None) -> dict:
    """The resolved `mwemt.nmt.config` for a stage: its own sections from ``c``, defaults for the rest."""
    from mwemt.nmt.config import resolve

    raw = {"name": c.get("name", "nmt"), "seed": int(c.get("seed", 1)), "src_lang": c["src_lang"],
           "tgt_lang": c["tgt_lang"],
           "data": {"train": {"src": str(train[0]), "tgt": str(train[1])},
                    "valid": {"src": str(valid[0]), "tgt": str(valid[1])}}}
    for section in NMT_SECTIONS:
        if c.get(section):
            raw[section] = dict(c[section])
    pre = dict(raw.get("preprocess") or {})
    pre["encoding"] = c.get("encoding", pre.get("encoding", "none"))
    if pre["encoding"] == "none":
        pre["lexicon"] = None
    else:   # subword and prepare never read the lexicon: they get a name that says so, not a file
        pre["lexicon"] = str(lexicon) if lexicon is not None else UNUSED_LEXICON
    raw["preprocess"] = pre
    return resolve(raw)


def annotate_stage(ctx) -> dict:
    """Source side: MWE annotation in the system's encoding; target side: Moses tokens."""
    from mwemt.nmt.train import annotate_corpus

    i = ctx.inputs
    cfg = nmt_config(ctx.config, (i["train_src"], i["train_tgt"]), (i["valid_src"], i["valid_tgt"]),
                     i.get("lexicon"))
    files = annotate_corpus(cfg, ctx.out, progress=ctx.progress)
    return {f"{split}_{side}": path for split, pair in files.items() for side, path in zip(("src", "tgt"), pair)}


def subword_stage(ctx) -> dict:
    """Sentencepiece trained on this system's annotated training text; factors ride on the pieces."""
    from mwemt.nmt.train import subword_corpus

    i = ctx.inputs
    tok = {"train": (i["train_src"], i["train_tgt"]), "valid": (i["valid_src"], i["valid_tgt"])}
    cfg = nmt_config(ctx.config, tok["train"], tok["valid"], None)
    files, src_model, tgt_model = subword_corpus(cfg, ctx.out, tok, progress=ctx.progress)
    out = {f"{split}_{side}": path for split, pair in files.items() for side, path in zip(("src", "tgt"), pair)}
    out.update({"src_model": src_model, "tgt_model": tgt_model})
    return out


def prepare_stage(ctx) -> dict:
    """Binarise for fairseq (`mwemt.nmt.prepare`), one dictionary per source factor."""
    from mwemt.nmt.train import prepare_corpus

    i = ctx.inputs
    seg = {"train": (i["train_src"], i["train_tgt"]), "valid": (i["valid_src"], i["valid_tgt"])}
    cfg = nmt_config(ctx.config, seg["train"], seg["valid"], None)
    return {"data": prepare_corpus(cfg, ctx.out, seg, progress=ctx.progress)}


def train_stage(ctx) -> dict:
    """fairseq-train (resuming from ``checkpoint_last.pt`` after an interruption), then the model
    directory that `Translator` loads: dictionaries, subword models, lexicon, preprocess.json."""
    from mwemt.nmt.train import finish_model_dir, run_fairseq_train

    i = ctx.inputs
    data = i["data"]
    cfg = nmt_config(ctx.config, (data, data), (data, data), i.get("lexicon"))
    model_dir = ctx.out / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    summary = run_fairseq_train(cfg, data, model_dir, progress=ctx.progress)
    finish_model_dir(cfg, model_dir, data, i["src_model"], i["tgt_model"], summary)
    write_json(ctx.out / "training.json", {k: v for k, v in summary.items() if k != "command"})
    return {"model": "model", "summary": "training.json"}


# ---------------------------------------------------------------- translation


def translate_stage(ctx) -> dict:
    """A test source translated by a model directory (`mwemt.nmt.translate.Translator`), which
    annotates and segments the raw text exactly as the model's training data was."""
    from mwemt.nmt.translate import Translator

    c = ctx.config
    lines = read_lines(ctx.inputs["source"])
    translator = Translator.load(ctx.inputs["model"], threads=ctx.params.get("threads"))
    hyps = translator.translate(lines, beam=int(c.get("beam", 5)), batch_size=int(c.get("batch_size", 64)),
                                progress=ctx.progress)
    write_lines(ctx.out / "hyp.txt", [" ".join(h.split()) for h in hyps])
    return {"hyp": "hyp.txt"}


# ---------------------------------------------------------------- scores


def score_stage(ctx) -> dict:
    """Every system on one test set with the configured metrics and a paired bootstrap against the
    baseline (`mwemt.evaluate.scoring.score_systems`)."""
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.inputs import load_score_inputs
    from mwemt.evaluate.registry import MetricOptions
    from mwemt.evaluate.report import format_score_table, score_run_dict
    from mwemt.evaluate.scoring import score_systems
    from mwemt.fileio import write_text

    c = ctx.config
    inputs = load_score_inputs([(s, ctx.inputs[f"hyp.{s}"]) for s in c["systems"]], ref=ctx.inputs["reference"],
                               testset=ctx.inputs.get("testset"), lexicon=ctx.inputs.get("target_lexicon"),
                               lexicon_format=c.get("target_lexicon_format", "auto"),
                               compositionality=ctx.inputs.get("compositionality"), lang=c["lang"])
    options = MetricOptions(lang=c["lang"], lowercase=bool(c.get("lowercase")),
                            mwe_average=c.get("mwe_average", "sentence"))
    run = score_systems(inputs, c["metrics"], options,
                        bootstrap=BootstrapSettings(int(c["bootstrap"]), int(c["bootstrap_seed"])))
    write_json(ctx.out / "scores.json", score_run_dict(run))
    write_text(ctx.out / "scores.txt", format_score_table(run))
    return {"scores": "scores.json", "table": "scores.txt"}
