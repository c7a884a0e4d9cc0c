"""BLEU and chrF come from sacrebleu, with sacrebleu's signatures."""

from __future__ import annotations

import pytest
import sacrebleu

from mwemt.errors import MwemtError
from mwemt.evaluate.sacrebleu_metrics import Bleu, Chrf

HYPS = ["The cat sat on the mat.", "It rained all day long."]
REFS = ["The cat sat on the mat.", "It was raining the whole day."]


def test_bleu_matches_sacrebleu_and_has_signature():
    res = Bleu().corpus_score(HYPS, REFS)
    assert res.score == pytest.approx(sacrebleu.corpus_bleu(HYPS, [REFS]).score)
    assert str(res.signature) == f"BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu.__version__}"
    reference = sacrebleu.BLEU()
    reference.corpus_score(HYPS, [REFS])
    assert str(res.signature) == "BLEU|" + reference.get_signature().format()


def test_chrf_matches_sacrebleu_and_has_signature():
    res = Chrf().corpus_score(HYPS, REFS, sentence_level=True)
    assert res.score == pytest.approx(sacrebleu.corpus_chrf(HYPS, [REFS]).score)
    assert str(res.signature).startswith("chrF|nrefs:1|case:mixed|")
    assert res.sentence_scores[0] == pytest.approx(100.0)
    assert res.signature.get("nc") == "6"


def test_case_sensitive_by_default():
    assert Bleu().corpus_score(["the cat sat on the mat ."], ["The cat sat on the mat ."]).score < 100
    assert Bleu(lowercase=True).corpus_score(["the cat sat on the mat ."], ["The cat sat on the mat ."]).score \
        == pytest.approx(100.0)


def test_sentence_bleu_uses_effective_order():
    bleu = Bleu()
    assert bleu.sentence_score("the cat", "the cat sat") > 0  # would be 0 without effective order
    assert bleu.sentence_signature().get("eff") == "yes"


def test_empty_hypothesis_scores_zero():
    assert Bleu().sentence_score("", "a b c") == 0.0
    assert Chrf().sentence_score("", "a b c") == 0.0


def test_misaligned_streams_rejected():
    with pytest.raises(MwemtError):
        Bleu().corpus_score(HYPS, REFS[:1])


def test_signature_needs_a_score_first():
    with pytest.raises(RuntimeError):
        Bleu().signature()


def test_statistics_give_sacrebleus_corpus_and_sentence_scores():
    hyps = HYPS + ["", "The dog sat."]
    refs = REFS + ["Nothing here.", "A dog was sitting."]
    for metric, corpus, sentence in [(Bleu(), sacrebleu.corpus_bleu, lambda h, r: sacrebleu.sentence_bleu(h, [r])),
                                     (Chrf(word_order=2), lambda h, r: sacrebleu.corpus_chrf(h, r, word_order=2),
                                      lambda h, r: sacrebleu.sentence_chrf(h, [r], word_order=2))]:
        stats = metric.sentence_stats(hyps, refs)
        assert stats.rows.dtype.kind == "i" and len(stats) == 4
        assert metric.score_from_totals(stats.totals()) == corpus(hyps, [refs]).score
        assert metric.sentence_scores(stats) == [sentence(h, r).score for h, r in zip(hyps, refs)]


def test_several_references_per_sentence():
    refs2 = ["A cat sat on a mat.", "It rained the whole day long."]
    res = Bleu().corpus_score(HYPS, [REFS, refs2])
    assert res.score == sacrebleu.corpus_bleu(HYPS, [REFS, refs2]).score
    assert res.signature.nrefs == 2
    assert Bleu().sentence_score(HYPS[1], [REFS[1], refs2[1]]) == \
        sacrebleu.sentence_bleu(HYPS[1], [REFS[1], refs2[1]]).score
