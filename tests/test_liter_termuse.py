"""LiTER and term use (issue 29, item 5), values computed by hand, and both through `mwemt score`."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.liter import Liter, word_dictionary
from mwemt.evaluate.registry import metric_names
from mwemt.evaluate.term_use import TermUse, read_terms
from mwemt.formats import write_testset
from mwemt.records import TestItem, TestMwe

PAIRS = [("spill", "versare"), ("spill", "rovesciare"), ("bean", "fagiolo"), ("beans", "fagioli"),
         ("spill the beans", "spifferare"), ("the", "il"), ("keep", "tenere"), ("eye", "occhio")]
SPILL = TestMwe((1, 2, 3), "spill the bean", "spifferare", surface="spilled the beans", part="idiomatic")


def test_word_dictionary_keeps_single_words():
    d = word_dictionary(PAIRS)
    assert d["spill"] == {"versare", "rovesciare"} and "spill the beans" not in d


def test_liter_by_hand():
    liter = Liter(word_dictionary(PAIRS), "it")
    # blocklist: spilled -> (lemma spill) versare, rovesciare; beans -> fagioli, (lemma bean) fagiolo; "the" is a
    # function word; nothing of the reference "ha spifferato tutto" is in it
    assert liter.blocklist(SPILL, "ha spifferato tutto") == {"versare", "rovesciare", "fagioli", "fagiolo"}
    hyps = ["ha versato i fagioli", "ha spifferato tutto"]
    refs = [[SPILL], [SPILL]]
    stats = liter.sentence_stats(hyps, refs, references=["ha spifferato tutto"] * 2)
    assert stats.rows.tolist() == [[1.0, 1.0], [0.0, 1.0]]  # "versato" is versare by lemma
    assert liter.score_from_totals(stats.totals()) == 50.0
    sig = str(liter.signature(stats))
    assert "mwes:idiomatic" in sig and "minus:ref-sentence" in sig and "lower:better" in sig


def test_liter_removes_reference_words_and_skips_literal_part():
    liter = Liter(word_dictionary(PAIRS), "it")
    # the reference itself says "rovesciato i fagioli": rovesciare and fagiolo (by lemma) and fagioli leave it
    assert liter.blocklist(SPILL, "ha rovesciato i fagioli") == {"versare"}
    literal_part = TestMwe((0, 1), "keep eye", "tenere d'occhio", surface="keep eye", part="literal")
    stats = liter.sentence_stats(["ha tenuto gli occhi"], [[literal_part]], references=["x"])
    assert stats.rows.tolist() == [[0.0, 0.0]]  # only idiomatic MWEs count when the test has parts
    # without parts every MWE counts; "tenuto" (tenere) and "occhi" (occhio) are literal
    no_part = TestMwe((0, 1), "keep eye", "tenere d'occhio", surface="keep eye")
    stats = liter.sentence_stats(["ha tenuto gli occhi"], [[no_part]], references=["la sorvegliava"])
    assert stats.rows.tolist() == [[1.0, 1.0]] and stats.info["idiomatic_only"] is False
    unknown = TestMwe((0, 1), "kick bucket", "morire", surface="kick bucket")
    stats = liter.sentence_stats(["è morto"], [[unknown]], references=["è morto"])
    assert stats.rows.tolist() == [[0.0, 0.0]] and stats.info["mwes_without_blocklist"] == 1
    with pytest.raises(MwemtError):
        Liter({}, "it")


TERMS = {"keep in touch": [("restare", "in", "contatto")], "win": [("ha", "...", "vinto")]}
KEEP = TestMwe((0, 1, 2), "keep in touch", "restare in contatto", name="keep in touch")
WIN = TestMwe((0,), "win", "ha vinto", name="win")
OTHER = TestMwe((0, 1), "give up", "rinunciare", name="give up")


def test_term_use_exact_and_lemma_by_hand():
    exact, lemma = TermUse(TERMS, "it"), TermUse(TERMS, "it", match="lemma")
    hyps = ["restiamo in contatto", "ha già vinto", "ok"]
    refs = [[KEEP, OTHER], [WIN], [KEEP]]
    s = exact.sentence_stats(hyps, refs)
    # exact: "restiamo" is not "restare" (0 of 1); "ha ... vinto" with one word between (1 of 1); "ok" (0 of 1);
    # give up has no given translation: not counted
    assert s.rows.tolist() == [[0.0, 1.0], [1.0, 1.0], [0.0, 1.0]] and s.info["mwes_without_terms"] == 1
    assert exact.score_from_totals(s.totals()) == pytest.approx(100 / 3)
    s2 = lemma.sentence_stats(hyps, refs)
    assert s2.rows.tolist() == [[1.0, 1.0], [1.0, 1.0], [0.0, 1.0]]
    assert lemma.score_from_totals(s2.totals()) == pytest.approx(200 / 3)
    # a gap of more than 3 words is too far
    assert not exact.uses("ha a b c d vinto".split(), ("ha", "...", "vinto"))
    assert "match:lemma:simplemma" in str(lemma.signature(s2))


def test_read_terms_tsv_and_table(tmp_path):
    p = tmp_path / "terms.tsv"
    p.write_text("# terms\nKeep in touch\trestare in contatto\nkeep in touch\tsentirsi\n")
    assert read_terms(p) == {"keep in touch": (("restare", "in", "contatto"), ("sentirsi",))}
    p.write_text("keep in touch\n")
    with pytest.raises(InputError, match=r"terms\.tsv:1"):
        read_terms(p)


def test_registered_and_scored_by_the_cli(tmp_path):
    assert {"liter", "term-use"} <= set(metric_names())
    write_testset(tmp_path / "t.jsonl", [TestItem("1", "he spilled the beans", "ha spifferato tutto", [SPILL]),
                                         TestItem("2", "keep in touch", "restiamo in contatto", [KEEP])])
    (tmp_path / "hyp.it").write_text("ha versato i fagioli\nrestiamo in contatto\n")
    (tmp_path / "dict.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in PAIRS))
    (tmp_path / "terms.tsv").write_text("keep in touch\trestare in contatto\n")
    out = tmp_path / "s.json"
    assert main(["score", "--hyp", str(tmp_path / "hyp.it"), "--testset", str(tmp_path / "t.jsonl"),
                 "--metrics", "liter,term-use", "--lang", "it", "--dictionary", str(tmp_path / "dict.tsv"),
                 "--dictionary-format", "bilingual", "--terms", str(tmp_path / "terms.tsv"), "--term-match", "lemma",
                 "--json", "-o", str(out)]) == 0
    text = json.dumps(json.loads(out.read_text()))
    # LiTER: the one idiomatic MWE is literal -> 100; term use: 1 of 1 by lemma -> 100
    assert "LiTER|" in text and "TermUse|" in text
    obj = json.loads(out.read_text())
    scores = {m["metric"] if "metric" in m else m["key"]: m for m in obj["metrics"]} if isinstance(
        obj["metrics"], list) else obj["metrics"]
    assert json.dumps(scores).count('"score": 100.0') >= 2
    assert main(["score", "--hyp", str(tmp_path / "hyp.it"), "--testset", str(tmp_path / "t.jsonl"),
                 "--metrics", "liter", "--lang", "it"]) == 2  # no --dictionary
