"""Every attested translation counts (issue 29, item 4): the MWE score credits the closest acceptable
translation in the alternatives mode, names it in the signature, and single-reference scoring is
unchanged. Values worked by hand with character matching (charge = min(d, len) / len)."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.errors import MwemtError
from mwemt.evaluate.mwe_match import MweMatching
from mwemt.evaluate.mwe_score import MweScore
from mwemt.formats import read_testset, write_testset
from mwemt.records import TestItem, TestMwe
from mwemt.testsets.mwe_table import MweTranslationTable, TableEntry


def _score(mode: str = "none", table=None, min_count: int = 1) -> MweScore:
    return MweScore("it", pretokenized=True, align="none", matching=MweMatching(), alternatives=mode, table=table,
                    table_min_count=min_count, table_name="t.jsonl" if table is not None else "")


MWE = TestMwe((0, 1, 2), "keep in touch", "restare in contatto", name="keep in touch",
              alternatives=("sentirsi",))
HYP = "dobbiamo sentirsi presto"


def test_single_reference_mode_is_unchanged():
    # mode none: the alternatives an item carries play no part; "in" and "contatto" have no hypothesis word
    # within len edits (charge 1 each), so the score is below 1/3 whatever "restare" gets
    single = _score().score_sentence(HYP, [MWE]).mwe_scores[0]
    plain = _score().score_sentence(HYP, [TestMwe((0, 1, 2), "keep in touch", "restare in contatto")]).mwe_scores[0]
    assert single == plain and single < 1 / 3
    assert _score().signature().get("alts") is None  # no alts field: the single reference


def test_alternatives_credit_the_closest_translation():
    # the test item's alternative "sentirsi" is in the hypothesis: charge 0 -> 1.0, above the reference's score
    got = _score("testset").score_sentence(HYP, [MWE]).mwe_scores[0]
    assert got == 1.0
    assert _score("testset").signature().get("alts") == "testset"
    # two alternatives: "sentirci" is 2 edits from "sentirsi" (c->s... r-c-i vs r-s-i: 1 substitution) -> 7/8;
    # "tenersi in contatto": tenersi vs sentirsi d=3 -> 1-3/7; in, contatto: 1 each -> (4/7)/3; the max is 7/8
    two = TestMwe((0, 1, 2), "keep in touch", "zzzz", alternatives=("tenersi in contatto", "sentirci"))
    assert _score("testset").score_sentence(HYP, [two]).mwe_scores[0] == pytest.approx(1 - 1 / 8)


def test_table_alternatives_follow_the_mwe_type_and_min_count():
    table = MweTranslationTable({"keep in touch": [TableEntry(("sentirsi",), 1, frozenset({"aligned"})),
                                                   TableEntry(("restare", "in", "contatto"), 5,
                                                              frozenset({"aligned"}))]})
    mwe = TestMwe((0, 1, 2), "keep in touch", "zzzz", name="Keep in touch")
    assert _score("table", table).score_sentence(HYP, [mwe]).mwe_scores[0] == 1.0
    # at min_count 2 "sentirsi" (seen once) no longer counts; "zzzz" and "restare in contatto" stay below 1
    assert _score("table", table, 2).score_sentence(HYP, [mwe]).mwe_scores[0] < 1.0
    sig = _score("table", table, 2).signature()
    assert sig.get("alts") == "table[t.jsonl,keys1,min2]"
    # the reference "zzzz" alone: every letter a miss -> 0
    assert _score().score_sentence(HYP, [mwe]).mwe_scores[0] == 0.0


def test_alternatives_need_a_table_and_no_compat():
    with pytest.raises(MwemtError, match="table"):
        MweScore("it", align="none", alternatives="table")
    with pytest.raises(MwemtError, match="single reference"):
        MweScore("it", compat="zaninello2020", alternatives="testset")
    with pytest.raises(MwemtError):
        MweScore("it", align="none", alternatives="all")


def test_testset_round_trips_alternatives(tmp_path):
    item = TestItem("1", "keep in touch", "restare in contatto", [MWE])
    write_testset(tmp_path / "t.jsonl", [item])
    assert read_testset(tmp_path / "t.jsonl")[0].mwes[0].alternatives == ("sentirsi",)
    bad = json.loads((tmp_path / "t.jsonl").read_text())
    bad["mwes"][0]["alternatives"] = ["ok", ""]
    (tmp_path / "bad.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(MwemtError, match=r"bad\.jsonl:1"):
        read_testset(tmp_path / "bad.jsonl")


def test_cli_score_with_table_alternatives(tmp_path, capsys):
    mwe = TestMwe((0, 1, 2), "keep in touch", "zzzz", name="keep in touch")
    write_testset(tmp_path / "t.jsonl", [TestItem("1", "keep in touch", "zzzz", [mwe])])
    (tmp_path / "hyp.it").write_text(HYP + "\n")
    table = MweTranslationTable({"keep in touch": [TableEntry(("sentirsi",), 2, frozenset({"aligned"}))]})
    table.write(tmp_path / "table.jsonl")
    base = ["score", "--hyp", str(tmp_path / "hyp.it"), "--testset", str(tmp_path / "t.jsonl"), "--metrics", "mwe",
            "--lang", "it", "--align", "none", "--mwe-match", "char", "--mwe-window", "0", "--json"]
    assert main(base + ["-o", str(tmp_path / "single.json")]) == 0
    both = [*base[:6], "mwe,mwe-alts", *base[7:]]
    assert main(both + ["--mwe-alternatives", "table", "--mwe-table", str(tmp_path / "table.jsonl"),
                        "-o", str(tmp_path / "alts.json")]) == 0
    single = json.loads((tmp_path / "single.json").read_text())
    alts = json.loads((tmp_path / "alts.json").read_text())

    s, a = json.dumps(single["metrics"]["mwe"]), json.dumps(alts["metrics"]["mwe-alts"])
    assert '"score": 0.0' in s and "alts:" not in s
    assert '"score": 100.0' in a and "alts:table[table.jsonl,keys1,min1]" in a
    # mwe stays the single-reference score beside it (issue 37 item 4)
    assert alts["metrics"]["mwe"] == {**single["metrics"]["mwe"]}
    assert "table" in json.dumps(alts["provenance"]["inputs"])
    assert main(both + ["--mwe-alternatives", "table", "-o", str(tmp_path / "x.json")]) == 2
