"""Issue 37 items 3 and 4: one meaning per score column, and no contradictory test in a run config.

3. A test with both `source`/`reference` and `testset` was accepted and only `testset` was scored;
   now the config is refused at its edge, naming file, line and what is expected (exit 2).
4. `mwemt score --mwe-alternatives table` changed the `mwe` column too, so `--metrics mwe,mwe-alts`
   printed two identical columns; now `mwe` is always the single-reference score (as in `mwemt run`)
   and the alternatives only feed `mwe-alts`.
"""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.experiments.config import load_config
from mwemt.formats import write_testset
from mwemt.records import TestItem, TestMwe
from mwemt.schema import ConfigError
from mwemt.testsets.mwe_table import MweTranslationTable, TableEntry
from tests.conftest import FIXTURES

# ---------------------------------------------------------------- 4: one meaning per column

MWE = TestMwe((2, 3, 4), "keep in touch", "restare in contatto", name="keep in touch", alternatives=("sentirci",))
SOURCE = "we must keep in touch"
HYP = "dobbiamo sentirci presto"     # the test item's alternative and the table's translation, not the reference


@pytest.fixture
def scored(tmp_path):
    write_testset(tmp_path / "t.jsonl", [TestItem("1", SOURCE, "dobbiamo restare in contatto", [MWE])])
    (tmp_path / "hyp.it").write_text(HYP + "\n")
    table = MweTranslationTable({"keep in touch": [TableEntry(("sentirci",), 2, frozenset({"aligned"}))]})
    table.write(tmp_path / "table.jsonl")
    return tmp_path


def _score(d, metrics: str, *extra: str) -> dict:
    out = d / f"{metrics}-{len(extra)}.json"
    assert main(["score", "--hyp", str(d / "hyp.it"), "--testset", str(d / "t.jsonl"), "--metrics", metrics,
                 "--lang", "it", "--align", "none", "--mwe-match", "char", "--mwe-window", "0", "--json",
                 "-o", str(out), *extra]) == 0
    return json.loads(out.read_text())["metrics"]


@pytest.mark.parametrize("mode", ["testset", "table"])
def test_mwe_column_is_the_single_reference_whatever_mwe_alternatives_says(scored, mode):
    single = _score(scored, "mwe")["mwe"]
    both = _score(scored, "mwe,mwe-alts", "--mwe-alternatives", mode, "--mwe-table", str(scored / "table.jsonl"))
    mwe, alts = both["mwe"]["systems"]["hyp.it"]["score"], both["mwe-alts"]["systems"]["hyp.it"]["score"]
    assert mwe == single["systems"]["hyp.it"]["score"] < 50.0     # was 100.0: the alternatives' score
    assert alts == 100.0
    assert both["mwe"]["signature"] == single["signature"] and "alts:" not in both["mwe"]["signature"]
    assert f"alts:{mode}" in both["mwe-alts"]["signature"]


def test_mwe_alternatives_without_mwe_alts_is_refused(scored, capsys):
    code = main(["score", "--hyp", str(scored / "hyp.it"), "--testset", str(scored / "t.jsonl"), "--metrics", "mwe",
                 "--lang", "it", "--align", "none", "--mwe-alternatives", "testset"])
    err = capsys.readouterr().err
    assert code == 2, err                                          # was 0, and `mwe` scored the alternatives
    assert "--mwe-alternatives testset only affects the mwe-alts metric" in err and "add mwe-alts" in err
    (scored / "hyp2.it").write_text("dobbiamo restare in contatto\n")
    code = main(["compare", "--hyp", str(scored / "hyp.it"), "--hyp", str(scored / "hyp2.it"), "--testset",
                 str(scored / "t.jsonl"), "--lang", "it", "--mwe-alternatives", "testset", "-q",
                 "-o", str(scored / "report")])
    err = capsys.readouterr().err
    assert code == 2 and "only affects the mwe-alts metric" in err, err
    assert not (scored / "report").exists()


# ---------------------------------------------------------------- 3: contradictory test settings

NMT = FIXTURES / "nmt"
TESTSET = FIXTURES / "eval" / "testset.jsonl"


def _config(tmp_path, test: str):
    path = tmp_path / "exp.yaml"
    path.write_text(f"""\
name: t
data:
  train: {NMT}/train
  valid: {NMT}/valid
tests:
  general:
{test}
systems:
  baseline: {{}}
""", encoding="utf-8")
    return path


@pytest.mark.parametrize("key, line", [("source", 8), ("reference", 8), ("from_ted", 8)])
def test_a_test_with_testset_and_another_text_is_refused_at_the_config_edge(tmp_path, key, line):
    other = {"source": f"{NMT}/valid.en", "reference": f"{NMT}/valid.it", "from_ted": f"{NMT}/valid.it"}[key]
    path = _config(tmp_path, f"    testset: {TESTSET}\n    {key}: {other}")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    assert f"{path}:{line}" in text and f"tests.general.{key}: `testset` brings its own sources and references" in text
    assert "only `testset` is scored" in text
    assert "expected either `testset` (JSONL), or `source` and `reference`" in text


def test_source_reference_and_testset_stop_mwemt_run_with_exit_2(tmp_path, capsys):
    path = _config(tmp_path, f"    source: {NMT}/valid.en\n    reference: {NMT}/valid.it\n    testset: {TESTSET}")
    code = main(["run", str(path), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 2, err                                          # was accepted; only `testset` was scored
    assert f"{path}:7: tests.general.source: `testset` brings its own sources and references" in err


def test_each_kind_of_test_alone_is_still_accepted(tmp_path):
    assert load_config(_config(tmp_path, f"    testset: {TESTSET}")).tests["general"].testset == str(TESTSET)
    cfg = load_config(_config(tmp_path, f"    source: {NMT}/valid.en\n    reference: {NMT}/valid.it"))
    assert cfg.tests["general"].testset is None and cfg.tests["general"].source == f"{NMT}/valid.en"
