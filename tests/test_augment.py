"""Training-data augmentation: ratio arithmetic, dictionary pairs, back-translation selection and provenance."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mwemt.augment.backtranslate import (
    BacktranslationConfig,
    Candidate,
    PrecomputedTranslations,
    SelectionCounts,
    augment_with_backtranslation,
    rejection,
    select_candidates,
    tag_source,
)
from mwemt.augment.corpus import plan_split, read_corpus, split_tsv
from mwemt.augment.dictionary import (
    DictionaryConfig,
    augment_with_dictionary,
    read_dictionary_pairs,
)
from mwemt.augment.ratio import choose, requested_pairs
from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines
from mwemt.preprocess.annotate import Annotator, load_lexicon


@pytest.fixture
def aug(fixtures) -> Path:
    return fixtures / "augment"


def _lines(path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- ratio arithmetic


def test_requested_pairs_is_ratio_times_training_pairs_rounded_half_up():
    assert requested_pairs(0.10, 348039) == 34804  # 34803.9
    assert requested_pairs(0.02, 348039) == 6961  # 6960.78
    assert requested_pairs(0.25, 10) == 3  # 2.5 rounds up, not to even
    assert requested_pairs(0.15, 10) == 2  # 1.5 -> 2
    assert requested_pairs(1.0, 7) == 7
    with pytest.raises(MwemtError, match="rounds to 0"):
        requested_pairs(0.01, 10)
    with pytest.raises(MwemtError, match="positive"):
        requested_pairs(0.0, 10)
    with pytest.raises(MwemtError, match="empty"):
        requested_pairs(0.1, 0)


def test_choose_samples_without_replacement_when_there_are_enough_candidates():
    c = choose(100, 30, seed=7)
    assert c.mode == "sample" and len(c.indices) == 30 and len(set(c.indices)) == 30
    assert c.indices == sorted(c.indices)
    assert choose(100, 30, seed=7) == c
    assert choose(100, 30, seed=8).indices != c.indices
    assert choose(30, 30, seed=1).mode == "all"


def test_choose_repeats_every_candidate_then_samples_the_remainder():
    c = choose(4, 10, seed=3)
    assert c.mode == "repeat" and c.repeats == 2 and c.remainder == 2 and len(c.indices) == 10
    counts = Counter(c.indices)
    assert sorted(counts.values()) == [2, 2, 3, 3]
    with pytest.raises(MwemtError, match="no candidate"):
        choose(0, 5, seed=1)


# ---------------------------------------------------------------- dictionary reading


def test_bilingual_rows_split_synonyms_on_both_sides(aug):
    pairs = read_dictionary_pairs(aug / "dict.tsv")
    got = {(p.source, p.target, p.line) for p in pairs}
    assert ("take care of", "prendersi cura di", 2) in got
    assert ("take care of", "occuparsi di", 2) in got
    # "give up; abandon<TAB>rinunciare a; abbandonare" -> 2 x 2 pairs from line 3
    assert {(s, t) for s, t, line in got if line == 3} == {
        ("give up", "rinunciare a"), ("give up", "abbandonare"),
        ("abandon", "rinunciare a"), ("abandon", "abbandonare")}
    assert ("carry out", "realizzare", 13) in got
    assert len(pairs) == 20


def test_dict_side_target_swaps_languages(aug):
    pairs = read_dictionary_pairs(aug / "dict.tsv", dict_side="target")
    assert ("cercare", "look for") in {(p.source, p.target) for p in pairs}


def test_wn_aligned_rows_pair_every_english_lemma_with_every_italian_lemma(aug):
    pairs = read_dictionary_pairs(aug / "wn.tsv")
    got = {(p.source, p.target, p.line) for p in pairs}
    assert {(s, t) for s, t, line in got if line == 3} == {
        ("take care", "prendersi cura"), ("take care", "badare"),
        ("look after", "prendersi cura"), ("look after", "badare")}
    assert ("by the way", "GAP!", 5) in got  # placeholders are dropped later, and counted


def test_bad_dictionary_row_names_file_and_line(aug):
    with pytest.raises(InputError) as err:
        read_dictionary_pairs(aug / "bad_dict.tsv")
    assert err.value.line == 3
    assert str(err.value).startswith(f"{aug / 'bad_dict.tsv'}:3: ")
    assert "source<TAB>target1; target2" in str(err.value)


def test_cli_reports_bad_dictionary_row_with_line_and_writes_nothing(aug, tmp_path, capsys):
    out = tmp_path / "aug"
    code = main(["augment", "dictionary", "--dict", str(aug / "bad_dict.tsv"), "--train",
                 str(aug / "train"), "--out", str(out), "--quiet"])
    assert code == 2
    assert "bad_dict.tsv:3:" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- dictionary augmentation


def _dict_run(aug, out, **kw) -> dict:
    return augment_with_dictionary(aug / "dict.tsv", aug / "train", out, DictionaryConfig(**kw), progress=False)


def test_dictionary_dedupes_against_itself_and_the_training_pairs(aug, tmp_path):
    m = _dict_run(aug, tmp_path / "a", ratio=0.5, seed=1)
    c = m["counts"]
    assert c["expanded_pairs"] == 20
    # "Take care of / prendersi cura di" (line 7) repeats line 2 up to case
    assert c["duplicate_in_dictionary"] == 1
    # "run/correre" equals training "Run!/Corri!" once lemmatized and punctuation is ignored;
    # "by the way/a proposito" is a training pair verbatim
    assert c["in_training_data"] == 2
    assert c["unique_candidates"] == 17
    written = set(zip(_lines(tmp_path / "a.en")[12:], _lines(tmp_path / "a.it")[12:]))
    assert ("run", "correre") not in written and ("by the way", "a proposito") not in written


def test_dictionary_mwe_only_drops_single_word_sources(aug, tmp_path):
    m = _dict_run(aug, tmp_path / "a", ratio=0.5, seed=1, mwe_only=True)
    assert m["counts"]["single_word_source"] == 3  # abandon x2, run
    srcs = _lines(tmp_path / "a.en")[12:]
    assert srcs and all(len(s.split()) >= 2 for s in srcs)


def test_dictionary_ratio_sampling_and_output_layout(aug, tmp_path):
    m = _dict_run(aug, tmp_path / "a", ratio=0.5, seed=1)
    r = m["ratio"]
    assert (r["training_pairs"], r["requested_pairs"], r["mode"]) == (12, 6, "sample")
    assert r["achieved"] == 0.5
    en, it = _lines(tmp_path / "a.en"), _lines(tmp_path / "a.it")
    assert len(en) == len(it) == 18
    assert en[:12] == _lines(aug / "train.en") and it[:12] == _lines(aug / "train.it")
    assert len(set(zip(en[12:], it[12:]))) == 6  # sampled without replacement


def test_dictionary_ratio_repeating_when_too_few_unique_pairs(aug, tmp_path):
    m = _dict_run(aug, tmp_path / "a", ratio=2.0, seed=1)
    r = m["ratio"]
    assert (r["requested_pairs"], r["mode"], r["repeats"], r["remainder"]) == (24, "repeat", 1, 7)
    synthetic = list(zip(_lines(tmp_path / "a.en")[12:], _lines(tmp_path / "a.it")[12:]))
    assert len(synthetic) == 24 and len(set(synthetic)) == 17
    assert r["achieved"] == 2.0


def test_dictionary_same_seed_same_bytes_other_seed_other_sample(aug, tmp_path):
    _dict_run(aug, tmp_path / "a", ratio=0.5, seed=5)
    _dict_run(aug, tmp_path / "b", ratio=0.5, seed=5)
    _dict_run(aug, tmp_path / "c", ratio=0.5, seed=6)
    for lang in ("en", "it"):
        assert (tmp_path / f"a.{lang}").read_bytes() == (tmp_path / f"b.{lang}").read_bytes()
    assert (tmp_path / "a.it").read_bytes() != (tmp_path / "c.it").read_bytes()


def test_dictionary_manifest_traces_every_synthetic_pair_to_its_row(aug, tmp_path):
    m = _dict_run(aug, tmp_path / "a", ratio=1.0, seed=2)
    manifest = json.loads((tmp_path / "a.manifest.json").read_text())
    assert manifest["seed"] == 2 and manifest["kind"] == "augment.dictionary"
    assert set(manifest["inputs"]) == {"dictionary", "train_en", "train_it"}
    assert all(len(v["sha256"]) == 64 for v in manifest["inputs"].values())
    en, it = _lines(tmp_path / "a.en"), _lines(tmp_path / "a.it")
    rows = {p.line: set() for p in read_dictionary_pairs(aug / "dict.tsv")}
    for p in read_dictionary_pairs(aug / "dict.tsv"):
        rows[p.line].add((p.source, p.target))
    pairs = m["synthetic"]["pairs"]
    assert len(pairs) == m["counts"]["synthetic_pairs"] == 12
    for out_line, dict_line in pairs:
        assert (en[out_line - 1], it[out_line - 1]) in rows[dict_line]


def test_dictionary_lemma_output_form(aug, tmp_path):
    _dict_run(aug, tmp_path / "a", ratio=2.0, seed=1, output_form="lemmas")
    it = set(_lines(tmp_path / "a.it")[12:])
    assert "prendere cura di" in it  # "prendersi" lemmatized by simplemma
    assert "prendersi cura di" not in it


def test_augmentation_never_writes_over_its_input(aug, tmp_path):
    with pytest.raises(MwemtError, match="overwrite"):
        _dict_run(aug, aug / "train", ratio=0.5)


# ---------------------------------------------------------------- corpus split


def test_split_is_deterministic_and_keeps_source_groups_together(aug, tmp_path):
    m1 = split_tsv(aug / "pairs.tsv", tmp_path / "s1", valid_size=2, test_size=3, seed=4)
    split_tsv(aug / "pairs.tsv", tmp_path / "s2", valid_size=2, test_size=3, seed=4)
    for name in ("train.en", "train.it", "valid.en", "test.it"):
        assert (tmp_path / "s1" / name).read_bytes() == (tmp_path / "s2" / name).read_bytes()
    c = m1["counts"]
    assert c["train"] + c["valid"] + c["test"] == c["rows"] == 16
    assert c["test"] >= 3 and c["valid"] >= 2
    sides = {n: {s.casefold() for s, _ in read_corpus(tmp_path / "s1" / n)} for n in ("train", "valid", "test")}
    assert not sides["train"] & sides["test"] and not sides["train"] & sides["valid"]
    assert not sides["valid"] & sides["test"]
    assert json.loads((tmp_path / "s1" / "split.manifest.json").read_text())["seed"] == 4


def test_plan_split_groups_case_variants_and_refuses_empty_train():
    plan = plan_split(["Hi.", "hi.", "Go.", "Run!"], valid_size=0, test_size=1, seed=1)
    groups = [{0, 1}, {2}, {3}]
    assert set(plan.test) in groups
    with pytest.raises(MwemtError, match="no training pairs"):
        plan_split(["a", "b"], valid_size=1, test_size=1, seed=1)


def test_split_bad_row_names_line(aug, tmp_path):
    with pytest.raises(InputError, match=r"bad_pairs.tsv:3: "):
        split_tsv(aug / "bad_pairs.tsv", tmp_path / "s", valid_size=0, test_size=1)


# ---------------------------------------------------------------- back-translation: selection and filters


@pytest.fixture
def it_annotator(aug):
    return lambda gap: Annotator(load_lexicon(aug / "it_mwe.txt", lang="it"), lang="it", max_gap=gap)


def test_selection_keeps_new_sentences_with_a_target_mwe(aug, it_annotator):
    counts = SelectionCounts()
    got = select_candidates(enumerate(iter_lines(aug / "mono.it"), 1), it_annotator(0), 25,
                            {"Mi sono preso cura del cane."}, counts)
    assert [c.line for c in got] == [3, 5, 7, 9]
    assert [c.mwes for c in got] == [("a proposito",), ("fare attenzione",), ("di solito",), ("tenere d'occhio",)]
    assert (counts.lines, counts.empty, counts.duplicate, counts.in_training_target, counts.too_long,
            counts.without_mwe, counts.with_mwe) == (13, 1, 1, 1, 1, 5, 4)
    with_gap = select_candidates(enumerate(iter_lines(aug / "mono.it"), 1), it_annotator(1), 25)
    assert [c.line for c in with_gap] == [1, 3, 5, 7, 9, 13]  # 11 has no lexicon MWE


def test_rejection_reasons():
    cand = Candidate(1, "Devi fare attenzione alla strada .", 6, ("fare attenzione",))
    assert rejection(cand, "  ", "en", 2.0) == "empty"
    assert rejection(cand, "Careful", "en", 2.0) == "length_ratio"  # 1 token vs 6
    assert rejection(cand, "You must be careful on the road , please , really , now", "en", 2.0) == "length_ratio"
    assert rejection(cand, "devi fare attenzione alla strada .", "en", 2.0) == "copy"
    assert rejection(cand, "You must watch the road.", "en", 2.0) is None
    assert rejection(cand, "Watch the road.", "en", 1.5) is None  # 6 = 1.5 x 4 is kept
    assert rejection(cand, "Watch the road.", "en", 1.4) == "length_ratio"


def test_tag_source():
    assert tag_source("  By the way ,  hi ", "<BT>") == "<BT> By the way , hi"
    assert tag_source("hi", "") == "hi"


# ---------------------------------------------------------------- back-translation: whole run


def _bt_run(aug, out, **kw) -> dict:
    cfg = BacktranslationConfig(**{"max_tokens": 25, "max_gap": 1, **kw})
    translator = PrecomputedTranslations(aug / "mono.it", aug / "mono.bt.en")
    return augment_with_backtranslation(aug / "mono.it", aug / "it_mwe.txt", aug / "train", out, translator,
                                        cfg, progress=False)


def test_backtranslation_reaches_the_ratio_after_filtering(aug, tmp_path):
    m = _bt_run(aug, tmp_path / "bt", ratio=0.25, seed=1, tag="<BT>")
    assert m["ratio"]["requested_pairs"] == 3 and m["ratio"]["shortfall"] == 0
    assert m["ratio"]["achieved"] == 0.25
    en, it = _lines(tmp_path / "bt.en"), _lines(tmp_path / "bt.it")
    assert len(en) == len(it) == 15
    assert all(s.startswith("<BT> ") for s in en[12:])
    # lines 1, 3, 7 are the only candidates whose translations survive the filters
    assert set(it[12:]) == {"Mi prendeva sempre in giro quando ero piccolo.", "A proposito, hai visto Marco?",
                            "Di solito bevo il caffè la mattina."}


def test_backtranslation_counts_every_filter_and_reports_a_shortfall(aug, tmp_path):
    m = _bt_run(aug, tmp_path / "bt", ratio=1.0, seed=1)
    sel, tr = m["counts"]["selection"], m["counts"]["translation"]
    assert sel["with_mwe"] == 6 and sel["in_training_target"] == 1
    assert tr["translated"] == 6 and tr["rejected"] == {"empty": 1, "length_ratio": 1, "copy": 1}
    assert tr["kept"] == m["counts"]["synthetic_pairs"] == 3
    assert m["ratio"]["shortfall"] == 12 - 3


def test_backtranslation_provenance_and_reproducibility(aug, tmp_path):
    m = _bt_run(aug, tmp_path / "a", ratio=0.25, seed=3)
    _bt_run(aug, tmp_path / "b", ratio=0.25, seed=3)
    for lang in ("en", "it"):
        assert (tmp_path / f"a.{lang}").read_bytes() == (tmp_path / f"b.{lang}").read_bytes()
    mono = _lines(aug / "mono.it")
    bt = _lines(aug / "mono.bt.en")
    en, it = _lines(tmp_path / "a.en"), _lines(tmp_path / "a.it")
    for out_line, mono_line, mwes in m["synthetic"]["pairs"]:
        assert it[out_line - 1] == mono[mono_line - 1]
        assert en[out_line - 1] == bt[mono_line - 1]
        assert mwes
    saved = json.loads((tmp_path / "a.manifest.json").read_text())
    assert saved["synthetic"]["pairs"] == m["synthetic"]["pairs"]
    assert set(saved["inputs"]) == {"monolingual", "target_lexicon", "train_en", "train_it"}
    assert "translations" in saved["reverse_model"]["precomputed"]


def test_backtranslation_cli_with_precomputed_translations(aug, tmp_path):
    out = tmp_path / "bt"
    code = main(["augment", "backtranslate", "--mono", str(aug / "mono.it"), "--target-lexicon",
                 str(aug / "it_mwe.txt"), "--translations", str(aug / "mono.bt.en"), "--train",
                 str(aug / "train"), "--ratio", "0.25", "--max-gap", "1", "--tag", "<BT>", "--out", str(out),
                 "--quiet"])
    assert code == 0
    assert len(_lines(tmp_path / "bt.en")) == 15


def test_backtranslation_uses_the_union_of_several_target_lexicons(aug, tmp_path):
    cfg = BacktranslationConfig(ratio=1.0, max_tokens=25, max_gap=1)
    translator = PrecomputedTranslations(aug / "mono.it", aug / "mono.bt.en")
    m = augment_with_backtranslation(aug / "mono.it", [aug / "it_mwe.txt", aug / "it_mwe_extra.txt"],
                                     aug / "train", tmp_path / "bt", translator, cfg, progress=False)
    assert m["counts"]["selection"]["with_mwe"] == 7
    assert [12, ["comprare il pane"]] in [p[1:] for p in m["synthetic"]["pairs"]]
    assert {"target_lexicon", "target_lexicon_2"} <= set(m["inputs"])
