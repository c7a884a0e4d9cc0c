"""The TED MWE test-set converter: locating typed MWEs, the JSONL records, bad input, the CLI."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.errors import InputError
from mwemt.formats import read_testset
from mwemt.testsets.testset import (
    PAIRS_COLUMNS,
    Pattern,
    TokenMatcher,
    build_ted_testset,
    locate_mwe,
    mwe_patterns,
    read_ted_pairs,
)


@pytest.fixture(scope="module")
def matcher():
    return TokenMatcher()


def toks(s: str) -> list[str]:
    return s.split()


def test_patterns_drop_ellipsis_and_try_moses(matcher):
    assert mwe_patterns("Set...up") == [Pattern(("set", "up"), frozenset({0}))]
    assert mwe_patterns("in the corner of ...") == [Pattern(("in", "the", "corner", "of"), frozenset())]
    pats = mwe_patterns("let's look to")
    assert pats[0].tokens == ("let's", "look", "to") and pats[1].tokens == ("let", "'s", "look", "to")


@pytest.mark.parametrize("source,mwe,indices,how", [
    ("so , i 've known a lot of fish .", "a lot of", (5, 6, 7), "exact"),
    ("she kind of set us up .", "set...up", (3, 5), "gap"),
    ("almost every way we make electricity today", "make electicity", (4, 5), "fuzzy"),
    ("the nuclear plants puts out co2", "put out", (3, 4), "fuzzy"),
    ("we 're not that good at doing that", "we 're not that good at", (0, 1, 2, 3, 4, 5), "exact"),
])
def test_locate(matcher, source, mwe, indices, how):
    best = min((loc for p in mwe_patterns(mwe) if (loc := locate_mwe(toks(source), p, matcher))),
               key=lambda loc: loc.cost)
    assert best.indices == indices and best.how == how


def test_locate_prefers_exact_then_marked_gap_then_tight(matcher):
    src = toks("he gave the old car up , then he gave up again .")
    assert locate_mwe(src, ["gave", "up"], matcher).indices == (9, 10)
    assert locate_mwe(src, mwe_patterns("gave ... up")[0], matcher).indices == (1, 5)
    assert locate_mwe(src, ["gave", "up"], matcher, exclude=[(9, 10)]).indices == (1, 5)
    assert locate_mwe(src, ["gave", "up"], matcher, max_gap=2).indices == (9, 10)
    assert locate_mwe(src, ["gave", "up"], matcher, max_gap=2, exclude=[(9, 10)]) is None
    assert locate_mwe(src, ["glass", "ceiling"], matcher) is None
    assert locate_mwe(toks("a cat"), ["cut"], matcher) is None  # short words need to be equal


def test_fixture_testset_all_sentences(fixtures, matcher):
    d = fixtures / "testset"
    rows = read_ted_pairs(d / "pairs.tsv")
    assert [r.line for r in rows] == [3, 4, 5, 6, 7, 8, 9]  # annotator 0's row is left out
    src = (d / "ted.en").read_text(encoding="utf-8").splitlines()
    ref = (d / "ted.it").read_text(encoding="utf-8").splitlines()
    items, rep = build_ted_testset(rows, ted_sources=src, ted_references=ref, all_sentences=True,
                                   matcher=matcher)
    assert [i.id for i in items] == ["1", "2", "3", "4", "5", "6"]
    assert rep.located == {"exact": 4, "gap": 1, "fuzzy": 1}
    assert [u["mwe_en"] for u in rep.unlocated] == ["glass ceiling"] and rep.empty_references == 1
    i1, i2, i3, i4, i5, _ = items
    assert (i1.mwes[0].indices, i1.mwes[0].lemma, i1.mwes[0].reference) == ((1, 2, 3), "take care of",
                                                                             "si è presa cura")
    assert i2.mwes[0].indices == (0, 1, 2, 3, 4, 5)  # "let's" typed untokenized
    assert [m.indices for m in i3.mwes] == [(1, 5), (9, 10)]
    assert i4.mwes == [] and "mwe_checks" not in i4.meta
    assert i5.mwes[0].surface == "ivory tower"
    check = i5.meta["mwe_checks"][0]
    assert (check["mwe_en"], check["correct"], check["ref_ok"], check["mt_ok"], check["match"]) == (
        "ivory towr", "torre d'avorio", False, True, "fuzzy")
    assert i5.meta["unlocated"][0]["mwe_en"] == "glass ceiling"
    # "live in" is located but has no reference translation: on record, never among the scored MWEs
    assert [m.surface for m in i5.mwes] == ["ivory tower"]
    (no_ref,) = i5.meta["no_reference"]
    assert (no_ref["mwe_en"], no_ref["indices"], no_ref["match"]) == ("live in", [1, 2], "exact")
    assert len(i5.meta["mwe_checks"]) == len(i5.mwes)
    assert i1.meta["mt_it"] == "ha preso cura del giardino ."


def test_keep_unlocated_keeps_them_with_empty_indices(fixtures, matcher):
    rows = read_ted_pairs(fixtures / "testset" / "pairs.tsv")
    items, _ = build_ted_testset(rows, keep_unlocated=True, matcher=matcher)
    assert [i.id for i in items] == ["1", "2", "3", "5"]
    kept = items[-1].mwes[1]
    assert (kept.indices, kept.lemma, items[-1].meta["mwe_checks"][1]["match"]) == ((), "glass ceiling", "none")


def _pairs(tmp_path, *rows: str, header: str = "\t".join(PAIRS_COLUMNS)):
    p = tmp_path / "p.tsv"
    p.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return p


GOOD = "1\tFINAL\ta b c\tx y z\tx y\ta b\tx y\tY\t\tx y\tY"


@pytest.mark.parametrize("rows,header,line,message", [
    ([GOOD], "snt_id\tannotator", 1, "header"),
    ([GOOD, "2\tFINAL\ta b"], None, 3, "3 TAB-separated columns"),
    (["x" + GOOD[1:]], None, 2, "snt_id 'x'"),
    ([GOOD, GOOD.replace("a b c", "a b d")], None, 3, "different source_en"),
    ([GOOD.replace("FINAL", "0")], None, None, "no rows for annotator 'FINAL'"),
])
def test_bad_pairs_files(tmp_path, rows, header, line, message):
    p = _pairs(tmp_path, *rows, **({"header": header} if header else {}))
    with pytest.raises(InputError) as err:
        read_ted_pairs(p)
    assert message in str(err.value) and err.value.line == line and err.value.path == str(p)


def test_pairs_must_agree_with_ted_files(tmp_path, matcher):
    rows = read_ted_pairs(_pairs(tmp_path, GOOD))
    with pytest.raises(InputError, match="differs from line 1 of the TED source"):
        build_ted_testset(rows, ted_sources=["a b d"], ted_references=["x y z"], matcher=matcher)
    with pytest.raises(InputError, match="past the 0 lines"):
        build_ted_testset(rows, ted_sources=[], ted_references=[], matcher=matcher)


def test_cli_from_ted(fixtures, tmp_path, capsys):
    d = fixtures / "testset"
    out, rep = tmp_path / "t.jsonl", tmp_path / "r.json"
    assert main(["testset", "from-ted", "--pairs", str(d / "pairs.tsv"), "--ted-source", str(d / "ted.en"),
                 "--ted-reference", str(d / "ted.it"), "--all-sentences", "--out", str(out),
                 "--report", str(rep)]) == 0
    err = capsys.readouterr().err
    assert "1 not found" in err and "pairs.tsv:8 sentence 5: 'glass ceiling'" in err
    assert "1 without a reference translation (not scored" in err
    items = read_testset(out)  # the reader refuses an MWE with an empty reference: none was written
    assert len(items) == 6 and sum(len(i.mwes) for i in items) == 5
    report = json.loads(rep.read_text(encoding="utf-8"))
    assert report["unlocated"] == 1 and report["items"] == 6 and "sha256" in report["inputs"]["pairs"]
    assert main(["testset", "from-ted", "--pairs", str(d / "pairs.tsv"), "--all-sentences",
                 "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--all-sentences needs" in capsys.readouterr().err


def test_real_ted_annotation(shared, matcher):
    d = shared / "testsets" / "zaninello-en-it"
    rows = read_ted_pairs(d / "derived" / "test_ted.mwe_pairs.tsv")
    src = (d / "datasets" / "test" / "test_ted.en").read_text(encoding="utf-8").splitlines()
    ref = (d / "datasets" / "test" / "test_ted.txt").read_text(encoding="utf-8").splitlines()
    items, rep = build_ted_testset(rows, ted_sources=src, ted_references=ref, all_sentences=True,
                                   matcher=matcher)
    assert len(rows) == 1293 and len(items) == 1529 and rep.sentences_with_mwes == 669
    # the numbers documented in docs/identification.md
    assert rep.located == {"exact": 1187, "gap": 80, "fuzzy": 23} and len(rep.unlocated) == 3
