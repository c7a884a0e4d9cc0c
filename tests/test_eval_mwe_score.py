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


def chars(**kwargs) -> MweScore:
    """The published score's matching: characters only, whole hypothesis unless alignments are given
    (and then exactly the aligned words)."""
    from mwemt.evaluate.mwe_match import MweMatching
    from mwemt.evaluate.mwe_score import MweAlignSettings

    kwargs.setdefault("matching", MweMatching())
    kwargs.setdefault("align", MweAlignSettings("none", window=0))
    return MweScore("it", **kwargs)


@pytest.fixture
def scorer() -> MweScore:
    return chars()


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
    assert chars().sentence_score("Un sacco di pesci", ["un sacco di"]) == 100.0
    # "Un" vs "un": one substitution over 2 characters
    sensitive = chars(case_sensitive=True)
    assert sensitive.sentence_score("Un sacco di pesci", ["un sacco di"]) == pytest.approx(100 * (1 - 0.5 / 3))
    assert sensitive.signature().get("case") == "mixed" and chars().signature().get("case") == "lc"


def test_apostrophes_split_and_punctuation_dropped(scorer):
    hw = scorer.hyp_words("Dell'acqua, l'uomo.")
    assert hw.words == ("dell'", "acqua", "l'", "uomo")
    # the gap marker of a discontinuous reference is not a word
    assert scorer.ref_words("prendere ... decisione") == ["prendere", "decisione"]


def test_reference_without_words_is_not_scored(scorer):
    assert scorer.sentence_score("qualcosa", ["..."]) is None


def test_alignment_restricts_search(scorer):
    mwe = TestMwe((0, 1, 2), "a lot of", "un sacco di")
    hyp = "un sacco pieno di pesci"   # the reference's words are not in a row: alignment decides
    assert scorer.sentence_score(hyp, [mwe]) == 100.0
    # only hypothesis token 3 ("di") is aligned: un -> di 2/2, sacco -> di 5 capped -> 1, di -> 0
    assert scorer.sentence_score(hyp, [mwe], alignment=[(0, 3)]) == pytest.approx(100 * (1 - 2 / 3))
    # nothing aligned to the MWE: nothing to match
    assert scorer.sentence_score(hyp, [mwe], alignment=[(5, 4)]) == 0.0
    # the reference's words in a row count whatever the alignment (tests/test_mwe_identity.py)
    assert scorer.sentence_score("un sacco di pesci", [mwe], alignment=[(5, 3)]) == 100.0
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
    micro = chars(average="mwe").corpus_score(hyps_a, refs)
    assert micro.score == pytest.approx((s1 + s2 + 100 + 100) / 4)
    # hypothesis b: sentence 4 is empty, both its MWEs score 0
    assert scorer.corpus_score(hyps_b, refs).score == pytest.approx(200 / 3)
    assert chars(average="mwe").corpus_score(hyps_b, refs).score == pytest.approx(50.0)


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
    stats = chars().sentence_stats(hyps, refs)
    assert stats.columns == ("mwe_sum", "mwes", "sentence_mean", "sentences")
    assert stats.rows[:, 1].tolist() == [1, 1, 0, 2]  # MWEs per sentence
    micro = chars(average="mwe")
    assert micro.corpus_score_from_stats(stats).score == micro.corpus_score(hyps, refs).score
    # sentence scores are per-sentence means whatever the corpus average
    assert micro.sentence_scores(stats) == chars().sentence_scores(stats)


# ---------------------------------------------------------------- the published scorer's rules


def compat() -> MweScore:
    return MweScore("it", compat="zaninello2020")


def test_compat_tokenizes_ascii_punctuation_to_spaces_and_lowercases_the_hypothesis_only():
    from mwemt.evaluate.mwe_compat import compat_tokens

    assert compat_tokens("Dell'acqua, l'uomo-ragno... «sì»") == ["Dell", "acqua", "l", "uomo", "ragno", "«sì»"]
    # hypothesis "Un sacco di pesci" is lowercased; reference "un sacco di" matches exactly
    assert compat().sentence_score("Un sacco di pesci", ["un sacco di"]) == 100.0
    # the reference is not lowercased: "Un" vs "un" costs 1 of 2 characters
    assert compat().sentence_score("un sacco di pesci", ["Un sacco di"]) == pytest.approx(100 * (1 - 0.5 / 3))


def test_compat_elided_article_loses_its_apostrophe():
    # reference "l'uomo" -> l, uomo; hypothesis "la uomo" -> la, uomo: l vs la is 1/1 (capped), uomo 0
    assert compat().sentence_score("la uomo", ["l'uomo"]) == pytest.approx(50.0)
    # mwemt's own tokenization keeps l' and charges it 1/2 against "la"
    assert chars().sentence_score("la uomo", ["l'uomo"]) == pytest.approx(75.0)


def test_compat_mean_over_mwes_and_nan_rows_left_out():
    refs = [["si è svegliato"], ["ho telefonato", "un sacco di"], ["un sacco di"]]
    hyps = ["si sveglia", "ho fatto una telefonata", ""]  # the last hypothesis is empty: its MWE is NaN
    metric = compat()
    res = metric.corpus_score(hyps, refs, sentence_level=True)
    # MWE scores: 1 - (0 + 1 + 2/9)/3; 0.95; un -> una 1/2, sacco -> fatto 3/5, di -> ho 2/2; NaN left out
    values = [1 - (0 + 1 + 2 / 9) / 3, 0.95, 1 - (0.5 + 0.6 + 1) / 3]
    assert res.score == pytest.approx(100 * sum(values) / 3)
    assert res.sentence_scores[2] is None and res.extra["nan_mwes"] == 1 and res.extra["mwes"] == 3
    assert metric.signature().get("compat") == "zaninello2020" and metric.signature().get("nan") == "skip"
    # a hypothesis of punctuation only is empty after tokenization: NaN too; an empty reference is skipped
    stats = metric.sentence_stats([". , !", "ciao"], [["un sacco di"], ["", "ciao"]])
    assert stats.info["nan_mwes"] == 1 and stats.rows[:, 1].tolist() == [0, 1]
    assert metric.score_from_totals(stats.totals()) == 100.0


def test_compat_takes_no_alignment():
    from mwemt.errors import MwemtError

    mwe = TestMwe((0,), "phone", "ho telefonato")
    with pytest.raises(MwemtError):
        compat().sentence_stats(["ho telefonato"], [[mwe]], alignments=[[(0, 0)]])


# ---------------------------------------------------------------- matching options


def test_lemma_matching_charges_same_lemma_partially():
    from mwemt.evaluate.mwe_match import MweMatching

    plain = chars()
    lemma = chars(matching=MweMatching(lemma=True, lemma_charge=0.5))
    # "sostenibili" vs reference "sostenibile": 1 edit in 11 characters, lemma equal -> charge min(1/11, 0.5)
    assert lemma.sentence_score("proteine sostenibili", ["sostenibile"]) == pytest.approx(100 * (1 - 1 / 11))
    # "andato" vs "vado": characters charge 4/4 = 1 (capped), lemma andare = andare -> 0.5
    assert plain.sentence_score("vado", ["andato"]) == pytest.approx(100 * (1 - 4 / 6))
    assert lemma.sentence_score("vado", ["andato"]) == pytest.approx(50.0)
    assert lemma.signature().get("match") == "char+lemma0.5"


def test_elision_matches_full_forms_either_way():
    from mwemt.evaluate.mwe_match import MweMatching, elision_equal

    assert elision_equal("dell'", "della") and elision_equal("dello", "dell'") and elision_equal("l'", "la")
    assert elision_equal("dell'", "dell") and not elision_equal("dell'", "delle'x") and not elision_equal("l'", "il")
    m = chars(matching=MweMatching(elision=True))
    # "dell' accumulo" and "dell'accumulo" are the same words; "della accumulo" matches once elision is on
    assert m.sentence_score("dell' accumulo", ["dell'accumulo"]) == 100.0
    assert m.sentence_score("della accumulo", ["dell'accumulo"]) == 100.0
    assert chars().sentence_score("della accumulo", ["dell'accumulo"]) < 100.0


def test_function_word_weight():
    from mwemt.evaluate.mwe_match import MweMatching

    m = chars(matching=MweMatching(function_weight=0.5))
    # "un sacco di" against "sacco": un 1 (capped), sacco 0, di 1; weights 0.5, 1, 0.5 -> 1 - 1/2
    assert m.sentence_score("sacco", ["un sacco di"]) == pytest.approx(50.0)
    # an MWE of function words only keeps equal weights
    assert m.sentence_score("di", ["di"]) == 100.0
    assert m.signature().get("fw") == "0.5[it]"


def test_synonyms_from_an_omw_wordnet(tmp_path):
    from mwemt.evaluate.mwe_match import MweMatching
    from mwemt.evaluate.similarity import OmwResource

    tab = tmp_path / "wn.tab"
    tab.write_text("# test\n02958343-n\tita:lemma\tautomobile\n02958343-n\tita:lemma\tmacchina\n", encoding="utf-8")
    m = chars(matching=MweMatching(synonyms=True), wordnet=OmwResource(tab))
    assert m.sentence_score("la macchina", ["automobile"]) == 100.0
    assert chars().sentence_score("la macchina", ["automobile"]) < 50.0
    assert "syn0[omw:wn.tab@" in m.signature().get("match")


def test_precision_charges_extra_aligned_words():
    mwe = TestMwe((0, 1), "lie in bed", "a letto")
    hyp = "ero sdraiato a letto"
    links = [(0, 1), (0, 2), (1, 3)]
    recall_only = chars()
    assert recall_only.sentence_score(hyp, [mwe], alignment=links) == 100.0
    half = chars(precision=0.5)
    # aligned words sdraiato, a, letto: precision charges sdraiato -> letto 6/8, a 0, letto 0
    assert half.sentence_score(hyp, [mwe], alignment=links) == pytest.approx(100 * (0.5 + 0.5 * (1 - 0.75 / 3)))


# ---------------------------------------------------------------- alignment by default


@pytest.mark.parametrize("mode, aligner", [("lex", "lex1+"), ("eflomal", "eflomal-")])
def test_default_aligns_hypotheses_to_the_sources(fixtures, tmp_path, mode, aligner):
    from mwemt.errors import MwemtError
    from mwemt.evaluate.mwe_score import MweAlignSettings

    items = read_testset(fixtures / "eval" / "testset.jsonl")
    hyps = read_lines(fixtures / "eval" / "hyp_a.it")
    assert MweAlignSettings().mode == "lex"   # the default: line-stable (tests/test_line_stable.py)
    metric = MweScore("it", align=MweAlignSettings(mode, cache_dir=tmp_path / "cache"))
    with pytest.raises(MwemtError, match="needs the source sentences"):
        metric.sentence_stats(hyps, [it.mwes for it in items])
    references = [it.reference for it in items]   # the line-stable aligner's prior corpus (with the sources)
    if mode == "lex":
        with pytest.raises(MwemtError, match="reference sentences"):
            metric.sentence_stats(hyps, [it.mwes for it in items], sources=[it.source for it in items])
    stats = metric.sentence_stats(hyps, [it.mwes for it in items], sources=[it.source for it in items],
                                  references=references)
    assert stats.info["aligned"] == mode and stats.info["alignment_cached"] is False
    sig = metric.signature(stats)
    assert sig.get("align").startswith(aligner) and "gdfa" in sig.get("align")
    # restricting to aligned words can only lower each MWE's recall
    whole = chars().sentence_stats(hyps, [it.mwes for it in items])
    assert (stats.rows[:, 2] <= whole.rows[:, 2] + 1e-12).all()
    # a new metric object reads the same links from the cache
    again = MweScore("it", align=MweAlignSettings(mode, cache_dir=tmp_path / "cache")).sentence_stats(
        hyps, [it.mwes for it in items], sources=[it.source for it in items], references=references)
    assert again.info["alignment_cached"] is True and np.array_equal(again.rows, stats.rows)


def test_near_miss_and_order():
    from mwemt.evaluate.mwe_match import MweMatching, discordant_fraction

    near = chars(matching=MweMatching(near_miss=0.75))
    # "sostenibile" for "sostenibili": 1/11 by characters, at least 0.75 as a near miss; "proteine" exact
    assert chars().sentence_score("proteine sostenibile", ["proteine sostenibili"]) == pytest.approx(100 * (1 - 1 / 22))
    assert near.sentence_score("proteine sostenibile", ["proteine sostenibili"]) == pytest.approx(100 * (1 - 0.75 / 2))
    assert discordant_fraction(np.array([0, 1, 2])) == 0.0 and discordant_fraction(np.array([2, 1, 0])) == 1.0
    assert discordant_fraction(np.array([1, 0, 2])) == pytest.approx(1 / 3)
    order = chars(matching=MweMatching(order=1.0))
    # every word found, in the other order: 1 x (1 - 1 x 1/1)
    assert order.sentence_score("pilota progetti", ["progetti pilota"]) == 0.0
    assert order.sentence_score("i progetti pilota", ["progetti pilota"]) == 100.0
    assert order.signature().get("match") == "char+order1"


def test_alignment_window_adds_neighbors():
    from mwemt.evaluate.mwe_score import MweAlignSettings

    mwe = TestMwe((0, 1, 2), "a lot of", "un sacco di")
    hyp = "pesci di un sacco"   # not the reference's words in a row: alignment decides
    win = chars(align=MweAlignSettings("none", window=1))
    # token 2 ("un") is aligned; the window adds "di" and "sacco"
    assert win.sentence_score(hyp, [mwe], alignment=[(1, 2)]) == 100.0
    assert chars().sentence_score(hyp, [mwe], alignment=[(1, 2)]) == pytest.approx(100 * (1 - 2 / 3))
    stats = win.sentence_stats([hyp], [[mwe]], [[(1, 2)]])
    assert win.signature(stats).get("align") == "given,win1"


def test_matching_spec_round_trip():
    from mwemt.evaluate.mwe_match import MweMatching, format_matching, parse_matching
    from mwemt.evaluate.mwe_score import DEFAULT_MATCHING

    assert parse_matching("char") == MweMatching()
    m = parse_matching("near-miss,order=0.5,lemma=0.25,elision,fw=0.5")
    assert m == MweMatching(lemma=True, lemma_charge=0.25, elision=True, function_weight=0.5, near_miss=0.75, order=0.5)
    assert parse_matching(format_matching(m)) == m and parse_matching(format_matching(DEFAULT_MATCHING)) == DEFAULT_MATCHING
    for bad in ("", "lemmas", "elision=1", "order=x", "order=2"):
        with pytest.raises(ValueError):
            parse_matching(bad)


def test_order_prefers_an_in_order_choice_among_equal_matches():
    from mwemt.evaluate.mwe_match import MweMatching

    order = chars(matching=MweMatching(order=1.0))
    # "di" occurs before and after "un sacco": the later one keeps the order
    assert order.sentence_score("cura di un sacco di pesci", ["un sacco di"]) == 100.0
