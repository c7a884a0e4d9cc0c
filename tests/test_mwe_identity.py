"""A hypothesis identical to its reference scores exactly 100 on every MWE metric, whatever the
alignment makes of it (issue 36 item 1b): the demo test set (under the real aligner and under
alignments that link the MWEs to the wrong words or to nothing) and synthetic cases."""

from __future__ import annotations

import pytest

from mwemt.evaluate.mwe_score import MweAlignSettings, MweScore
from mwemt.evaluate.registry import MetricOptions, build_metric, metric_class, metric_names
from mwemt.experiments.config import PACKAGE_DATA
from mwemt.formats import read_testset
from mwemt.records import TestItem, TestMwe

MWE_METRICS = [n for n in metric_names() if issubclass(metric_class(n), MweScore)]
DEMO = PACKAGE_DATA / "demo" / "test_mwe.jsonl"


def test_every_mwe_metric_is_covered():
    assert {"mwe", "mwe-p", "mwe-alts", "mwe-idiomatic", "mwe-literal"} <= set(MWE_METRICS)


def metric(name: str, align="none"):
    return build_metric(name, MetricOptions(lang="it", mwe_align=align))


def wrong_links(items: list[TestItem], how: str) -> list[list[tuple[int, int]]]:
    """Alignments that do not help: none at all, every source token on the first hypothesis token,
    or the hypothesis read backwards."""
    out = []
    for it in items:
        n_src, n_hyp = len(it.source.split()), len(MweScore("it").moses_tokens(it.reference))
        if how == "none":
            out.append([])
        elif how == "first":
            out.append([(i, 0) for i in range(n_src)])
        else:
            out.append([(i, max(0, n_hyp - 1 - i)) for i in range(min(n_src, n_hyp))])
    return out


def with_parts(items: list[TestItem]) -> list[TestItem]:
    """The items with their MWEs split between the idiomatic and the literal part."""
    from dataclasses import replace

    return [replace(it, mwes=[replace(m, part=("idiomatic", "literal")[k % 2]) for k, m in enumerate(it.mwes)])
            for it in items]


def all_mwes_perfect(name: str, items: list[TestItem], alignments=None, align="none") -> None:
    m = metric(name, align)
    stats = m.sentence_stats([it.reference for it in items], [it.mwes for it in items], alignments,
                             sources=[it.source for it in items], references=[it.reference for it in items])
    scores = stats.info["mwe_scores"]
    per_mwe = [s for s in scores if s == s]  # NaN: an MWE of the other part
    assert per_mwe and all(s == 1.0 for s in per_mwe), (name, [(k, s) for k, s in enumerate(scores) if s < 1.0])
    assert m.corpus_score_from_stats(stats).score == 100.0


@pytest.mark.parametrize("how", ["none", "first", "backwards"])
@pytest.mark.parametrize("name", MWE_METRICS)
def test_demo_identity_scores_100_whatever_the_alignment(name, how):
    items = with_parts(read_testset(DEMO))
    all_mwes_perfect(name, items, wrong_links(items, how))


@pytest.mark.parametrize("name", ["mwe", "mwe-p"])
def test_demo_identity_scores_100_under_the_aligner(name, tmp_path):
    # demo-0021 scored 25 before: the aligner linked "bus stop" to "autobus" only, and "fermata"
    # fell outside the window
    items = read_testset(DEMO)
    all_mwes_perfect(name, items, align=MweAlignSettings(cache_dir=tmp_path))


SYNTHETIC = [
    # a discontinuous reference, found run by run
    TestItem("d", "I had to make a hard decision .", "Ho dovuto prendere una decisione difficile .",
             [TestMwe((3, 5), "make decision", "prendere ... decisione")]),
    # an elision, and the reference capitalized at the start of the sentence
    TestItem("e", "All of a sudden they wait at the bus stop .", "All'improvviso aspettano alla fermata dell'autobus .",
             [TestMwe((0, 1, 2, 3), "all of a sudden", "All'improvviso"),
              TestMwe((7, 8), "bus stop", "fermata dell'autobus")]),
    # a reference whose words repeat, and one word used by two MWEs
    TestItem("r", "Little by little he comes back .", "A poco a poco torna indietro .",
             [TestMwe((0, 1, 2), "little by little", "a poco a poco"), TestMwe((4, 5), "come back", "torna indietro")]),
    # the MWE's words occur earlier in the sentence too
    TestItem("t", "He comes back , and she comes back .", "Torna , e lei torna .",
             [TestMwe((6, 7), "come back", "torna")]),
]


@pytest.mark.parametrize("how", ["none", "first", "backwards"])
@pytest.mark.parametrize("name", MWE_METRICS)
def test_synthetic_identity_scores_100(name, how):
    items = with_parts(SYNTHETIC)
    all_mwes_perfect(name, items, wrong_links(items, how))


@pytest.mark.parametrize("name", MWE_METRICS)
def test_identity_without_the_reference_sentences(name):
    # the recall scores need no reference sentence; mwe-p charges the words wrongly linked to an
    # MWE unless the reference sentence has them (`mwemt score` and runs always pass it)
    items = with_parts(SYNTHETIC)
    m = metric(name)
    stats = m.sentence_stats([it.reference for it in items], [it.mwes for it in items], wrong_links(items, "first"))
    assert (m.corpus_score_from_stats(stats).score == 100.0) == (name != "mwe-p")


def test_reference_elsewhere_than_the_aligned_words_still_counts_for_recall_only_where_it_is():
    # the rule concerns the reference's own words: a hypothesis without them is still scored by
    # its aligned words (here nothing is aligned, so 0)
    mwe = TestMwe((1, 2), "come back", "torna indietro")
    m = metric("mwe")
    assert m.score_sentence("Lui ritorna .", [mwe], [(0, 0)]).mwe_scores == [0.0]
    assert m.score_sentence("Lui torna indietro .", [mwe], [(0, 0)]).mwe_scores == [1.0]
    assert m.score_sentence("Lui torna , indietro .", [mwe], [(0, 0)]).mwe_scores == [1.0]  # punctuation dropped
