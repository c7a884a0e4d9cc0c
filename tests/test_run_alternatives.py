"""The MWE translation table and the alternatives inside `mwemt run` (issue 29).

On the demo data bundled with mwemt (no model is trained): a test built in the run gets its MWEs'
alternatives from the run's one MWE translation table (the table stage runs once however many
readers it has), scoring reports the single-reference `mwe` and `mwe-alts` side by side with
different signatures (and LiTER and term use beside them), and a config that uses none of this
keeps the stage keys it had.
"""

from __future__ import annotations

import io
import json
from dataclasses import fields

import pytest

from mwemt.cli import main
from mwemt.errors import MwemtError
from mwemt.experiments import stages as S
from mwemt.experiments.config import PACKAGE_DATA, config_from_data
from mwemt.experiments.experiment import Pipeline, count_stages
from mwemt.experiments.publish import PublishedTest, publish_run
from mwemt.experiments.runner import Runner
from mwemt.fileio import write_lines
from mwemt.formats import read_testset
from mwemt.schema import to_plain

# the score stage's section as it was before issue 29 (its key must not change for such configs)
OLD_SCORE_FIELDS = ["metrics", "systems", "lang", "lowercase", "bootstrap", "bootstrap_seed", "mwe_average",
                    "target_lexicon_format"]


def _raw(tests: dict, systems: dict | None = None, **data) -> dict:
    return {"name": "alts", "data": {"train": "package:demo/train", "valid": "package:demo/dev",
                                     "lexicon": "package:demo/lexicon.en.txt", **data},
            "tests": tests, "systems": systems or {"baseline": {}}, "score": {"bootstrap": 50}}


def _config(tests: dict, systems: dict | None = None, **data) -> object:
    return config_from_data(_raw(tests, systems, **data))


BUILT = {"source": "package:demo/test.en", "reference": "package:demo/test.it", "role": "mwe",
         "build": {"alignment_extra": 0, "samplers": 1, "max_per_type": 0}}


def test_build_table_defaults_and_checks():
    # no table anywhere and no metric that reads alternatives: none (the test set is built as before)
    cfg = _config({"t": {**BUILT, "metrics": ["bleu", "mwe"]}})
    assert cfg.tests["t"].build.table == "none"
    # the test scores mwe-alts: its alternatives come from the run's table
    cfg = _config({"t": {**BUILT, "metrics": ["mwe", "mwe-alts"]}})
    assert cfg.tests["t"].build.table == "run"
    # a system already needs the run's table: the test uses it too
    cfg = _config({"t": {**BUILT, "metrics": ["mwe"]}},
                  {"baseline": {}, "cd": {"model_of": "baseline", "translate": {"constraints": "unordered"}}})
    assert cfg.tests["t"].build.table == "run"
    # given explicitly, never overridden
    cfg = _config({"t": {**BUILT, "metrics": ["mwe-alts"], "build": {**BUILT["build"], "table": "none"}}})
    assert cfg.tests["t"].build.table == "none"
    with pytest.raises(MwemtError, match="liter reads the bilingual dictionary"):
        _config({"t": {**BUILT, "metrics": ["liter"]}})
    with pytest.raises(MwemtError, match="term-use needs an MWE-annotated test set"):
        _config({"t": {"source": "package:demo/test.en", "reference": "package:demo/test.it",
                       "metrics": ["bleu", "term-use"]}})


def test_config_without_the_new_keys_keeps_its_stage_keys():
    cfg = _config({"t": {"testset": "package:demo/test_mwe.jsonl", "metrics": ["bleu", "chrf"]}})
    section = Pipeline(None, cfg).score_section("t", ["baseline"])
    assert type(section) is S.ScoreSection
    assert list(to_plain(section)) == OLD_SCORE_FIELDS
    report = S.ReportSection(section, "en", "auto", cfg.report)
    assert list(to_plain(report)["score"]) == OLD_SCORE_FIELDS
    # the MWE metrics' aligner is in the key of a test that scores them (issue 41: the line-stable aligner
    # replaced eflomal, so such stages score again), and only there
    cfg = _config({"t": {"testset": "package:demo/test_mwe.jsonl", "metrics": ["bleu", "mwe"]}})
    section = Pipeline(None, cfg).score_section("t", ["baseline"])
    assert list(to_plain(section)) == OLD_SCORE_FIELDS + ["mwe_align"] and section.mwe_align.startswith("lex1+")
    # LiTER reads the dictionary's format: only then is it part of the key
    cfg = _config({"t": {"testset": "package:demo/test_mwe.jsonl", "metrics": ["bleu", "liter"]}},
                  dictionary="package:demo/dictionary.en-it.tsv")
    section = Pipeline(None, cfg).score_section("t", ["baseline"])
    assert list(to_plain(section)) == OLD_SCORE_FIELDS + ["dictionary_format"]
    # the in-run test build's section is unchanged; the table is an input (its content in the key) only when used
    assert "table" not in [f.name for f in fields(S.TestBuildSection)]
    # no table stage is counted for a run that has no reader of it
    plain = _config({"t": {**BUILT, "metrics": ["bleu", "mwe"]}})
    alts = _config({"t": {**BUILT, "metrics": ["mwe", "mwe-alts"]}})
    assert count_stages(alts, ["baseline"]) == count_stages(plain, ["baseline"]) + 1


def _replace_first(text: str, old: str, new: str) -> str:
    k = text.find(old)
    return text if k < 0 else text[:k] + new + text[k + len(old):]


def test_run_table_feeds_the_built_test_and_both_mwe_scores(tmp_path, monkeypatch):
    # LiTER needs single-word entries: the demo's MWE dictionary plus a few words
    dictionary = tmp_path / "dictionary.tsv"
    words = ["break\trompere", "ice\tghiaccio", "kick\tcalciare", "bucket\tsecchio", "rain\tpioggia"]
    write_lines(dictionary, [*(PACKAGE_DATA / "demo" / "dictionary.en-it.tsv").read_text(encoding="utf-8").splitlines(),
                             *words])
    tests = {"built": {**BUILT, "metrics": ["mwe", "mwe-alts", "liter", "term-use"]},
             "built2": {**BUILT, "metrics": ["mwe-alts"], "max_items": 5}}
    cfg = _config(tests, dictionary=str(dictionary))
    run_dir = tmp_path / "run"
    with Runner(run_dir, progress=False, log=io.StringIO()) as runner:
        pipe = Pipeline(runner, cfg)
        data = pipe.test_data()
        table = pipe.mwe_table()
        assert pipe.score_inputs("built", ["baseline"], data, {"built": {"baseline": table}})["terms"] == table
    stages = [r.stage for r in runner.records]
    assert stages.count("mwe_table") == 1, stages         # one table per run, whoever reads it
    for name in tests:
        record = json.loads((data[name].directory / "DONE").read_text(encoding="utf-8"))
        assert record["inputs"]["table"]["sha256"] == json.loads(
            (table.parent / "DONE").read_text(encoding="utf-8"))["outputs"]["table"]["sha256"]
    items = read_testset(data["built"].output("testset"))
    with_alts = [(it, m) for it in items for m in it.mwes if m.alternatives]
    assert with_alts, "no built MWE got alternatives from the run's table"
    build = json.loads((data["built"].directory / "build.json").read_text(encoding="utf-8"))
    assert build["table"].startswith("mwe-table|") and build["mwes_with_alternatives"] == len(with_alts)

    # two systems: the references, and the references with each MWE translation swapped for an alternative
    refs = [it.reference for it in items]
    swapped = list(refs)
    for k, it in enumerate(items):
        for m in it.mwes:
            if m.alternatives:
                swapped[k] = _replace_first(swapped[k], m.reference, m.alternatives[0])
    assert swapped != refs
    hyps = {"ref": tmp_path / "ref.txt", "alt": tmp_path / "alt.txt"}
    write_lines(hyps["ref"], refs)
    write_lines(hyps["alt"], swapped)
    ref_file = tmp_path / "reference.txt"
    write_lines(ref_file, refs)
    systems = ["ref", "alt"]
    raw2 = _raw({"built": {**BUILT, "metrics": ["mwe", "mwe-alts", "liter", "term-use"]}},
                {"ref": {}, "alt": {}}, dictionary=str(dictionary))
    cfg2 = config_from_data(raw2)
    with Runner(run_dir, progress=False, log=io.StringIO()) as runner:
        pipe = Pipeline(runner, cfg2)
        section = pipe.score_section("built", systems)
        inputs = pipe.score_inputs("built", systems, {"built": data["built"]}, {"built": hyps})
        inputs["reference"] = ref_file     # the items' (tokenized) references, as the hypotheses are
        entry = runner.stage("score", "built", S.score_stage, config=section, inputs=inputs)
        corpus = pipe.corpus()
        report_inputs = {**inputs, "source": data["built"].output("source"), "dictionary": dictionary,
                         "train_src": corpus.output("train_src"), "train_tgt": corpus.output("train_tgt")}
        report = runner.stage("report", "built", S.report_stage, inputs=report_inputs,
                              config=S.ReportSection(section, "en", "auto", cfg2.report))
    scores = json.loads(entry.output("scores").read_text(encoding="utf-8"))["metrics"]
    # the comparison report is scored with the same options: the same numbers
    aggregate = {m["key"]: m for m in json.loads((report.output("report") / "report.json").read_text(
        encoding="utf-8"))["aggregate"]}
    for key in ("mwe", "mwe-alts", "liter", "term-use"):
        for system in systems:
            assert aggregate[key]["systems"][system]["score"] == pytest.approx(scores[key]["systems"][system]["score"])
    assert {"mwe", "mwe-alts", "liter", "term-use"} <= set(scores)
    mwe, alts = scores["mwe"], scores["mwe-alts"]
    assert mwe["signature"] != alts["signature"]
    assert "alts:" not in mwe["signature"] and "alts:testset" in alts["signature"]
    assert alts["signature"].startswith("MWE-alts|") and mwe["signature"].startswith("MWE|")
    # an alternative in place of a reference loses only without them. The references need not score the same
    # either way: eflomal is unseeded, and where its links (the test's, or the hypothesis') cut a reference short
    # or leave a gap in it, a contiguous alternative can match better, so mwe-alts credits the references a little
    # more than mwe (0.25-1.21 points in 12 cold runs), never less
    score = {(k, s): scores[k]["systems"][s]["score"] for k in ("mwe", "mwe-alts") for s in systems}
    ref_gain = score["mwe-alts", "ref"] - score["mwe", "ref"]
    alt_gain = score["mwe-alts", "alt"] - score["mwe", "alt"]
    assert ref_gain >= -1e-9 and score["mwe", "alt"] < score["mwe", "ref"] - 20    # 43-49 points lost in 3 runs
    assert alt_gain > 10 * max(ref_gain, 0.5)                                        # and (nearly) all given back
    assert "liter|" in scores["liter"]["signature"].lower()

    # score.mwe_alternatives: table -- mwe-alts credits the run's table too (named in its signature); mwe unchanged
    cfg3 = config_from_data({**raw2, "score": {"bootstrap": 50, "mwe_alternatives": "table"}})
    with Runner(run_dir, progress=False, log=io.StringIO()) as runner:
        pipe = Pipeline(runner, cfg3)
        inputs3 = {**pipe.score_inputs("built", systems, {"built": data["built"]}, {"built": hyps}),
                   "reference": ref_file}
        assert inputs3["mwe_table"] == table
        entry3 = runner.stage("score", "built", S.score_stage, config=pipe.score_section("built", systems),
                              inputs=inputs3)
    assert runner.records[-1].status == "ran"      # another input: another key
    scores3 = json.loads(entry3.output("scores").read_text(encoding="utf-8"))["metrics"]
    assert scores3["mwe"]["signature"] == mwe["signature"]
    assert "alts:table[table.jsonl,keys" in scores3["mwe-alts"]["signature"]
    assert scores3["mwe-alts"]["systems"]["alt"]["score"] >= alts["systems"]["alt"]["score"]

    # `mwemt run --publish`: the published files and command rescore every column, signatures included
    out = tmp_path / "published"
    manifest = publish_run(run_dir, out, {"built": PublishedTest(pipe.score_section("built", systems), inputs3,
                                                                 data["built"].directory)})
    argv = manifest["rescore"]["built"]
    assert "--terms" in argv and "--mwe-table" in argv and "--dictionary" in argv
    monkeypatch.chdir(out)
    (out / "rescored").mkdir()
    assert main(argv[1:]) == 0
    rescored = json.loads((out / "rescored" / "built.json").read_text(encoding="utf-8"))["metrics"]
    for key in ("mwe", "mwe-alts", "liter", "term-use"):
        assert rescored[key]["signature"] == scores3[key]["signature"], key
        for system in systems:
            assert rescored[key]["systems"][system]["score"] == pytest.approx(scores3[key]["systems"][system]["score"])


def test_build_with_the_mwe_in_context_classifier(tmp_path):
    """`tests.NAME.build.mwe_context`: the test's matches are judged in context (the classifier's model an
    input of the stage); without it the build's section and inputs are what they were."""
    plain = _config({"t": {**BUILT, "metrics": ["mwe"]}})
    judged = _config({"t": {**BUILT, "metrics": ["mwe"],
                            "build": {**BUILT["build"], "mwe_context": "bundled", "mwe_threshold": 0.5}}})
    with pytest.raises(MwemtError, match="set `mwe_context` too"):
        _config({"t": {**BUILT, "metrics": ["mwe"], "build": {**BUILT["build"], "mwe_threshold": 0.5}}})
    out = {}
    for name, cfg in (("plain", plain), ("judged", judged)):
        with Runner(tmp_path / "run", progress=False, log=io.StringIO()) as runner:
            entry = Pipeline(runner, cfg).test_data()["t"]
        record = json.loads((entry.directory / "DONE").read_text(encoding="utf-8"))
        build = json.loads((entry.directory / "build.json").read_text(encoding="utf-8"))
        out[name] = (record, build, read_testset(entry.output("testset")))
    (rec_plain, build_plain, items_plain), (rec_judged, build_judged, items_judged) = out["plain"], out["judged"]
    # a build without the new keys: the section and inputs a build had before them (so its key is unchanged)
    assert not {"mwe_context", "table"} & set(rec_plain["inputs"])
    assert list(rec_plain["config"]["build"]) == [f.name for f in fields(S.TestBuildSection)]
    assert "table" not in rec_judged["inputs"]
    assert rec_judged["inputs"]["mwe_context"]["path"].endswith("oewn-en.mwe-context.json.gz")
    assert rec_judged["config"]["build"]["mwe_context"] == "bundled"
    assert rec_judged["config"]["build"]["mwe_threshold"] == 0.5
    assert "mwe-context" in build_judged["annotator"] and "mwe-context" not in build_plain["annotator"]
    assert build_judged["identification"]["removed"]["mwe-context"] > 0      # demo: 28 of 66 matches
    assert sum(len(it.mwes) for it in items_judged) < sum(len(it.mwes) for it in items_plain)
