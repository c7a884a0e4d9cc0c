"""Literal-reading estimates from a raw corpus, for lexicons without training data."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from mwemt.cli import main
from mwemt.errors import InputError
from mwemt.preprocess.annotate import Annotator
from mwemt.preprocess.corpus_filters import (
    CorpusFilterModel,
    CorpusStats,
    CorpusThresholds,
    estimate_for_gaps,
    estimate_from_corpus,
    excess,
    expected_counts,
)
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.records import LexiconEntry, Mwe

# "ivory tower" only ever occurs contiguously; "look up" also across a gap (the gapped uses are the
# verb's: "look it up"); "of" and "the" are frequent but rarely meet: no more than chance predicts.
CORPUS = (["she lives in an ivory tower ."] * 6 + ["they look it up ."] * 4 + ["we look up words ."] * 3
          + ["the cat of mine saw the dog of yours ."] * 8 + ["a part of the plan ."]
          + ["the ivory and the tower stood near ."] * 1)


@pytest.fixture
def corpus_file(tmp_path):
    p = tmp_path / "raw.txt"
    p.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    return p


def lexicon() -> Lexicon:
    return Lexicon([LexiconEntry(("ivory", "tower")), LexiconEntry(("look", "up")), LexiconEntry(("of", "the"))],
                   get_lemmatizer("none"), tokenize_entries=False)


def test_excess_and_expected_counts():
    assert excess(9, 1.5) == pytest.approx(0.75)
    assert excess(2, 5.0) == 0.0 and excess(0, 1.0) == 0.0 and excess(1, 0.0) == 0.5
    freq = Counter({"a": 10, "b": 5})
    fixed, gapped = expected_counts(("a", "b"), freq, 100, 10, 2)
    assert fixed == pytest.approx(90 * 0.1 * 0.05) and gapped == pytest.approx(2 * fixed)


def test_counts_and_estimates(corpus_file):
    m = estimate_from_corpus(lexicon(), corpus_file, lemmatizer="none", pretokenized=True,
                             thresholds=CorpusThresholds(max_gap=2))
    ivory, look, of_the = m.entries["ivory tower"], m.entries["look up"], m.entries["of the"]
    assert (ivory.fixed, ivory.gapped) == (6, 1) and (look.fixed, look.gapped) == (3, 4)
    assert ivory.association > 0.8 and look.variability > 0.6 and ivory.variability < 0.5
    assert of_the.association < 0.5  # frequent words meet this often by chance
    assert m.meta["source"]["sentences"] == len(CORPUS)


def test_judging_and_the_two_filters(corpus_file):
    m = estimate_for_gaps(lexicon(), corpus_file, [2], lemmatizer="none", pretokenized=True,
                          thresholds=CorpusThresholds(min_association=0.5, min_variability=0.5))[2]
    ann = Annotator(lexicon(), lemmatizer="none", max_gap=2, pretokenized=True, filters=m)
    sent = ann.annotate_tokens("look it up near the ivory and the tower of the day".split())
    assert {(x.lemma, x.indices) for x in sent.mwes} == {("look up", (0, 2))}
    assert {(x.lemma, why) for x, why in sent.rejected} == {("ivory tower", "variability"), ("of the", "association")}
    off = Annotator(lexicon(), lemmatizer="none", max_gap=2, pretokenized=True, filters=m.without(["association"]))
    assert "of the" in {x.lemma for x in off.annotate_tokens("part of the day".split()).mwes}
    unseen = CorpusFilterModel({"ivory tower": CorpusStats()}, CorpusThresholds())
    assert unseen.judge(Mwe((0, 1), "ivory tower")) == (None, None)


def test_saved_and_loaded(corpus_file, tmp_path):
    m = estimate_from_corpus(lexicon(), corpus_file, lemmatizer="none", pretokenized=True)
    m.save(tmp_path / "c.json")
    back = CorpusFilterModel.load(tmp_path / "c.json")
    assert back.fingerprint() == m.fingerprint() and back.thresholds == m.thresholds
    (tmp_path / "bad.json").write_text(json.dumps({"kind": "mwemt-corpus-filters", "version": 9}), encoding="utf-8")
    with pytest.raises(InputError, match="corpus filter model version 9"):
        CorpusFilterModel.load(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps({"kind": "mwemt-identification-filters"}), encoding="utf-8")
    with pytest.raises(InputError, match="not a corpus filter model"):
        CorpusFilterModel.load(tmp_path / "bad.json")


def test_cli_uses_a_raw_corpus_only_when_given(corpus_file, tmp_path):
    lex = tmp_path / "lex.txt"
    lex.write_text("ivory tower\nlook up\nof the\n", encoding="utf-8")
    text = tmp_path / "in.txt"
    text.write_text("look it up near the ivory and the tower\n", encoding="utf-8")
    out, rep = tmp_path / "out.txt", tmp_path / "rep.json"
    args = ["annotate", "-l", str(lex), "--lemmatizer", "none", "--pretokenized", "-e", "iob", "-i", str(text),
            "-o", str(out), "--report", str(rep), "--max-gap", "2", "-q"]
    assert main(args) == 0
    report = json.loads(rep.read_text(encoding="utf-8"))
    assert report["filters"]["active"] == [] and "no training data" in report["filters"]["note"]
    assert main(args + ["--raw-corpus", str(corpus_file), "--save-filters", str(tmp_path / "c.json")]) == 0
    report = json.loads(rep.read_text(encoding="utf-8"))
    # default thresholds: no association threshold; variability >= 0.75 removes both gapped matches
    # (look ... up meets across a gap 4 times in this tiny corpus: 0.70 after smoothing)
    assert report["filters"]["removed"] == {"variability": 2}
    assert CorpusFilterModel.load(tmp_path / "c.json").signature in report["signature"]
