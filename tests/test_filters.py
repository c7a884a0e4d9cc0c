"""Identification filters learned from annotated data: the pieces, the learning, the saved model,
the annotator and the CLI, on small corpora written here."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from mwemt.formats import read_cupt
from mwemt.preprocess.annotate import AnnotationReport, Annotator, annotate_cupt
from mwemt.preprocess.filters import (
    EntryStats,
    FilterModel,
    ParsedSentence,
    Thresholds,
    configuration_stats,
    ending,
    gap_size,
    learn_filters,
    learn_filters_from_cupt,
    parsed_from_cupt,
    tree_extra_nodes,
)
from mwemt.preprocess.identify import find_candidates, resolve_overlaps
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.records import LexiconEntry, Mwe

# ---------------------------------------------------------------- a small annotated corpus
# Each sentence: words as FORM/LEMMA/UPOS/HEAD (1-based, 0 = root); MWEs as (category, word numbers).
# "give up" is always annotated; "go on" is annotated once in ten co-occurrences (mostly "go on a
# trip": literal); "take decision" is annotated with the noun in the singular only.
GIVE_UP = ("They/they/PRON/2 give/give/VERB/0 up/up/ADP/2 ./././2", [("VPC.full", (2, 3))])
GO_ON_IDIOM = ("Please/please/INTJ/2 go/go/VERB/0 on/on/ADV/2 ./././2", [("VPC.full", (2, 3))])
GO_ON_LITERAL = ("We/we/PRON/2 go/go/VERB/0 on/on/ADP/5 a/a/DET/5 trip/trip/NOUN/2 ./././2", [])
TAKE_DECISION = ("She/she/PRON/2 took/take/VERB/0 the/the/DET/4 decision/decision/NOUN/2 ./././2",
                 [("LVC.full", (2, 4))])


def cupt_text(sentences) -> str:
    lines = ["# global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC PARSEME:MWE"]
    for k, (spec, mwes) in enumerate(sentences, 1):
        words = [w.split("/") for w in spec.split()]
        codes = [[] for _ in words]
        for ident, (cat, idx) in enumerate(mwes, 1):
            codes[idx[0] - 1].append(f"{ident}:{cat}")
            for i in idx[1:]:
                codes[i - 1].append(str(ident))
        lines.append(f"# sent_id = s{k}")
        for i, (form, lemma, upos, head) in enumerate(words, 1):
            deprel = "root" if head == "0" else "dep"
            lines.append("\t".join([str(i), form, lemma, upos, "_", "_", head, deprel, "_", "_",
                                    ";".join(codes[i - 1]) or "*"]))
        lines.append("")
    return "\n".join(lines) + "\n"


def corpus() -> list:
    return [GIVE_UP] * 10 + [GO_ON_IDIOM] + [GO_ON_LITERAL] * 9 + [TAKE_DECISION] * 8


@pytest.fixture
def train_cupt(tmp_path):
    path = tmp_path / "train.cupt"
    path.write_text(cupt_text(corpus()), encoding="utf-8")
    return path


def sentences_of(path) -> list[ParsedSentence]:
    return [parsed_from_cupt(cs) for cs in read_cupt(path)]


# ---------------------------------------------------------------- the pieces


def test_ending_is_what_follows_the_common_prefix():
    assert ending("decisions", "decision") == "s"
    assert ending("Decision", "decision") == ""
    assert ending("mice", "mouse") == "ice"
    assert ending("took", "take") == "ook"


def test_gap_size_counts_tokens_inside_the_span_only():
    assert gap_size((3, 4)) == 0
    assert gap_size((1, 3, 6)) == 3


def test_tree_extra_nodes():
    # 0 <- 1 (root) -> 3 -> 2 ; "1 2" are joined through 3
    heads = (1, -1, 3, 1)
    assert tree_extra_nodes((0, 1), heads) == 0
    assert tree_extra_nodes((1, 2), heads) == 1
    assert tree_extra_nodes((0, 2), heads) == 2
    assert tree_extra_nodes((0, 1), (1, 0)) is None  # a cycle is no tree
    assert tree_extra_nodes((0, 1), (-1, -1)) is None  # two roots


def test_configuration_stats(train_cupt):
    stats = configuration_stats(sentences_of(train_cupt))
    assert stats["take decision"].occurrences == 8 and stats["take decision"].max_gap == 1
    assert stats["take decision"].endings == {"decision": {""}}  # only the singular was annotated
    assert stats["go on"].occurrences == 1 and stats["go on"].max_tree == 0
    assert "give" not in stats


# ---------------------------------------------------------------- judging one candidate


def model(**thresholds) -> FilterModel:
    entries = {"take decision": EntryStats(occurrences=8, annotated=8, literal=0, max_gap=1, max_tree=0,
                                           endings={"decision": {""}}),
               "go on": EntryStats(occurrences=1, annotated=1, literal=9, max_gap=0, max_tree=0)}
    return FilterModel(entries, Thresholds(**thresholds))


def test_each_filter_names_itself():
    forms, lemmas = ["took", "the", "big", "decisions"], ["take", "the", "big", "decision"]
    m = Mwe((0, 3), "take decision")
    assert model(max_gap=3, gap_slack=0).judge(m, forms, lemmas) == ("gap", 0.0)
    assert model(max_gap=3, gap_slack=1).judge(m, forms, lemmas) == (None, 0.9)
    assert model(max_gap=3, inflection=True).judge(Mwe((0, 3), "take decision"), forms, lemmas)[0] == "inflection"
    heads = [-1, 3, 3, 1]  # decision hangs from "the": two outside nodes on the path
    assert model(max_gap=3, tree_slack=0).judge(m, forms, lemmas, heads)[0] == "syntax"
    assert model(max_gap=3, tree_slack=0).judge(m, forms, lemmas, None)[0] is None  # no parse: no check
    reason, rate = model(min_rate=0.5).judge(Mwe((0, 1), "go on"), ["go", "on"], ["go", "on"])
    assert reason == "rate" and rate == pytest.approx(2 / 12)
    # an order never annotated is judged by the entry in its annotated order
    assert model(order=True).judge(Mwe((0, 1), "decision take"), ["decision", "take"], ["decision", "take"])[0] == "order"
    assert model(order=False).judge(Mwe((0, 1), "decision take"), ["decision", "take"],
                                    ["decision", "take"]) == (None, 0.9)
    assert model(min_rate=0.9).judge(Mwe((0, 1), "unknown entry"), ["a", "b"], ["a", "b"]) == (None, None)


def test_turning_filters_off():
    m = model(max_gap=2, order=True, gap_slack=0, tree_slack=1, inflection=True, min_rate=0.4)
    assert m.thresholds.active == ("order", "gap", "inflection", "syntax", "rate")
    off = m.without(["gap", "rate"])
    assert off.thresholds.active == ("order", "inflection", "syntax") and off.thresholds.max_gap == 2
    with pytest.raises(MwemtError, match="unknown filter"):
        m.without(["colour"])


def test_any_order_trie_finds_other_orders_as_derived_entries():
    lex = Lexicon([LexiconEntry(("si", "alleare")), LexiconEntry(("fare", "analisi"))], get_lemmatizer("none"),
                  tokenize_entries=False)
    lemmas = ["alleare", "si", "e", "analisi", "fare"]
    assert find_candidates(lemmas, lex, 0) == []
    found = {(m.indices, m.lemma) for m in find_candidates(lemmas, lex, 0, any_order=True)}
    assert found == {((0, 1), "alleare si"), ((3, 4), "analisi fare")}


def test_overlaps_resolved_by_confidence_when_asked():
    long_ = Mwe((0, 1, 2), "essere in grado", confidence=0.2)
    short = Mwe((0, 1), "essere in", confidence=0.9)
    assert resolve_overlaps([long_, short]) == [long_]
    assert resolve_overlaps([long_, short], by_confidence=True) == [short]


# ---------------------------------------------------------------- learning and using a model


def test_learning_removes_a_mostly_literal_entry_and_keeps_the_rest(train_cupt, tmp_path):
    m = learn_filters_from_cupt(train_cupt, folds=4, repeats=2)
    cv = m.meta["cross_validation"]
    assert m.thresholds.min_rate > 2 / 12  # go on: 1 annotated of 10 co-occurrences
    assert cv["chosen"]["F"] > cv["no_filters_by_max_gap"][str(m.thresholds.max_gap)]["F"]
    assert m.entries["go on"].annotated == 1 and m.entries["go on"].literal == 9
    assert m.meta["source"]["sentences"] == 28
    ann = Annotator(Lexicon([LexiconEntry(("give", "up")), LexiconEntry(("go", "on"))], get_lemmatizer("none"),
                            tokenize_entries=False), lemmatizer="none", max_gap=m.thresholds.max_gap, filters=m)
    sent = ann.annotate_tokens(["we", "give", "up", "and", "go", "on"])
    assert [(x.lemma, x.confidence) for x in sent.mwes] == [("give up", pytest.approx(11 / 12, abs=1e-4))]
    assert [(x.lemma, why) for x, why in sent.rejected] == [("go on", "rate")]
    report = AnnotationReport()
    report.add(sent)
    d = report.to_dict(filters=m.describe())
    assert d["filters"]["removed"]["rate"] == 1 and d["filters"]["candidates_removed"] == 1
    assert "rate" in d["filters"]["active"] and d["filters"]["signature"] == m.signature


def test_saved_model_annotates_exactly_the_same(train_cupt, tmp_path):
    m = learn_filters_from_cupt(train_cupt, folds=4, repeats=1)
    m.save(tmp_path / "f.json")
    back = FilterModel.load(tmp_path / "f.json")
    assert back.fingerprint() == m.fingerprint() and back.thresholds == m.thresholds
    lex = Lexicon(LexiconEntry(tuple(k.split())) for k in m.entries)
    lex.set_lemmatizer(get_lemmatizer("none"))
    a = [s.mwes for _, s in annotate_cupt(Annotator(lex, lemmatizer="none", filters=m), read_cupt(train_cupt))]
    b = [s.mwes for _, s in annotate_cupt(Annotator(lex, lemmatizer="none", filters=back), read_cupt(train_cupt))]
    assert a == b and [[x.confidence for x in s] for s in a] == [[x.confidence for x in s] for s in b]


def test_learning_is_deterministic(train_cupt):
    a = learn_filters_from_cupt(train_cupt, folds=3, repeats=2)
    b = learn_filters_from_cupt(train_cupt, folds=3, repeats=2)
    assert a.fingerprint() == b.fingerprint()


def test_a_tiny_file_keeps_every_filter_off():
    s = ParsedSentence(("give", "up"), ("give", "up"), None, None, (Mwe((0, 1), "give up"),))
    m = learn_filters([s])
    assert m.thresholds.active == () and "skipped" in m.meta["cross_validation"]


def test_load_refuses_what_is_not_a_model(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kind": "something else"}), encoding="utf-8")
    with pytest.raises(InputError, match="not an identification filter model"):
        FilterModel.load(bad)
    bad.write_text("{oops", encoding="utf-8")
    with pytest.raises(InputError, match="bad.json:1"):
        FilterModel.load(bad)
    bad.write_text(json.dumps({"kind": "mwemt-identification-filters", "version": 1,
                               "thresholds": {"max_gap": -1}, "entries": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="malformed filter model"):
        FilterModel.load(bad)


# ---------------------------------------------------------------- the command line


def test_cli_learns_saves_and_reuses_filters(train_cupt, tmp_path, capsys):
    model_path = tmp_path / "train.filters.json"
    assert main(["lexicon", "filters", "--cupt", str(train_cupt), "--out", str(model_path), "--folds", "4",
                 "--repeats", "1"]) == 0
    err = capsys.readouterr().err
    assert "cross-validation" in err and "rate>=" in err
    text = tmp_path / "in.txt"
    text.write_text("we go on a trip\nthey give up\n", encoding="utf-8")
    lex = tmp_path / "train.lex.tsv"   # extracted from the same file: its filters sit next to it
    assert main(["lexicon", "extract", "--cupt", str(train_cupt), "--out", str(lex)]) == 0
    (tmp_path / "train.lex.filters.json").write_bytes(model_path.read_bytes())
    out, rep = tmp_path / "out.txt", tmp_path / "rep.json"
    assert main(["annotate", "-l", str(lex), "--lemmatizer", "none", "--pretokenized", "-e", "wws", "-i", str(text),
                 "-o", str(out), "--report", str(rep)]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == ["we go on a trip", "they give_up"]
    report = json.loads(rep.read_text(encoding="utf-8"))
    assert report["filters"]["removed"]["rate"] == 1 and report["signature"].endswith(
        FilterModel.load(model_path).signature)
    assert main(["annotate", "-l", str(lex), "--lemmatizer", "none", "--pretokenized", "-e", "wws", "-i", str(text),
                 "-o", str(out), "--filters", "none", "--report", str(rep)]) == 0
    assert out.read_text(encoding="utf-8").splitlines() == ["we go_on a trip", "they give_up"]
    assert json.loads(rep.read_text(encoding="utf-8"))["filters"]["active"] == []


def test_cli_turns_one_filter_off_and_rejects_unknown_names(train_cupt, tmp_path, capsys):
    text = tmp_path / "in.txt"
    text.write_text("we go on a trip\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["annotate", "-l", str(train_cupt), "--pretokenized", "-e", "wws", "-i", str(text), "-o", str(out),
                 "--no-filter", "rate", "-q"]) == 0
    assert out.read_text(encoding="utf-8").strip() == "we go_on a trip"
    with pytest.raises(SystemExit) as exc:   # not a filter at all: argparse's choices
        main(["annotate", "-l", str(train_cupt), "-i", str(text), "-o", str(out), "--no-filter", "colour"])
    assert exc.value.code == 2 and "invalid choice: 'colour'" in capsys.readouterr().err
    # a filter of raw-corpus estimates, not of a .cupt lexicon's learned filters
    assert main(["annotate", "-l", str(train_cupt), "-i", str(text), "-o", str(out), "--no-filter", "association"]) == 2
    assert "unknown filter(s) association for a .cupt lexicon" in capsys.readouterr().err
    assert main(["annotate", "-l", str(train_cupt), "-i", str(text), "-o", str(out), "--filters", "none",
                 "--save-filters", str(tmp_path / "x.json")]) == 2


# ---------------------------------------------------------------- confidence in the IOB factor


def test_iob_tags_can_carry_confidence_buckets():
    from mwemt.preprocess.encode import check_iob, decode_iob, encode_iob
    from mwemt.preprocess.subword import project_factors
    from mwemt.records import AnnotatedSentence

    sent = AnnotatedSentence(["she", "gave", "it", "up", "and", "went", "on"], ["she", "give", "it", "up", "and", "go", "on"],
                             [Mwe((1, 3), "give up", confidence=0.95), Mwe((5, 6), "go on")])
    plain = encode_iob(sent)
    assert [t.split("|")[2] for t in plain] == ["O", "B", "O", "I", "O", "B", "I"]
    tagged = encode_iob(sent, buckets=3)
    assert [t.split("|")[2] for t in tagged] == ["O", "B2", "O", "I2", "O", "B", "I"]  # no confidence: plain
    assert decode_iob(tagged) == decode_iob(plain)
    check_iob([t.split("|")[2] for t in tagged], [t.split("|")[1] for t in tagged])
    rows = project_factors([t.split("|") for t in tagged], [["sh", "e"], ["ga", "ve"], ["it"], ["up"], ["and"],
                                                           ["went"], ["on"]], iob="bio")
    assert [r[2] for r in rows] == ["O", "O", "B2", "I2", "O", "I2", "O", "B", "I"]


# ---------------------------------------------------------------- the training pipeline and translate


def _experiment(tmp_path, train_cupt, preprocess: dict):
    from mwemt.experiments.config import config_from_data

    for lang in ("en", "it"):
        (tmp_path / f"c.{lang}").write_text("we go on a trip\nthey give up\n", encoding="utf-8")
    return config_from_data({"data": {"train": "c", "valid": "c", "lexicon": str(train_cupt)},
                             "preprocess": preprocess, "systems": {"iob": {"encoding": "iob"}}}, base_dir=tmp_path)


def test_typed_config_reaches_the_annotator_through_build_annotator(train_cupt, tmp_path):
    from mwemt.experiments.config import ConfigError
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator

    pre = _experiment(tmp_path, train_cupt, {"filters_off": ["inflection"]}).systems["iob"].preprocess
    assert pre.filters == "auto" and pre.max_gap is None and pre.filters_off == ("inflection",)
    config = AnnotatorConfig.of(pre, lang="en", lexicon=(str(train_cupt),))
    ann = build_annotator(config, log=lambda msg: None)
    model = ann.filters
    assert model is not None and "inflection" not in model.thresholds.active
    assert ann.max_gap == model.thresholds.max_gap
    assert build_annotator(config, log=lambda msg: None).filters is model  # learned once per process
    none = build_annotator(AnnotatorConfig(lexicon=(str(train_cupt),), filters="none"))
    assert none.filters is None and none.max_gap == 0
    with pytest.raises(ConfigError, match="preprocess.max_gap: must be at least 0"):
        _experiment(tmp_path, train_cupt, {"max_gap": -1})
    with pytest.raises(ConfigError, match="preprocess.filters_off"):
        _experiment(tmp_path, train_cupt, {"filters_off": ["colour"]})
    with pytest.raises(ConfigError, match="preprocess.filters: file not found"):
        _experiment(tmp_path, train_cupt, {"filters": "missing.json"})


def test_stages_annotate_with_filters_and_the_model_directory_repeats_them(train_cupt, tmp_path):
    """The annotate stage saves the filter model it used; the model directory copies it and
    `model_annotator` (what `mwemt translate` uses) rebuilds the same annotator from it."""
    from mwemt.experiments import stages as S
    from mwemt.experiments.runner import StageContext
    from mwemt.fileio import sha256_file
    from mwemt.nmt.modeldir import FILTERS, read_preprocess
    from mwemt.nmt.train import finish_model_dir
    from mwemt.nmt.translate import model_annotator, saved_filters
    from mwemt.preprocess.annotate import occurrence_confidences

    cfg = _experiment(tmp_path, train_cupt, {"confidence_buckets": 3, "filters_off": ["inflection"]})
    section = S.AnnotateSection("en", "it", "iob", "auto", "source", cfg.systems["iob"].preprocess)
    assert section.filter_inputs(train_cupt) == {}   # learned from the lexicon itself: no other file
    inputs = {f"{split}_{side}": tmp_path / f"c.{lang}" for split in ("train", "valid")
              for side, lang in (("src", "en"), ("tgt", "it"))}
    inputs["lexicon"] = train_cupt
    out = tmp_path / "annotate"
    out.mkdir()
    outputs = S.annotate_stage(StageContext("annotate", "iob", inputs, section, out, 1, progress=False))
    assert outputs["filters"] == "filters.json"
    lines = (out / outputs["train_src"]).read_text(encoding="utf-8").splitlines()
    assert lines[1].split()[1].rsplit("|", 1)[1] == "B2" and "|B" not in lines[0]   # give up kept, go on removed
    report = json.loads((out / "annotate.json").read_text(encoding="utf-8"))
    assert report["counts"]["train"]["removed_by_filter"] == {"rate": 1}
    assert "inflection" not in report["filters"]["active"]

    # the train stage's view: the annotate stage's filter model is an input
    annotation = section.annotator({"lexicon": train_cupt, "filters": out / "filters.json"})
    model_dir, data_bin = tmp_path / "model", tmp_path / "bin"
    model_dir.mkdir()
    data_bin.mkdir()
    for name in ("dict.en.txt", "dict.en.factor1.txt", "dict.en.factor2.txt", "dict.it.txt", "factors.json"):
        (data_bin / name).write_text("x 1\n", encoding="utf-8")
    (tmp_path / "spm.model").write_bytes(b"spm")
    finish_model_dir(model_dir, data_bin=data_bin, src_model=tmp_path / "spm.model", tgt_model=tmp_path / "spm.model",
                     annotation=annotation, encoding="iob", subword_iob="copy", tgt_lang="it", summary={},
                     config={}, seed=1, confidence_buckets=3)
    pre = read_preprocess(model_dir)
    learned = FilterModel.load(out / "filters.json")
    assert pre["filters"]["signature"] == learned.signature and pre["confidence_buckets"] == 3
    assert pre["max_gap"] == learned.thresholds.max_gap
    rebuilt = model_annotator(model_dir, pre)
    assert rebuilt.filters.fingerprint() == learned.fingerprint() and rebuilt.max_gap == pre["max_gap"]
    sent = rebuilt.annotate_tokens(["they", "give", "up", "and", "go", "on"])
    assert [(m.lemma, round(c, 4)) for m, c in occurrence_confidences(sent)] == [("give up", 0.9167)]

    assert saved_filters(model_dir, {"filters": None}) == "none"
    with pytest.raises(MwemtError, match="differs from the filter model"):
        saved_filters(model_dir, {"filters": {"file": FILTERS, "sha256": "0" * 64}})
    with pytest.raises(InputError, match="missing model file"):
        saved_filters(model_dir, {"filters": {"file": "gone.json", "sha256": sha256_file(model_dir / FILTERS)}})
