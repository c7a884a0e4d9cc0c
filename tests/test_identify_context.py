"""Issue 29, items 1 and 2: surface agreement of lexicon matches (no lemmatization artifacts) and
the MWE-in-context classifier for lexicons without annotated data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mwemt.cli import main
from mwemt.errors import InputError
from mwemt.preprocess.annotate import Annotator, AnnotatorConfig, build_annotator
from mwemt.preprocess.identify import find_candidates
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import EXACT, NOMINAL, VERBAL, Lexicon, word_rules
from mwemt.preprocess.mwe_context import (
    FEATURES,
    ContextThresholds,
    Evidence,
    MweContextModel,
    Prf,
    choose_threshold,
    fit,
    label_matches,
    occurrence_features,
)
from mwemt.records import LexiconEntry, Mwe

# entries as OEWN writes them: the category is the WordNet lexicographer file
OEWN_ROWS = [("white goods", "noun.artifact"), ("abandoned ship", "noun.artifact"), ("wine tasting", "noun.group"),
             ("love apple", "noun.plant"), ("plus fours", "noun.artifact"), ("time being", "noun.time"),
             ("take care", "verb.social"), ("ivory tower", "noun.cognition"), ("give up", "verb.cognition"),
             ("point of view", "noun.cognition"), ("a little", "adv.all"), ("big fish", "noun.person"),
             ("head off", "verb.social"), ("make way", "verb.motion")]


def entries(rows=OEWN_ROWS) -> list[LexiconEntry]:
    return [LexiconEntry(tuple(k.split()), category=c) for k, c in rows]


def annotator(surface: bool = True, filters=None) -> Annotator:
    lex = Lexicon(entries(), get_lemmatizer("simplemma", "en"), lang="en", surface_agreement=surface)
    return Annotator(lex, "en", "simplemma", filters=filters)


def found(text: str, surface: bool = True) -> list[tuple[str, str]]:
    a = annotator(surface)
    sent = a.annotate_text(text)
    return [(m.lemma, " ".join(sent.tokens[i] for i in m.indices)) for m in sent.mwes]


# ---------------------------------------------------------------- item 2: surface agreement

ARTIFACTS = [("White best results .", "white goods"),        # best -> good, goods -> good
             ("Abandon ship !", "abandoned ship"),            # abandoned -> abandon
             ("This wine tastes great .", "wine tasting"),    # tasting -> taste
             ("Tom loves apples .", "love apple"),            # the modifier of a compound does not inflect
             ("Six plus four is ten .", "plus fours"),        # fours -> four
             ("What time is it ?", "time being")]             # being -> be


@pytest.mark.parametrize("text,entry", ARTIFACTS)
def test_lemmatization_artifacts_are_not_matched(text, entry):
    # lemmas alone (the old rule) make the match; the surface rule removes it
    assert entry in [name for name, _ in found(text, surface=False)]
    assert found(text) == []


@pytest.mark.parametrize("text,expected", [
    ("He took care of it .", [("take care", "took care")]),          # the verb inflects
    ("She gave up .", [("give up", "gave up")]),
    ("They live in ivory towers .", [("ivory tower", "ivory towers")]),  # the head noun inflects
    ("Two points of view .", [("point of view", "points of view")]),  # head before the preposition
    ("They sell white goods .", [("white goods", "white goods")]),   # as written
    ("For the time being .", [("time being", "time being")]),
    ("He wears plus fours .", [("plus fours", "plus fours")]),
])
def test_valid_inflections_still_match_and_the_name_is_the_entry(text, expected):
    assert found(text) == expected


def test_word_rules_by_part_of_speech():
    lex = Lexicon([], get_lemmatizer("simplemma", "en"))
    assert word_rules(LexiconEntry(("give", "up"), "verb.x"), ["give", "up"]) == (VERBAL, EXACT)
    assert word_rules(LexiconEntry(("ivory", "tower"), "noun.x"), ["ivory", "tower"]) == (EXACT, NOMINAL)
    assert word_rules(LexiconEntry(("point", "of", "view"), "noun.x"), ["point", "of", "view"]) == (NOMINAL, EXACT, EXACT)
    assert word_rules(LexiconEntry(("a", "little"), "adv.all"), ["a", "little"]) == (EXACT, EXACT)
    # a lemma lexicon with a POS per word (mwemt lexicon extract): every word may inflect
    assert word_rules(LexiconEntry(("take", "decision"), "LVC.full", ("VERB", "NOUN")),
                      ["take", "decision"]) == (VERBAL, NOMINAL)
    # no part of speech at all: every word in lemma form may inflect (nouns' way)
    assert word_rules(LexiconEntry(("love", "apple")), ["love", "apple"]) == (NOMINAL, NOMINAL)
    assert lex.surface_agreement


def test_nominal_inflection_must_begin_like_the_lemma():
    # an entry written in lemma form still does not take a suppletive form the lemmatizer merges with it
    lex = Lexicon([LexiconEntry(("common", "good"), "noun.state")], get_lemmatizer("simplemma", "en"))
    a = Annotator(lex, "en", "simplemma")
    assert a.annotate_text("the common best").mwes == []
    assert [m.lemma for m in a.annotate_text("the common good").mwes] == ["common good"]


def test_same_normal_form_picks_the_entry_the_surface_agrees_with():
    # both entries lemmatize to "white good"; each text matches its own entry
    rows = [("white goods", "noun.artifact"), ("white good", "noun.x")]
    lex = Lexicon(entries(rows), get_lemmatizer("simplemma", "en"))
    a = Annotator(lex, "en", "simplemma")
    assert [m.lemma for m in a.annotate_text("white goods").mwes] == ["white goods"]
    assert [m.lemma for m in a.annotate_text("a white good").mwes] == ["white good"]


def test_cupt_lexicons_match_on_lemmas_only():
    # entries of a .cupt lexicon are lemma sequences (not tokenized): no surface rule
    lex = Lexicon([LexiconEntry(("take", "decision"))], get_lemmatizer("none", "en"), tokenize_entries=False)
    assert not lex.surface_agreement
    cands = find_candidates(["take", "a", "decision"], lex, 1, forms=["took", "a", "decisions"])
    assert [m.indices for m in cands] == [(0, 2)]


def test_surface_rule_with_gaps_finds_an_agreeing_later_match():
    lex = Lexicon(entries([("give up", "verb.x")]), get_lemmatizer("simplemma", "en"))
    forms = ["they", "gave", "it", "up"]
    assert [m.indices for m in find_candidates(lex.lemmatizer.lemmatize(forms), lex, 1, forms=forms)] == [(1, 3)]


# ---------------------------------------------------------------- item 1: the classifier

SENTENCES = [  # (text, indices of the annotated MWE or None): "big fish" and "head off" both ways
    ("He is a big fish in this town .", (3, 4)), ("They caught a big fish today .", None),
    ("She is a big fish at the bank .", (3, 4)), ("We ate a big fish for dinner .", None),
    ("Police head off the protest .", (1, 2)), ("Rip my head off now .", None),
    ("They head off the crisis .", (1, 2)), ("Take your head off the table .", None),
    ("Please make way for the car .", (1, 2)), ("He made way too many errors .", None),
] * 3


def tiny_model(threshold: float = 0.5) -> MweContextModel:
    """A classifier trained on the hand-made sentences above (no encoder)."""
    a = annotator()
    rows, ys = [], []
    for text, gold in SENTENCES:
        sent = a.annotate_text(text)
        cands = find_candidates(sent.lemmas, a.lexicon, 0, forms=sent.tokens)
        gold_mwes = [Mwe(gold, "x")] if gold else []
        rows.append(occurrence_features(cands, sent.tokens, sent.lemmas, {}, frozenset({"the", "a", "my", "too"}), 0.5))
        ys += label_matches(cands, gold_mwes)
    mean, scale, w, b = fit(np.vstack(rows), np.asarray(ys, dtype=np.float64), l2=0.1)
    return MweContextModel({"big fish": Evidence(2, 4, 0.5, None, 10)}, ContextThresholds(0, threshold), prior=0.5,
                           function_words={"the", "a", "my", "too"}, mean=mean, scale=scale, weights=w, bias=b,
                           use_encoder=False, meta={"source": {"test": True}})


def test_classifier_separates_the_hand_made_readings():
    model = tiny_model()
    a = annotator(filters=model)
    kept = a.annotate_text("Police head off the protest .")
    assert [m.lemma for m in kept.mwes] == ["head off"] and kept.mwes[0].confidence > 0.5
    literal = a.annotate_text("Rip my head off now .")
    assert literal.mwes == [] and [r for _, r in literal.rejected] == ["mwe-context"]
    assert literal.rejected[0][0].confidence < 0.5       # the removed occurrence keeps its probability
    assert a.annotate_text("He made way too many errors .").mwes == []


def test_threshold_zero_keeps_everything_with_its_probability(tmp_path):
    model = tiny_model()
    loose = model.without(["mwe-context"])
    assert loose.thresholds.min_probability == 0.0 and loose.thresholds.active == ()
    sent = annotator(filters=loose).annotate_text("Rip my head off now .")
    assert [m.lemma for m in sent.mwes] == ["head off"] and sent.mwes[0].confidence < 0.5
    with pytest.raises(Exception, match="unknown filter"):
        model.without(["rate"])


@pytest.mark.parametrize("name", ["m.json", "m.json.gz"])
def test_model_round_trips_with_provenance(tmp_path, name):
    model = tiny_model()
    path = tmp_path / name
    model.save(path)
    back = MweContextModel.load(path)
    assert back.signature == model.signature and back.meta["source"] == {"test": True}
    a, b = annotator(filters=model), annotator(filters=back)
    for text in ("They head off the crisis .", "We ate a big fish for dinner ."):
        x, y = a.annotate_text(text), b.annotate_text(text)
        assert [(m.indices, m.confidence) for m in x.mwes + [r for r, _ in x.rejected]] == \
               [(m.indices, m.confidence) for m in y.mwes + [r for r, _ in y.rejected]]
    from mwemt.preprocess.identification import load_filter_model

    assert load_filter_model(path).signature == model.signature


def test_malformed_model_is_refused(tmp_path):
    p = tmp_path / "bad.json"
    obj = tiny_model().to_json()
    obj["classifier"]["features"] = ["rate"]
    p.write_text(json.dumps(obj))
    with pytest.raises(InputError, match="malformed"):
        MweContextModel.load(p)


def test_features_worked_by_hand():
    forms = ["Rip", "my", "head", "off", "now"]
    lemmas = ["rip", "my", "head", "off", "now"]
    m = Mwe((2, 3), "head off", "verb.social")
    x = dict(zip(FEATURES, occurrence_features([m], forms, lemmas, {"head off": Evidence(1, 3, 0.4, None, 7)},
                                               frozenset({"my", "off"}), prior=0.5)[0]))
    assert x["rate"] == pytest.approx((1 + 2 * 0.5) / (3 + 2))
    assert x["train_seen"] == 1 and x["association"] == 0.4 and x["log_corpus"] == pytest.approx(np.log(8))
    assert x["pos_v"] == 1 and x["pos_n"] == 0 and x["length"] == 2 and x["gap"] == 0
    assert x["function_share"] == 0.5 and x["last_function"] == 1 and x["first_function"] == 0
    assert x["prev_function"] == 1 and x["next_function"] == 0 and x["next_content"] == 1
    assert x["as_written"] == 1 and x["capitalized_all"] == 0 and x["sentence_initial"] == 0


def test_scores_and_threshold_worked_by_hand():
    gold = [Mwe((0, 1), "a b"), Mwe((3, 4, 5), "d e f")]
    prf = Prf()
    prf.add(gold, [Mwe((0, 1), "a b"), Mwe((4, 5), "e f"), Mwe((6, 7), "g h")])
    # exact: 1 of 3; inside one gold MWE: 2 of 3; gold found exactly: 1 of 2
    assert (prf.precision, prf.lenient, prf.recall) == (pytest.approx(1 / 3), pytest.approx(2 / 3), 0.5)
    cands = [Mwe((0, 1), "a b"), Mwe((6, 7), "g h"), Mwe((3, 4, 5), "d e f")]
    scored = [(gold, cands, [0.9, 0.3, 0.6])]
    t, at = choose_threshold(scored, 0.99, [0.2, 0.5, 0.7])
    assert t == 0.5 and (at.pred, at.exact) == (2, 2)      # 0.2 keeps g h (P 2/3); 0.5 is the lowest at P 1


# ---------------------------------------------------------------- the command line


@pytest.fixture
def oewn_lexicon(tmp_path):
    p = tmp_path / "oewn.tsv"
    p.write_text("lemma\tpos\tlexfile\tn_tokens\tsynsets\n"
                 + "".join(f"{k}\t{c[0]}\t{c}\t{len(k.split())}\t0-{c[0]}\n" for k, c in OEWN_ROWS), encoding="utf-8")
    return p


def test_annotate_report_lists_each_occurrence_with_its_probability(tmp_path, oewn_lexicon):
    model = tmp_path / "tiny.mwe-context.json"
    tiny_model().save(model)
    src = tmp_path / "in.en"
    src.write_text("Police head off the protest .\nRip my head off now .\nThey sell white goods .\n", encoding="utf-8")
    rep = tmp_path / "r.json"
    assert main(["annotate", "--lexicon", str(oewn_lexicon), "--mwe-context", str(model), "-i", str(src),
                 "-o", str(tmp_path / "out.iob"), "--report", str(rep), "-q"]) == 0
    r = json.loads(rep.read_text())
    occ = {(o["sentence"], o["name"]): o for o in r["occurrences"]}
    assert occ[(1, "head off")]["kept"] and occ[(1, "head off")]["probability"] > 0.5
    assert not occ[(2, "head off")]["kept"] and occ[(2, "head off")]["probability"] < 0.5
    assert occ[(2, "head off")]["indices"] == [2, 3] and occ[(2, "head off")]["surface"] == "head off"
    assert (3, "white goods") in occ and r["filters"]["removed"]["mwe-context"] == 1
    assert r["signature"].endswith(tiny_model().signature)
    # the same with two workers: sentence numbers count across chunks
    rep2 = tmp_path / "r2.json"
    assert main(["annotate", "--lexicon", str(oewn_lexicon), "--mwe-context", str(model), "-i", str(src),
                 "-o", str(tmp_path / "out2.iob"), "--report", str(rep2), "-q", "--workers", "2"]) == 0
    assert json.loads(rep2.read_text())["occurrences"] == r["occurrences"]


def test_threshold_option_and_bad_values(tmp_path, oewn_lexicon):
    model = tmp_path / "tiny.mwe-context.json"
    tiny_model().save(model)
    src = tmp_path / "in.en"
    src.write_text("Rip my head off now .\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert main(["annotate", "--lexicon", str(oewn_lexicon), "--mwe-context", str(model), "--mwe-threshold", "0",
                 "-e", "wws", "-i", str(src), "-o", str(out), "-q"]) == 0
    assert "head_off" in out.read_text()
    with pytest.raises(SystemExit) as bad:  # refused by the argument parser
        main(["annotate", "--lexicon", str(oewn_lexicon), "--mwe-context", str(model), "--mwe-threshold", "2",
              "-i", str(src), "-o", str(out), "-q"])
    assert bad.value.code == 2
    notmodel = tmp_path / "x.json"
    notmodel.write_text("{}")
    assert main(["annotate", "--lexicon", str(oewn_lexicon), "--mwe-context", str(notmodel),
                 "-i", str(src), "-o", str(out), "-q"]) == 2


def test_auto_uses_the_bundled_model_for_oewn_lexicons_only(tmp_path, oewn_lexicon):
    from mwemt.preprocess.mwe_context import BUNDLED

    if not BUNDLED.is_file():
        pytest.skip("no bundled model")
    a = build_annotator(AnnotatorConfig(lexicon=(str(oewn_lexicon),), mwe_context="auto"), log=lambda _m: None)
    assert isinstance(a.filters, MweContextModel) and a.filters.meta["source"]["inputs"]["dimsum_train"]["sha256"]
    assert a.max_gap == a.filters.thresholds.max_gap
    off = build_annotator(AnnotatorConfig(lexicon=(str(oewn_lexicon),), mwe_context="auto", filters="none"),
                          log=lambda _m: None)
    assert off.filters is None
    lst = tmp_path / "lex.txt"
    lst.write_text("head off\nbig fish\n", encoding="utf-8")
    assert build_annotator(AnnotatorConfig(lexicon=(str(lst),), mwe_context="auto"), log=lambda _m: None).filters is None
    # testset build defaults to auto; annotate to none
    from mwemt.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["testset", "build", "--src", "s", "--tgt", "t", "--lexicon", "l", "-o", "o"])
    assert args.mwe_context == "auto"
    assert parser.parse_args(["annotate", "--lexicon", "l"]).mwe_context == "none"


# ---------------------------------------------------------------- real data (skipped without ../shared)


def test_real_oewn_artifacts_and_inflections(shared):
    a = build_annotator(AnnotatorConfig(lexicon=(str(shared / "lexicons/wordnet-mwe/derived/oewn_english_mwe_lemmas.tsv"),),
                                        filters="none"), log=lambda _m: None)
    for text, entry in ARTIFACTS:
        assert entry not in [m.lemma for m in a.annotate_text(text).mwes], text
    assert "ivory tower" in [m.lemma for m in a.annotate_text("They live in ivory towers .").mwes]
    assert "give up" in [m.lemma for m in a.annotate_text("She gave up .").mwes]


def test_testset_build_keeps_only_matches_above_the_threshold(toy_corpus, tmp_path, capsys):
    src, tgt, _ = toy_corpus
    raw_src = [x[:-2] + x[-1] for x in src]
    (tmp_path / "t.en").write_text("\n".join(raw_src[:80]) + "\n", encoding="utf-8")
    (tmp_path / "t.it").write_text("\n".join(tgt[:80]) + "\n", encoding="utf-8")
    lex = tmp_path / "oewn.tsv"
    lex.write_text("lemma\tpos\tlexfile\tn_tokens\tsynsets\ntake care of\tv\tverb.social\t3\t1-v\n"
                   "red house\tn\tnoun.artifact\t2\t2-n\n", encoding="utf-8")
    model = tmp_path / "tiny.json"
    tiny_model().save(model)
    common = ["testset", "build", "--src", str(tmp_path / "t.en"), "--tgt", str(tmp_path / "t.it"), "--lexicon",
              str(lex), "--samplers", "1", "--cache", str(tmp_path / "c"), "--max-per-type", "0",
              "--mwe-context", str(model)]
    out, rep = tmp_path / "all.jsonl", tmp_path / "all.json"
    assert main([*common, "--mwe-threshold", "0", "-o", str(out), "--report", str(rep), "-q"]) == 0
    from mwemt.formats import read_testset

    mwes = [m for it in read_testset(out) for m in it.mwes]
    assert mwes and all(m.confidence is not None for m in mwes)
    report = json.loads(rep.read_text())
    assert report["identification"]["removed"] == {} and report["identification"]["kept"] >= len(mwes)
    # a threshold above every probability: nothing becomes a test MWE, and the report says why
    threshold = max(m.confidence for m in mwes) + 1e-3
    out2, rep2 = tmp_path / "none.jsonl", tmp_path / "none.json"
    # no item has an MWE left: refused (issue 37), nothing written, and the message says why
    assert main([*common, "--mwe-threshold", f"{threshold:.4f}", "-o", str(out2), "--report", str(rep2), "-q"]) == 2
    assert not out2.exists() and not rep2.exists()
    kept = json.loads(rep.read_text())["identification"]["kept"]
    assert f"identification removed {kept} by mwe-context" in capsys.readouterr().err


def test_test_parts_ignore_the_mwe_reading_probability():
    """P(MWE reading) is not idiomaticity: with the in-context model, the idiomatic part comes from
    compositionality alone (a real but literal MWE such as *high school* gets a high probability)."""
    from types import SimpleNamespace

    from mwemt.preprocess.filters import FilterModel
    from mwemt.preprocess.mwe_context import MweContextModel
    from mwemt.testsets.build import TestsetBuildConfig, _part_rule

    config = TestsetBuildConfig(idiomatic_below=0.3, idiomatic_confidence=0.5)
    reading = _part_rule([], config, SimpleNamespace(filters=object.__new__(MweContextModel)))
    assert reading.min_confidence is None and reading.max_compositionality == 0.3
    learned = _part_rule([], config, SimpleNamespace(filters=object.__new__(FilterModel)))
    assert learned.min_confidence == 0.5
