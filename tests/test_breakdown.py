"""The MWE score by tertiles of the source MWEs' predicted compositionality."""

import pytest

from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.breakdown import (
    compositionality_breakdown,
    format_breakdown,
    sentence_compositionality,
    tertile_groups,
)
from mwemt.evaluate.mwe_match import MweMatching
from mwemt.evaluate.mwe_score import MweScore
from mwemt.experiments.results import SetScores, build_results, format_markdown
from mwemt.records import TestMwe

# the values below are worked with the character score on the whole hypothesis
CHARACTERS = MweScore("it", align="none", matching=MweMatching())

# six sentences, one MWE each; the system gets the idiomatic ones (low compositionality) right
MWES = [[TestMwe((0, 1), "kick bucket", "tirare le cuoia", name="kick the bucket")],
        [TestMwe((0, 1), "spill bean", "vuotare il sacco", name="Spill the beans")],
        [TestMwe((0, 1), "ivory tower", "torre d'avorio", name="ivory tower")],
        [TestMwe((0, 1), "swimming pool", "piscina", name="swimming pool")],
        [TestMwe((0, 1), "red car", "macchina rossa", surface="red cars")],
        [TestMwe((0, 1), "look up", "cercare", name="look up"), TestMwe((2, 3), "zzz", "zzz", name="not rated")]]
VALUES = {"kick the bucket": 0.05, "spill the beans": 0.1, "ivory tower": 0.4, "swimming pool": 0.6,
          "red cars": 0.9, "look up": 0.95}
BASELINE = ["morire", "dire tutto", "torre d'avorio", "piscina", "macchina rossa", "cercare"]
SYSTEM = ["tirare le cuoia", "vuotare il sacco", "torre d'avorio", "piscina", "macchina rossa", "cercare"]


def test_sentence_values_use_name_then_surface_and_skip_unrated_mwes():
    vals = sentence_compositionality(MWES, VALUES)
    assert vals == [0.05, 0.1, 0.4, 0.6, 0.9, 0.95]   # "Spill the beans" normalized; "not rated" ignored
    assert sentence_compositionality([[TestMwe((0,), "x", "y")], []], VALUES) == [None, None]


def test_tertiles_split_the_sentences_evenly():
    groups, (lo, hi) = tertile_groups([0.05, None, 0.1, 0.4, 0.6, 0.9, 0.95])
    assert groups == {"low": [0, 2], "mid": [3, 4], "high": [5, 6]}
    assert lo < hi
    with pytest.raises(ValueError, match="at least 3"):
        tertile_groups([0.1, None, 0.2])


def test_breakdown_scores_each_group_from_its_sentences():
    metric = CHARACTERS
    stats = [metric.sentence_stats(h, MWES) for h in (BASELINE, SYSTEM)]
    b = compositionality_breakdown(metric, stats, ["baseline", "mwe"], MWES, VALUES, source="t.tsv",
                                   bootstrap=BootstrapSettings(200, 1))
    assert b["mwes"] == 7 and b["mwes_with_value"] == 6 and b["sentences_without_value"] == 0
    low, high = b["groups"]["low"], b["groups"]["high"]
    assert low["sentences"] == 2 and high["sentences"] == 2
    # the groups are scored like the corpus, on their own sentences only
    direct = metric.corpus_score(SYSTEM[:2], MWES[:2]).score
    assert low["systems"]["mwe"]["score"] == pytest.approx(direct) == 100.0
    assert low["systems"]["baseline"]["score"] < 50
    # a sentence is scored whole: its unrated MWE ("zzz", missed) counts too
    assert high["systems"]["mwe"]["score"] == high["systems"]["baseline"]["score"] == 75.0
    assert high["systems"]["mwe"]["p_value"] == 1.0    # identical output within the group
    assert low["systems"]["baseline"]["p_value"] is None
    text = "\n".join(format_breakdown("ted", b, "baseline"))
    assert "| mwe | 100.0 (+" in text and "t.tsv" in text


def test_results_table_shows_the_breakdown():
    metric = CHARACTERS
    stats = [metric.sentence_stats(h, MWES) for h in (BASELINE, SYSTEM)]
    b = compositionality_breakdown(metric, stats, ["baseline", "mwe"], MWES, VALUES, source="t.tsv")
    run = {"systems": ["baseline", "mwe"], "n_sentences": 6, "compositionality_breakdown": b,
           "metrics": {"mwe": {"name": "MWE", "signature": "sig",
                               "systems": {"baseline": {"score": 60.0}, "mwe": {"score": 100.0}}}}}
    results = build_results([SetScores("ted", "general", run)], name="x", baseline="baseline")
    md = format_markdown(results)
    assert "## MWE score by predicted compositionality (tertiles)" in md
    assert "### ted: mwe by predicted compositionality" in md
