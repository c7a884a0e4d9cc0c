"""The MWE score (Zaninello & Birch 2020): hand-computed expectations, edge cases, alignments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mwemt.evaluate.bootstrap import BootstrapSettings, paired_bootstrap
from mwemt.evaluate.mwe_score import MweScore, parse_alignment, word_charges
from mwemt.fileio import read_lines
from mwemt.formats import read_testset
from mwemt.records import TestMwe


@pytest.fixture
def scorer() -> MweScore:
    return MweScore("it", align="none")


def test_table1_si_e_svegliato(scorer):
    # reference words si, è, svegliato against hypothesis words si, sveglia:
    #   si -> si: 0/2 = 0;  è -> si: distance 2, capped at len 1 -> 1;  svegliato -> sveglia: 2/9
    expected = 1 - (0 + 1 + 2 / 9) / 3  # 0.59259...
    assert scorer.sentence_score("si sveglia", ["si è svegliato"]) == pytest.approx(100 * expected)
    # the other way round: si -> 0, sveglia -> svegliato: 2/7
    assert scorer.sentence_score("si è svegliato", ["si sveglia"]) == pytest.approx(100 * (1 - (2 / 7) / 2))


def test_table1_ho_telefonato(scorer):
    # ho -> ho: 0;  telefonato -> telefonata: 1/10
    assert scorer.sentence_score("ho fatto una telefonata", ["ho telefonato"]) == pytest.approx(95.0)
    # ho: 0; fatto -> ho: 4/5; una -> ho: 3/3; telefonata -> telefonato: 1/10
    expected = 1 - (0 + 4 / 5 + 1 + 1 / 10) / 4
    assert scorer.sentence_score("ho telefonato", ["ho fatto una telefonata"]) == pytest.approx(100 * expected)


def test_distance_is_capped_at_word_length():
    assert word_charges(["è"], ["sveglia"]) == [1.0]
    assert word_charges(["abc"], ["abd"]) == [pytest.approx(1 / 3)]


def test_empty_or_punctuation_hypothesis_scores_zero(scorer):
    for hyp in ("", "   ", ". , !"):
        score = scorer.sentence_score(hyp, ["un sacco di"])
        assert score == 0.0 and not math.isnan(score)


def test_case_insensitive_by_default_with_option():
    assert MweScore("it", align="none").sentence_score("Un sacco di pesci", ["un sacco di"]) == 100.0
    # "Un" vs "un": one substitution over 2 characters
    sensitive = MweScore("it", align="none", case_sensitive=True)
    assert sensitive.sentence_score("Un sacco di pesci", ["un sacco di"]) == pytest.approx(100 * (1 - 0.5 / 3))
    assert sensitive.signature().get("case") == "mixed" and MweScore("it", align="none").signature().get("case") == "lc"


def test_apostrophes_split_and_punctuation_dropped(scorer):
    hw = scorer.hyp_words("Dell'acqua, l'uomo.")
    assert hw.words == ("dell'", "acqua", "l'", "uomo")
    # the gap marker of a discontinuous reference is not a word
    assert scorer.ref_words("prendere ... decisione") == ["prendere", "decisione"]


def test_reference_without_words_is_not_scored(scorer):
    assert scorer.sentence_score("qualcosa", ["..."]) is None


def test_alignment_restricts_search(scorer):
    mwe = TestMwe((0, 1, 2), "a lot of", "un sacco di")
    hyp = "un sacco di pesci"
    assert scorer.sentence_score(hyp, [mwe]) == 100.0
    # only hypothesis token 2 ("di") is aligned: un -> di 2/2, sacco -> di 5 capped -> 1, di -> 0
    assert scorer.sentence_score(hyp, [mwe], alignment=[(0, 2)]) == pytest.approx(100 * (1 - 2 / 3))
    # nothing aligned to the MWE: nothing to match
    assert scorer.sentence_score(hyp, [mwe], alignment=[(5, 3)]) == 0.0
    with pytest.raises(ValueError):
        scorer.sentence_score(hyp, [mwe], alignment=[(0, 9)])


def test_parse_alignment():
    assert parse_alignment("0-0 1-2  3-1") == [(0, 0), (1, 2), (3, 1)]
    with pytest.raises(ValueError):
        parse_alignment("0-0 1:2")


def _expected_a():
    s1 = 100 * (1 - (0 + 1 + 2 / 9) / 3)
    return s1, 95.0, 100.0


def test_corpus_averages(fixtures, scorer):
    items = read_testset(fixtures / "eval" / "testset.jsonl")
    refs = [it.mwes for it in items]
    hyps_a = read_lines(fixtures / "eval" / "hyp_a.it")
    hyps_b = read_lines(fixtures / "eval" / "hyp_b.it")
    s1, s2, s4 = _expected_a()
    res = scorer.corpus_score(hyps_a, refs, sentence_level=True)
    assert res.score == pytest.approx((s1 + s2 + s4) / 3)  # sentence 3 has no MWE
    assert res.sentence_scores[2] is None
    assert res.extra == {"mwes": 4, "sentences_with_mwes": 3}
    micro = MweScore("it", align="none", average="mwe").corpus_score(hyps_a, refs)
    assert micro.score == pytest.approx((s1 + s2 + 100 + 100) / 4)
    # hypothesis b: sentence 4 is empty, both its MWEs score 0
    assert scorer.corpus_score(hyps_b, refs).score == pytest.approx(200 / 3)
    assert MweScore("it", align="none", average="mwe").corpus_score(hyps_b, refs).score == pytest.approx(50.0)


def test_corpus_with_alignments(fixtures, scorer):
    items = read_testset(fixtures / "eval" / "testset.jsonl")
    hyps = read_lines(fixtures / "eval" / "hyp_a.it")
    aligns = [parse_alignment(x) for x in read_lines(fixtures / "eval" / "hyp_a.align")]
    res = scorer.corpus_score(hyps, [it.mwes for it in items], alignments=aligns)
    # 1: si, è match nothing among "sveglia presto" (capped: 1 each), svegliato 2/9;
    # 2: ho matches none of "fatto una telefonata" (capped), telefonato 1/10; 4: exact
    expected = (100 * (1 - (1 + 1 + 2 / 9) / 3) + 100 * (1 - (1 + 0.1) / 2) + 100) / 3
    assert res.score == pytest.approx(expected)
    assert res.signature.get("align") == "given"


def test_mwe_bootstrap_is_seeded_and_paired(fixtures, scorer):
    items = read_testset(fixtures / "eval" / "testset.jsonl")
    refs = [it.mwes for it in items]
    stats = [scorer.sentence_stats(read_lines(fixtures / "eval" / f"hyp_{s}.it"), refs) for s in "ab"]
    r1 = paired_bootstrap(scorer, stats, BootstrapSettings(200, 7))
    r2 = paired_bootstrap(scorer, stats, BootstrapSettings(200, 7))
    assert r1 == r2
    assert r1[0].p_value is None and 0 < r1[1].p_value <= 1
    assert r1[0].score == pytest.approx(scorer.corpus_score(read_lines(fixtures / "eval" / "hyp_a.it"), refs).score)
    # a system against itself never differs
    same = paired_bootstrap(scorer, [stats[0], stats[0]], BootstrapSettings(200, 7))
    assert same[1].p_value == 1.0
    assert np.isfinite([r.mean for r in r1]).all()


def test_one_extraction_serves_both_averages(fixtures):
    items = read_testset(fixtures / "eval" / "testset.jsonl")
    hyps = read_lines(fixtures / "eval" / "hyp_a.it")
    refs = [it.mwes for it in items]
    stats = MweScore("it", align="none").sentence_stats(hyps, refs)
    assert stats.columns == ("mwe_sum", "mwes", "sentence_mean", "sentences")
    assert stats.rows[:, 1].tolist() == [1, 1, 0, 2]  # MWEs per sentence
    micro = MweScore("it", align="none", average="mwe")
    assert micro.corpus_score_from_stats(stats).score == micro.corpus_score(hyps, refs).score
    # sentence scores are per-sentence means whatever the corpus average
    assert micro.sentence_scores(stats) == MweScore("it", align="none").sentence_scores(stats)
