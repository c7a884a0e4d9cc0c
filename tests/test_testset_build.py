"""MWE test sets by word alignment: the reference rule and filters by hand, the builder, and
`mwemt testset build` end to end into `mwemt score`."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.formats import read_testset
from mwemt.records import AnnotatedSentence, Mwe
from mwemt.testsets.aligned import (
    ReferenceFilters,
    aligned_reference,
    build_aligned_testset,
    filter_reason,
)


def test_unlinked_words_inside_the_span_join_the_translation():
    tgt = "il problema dell' accumulo è grande".split()
    ref = aligned_reference((0, 1), frozenset({(0, 3), (1, 1), (2, 4)}), tgt)
    assert (ref.text, ref.indices, ref.gaps, ref.span) == ("problema dell' accumulo", (1, 2, 3), 0, 3)
    # written detokenized, the MWE score's Moses tokenization gives back the hypothesis' tokens
    assert ref.detokenized("it") == "problema dell'accumulo"


def test_words_linked_elsewhere_make_a_gap():
    tgt = "ha già vinto un premio".split()
    ref = aligned_reference((0, 2), frozenset({(0, 0), (1, 1), (2, 2), (3, 4)}), tgt)
    assert (ref.text, ref.indices, ref.gaps) == ("ha ... vinto", (0, 2), 1)
    assert ref.detokenized("it") == "ha ... vinto"
    two = aligned_reference((0,), frozenset({(0, 0), (0, 2), (0, 4), (1, 1), (2, 3)}), tgt)
    assert two.text == "ha ... vinto ... premio" and two.gaps == 2


def test_punctuation_only_or_nothing_is_unaligned():
    tgt = "sì , certo".split()
    assert aligned_reference((0,), frozenset({(0, 1)}), tgt) is None
    assert aligned_reference((2,), frozenset({(0, 0)}), tgt) is None
    # punctuation at the edge is left out, inside the span it stays
    ref = aligned_reference((0, 1), frozenset({(0, 0), (0, 1), (1, 2)}), tgt)
    assert ref.text == "sì , certo"


def test_filters():
    f = ReferenceFilters(max_span_factor=2.0, max_span_slack=1, max_gaps=1)
    assert f.max_span(2) == 5
    tgt = [f"w{k}" for k in range(10)]
    assert filter_reason(None, 2, f) == "unaligned"
    long_ref = aligned_reference((0, 1), frozenset({(0, 0), (1, 5)}), tgt)  # span 6 > 5
    assert filter_reason(long_ref, 2, f) == "span_too_long"
    scattered = aligned_reference((0, 1), frozenset({(0, 0), (1, 2), (1, 4), (2, 1), (2, 3)}), tgt)
    assert scattered.gaps == 2 and filter_reason(scattered, 2, f) == "scattered"
    assert filter_reason(aligned_reference((0, 1), frozenset({(0, 0), (1, 1)}), tgt), 2, f) is None


def test_build_keeps_line_numbers_and_counts_filters():
    s1 = AnnotatedSentence("he took care of it".split(), "he take care of it".split(),
                           [Mwe((1, 2, 3), "take care of")])
    s2 = AnnotatedSentence("a lot".split(), "a lot".split(), [Mwe((0, 1), "a lot")])
    s3 = AnnotatedSentence("nothing here".split(), "nothing here".split())
    tgt = ["se ne è occupato".split(), "molto".split(), "niente qui".split()]
    links = [frozenset({(0, 0), (1, 3), (2, 3), (4, 1)}), frozenset(), frozenset({(0, 0), (1, 1)})]
    items, report = build_aligned_testset([s1, s2, s3], tgt, links, [3, 7, 9], tgt_lang="it")
    assert [it.id for it in items] == ["3"]
    (m,) = items[0].mwes
    assert (m.reference, m.lemma, m.name, m.surface, m.reference_indices) == (
        "occupato", "take care of", "take care of", "took care of", (3,))
    assert items[0].meta["alignment"] == "0-0 1-3 2-3 4-1"
    assert report.filtered["unaligned"] == 1 and report.mwes_found == 2 and report.mwes_kept == 1
    assert report.examples["unaligned"][0]["line"] == 7
    every, _ = build_aligned_testset([s1, s2, s3], tgt, links, [3, 7, 9], tgt_lang="it", all_sentences=True,
                                     raw=[("a", "b")] * 3)
    assert [it.id for it in every] == ["3", "7", "9"] and every[1].meta["filtered"][0]["reason"] == "unaligned"
    assert every[2].meta["raw_source"] == "a"


def _write(path, lines):
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def toy_files(toy_corpus, tmp_path):
    src, tgt, _ = toy_corpus
    raw_src = [x[:-2] + x[-1] for x in src]  # "... dog ." -> "... dog.": Moses splits it again
    return {"src": _write(tmp_path / "t.en", raw_src[:80]), "tgt": _write(tmp_path / "t.it", tgt[:80]),
            "xs": _write(tmp_path / "x.en", raw_src[80:]), "xt": _write(tmp_path / "x.it", tgt[80:]),
            "tsv": _write(tmp_path / "t.tsv", [f"{a}\t{b}" for a, b in zip(raw_src[:80], tgt[:80])]),
            "lex": _write(tmp_path / "lex.txt", ["take care of\tVID", "red house"]), "dir": tmp_path}


def test_testset_build_cli_into_score(toy_files, capsys):
    f = toy_files
    out, rep = f["dir"] / "test.jsonl", f["dir"] / "rep.json"
    common = ["--lexicon", f["lex"], "--extra", f["xs"], f["xt"], "--samplers", "1", "--cache", str(f["dir"] / "c"),
              "--max-per-type", "0"]
    assert main(["testset", "build", "--src", f["src"], "--tgt", f["tgt"], "-o", str(out), "--report", str(rep),
                 *common]) == 0
    items = read_testset(out)
    care = [(it, m) for it in items for m in it.mwes if m.name == "take care of"]
    assert [it.id for it, _ in care] == [str(k) for k in range(4, 81, 4)]  # every fourth line has it
    assert all(m.indices == (2, 3, 4) and m.category == "VID" and m.surface == "takes care of" for _, m in care)
    assert sum(m.reference == "accudisce" for _, m in care) >= 18
    houses = [(it, m) for it in items for m in it.mwes if m.name == "red house"]
    assert houses and all(m.reference == "casa rosso" and m.category == "" for _, m in houses)
    assert len(items) == len(care) + len(houses)
    report = json.loads(rep.read_text())
    assert report["mwes_found"] == len(items) and report["pairs"] == 80
    assert report["alignment"].startswith("eflomal-") and report["inputs"]["lexicon"]["sha256"]
    assert f"{len(items)} MWEs found" in capsys.readouterr().err

    # the TSV input gives the same test set (same tokens, so the cached alignment)
    out2 = f["dir"] / "tsv.jsonl"
    assert main(["testset", "build", "--tsv", f["tsv"], "-o", str(out2), *common]) == 0
    assert out2.read_text() == out.read_text()

    # what `testset build` writes is what `mwemt score` reads: the references score 100
    hyp = _write(f["dir"] / "hyp.it", [it.meta["raw_reference"] for it in items])
    scores = f["dir"] / "scores.json"
    assert main(["score", "--hyp", hyp, "--testset", str(out), "--metrics", "mwe,bleu", "--lang", "it",
                 "--json", "-o", str(scores)]) == 0
    mwe = json.loads(scores.read_text())["metrics"]["mwe"]["systems"]["hyp.it"]
    assert mwe["score"] == pytest.approx(100.0) and mwe["extra"]["mwes"] == len(items)

    # `mwemt align --testset` writes the alignment `mwemt score --align` reads (test-set tokens x
    # Moses tokens of the hypothesis)
    align_file = f["dir"] / "hyp.align"
    assert main(["align", "--testset", str(out), "--tgt", hyp, "--tgt-lang", "it", "--extra", f["xs"], f["xt"],
                 "--samplers", "1", "--cache", str(f["dir"] / "c"), "-o", str(align_file), "-q"]) == 0
    assert main(["score", "--hyp", hyp, "--testset", str(out), "--metrics", "mwe", "--lang", "it",
                 "--align", str(align_file), "--json", "-o", str(scores)]) == 0
    aligned = json.loads(scores.read_text())["metrics"]["mwe"]
    assert "align:given" in aligned["signature"] and aligned["systems"]["hyp.it"]["score"] > 90.0


def test_testset_build_cli_errors(toy_files, capsys):
    f = toy_files
    out = str(f["dir"] / "o.jsonl")
    assert main(["testset", "build", "--src", f["src"], "--lexicon", f["lex"], "-o", out, "--no-cache"]) == 2
    assert "--src and --tgt, or --tsv" in capsys.readouterr().err
    short = _write(f["dir"] / "short.it", ["uno"])
    assert main(["testset", "build", "--src", f["src"], "--tgt", short, "--lexicon", f["lex"], "-o", out,
                 "--no-cache"]) == 2
    assert "misaligned" in capsys.readouterr().err
    bad_tsv = _write(f["dir"] / "bad.tsv", ["a\tb", "only one column"])
    assert main(["testset", "build", "--tsv", bad_tsv, "--lexicon", f["lex"], "-o", out, "--no-cache"]) == 2
    assert "bad.tsv:2" in capsys.readouterr().err


def test_new_mwe_fields_round_trip_and_are_checked(tmp_path):
    from mwemt.errors import InputError
    from mwemt.formats import write_testset
    from mwemt.records import TestItem, TestMwe

    item = TestItem("4", "I have got it", "ce l' ho", [TestMwe((1, 2), "have get", "ce l' ho", "", "have got",
                                                                 name="have got", reference_indices=(0, 1, 2))])
    path = tmp_path / "t.jsonl"
    write_testset(path, [item])
    (back,) = read_testset(path)
    assert back.mwes[0] == item.mwes[0] and back.mwes[0].display_name == "have got"
    old_style = TestMwe((1, 2), "have get", "ce l' ho")
    assert old_style.display_name == "have get" and old_style.reference_indices == ()
    obj = json.loads(path.read_text())
    obj["mwes"][0]["reference_indices"] = [0, 5]
    path.write_text(json.dumps(obj) + "\n")
    with pytest.raises(InputError, match="t.jsonl:1: .*reference_indices"):
        read_testset(path)
