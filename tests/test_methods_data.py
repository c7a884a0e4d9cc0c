"""The data of the issue-30 MWE methods, on small examples worked by hand: dictionary augmentation built
right (cased, MWE-only, sense-filtered, in context), the backtranslation-real control, joined MWEs as
single subword pieces, and inline target hints (placement, factors, seeded sampling, approximate
matching, translate-time hints from a table only)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mwemt.augment.backtranslate import (
    BacktranslationConfig,
    PrecomputedTranslations,
    augment_with_backtranslation,
    augment_with_real_translations,
)
from mwemt.augment.dictionary import DictionaryConfig, augment_with_dictionary
from mwemt.errors import MwemtError
from mwemt.preprocess.hints import (
    HintConfig,
    HintInserter,
    choose_hinted,
    hint_stream,
    hint_training_lines,
    insert_hints,
    phrase_match,
    words_match,
)
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.records import AnnotatedSentence, Mwe
from mwemt.testsets.mwe_table import MweTranslationTable

FIXTURES = Path(__file__).parent / "fixtures" / "augment"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- dictionary augmentation, built right

@pytest.fixture()
def dict_data(tmp_path):
    _write(tmp_path / "dict.tsv", [
        "take care of\tprendersi cura di; badare a",      # 1: one sense attested (prendersi cura di)
        "Barbarea vulgaris\tBarbarea vulgaris",           # 2: identical sides (a Latin taxon)
        "run\tcorrere",                                   # 3: a single word
        "of course\tgià; certo",                          # 4: "già" is a sense the corpus never uses
        "New York\tNuova York",                           # 5: cased; not in the table
        "give up\trinunciare",                            # 6: attested, and in context below
    ])
    _write(tmp_path / "train.en", ["Take care of yourself.", "Of course, I will.", "I gave up smoking.",
                                   "We live in New York."])
    _write(tmp_path / "train.it", ["Abbi cura di te.", "Certo, lo farò.", "Ho rinunciato al fumo.",
                                   "Viviamo a New York."])
    # the pool: pairs left out of training
    _write(tmp_path / "pool.en", [
        "Please take care of the cat.",       # 1: the MWE and "prenditi cura" ~ "prendersi cura di"
        "I take care of it.",                 # 2: the MWE, but the target has another translation
        "Take care of yourself.",             # 3: a training source: never used
        "She never gives up.",                # 4: give up -> "si arrende" does not match "rinunciare"
        "They gave up the plan.",             # 5: give up -> "rinunciato" matches "rinunciare"
        "Of course!",                         # 6: of course -> certo
    ])
    _write(tmp_path / "pool.it", [
        "Per favore prenditi cura del gatto.",
        "Me ne occupo io.",
        "Abbi cura di te stesso.",
        "Lei non si arrende mai.",
        "Hanno rinunciato al piano.",
        "Certo!",
    ])
    table = MweTranslationTable()
    table.add("take care of", ["prendersi", "cura"], 3)
    table.add("of course", ["certo"], 2)
    table.add("give up", ["rinunciare", "a"], 1)
    table.add("give up", ["arrendersi"], 1, "dictionary")   # not aligned: does not attest
    table.write(tmp_path / "table.jsonl")
    return tmp_path


def _dict(d: Path, out: str, **kw) -> dict:
    config = DictionaryConfig(**{"ratio": 2.0, "seed": 1, "mwe_only": True, "drop_identical": True, **kw})
    table = MweTranslationTable.read(d / "table.jsonl") if kw.get("sense_filter") else None
    return augment_with_dictionary(d / "dict.tsv", d / "train", d / out, config, progress=False, table=table,
                                   table_path=d / "table.jsonl" if table else None,
                                   pool_prefix=d / "pool" if kw.get("form", "entries") != "entries" else None)


def test_dictionary_keeps_cased_mwe_entries_and_drops_identical_sides(dict_data):
    m = _dict(dict_data, "a", allow_repeat=False)
    added = set(zip(_lines(dict_data / "a.en")[4:], _lines(dict_data / "a.it")[4:]))
    assert m["counts"]["identical_sides"] == 1 and m["counts"]["single_word_source"] == 1
    assert ("New York", "Nuova York") in added                       # written as the dictionary writes it
    assert not any(s == "run" or s == "Barbarea vulgaris" for s, _ in added)
    assert ("take care of", "badare a") in added and ("of course", "già") in added   # no sense filter here


def test_sense_filter_keeps_only_translations_the_table_attests_by_alignment(dict_data):
    m = _dict(dict_data, "b", sense_filter=True, allow_repeat=False)
    added = set(zip(_lines(dict_data / "b.en")[4:], _lines(dict_data / "b.it")[4:]))
    assert added == {("take care of", "prendersi cura di"), ("of course", "certo"), ("give up", "rinunciare")}
    assert m["counts"]["not_attested"] == 3           # badare a, già, Nuova York (dictionary-only entries do not count)
    assert m["ratio"]["requested_pairs"] == 8 and m["ratio"]["shortfall"] == 5 and m["ratio"]["achieved"] == 0.75


def test_context_sentences_contain_the_mwe_and_its_translation_and_are_not_training_data(dict_data):
    m = _dict(dict_data, "c", sense_filter=True, form="sentences", allow_repeat=False)
    added = list(zip(_lines(dict_data / "c.en")[4:], _lines(dict_data / "c.it")[4:]))
    assert sorted(added) == sorted([("Please take care of the cat.", "Per favore prenditi cura del gatto."),
                                    ("They gave up the plan.", "Hanno rinunciato al piano."),
                                    ("Of course!", "Certo!")])
    train = set(_lines(dict_data / "train.en"))
    assert not any(s in train for s, _ in added)
    assert m["counts"]["pool_in_training"] == 1 and m["counts"]["context_sentences"] == 3
    assert sorted(p[2] for p in m["synthetic"]["pairs"]) == [1, 5, 6]          # pool lines
    assert m["report"]["sentence_pairs"] == 3 and m["report"]["entry_pairs"] == 0
    assert {e["source"] for e in m["report"]["examples"]} == {s for s, _ in added}
    assert set(m["inputs"]) >= {"table", "pool_en", "pool_it"}


def test_context_sentences_per_pair_are_capped(dict_data):
    m = _dict(dict_data, "d", sense_filter=True, form="both", max_sentences_per_pair=1, allow_repeat=False)
    assert m["report"]["entry_pairs"] == 3 and m["report"]["sentence_pairs"] == 3
    with pytest.raises(MwemtError, match="pool"):
        augment_with_dictionary(dict_data / "dict.tsv", dict_data / "train", dict_data / "e",
                                DictionaryConfig(form="sentences"), progress=False)
    with pytest.raises(MwemtError, match="table"):
        augment_with_dictionary(dict_data / "dict.tsv", dict_data / "train", dict_data / "e",
                                DictionaryConfig(sense_filter=True), progress=False)


# ---------------------------------------------------------------- backtranslation-real

def test_backtranslation_real_uses_the_same_selection_with_the_real_sources(tmp_path):
    mono = FIXTURES / "mono.it"
    n = len(_lines(mono))
    real = _write(tmp_path / "mono.en", [f"real source {k}" for k in range(1, n + 1)])
    config = BacktranslationConfig(ratio=0.25, seed=1, tag="<BT>", max_gap=1)
    bt = augment_with_backtranslation(mono, FIXTURES / "it_mwe.txt", FIXTURES / "train", tmp_path / "bt",
                                      PrecomputedTranslations(mono, FIXTURES / "mono.bt.en"), config, progress=False)
    m = augment_with_real_translations(tmp_path / "bt.manifest.json", real, mono, FIXTURES / "train", tmp_path / "real")
    k = bt["ratio"]["training_pairs"]
    bt_tgt, real_tgt = _lines(tmp_path / "bt.it"), _lines(tmp_path / "real.it")
    assert real_tgt == bt_tgt and _lines(tmp_path / "real.en")[:k] == _lines(tmp_path / "bt.en")[:k]
    assert [p[1:] for p in m["synthetic"]["pairs"]] == [p[1:] for p in bt["synthetic"]["pairs"]]
    assert _lines(tmp_path / "real.en")[k:] == [f"<BT> real source {p[1]}" for p in bt["synthetic"]["pairs"]]
    assert _lines(tmp_path / "real.en")[k:] != _lines(tmp_path / "bt.en")[k:]
    # another monolingual file than the one the back-translation selected from is refused
    other = _write(tmp_path / "other.it", _lines(mono)[::-1])
    with pytest.raises(MwemtError, match="not the monolingual text"):
        augment_with_real_translations(tmp_path / "bt.manifest.json", real, other, FIXTURES / "train", tmp_path / "x")


# ---------------------------------------------------------------- words-with-spaces as single pieces

def _mwemt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwemt", *args], capture_output=True, text=True, check=False)


def test_take_care_of_is_one_piece_after_subword_train_and_apply(tmp_path):
    words = "the cat dog house tree river stone water fire light night day car road book".split()
    lines = [f"I will take_care_of the {w} ." for w in words] + \
            [f"the {a} and the {b} walked_off together ." for a in words for b in words[:6]] + \
            [f"we take care of a {w} and go" for w in words]
    corpus = _write(tmp_path / "train.wws.en", lines)
    test = _write(tmp_path / "test.en", ["She will take_care_of it .", "He took_care_of retake_care_of ."])
    for name, extra in (("plain", []), ("mwe", ["--mwe-pieces-min-count", "2"])):
        r = _mwemt("subword", "train", "--input", str(corpus), "--model-prefix", str(tmp_path / name),
                   "--vocab-size", "300", "-q", *extra)
        assert r.returncode == 0, r.stderr
        r = _mwemt("subword", "apply", "--model", str(tmp_path / f"{name}.model"), "-i", str(test),
                   "-o", str(tmp_path / f"{name}.sp"), "-q")
        assert r.returncode == 0, r.stderr
    plain, mwe = _lines(tmp_path / "plain.sp"), _lines(tmp_path / "mwe.sp")
    assert "▁take_care_of" not in plain[0].split()                # sentencepiece alone splits it at '_'
    assert "▁take_care_of" in mwe[0].split()                      # one piece, a whole word
    assert "▁took_care_of" not in mwe[1].split()                  # seen once: below the frequency
    assert mwe[1].split()[-3] != "▁retake_care_of" and "▁retake" not in mwe[1]   # only at a word start
    manifest = json.loads((tmp_path / "mwe.manifest.json").read_text())
    assert "▁take_care_of" in manifest["config"]["user_defined_symbols"]
    assert "▁walked_off" in manifest["config"]["user_defined_symbols"]
    r = _mwemt("subword", "decode", "--model", str(tmp_path / "mwe.model"), "-i", str(tmp_path / "mwe.sp"), "-q")
    assert r.stdout.splitlines() == _lines(test)


# ---------------------------------------------------------------- inline hints

def _two_mwe_sentence() -> AnnotatedSentence:
    tokens = "She took care of the dog and gave up smoking".split()
    return AnnotatedSentence(tokens, [t.lower() for t in tokens],
                             [Mwe((1, 2, 3), "take care of"), Mwe((7, 8), "give up")])


def test_hints_follow_their_mwe_with_factors_0_1_2():
    sent = _two_mwe_sentence()
    line = insert_hints(sent, {0: ("prendersi", "cura", "di"), 1: ("rinunciare",)})
    assert line == ["She|0", "took|1", "care|1", "of|1", "prendersi|2", "cura|2", "di|2", "the|0", "dog|0",
                    "and|0", "gave|1", "up|1", "rinunciare|2", "smoking|0"]
    # only the second MWE hinted: the first one's words stay 0
    assert hint_stream(" ".join(insert_hints(sent, {1: ("rinunciare", "a")}))) == \
        ["0"] * 7 + ["1", "1", "2", "2", "0"]
    # a gapped MWE gets its hint after its last word; a bar in a word is escaped
    gapped = AnnotatedSentence(["turn", "it|x", "off"], ["turn", "it|x", "off"], [Mwe((0, 2), "turn off")])
    assert insert_hints(gapped, {0: ("spegnere",)}) == ["turn|1", "it&#124;x|0", "off|1", "spegnere|2"]


def test_hint_factors_are_copied_to_every_piece(tmp_path):
    from mwemt.preprocess.subword import SubwordModel, apply_file

    lines = [" ".join(insert_hints(_two_mwe_sentence(), {0: ("prendersi", "cura", "di"), 1: ("rinunciare",)}))] * 40
    factored = _write(tmp_path / "train.hints.en", lines + ["a|0 b|0 c|0 d|0 e|0 f|0 g|0 h|0"] * 5)
    model = SubwordModel.train([factored], vocab_size=300, factored=True)
    model.save(tmp_path / "spm")
    apply_file(model, factored, tmp_path / "out.sp", factors=2, iob="copy", progress=False)
    first = _lines(tmp_path / "out.sp")[0].split()
    pieces = [p.rsplit("|", 1) for p in first]
    assert "".join(p for p, _ in pieces).replace("▁", " ").split() == [t.rsplit("|", 1)[0] for t in lines[0].split()]
    # every piece of a word carries that word's factor: the pieces of "rinunciare" are all 2
    word_factors = [t.rsplit("|", 1)[1] for t in lines[0].split()]
    k = -1
    for piece, factor in pieces:
        k += piece.startswith("▁")
        assert factor == word_factors[k]


def test_hint_factor_streams_binarize_for_the_factored_task(tmp_path):
    from mwemt.nmt.prepare import prepare

    src = _write(tmp_path / "train.sp.en", ["▁She|0 ▁took|1 ▁care|1 ▁prendersi|2 ▁the|0", "▁a|0 ▁dog|0"])
    tgt = _write(tmp_path / "train.sp.it", ["▁Si ▁prese ▁cura", "▁un ▁cane"])
    prepare({"train": (src, tgt), "valid": (src, tgt)}, tmp_path / "bin", src_lang="en", tgt_lang="it",
            factors=2, factor_names=["word", "hint"], progress=False)
    from mwemt.nmt.modeldir import factor_lang

    symbols = {line.split()[0] for line in _lines(tmp_path / "bin" / f"dict.{factor_lang('en', 1)}.txt")}
    assert {"0", "1", "2"} <= symbols


def test_approximate_matching_allows_inflection_not_other_words():
    lem = get_lemmatizer("simplemma", "it").lemma
    assert words_match("occhio", "occhi") and words_match("Prendere", "prende")     # the hint word less 3 letters
    assert not words_match("avanzare", "avanti") and not words_match("di", "del") and not words_match("cane", "gatto")
    assert not words_match("per", "perché")                                       # short words: exact only
    assert not words_match("alzarsi", "alzi") and words_match("alzarsi", "alzi", lem)   # the same lemma
    assert not words_match("prendersi", "prenditi") and words_match("prendersi", "prenditi", lem)
    assert not words_match("avanzare", "avanti", lem)
    ref = "Lei si prende cura del cane .".split()
    assert phrase_match(("prendersi", "cura", "di"), ref) == (2, 3)     # content words; "di" vs "del" not needed
    assert phrase_match(("badare", "a"), ref) is None
    assert phrase_match(("a", "proposito"), "A proposito , sì".split()) == (1, 1)
    assert phrase_match(("di", "solito"), "di solito no".split()) == (1, 1)
    assert phrase_match(("in", "su"), "guarda in su".split()) == (1, 2)   # short words only: exact run
    assert phrase_match(("in", "su"), "guarda su in".split()) is None
    assert phrase_match(("alzarsi",), "Si alzi ora !".split(), lem) == (1, 1)


def _table() -> MweTranslationTable:
    t = MweTranslationTable()
    t.add("take care of", ["prendersi", "cura", "di"], 5)
    t.add("take care of", ["badare", "a"], 2)
    t.add("give up", ["rinunciare"], 3)
    return t


def test_training_hints_only_where_a_translation_matches_the_reference():
    inserter = HintInserter(_table())
    sent = _two_mwe_sentence()
    hints = inserter.training_hints(sent, "Lei badava al cane e ha smesso di fumare".split())
    assert hints == {0: ("badare", "a")}             # the translation the reference uses; give up: none matches
    lemma = HintInserter(_table(), form="lemma", lemmatizer=get_lemmatizer("simplemma", "it"))
    assert lemma.test_hints(sent)[0][0] == "prendere"   # the target-lemma variant: prendersi -> prendere


def test_the_hinted_share_is_seeded():
    eligible = list(range(0, 1000, 2))                      # 500 sentences with a matching hint
    a, b, c = (choose_hinted(eligible, 1000, 0.10, s) for s in (1, 1, 2))
    assert len(a) == 100 and a == b and a != c and a <= set(eligible)
    assert choose_hinted(eligible[:30], 1000, 0.10, 1) == set(eligible[:30])   # fewer than 10%: all of them
    sents = [_two_mwe_sentence() for _ in range(40)]
    refs = ["Lei si prese cura del cane e rinunciò al fumo".split()] * 40
    lines, report = hint_training_lines(sents, refs, HintInserter(_table(), HintConfig(rate=0.1)), seed=3)
    hinted = [k for k, line in enumerate(lines) if "2" in hint_stream(line)]
    assert len(hinted) == 4 and report.hinted_sentences == 4 and report.eligible == 40
    again, _ = hint_training_lines(sents, refs, HintInserter(_table(), HintConfig(rate=0.1)), seed=3)
    assert again == lines


def test_translate_time_hints_come_from_the_table_never_from_a_reference():
    from mwemt.nmt.translate import Translator
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
    from mwemt.records import LexiconEntry

    annotator = build_annotator(AnnotatorConfig(lang="en", filters="none"),
                                [LexiconEntry(("take", "care", "of")), LexiconEntry(("give", "up"))])
    pre = {"factors": 2, "encoding": "hints", "subword": {"iob": "copy"}, "tgt_lang": "it", "lemmatizer": "simplemma"}
    tr = Translator(Path("."), pre, SimpleNamespace(factor_dicts=[], source_dictionary=None, target_dictionary=None), None, None,
                    annotator, None, None)
    inserter = HintInserter(_table())
    enc = tr.encode("She took care of the dog and gave up smoking", hints=inserter)
    assert [r for r in enc.rows] == [["She", "0"], ["took", "1"], ["care", "1"], ["of", "1"], ["prendersi", "2"],
                                     ["cura", "2"], ["di", "2"], ["the", "0"], ["dog", "0"], ["and", "0"],
                                     ["gave", "1"], ["up", "1"], ["rinunciare", "2"], ["smoking", "0"]]
    # the table's best translation, whatever a reference would say: no reference can be passed at all
    assert inserter.test_hints(_two_mwe_sentence()) == {0: ("prendersi", "cura", "di"), 1: ("rinunciare",)}
    import inspect
    for fn in (Translator.translate, Translator.encode, HintInserter.test_hints):
        assert not any("ref" in p for p in inspect.signature(fn).parameters)
    # without a table the hint model reads plain words
    assert {r[1] for r in tr.encode("She took care of the dog").rows} == {"0"}
    # a table without an MWE's type: no hint for it
    t = MweTranslationTable()
    t.add("give up", ["arrendersi"], 1)
    rows = tr.encode("She took care of the dog and gave up", hints=HintInserter(t)).rows
    assert [r[1] for r in rows] == ["0"] * 7 + ["1", "1", "2"]


# ---------------------------------------------------------------- the grid's keys

def _grid(**data_extra) -> dict:
    return {"data": {"train": "package:demo/train", "valid": "package:demo/dev", "train_size": 600,
                     "lexicon": "package:demo/lexicon.en.txt", "dictionary": "package:demo/dictionary.en-it.tsv",
                     "monolingual": "split-rest", "target_lexicon": "package:demo/lexicon.it.txt", **data_extra},
            "systems": {"baseline": {}}}


def test_grid_systems_of_the_methods_are_checked_and_counted():
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import count_stages
    from mwemt.schema import ConfigError

    d = _grid()
    d["systems"].update({"bt": {"augment": "backtranslation"}, "bt-real": {"augment": "backtranslation-real"},
                         "hints": {"encoding": "hints", "hints": {"rate": 0.2}},
                         "hints-off": {"model_of": "hints", "translate": {"hints": "none"}},
                         "dict": {"augment": "dictionary", "augment_options": {"form": "sentences",
                                                                               "sense_filter": True}},
                         "wws": {"encoding": "wws", "subword": {"mwe_pieces_min_count": 3}}})
    cfg = config_from_data(d)
    assert cfg.systems["bt-real"].augment_options == cfg.systems["bt"].augment_options   # the same selection
    assert cfg.systems["hints"].hints.rate == 0.2 and cfg.systems["hints-off"].translate.hints == "none"
    assert cfg.systems["wws"].subword.mwe_pieces_min_count == 3
    # baseline 4, bt 5, bt-real 6 (two augment stages), hints 4, dict 5, wws 4, the reverse model 4, the table 1, corpus 1
    assert count_stages(cfg, list(cfg.systems), with_tests=False) == 1 + 4 + 1 + 4 + 5 + 6 + 4 + 4 + 5 + 4
    bad = _grid(monolingual="package:demo/mono.it")
    bad["systems"]["r"] = {"augment": "backtranslation-real"}
    with pytest.raises(ConfigError, match="split-rest"):
        config_from_data(bad)
    no_sample = _grid()
    del no_sample["data"]["train_size"], no_sample["data"]["monolingual"]
    no_sample["systems"]["d"] = {"augment": "dictionary", "augment_options": {"form": "both"}}
    with pytest.raises(ConfigError, match="train_size"):
        config_from_data(no_sample)
