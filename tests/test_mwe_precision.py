"""``mwe-p``, the MWE score that charges wasted words (issue 36 item 1a): hand-worked values, the
appending property on random hypotheses, and the metric in `mwemt score` and run configs."""

from __future__ import annotations

import json
import random

import pytest

from mwemt.errors import MwemtError
from mwemt.evaluate.mwe_match import MweMatching
from mwemt.evaluate.mwe_precision import DEFAULT_WASTE, MwePrecisionScore
from mwemt.evaluate.mwe_score import MweAlignSettings, MweScore
from mwemt.evaluate.registry import MetricOptions, build_metric, metric_names
from mwemt.records import TestMwe

COME_BACK = TestMwe((1, 2), "come back", "torna")          # source: "He come back ."


def given(cls=MwePrecisionScore, window: int = 1, **kwargs):
    """A scorer of given alignments (``align`` none: nothing is aligned here)."""
    return cls("it", align=MweAlignSettings("none", window=window), **kwargs)


def one(metric, hyp, mwe, alignment, reference=None) -> float:
    return metric.score_sentence(hyp, [mwe], alignment, reference=reference).mwe_scores[0]


def test_registered_beside_mwe_with_its_own_signature():
    assert "mwe-p" in metric_names() and "mwe" in metric_names()
    metric = build_metric("mwe-p", MetricOptions(lang="it", mwe_align="none"))
    assert isinstance(metric, MwePrecisionScore) and metric.name == "MWE-P"
    sig = metric.signature()
    assert sig.name == "MWE-P" and sig.get("waste") == f"{DEFAULT_WASTE:g}" and sig.get("pairing") == "one-to-one"
    # --mwe-precision is the mwe score's mix; mwe-p has its own charge and ignores it
    assert build_metric("mwe-p", MetricOptions(lang="it", mwe_align="none", mwe_precision=0.5)).signature() == sig
    with pytest.raises(MwemtError):
        MwePrecisionScore("it", precision=0.5)
    with pytest.raises(MwemtError):
        MwePrecisionScore("it", compat="zaninello2020")
    with pytest.raises(MwemtError):
        MwePrecisionScore("it", waste=-1)


def test_appended_forced_word_gains_recall_but_not_mwe_p():
    # "Lui ritornerà . torna ." (constrained decoding's forced word appended as a sentence), both
    # verbs aligned to "come back": mwe gives full credit; mwe-p charges the wasted "ritornerà"
    plain, forced = "Lui ritornerà .", "Lui ritornerà . torna ."
    links_plain = [(0, 0), (1, 1), (2, 1), (3, 2)]
    links_forced = [(0, 0), (1, 1), (2, 3), (3, 4)]
    recall, strict = given(MweScore), given(waste=1.0)
    assert one(recall, plain, COME_BACK, links_plain) == 0.0
    assert one(recall, forced, COME_BACK, links_forced) == 1.0
    assert one(strict, plain, COME_BACK, links_plain) == 0.0
    assert one(strict, forced, COME_BACK, links_forced) == 0.0       # torna 1 - waste 1 x ritornerà
    half = given(waste=0.5)
    assert one(half, forced, COME_BACK, links_forced) == pytest.approx(0.5)
    assert one(half, "Lui torna .", COME_BACK, links_plain) == 1.0


def test_hand_worked_values():
    m = given(window=0, matching=MweMatching(), waste=0.5)  # characters only, no window
    # fare attenzione <- prestare attenzione, both aligned: attenzione pairs exactly; fare - prestare:
    # distance 5 capped at 4 -> s = 0, so prestare is left unpaired and wasted: (1 - 0.5) / 2
    mwe = TestMwe((0, 1), "pay attention", "fare attenzione")
    assert one(m, "prestare attenzione", mwe, [(0, 0), (1, 1)]) == pytest.approx(0.25)
    # one word, one use: "a poco a poco" against "a poco" pairs two of four words (mwe: all four found)
    mwe = TestMwe((0, 1), "little by little", "a poco a poco")
    assert one(m, "a poco", mwe, [(0, 0), (1, 1)]) == pytest.approx(0.5)
    assert one(given(MweScore, window=0, matching=MweMatching()), "a poco", mwe, [(0, 0), (1, 1)]) == 1.0
    # an inexact pair costs waste x its charge on top: telefonato <- telefonata (charge 1/10)
    mwe = TestMwe((0,), "called", "telefonato")
    assert one(m, "telefonata", mwe, [(0, 0)]) == pytest.approx(0.9 - 0.5 * 0.1)


def test_words_of_the_reference_sentence_are_not_charged():
    # "ora" aligned to the MWE is wasted, unless the reference sentence has it outside the MWE
    links = [(0, 0), (1, 1), (2, 2), (2, 1)]
    m = given(waste=0.5)
    assert one(m, "Lui ora torna .", COME_BACK, links) == pytest.approx(0.5)
    assert one(m, "Lui ora torna .", COME_BACK, links, reference="Lui ora torna .") == 1.0
    # a repeat of the MWE's own word is charged: the reference has "torna" only inside the MWE
    assert one(m, "Lui torna torna .", COME_BACK, links, reference="Lui torna .") == pytest.approx(0.5)


def test_word_order_penalty_on_the_pairing():
    mwe = TestMwe((0, 1), "pilot projects", "progetti pilota")
    m = given(window=0, waste=0.5)
    # both words paired: reversed, order factor 0; the best pairing keeps one word and wastes the other
    assert one(m, "pilota progetti", mwe, [(0, 1), (1, 0)]) == pytest.approx((1 - 0.5) / 2)
    assert one(given(MweScore, window=0), "pilota progetti", mwe, [(0, 1), (1, 0)]) == 0.0
    assert one(m, "progetti pilota", mwe, [(0, 1), (1, 0)]) == 1.0


VOCAB = ["fare", "attenzione", "prendere", "una", "decisione", "di", "a", "poco", "torna", "lui", "sacco",
         "un", "la", "casa", "il", "rosso", "filo", "per", "che"]


def near_misses(words: list[str], rng: random.Random) -> str:
    """A word that equals no reference word: another vocabulary word or a reference word with one
    letter changed, added or dropped."""
    while True:
        w = rng.choice(words + VOCAB)
        op = rng.randrange(4)
        if op == 1:
            k = rng.randrange(len(w))
            w = w[:k] + rng.choice("aeiourst") + w[k + 1:]
        elif op == 2:
            w = w + rng.choice("aeio")
        elif op == 3 and len(w) > 1:
            w = w[1:]
        if w not in words:
            return w


@pytest.mark.parametrize("waste", [DEFAULT_WASTE, 1.0])
def test_adding_words_never_raises_the_score(waste):
    """Random MWEs, hypotheses and alignments: insert words anywhere (none equal to a reference
    word), linked to the MWE's source tokens or not; mwe-p never rises. The recall score does."""
    rng = random.Random(36)
    metrics = {"window 1": given(waste=waste), "window 0": given(window=0, waste=waste)}
    recall = given(MweScore)
    recall_rose = 0
    for case in range(1500):
        ref = [rng.choice(VOCAB) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.2 and len(ref) > 1:
            ref.insert(rng.randint(1, len(ref) - 1), "...")
        mwe = TestMwe(tuple(range(rng.randint(1, 3))), "x", " ".join(ref))
        n_src = len(mwe.indices) + 3
        hyp = [rng.choice(VOCAB + [w for w in ref if w != "..."]) for _ in range(rng.randint(0, 8))]
        links = sorted({(rng.randrange(n_src), rng.randrange(len(hyp))) for _ in range(rng.randint(0, 2 * len(hyp)))}) \
            if hyp else []
        reference = " ".join(rng.choice(VOCAB) for _ in range(6)) if rng.random() < 0.5 else None
        new_hyp, new_links = list(hyp), list(links)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(new_hyp))
            new_hyp.insert(at, near_misses([w for w in ref if w != "..."], rng))
            new_links = [(i, j + (j >= at)) for i, j in new_links]
            if rng.random() < 0.6:
                new_links.append((rng.randrange(n_src), at))
        before_text, after_text = " ".join(hyp), " ".join(new_hyp)
        for name, m in metrics.items():
            before = one(m, before_text, mwe, links, reference)
            after = one(m, after_text, mwe, new_links, reference)
            assert after <= before + 1e-12, (name, case, mwe.reference, before_text, links, after_text, new_links,
                                             reference, before, after)
        recall_rose += one(recall, after_text, mwe, new_links) > one(recall, before_text, mwe, links) + 1e-12
    assert recall_rose > 0   # the property is mwe-p's: the recall score is raised by such words


def test_cli_score_and_run_config_take_mwe_p(tmp_path, capsys):
    from mwemt.cli import main

    t = tmp_path / "t.jsonl"
    t.write_text(json.dumps({"id": "s1", "source": "He come back .", "reference": "Lui torna .",
                             "mwes": [{"indices": [1, 2], "lemma": "come back", "reference": "torna"}]}) + "\n")
    (tmp_path / "forced.it").write_text("Lui ritornerà . torna .\n")
    (tmp_path / "forced.align").write_text("0-0 1-1 2-3 3-4\n")
    out = tmp_path / "s.json"
    assert main(["score", "--hyp", str(tmp_path / "forced.it"), "--align", str(tmp_path / "forced.align"),
                 "--testset", str(t), "--metrics", "mwe,mwe-p", "--lang", "it", "--json", "-o", str(out)]) == 0
    metrics = json.loads(out.read_text())["metrics"]
    assert metrics["mwe"]["systems"]["forced.it"]["score"] == 100.0
    assert metrics["mwe-p"]["systems"]["forced.it"]["score"] == pytest.approx(100 * (1 - DEFAULT_WASTE))
    assert "MWE-P|" in metrics["mwe-p"]["signature"] and "waste:" in metrics["mwe-p"]["signature"]

    from mwemt.experiments.config import PACKAGE_DATA, load_config

    cfg = load_config(PACKAGE_DATA / "demo" / "demo.yaml", ["tests.mwe.metrics=[bleu,mwe,mwe-p]"])
    assert cfg.tests["mwe"].metrics == ("bleu", "mwe", "mwe-p")
