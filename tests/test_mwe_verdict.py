"""The MWE verdict (`mwemt.evaluate.mwe_verdict`) and its agreement statistics (`mwemt.evaluate.mwe_agreement`)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mwemt.errors import InputError
from mwemt.evaluate.mwe_agreement import agreement, auc, point_biserial, read_it_checks
from mwemt.evaluate.mwe_score import MweAlignSettings
from mwemt.evaluate.mwe_verdict import (
    FEATURES,
    MweVerdict,
    VerdictModel,
    appended_from,
    bundled_model,
    cross_validated_probabilities,
    fit_model,
    loop_positions,
    sentence_folds,
)
from mwemt.evaluate.registry import metric_names
from mwemt.records import TestMwe

SOURCES = ["he took care of the garden .", "we need a lot of time .", "she kept in touch with them .",
           "they took part in the race .", "it was raining cats and dogs ."]
REFERENCES = ["si è preso cura del giardino .", "ci serve un sacco di tempo .", "è rimasta in contatto con loro .",
              "hanno preso parte alla gara .", "pioveva a dirotto ."]
MWES = [[TestMwe((1, 2, 3), "take care of", "preso cura")], [TestMwe((2, 3, 4), "a lot of", "un sacco di")],
        [TestMwe((1, 2, 3), "keep in touch", "rimasta in contatto")], [TestMwe((1, 2, 3), "take part in",
                                                                                "preso parte")],
        [TestMwe((3, 4, 5), "cats and dogs", "a dirotto")]]
HYPS = ["si è preso cura del giardino .", "ci serve molto tempo .", "è rimasta in contatto con loro .",
        "hanno preso parte alla gara .", "pioveva gatti e cani ."]


def test_registered():
    assert "mwe-verdict" in metric_names()


def test_bundled_model_reads_and_names_every_feature():
    model = bundled_model()
    assert model.features == FEATURES
    assert model.meta["cross_validation"]["folds"] >= 2 and model.meta["rows"] > 1000
    assert len(model.fingerprint()) == 10


def test_model_json_round_trip_and_errors(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.random((60, len(FEATURES)))
    y = (X[:, 0] + 0.2 * rng.random(60) > 0.6).astype(int)
    model = fit_model(X, y, meta={"name": "toy"})
    path = tmp_path / "m.json"
    model.write(path)
    back = VerdictModel.read(path)
    assert back == model and back.name == "toy"
    assert np.allclose(back.probability(X), model.probability(X))
    assert model.coef[0] > 0   # the feature that decides the label gets the weight
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}), encoding="utf-8")
    with pytest.raises(InputError):
        VerdictModel.read(bad)
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError):
        VerdictModel.read(bad)


def test_folds_keep_each_sentence_on_one_side():
    groups = ["1", "1", "2", "13", "13", "13", "x", "x", "y", "22"]
    folds = sentence_folds(groups, k=3)
    for g in set(groups):
        assert len({int(f) for f, h in zip(folds, groups) if h == g}) == 1
    assert list(sentence_folds(groups, k=3)) == list(folds)   # fixed: no random draw


def test_cross_validation_never_trains_on_the_rows_it_predicts():
    rng = np.random.default_rng(1)
    groups = [str(1 + k // 2) for k in range(200)]   # two rows per sentence
    X = rng.random((200, len(FEATURES)))
    y = (X[:, 1] > 0.5).astype(int)
    p = cross_validated_probabilities(X, y, groups, k=5)
    folds = sentence_folds(groups, 5)
    # flipping the verdicts of one fold's rows cannot change that fold's predictions: it never trained on them
    y2 = y.copy()
    y2[folds == 2] = 1 - y2[folds == 2]
    p2 = cross_validated_probabilities(X, y2, groups, k=5)
    assert np.allclose(p[folds == 2], p2[folds == 2])
    assert not np.allclose(p[folds != 2], p2[folds != 2])


def _verdict(lang: str = "it", **kwargs) -> MweVerdict:
    return MweVerdict(lang, align=MweAlignSettings(), **kwargs)


def test_a_line_scores_by_itself():
    """Two systems that share all but two lines get identical statistics on the others, with the
    default (lexical, line-stable) aligner and with given alignments."""
    verdict = _verdict()
    other = list(HYPS)
    other[1] = "ci serve un sacco di tempo tempo tempo ."
    other[4] = "pioveva molto forte ."
    a = verdict.sentence_stats(HYPS, MWES, sources=SOURCES, references=REFERENCES)
    b = verdict.sentence_stats(other, MWES, sources=SOURCES, references=REFERENCES)
    same = [0, 2, 3]
    assert np.array_equal(a.rows[same], b.rows[same])
    assert not np.array_equal(a.rows[[1, 4]], b.rows[[1, 4]])
    def diagonal(hyps):
        return [[(i, i) for i in range(min(len(s.split()), len(h.split())))] for s, h in zip(SOURCES, hyps)]

    links = diagonal(HYPS)
    a = verdict.sentence_stats(HYPS, MWES, alignments=links, sources=SOURCES, references=REFERENCES)
    b = verdict.sentence_stats(other, MWES, alignments=diagonal(other), sources=SOURCES, references=REFERENCES)
    assert np.array_equal(a.rows[same], b.rows[same])
    alone = verdict.sentence_stats([HYPS[3]], [MWES[3]], alignments=[links[3]], sources=[SOURCES[3]],
                                   references=[REFERENCES[3]])
    assert np.array_equal(alone.rows[0], a.rows[3])   # the line scored on its own
    probs = a.info["mwe_probabilities"]
    assert probs.shape == (5,) and ((probs >= 0) & (probs <= 1)).all()
    assert probs[0] > probs[4]   # the reference itself vs a word-for-word idiom


def test_corpus_score_is_the_mean_probability_and_bootstraps(tmp_path):
    from mwemt.evaluate.bootstrap import BootstrapSettings, paired_bootstrap

    verdict = _verdict()
    a = verdict.sentence_stats(HYPS, MWES, sources=SOURCES, references=REFERENCES)
    b = verdict.sentence_stats(REFERENCES, MWES, sources=SOURCES, references=REFERENCES)
    score = verdict.corpus_score_from_stats(a)
    assert score.score == pytest.approx(100 * a.info["mwe_probabilities"].mean())
    assert str(score.signature).startswith("MWE-verdict|model:en-it-ted-checks@")
    assert "align:lex1" in str(score.signature)
    results = paired_bootstrap(verdict, [a, b], BootstrapSettings(samples=100))
    assert results[1].p_value is not None and results[1].score > results[0].score


def test_appended_fragment_and_loop_cap_the_verdict():
    src = "he walked away .".split()
    assert appended_from(src, "se ne andò .".split()) is None
    assert appended_from(src, "se ne andò . via via .".split()) == 4
    assert loop_positions(src, "se ne andò via via via via .".split()) == {3, 4, 5, 6}
    assert loop_positions("very very very good".split(), "molto molto molto buono".split()) == set()
    verdict = _verdict()
    mwes = [[TestMwe((1, 2), "walk away", "andato via")]]
    links = [[(0, 0), (1, 3), (2, 4), (3, 5)]]
    stats = verdict.sentence_stats(["lui è . andato via ."], mwes, alignments=links,
                                   sources=["he walked away ."], references=["lui è andato via ."])
    assert stats.info["mwe_features"][0, FEATURES.index("fragment")] == 1.0
    assert stats.info["mwe_probabilities"][0] == 0.0   # the MWE's words only in an appended fragment


def test_given_alignments_score_as_the_links_it_makes_itself():
    """`mwemt score --align FILE` and a grid's score stage (which publishes its links and scores them as
    given) must give what the verdict gives when it aligns: the source still reaches its appended-fragment
    and loop features (before, an output whose MWE sat in an appended sentence scored higher with given
    links)."""
    from mwemt.evaluate.inputs import SystemOutput
    from mwemt.evaluate.scoring import system_stats

    verdict = _verdict()
    sources = SOURCES + ["he walked away ."]
    references = REFERENCES + ["lui è andato via ."]
    mwes = MWES + [[TestMwe((1, 2), "walk away", "andato via")]]
    hyps = HYPS + ["lui è . andato via ."]   # the MWE only in an appended sentence
    computed = system_stats(verdict, SystemOutput("s", hyps), mwes, sources=sources, references=references)
    links = verdict.align_hypotheses(sources, [verdict.mwe.moses_tokens(h) for h in hyps], references)[0]
    given = system_stats(verdict, SystemOutput("s", hyps, alignments=links), mwes, sources=sources,
                         references=references)
    assert computed.info["mwe_features"][-1, FEATURES.index("fragment")] > 0.5
    assert np.array_equal(computed.info["mwe_features"], given.info["mwe_features"])
    assert np.array_equal(computed.rows, given.rows)


def test_german_line_scores():
    verdict = _verdict("de")
    sources = ["the speed of light is fixed .", "it is raining cats and dogs ."]
    refs = [[TestMwe((1, 2, 3), "speed of light", "Lichtgeschwindigkeit")],
            [TestMwe((3, 4, 5), "cats and dogs", "in Strömen")]]
    references = ["Die Lichtgeschwindigkeit ist fest .", "Es regnet in Strömen ."]
    hyps = ["Die Lichtgeschwindigkeit ist fest.", "Es regnet Katzen und Hunde."]
    stats = verdict.sentence_stats(hyps, refs, sources=sources, references=references)
    p = stats.info["mwe_probabilities"]
    assert p[0] > 0.5 > p[1]
    assert "tok:moses-de+apos" in str(verdict.signature(stats)) and "lemma:simplemma:de" in str(verdict.signature(stats))
    # lemma vs inflection: "Lichtgeschwindigkeiten" is the right lemma in another form
    x = verdict.sentence_stats(["Die Lichtgeschwindigkeiten ist fest."], refs[:1], sources=sources[:1],
                               references=references[:1]).info["mwe_features"][0]
    assert x[FEATURES.index("ref_exact")] == 0.0 and x[FEATURES.index("inflection")] == 1.0


def test_agreement_statistics():
    scores = np.array([0.9, 0.8, 0.3, 0.2, 0.6, 0.6])
    labels = np.array([1, 1, 0, 0, 1, 0])
    assert auc(scores, labels) == pytest.approx((3 + 3 + 2.5) / 9)
    assert point_biserial(scores, labels) == pytest.approx(np.corrcoef(scores, labels)[0, 1])
    res = agreement(scores, labels, ["1", "1", "2", "2", "3", "3"], n_boot=200, seed=3)
    lo, hi = res["auc_ci95"]
    assert lo <= res["auc"] <= hi and res["sentences"] == 3


@pytest.mark.shared
def test_it_checks_are_read_as_documented(shared):
    j = read_it_checks(shared / "testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv")
    labels = j.labels()
    assert len(labels) == 1262 and labels.sum() == 663
    assert sum("ref_check=Y" in r.subsets for r in j.rows) == 1047
    assert len(set(j.groups())) == 665
    assert j.counts["rows_left_out"] == {"empty reference MWE": 19, "verdict ''": 11, "verdict 'M'": 1}
