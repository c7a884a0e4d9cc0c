"""Several systems x several metrics from sentence statistics: today's numbers on the fixtures (the
README example), the paired test against the baseline, p = 1 for a copy of the baseline."""

from __future__ import annotations

import pytest

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.inputs import MissingInputError, ScoreInputs, SystemOutput, load_score_inputs
from mwemt.evaluate.mwe_match import MweMatching
from mwemt.evaluate.registry import MetricOptions
from mwemt.evaluate.scoring import score_systems

# `mwemt score` on tests/fixtures/eval before the statistics API (README "Score"): corpus score,
# bootstrap mean, 95% half-width, p against the baseline (1000 resamples, seed 12345)
README = {
    "bleu": [(66.79825243770682, 54.75932685811986, 45.74652889533959, None),
             (23.545091631031525, 28.208793839108743, 38.41444977362584, 0.06593406593406594)],
    "chrf": [(75.00560181501969, 73.49955749511719, 24.994396209716797, None),
             (47.53834412914317, 49.54192059135437, 43.309831976890564, 0.1938061938061938)],
    # the MWE bootstrap leaves out the 2 resamples that drew no sentence with an MWE (their score is
    # undefined; they counted as 0 before issue 37): mean and p over the other 998
    "mwe": [(84.75308641975309, 84.99429414384323, 20.370370370370374, None),
            (66.66666666666667, 66.9756179024716, 50.0, 0.1921921921921922)],
    "tesla": [(57.98872180451128, 57.63284821903243, 42.01127819548872, None),
              (60.58681267306793, 61.001107185241125, 39.59322292947818, 0.4385614385614386)],
}


@pytest.fixture
def inputs(fixtures) -> ScoreInputs:
    ev = fixtures / "eval"
    return load_score_inputs([("base", ev / "hyp_a.it"), ("mwe", ev / "hyp_b.it"), ("same", ev / "hyp_a.it")],
                             ref=ev / "ref.it", testset=ev / "testset.jsonl", lang="it")


def test_readme_numbers_are_unchanged(inputs):
    # the MWE numbers are those of the whole-hypothesis character search (--align none --mwe-match char)
    run = score_systems(inputs, list(README), MetricOptions(lang="it", mwe_align="none", mwe_matching=MweMatching()), bootstrap=BootstrapSettings())
    for result in run.metrics:
        got = [(s.score, b.mean, b.ci, b.p_value) for s, b in zip(result.scores, result.bootstrap)]
        for (score, mean, ci, p), want in zip(got[:2], README[result.key]):
            assert score == want[0], result.key
            assert (mean, ci) == pytest.approx(want[1:3], rel=1e-13), result.key
            assert p == want[3], result.key
        assert result.bootstrap[0].score == result.scores[0].score


def test_a_copy_of_the_baseline_gets_p_one_in_every_metric(inputs):
    # before: BLEU and chrF went through sacrebleu's paired test, which counts `>`: p = 1/(B+1) = 0.0099 here
    run = score_systems(inputs, ["bleu", "chrf", "mwe", "tesla"], MetricOptions(lang="it"),
                        bootstrap=BootstrapSettings(100, 12345))
    for result in run.metrics:
        base, _, same = result.bootstrap
        assert same.p_value == 1.0, result.key
        assert (same.score, same.mean, same.ci) == (base.score, base.mean, base.ci)
        assert result.signature.count("|bs:100|seed:12345|") == 1


def test_sentence_scores_and_signatures(inputs):
    run = score_systems(inputs, ["bleu", "mwe"], MetricOptions(lang="it"), sentence_level=True)
    bleu, mwe = run.metrics
    assert bleu.sentence_signature is not None and "eff:yes" in bleu.sentence_signature
    assert mwe.sentence_signature is None  # sentence and corpus MWE scores are computed alike
    assert mwe.scores[0].sentence_scores[2] is None  # sentence 3 has no MWE
    assert run.segment_ids == [it.id for it in inputs.testset]
    assert [len(s) for s in bleu.stats] == [4, 4, 4]


def test_metric_needing_a_missing_input_names_the_argument(fixtures):
    ev = fixtures / "eval"
    inputs = load_score_inputs([("a", ev / "hyp_a.it")], ref=ev / "ref.it")
    with pytest.raises(MissingInputError) as err:
        score_systems(inputs, ["mwe"])
    assert err.value.needs == "testset" and "--" not in str(err.value)


def test_in_memory_inputs_are_checked():
    with pytest.raises(MwemtError, match="system 'b'"):
        ScoreInputs([SystemOutput("a", ["x"]), SystemOutput("b", ["x", "y"])], refs=["x"])
    with pytest.raises(MwemtError, match="share a name"):
        ScoreInputs([SystemOutput("a", ["x"]), SystemOutput("a", ["x"])], refs=["x"])
    text = ["the cat sat on the mat"]
    run = score_systems(ScoreInputs([SystemOutput("a", text)], refs=text), ["bleu", "chrf"])
    assert [r.scores[0].score for r in run.metrics] == pytest.approx([100.0, 100.0])


def test_loader_locates_bad_lengths(fixtures, tmp_path):
    ev = fixtures / "eval"
    short = tmp_path / "short.it"
    short.write_text("Una riga.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"short.it: 1 lines but .*ref.it has 4 sentences"):
        load_score_inputs([("s", short)], ref=ev / "ref.it")
    with pytest.raises(InputError, match=r"short.it: 1 reference lines but the test set has 4"):
        load_score_inputs([("a", ev / "hyp_a.it")], ref=short, testset=ev / "testset.jsonl")
    with pytest.raises(MwemtError, match="one per system"):
        load_score_inputs([("a", ev / "hyp_a.it")], ref=ev / "ref.it", alignments=[])


@pytest.mark.shared
def test_statistics_give_todays_scores_on_ted(shared, fixtures):
    """The MT output of the Zaninello TED test set, scored before the statistics API."""
    from mwemt.evaluate.compositionality_table import CompositionalityTable
    from mwemt.testsets.testset import build_ted_testset, read_ted_pairs

    pairs = shared / "testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv"
    items, _ = build_ted_testset(read_ted_pairs(pairs, annotator="FINAL"))
    hyps = [it.meta["mt_it"] for it in items]
    comp = CompositionalityTable.from_file(fixtures / "eval" / "comp.it.tsv")
    inputs = ScoreInputs([SystemOutput("mt", hyps)], refs=[it.reference for it in items], testset=items,
                         compositionality=comp)
    expected = {"bleu": 22.822657585636332, "chrf": 50.70442859080807, "chrf++": 48.64359721398777,
                "mwe": 63.646034755124916, "tesla": 36.81340062900167, "tesla-comp": 36.81257020216228,
                "tesla-01": 36.81236259545242}
    run = score_systems(inputs, list(expected), MetricOptions(lang="it", mwe_align="none", mwe_matching=MweMatching()), sentence_level=True)
    for result in run.metrics:
        got = result.scores[0].score
        # bit-identical except the MWE score, whose column sums are now pairwise (|diff| < 1e-13)
        assert got == pytest.approx(expected[result.key], rel=1e-15 if result.key != "mwe" else 1e-14), result.key
    mwe = run.metrics[3]
    per_sentence = [s for s in mwe.scores[0].sentence_scores if s is not None]
    assert mwe.scores[0].score == pytest.approx(sum(per_sentence) / len(per_sentence), rel=1e-14)

