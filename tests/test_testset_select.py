"""Selection of MWE test sets (issue 24): the per-type cap, coverage first, disjointness from
training, display names, parts and the test's own report."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main
from mwemt.errors import InputError
from mwemt.formats import read_testset, write_testset
from mwemt.records import TestItem, TestMwe
from mwemt.testsets.report import describe_testset, render_markdown
from mwemt.testsets.select import (
    PartRule,
    SelectionConfig,
    assign_parts,
    lower_tertile,
    near_duplicate_key,
    select_testset,
    with_scores,
)


def _item(k: int, source: str, *names: str) -> TestItem:
    mwes = [TestMwe((2 * p, 2 * p + 1), name, f"ref {name}", name=name) for p, name in enumerate(names)]
    words = source.split() + ["w"] * max(0, 2 * len(names) - len(source.split()))
    return TestItem(str(k), " ".join(words), "riferimento", mwes, {"raw_source": source})


def _pool() -> list[TestItem]:
    # "go to" in 20 sentences, "kick the bucket" in 2, "ivory tower" in 1, one sentence with two types
    items = [_item(k, f"sentence number {k} goes somewhere", "go to") for k in range(20)]
    items += [_item(20, "he kicked the bucket", "kick the bucket"), _item(21, "she kicked the bucket too", "kick the bucket"),
              _item(22, "an ivory tower here", "ivory tower"), _item(23, "go to the ivory tower", "go to", "ivory tower"),
              _item(24, "no mwe at all")]
    items[24] = TestItem("24", "no mwe at all", "x", [], {})
    return items


def test_cap_per_type_and_capped_mwes_listed():
    selected, report = select_testset(_pool(), SelectionConfig(max_per_type=3))
    counts: dict[str, int] = {}
    for it in selected:
        for m in it.mwes:
            counts[m.name] = counts.get(m.name, 0) + 1
    assert counts == {"go to": 3, "kick the bucket": 2, "ivory tower": 2}
    assert report.selected_mwes == 7 and report.selected_types == 3 and report.types_in_pool == 3
    assert all(it.mwes for it in selected)            # no sentence without MWEs
    ids = [int(it.id) for it in selected]
    assert ids == sorted(ids)                          # pool order
    # a sentence with two types keeps the one under the cap and lists the other as capped
    for it in selected:
        for c in it.meta.get("capped", []):
            assert c["name"] == "go to"
    assert report.capped_mwes == sum(len(it.meta.get("capped", [])) for it in selected)


def test_coverage_first_with_a_target():
    # with room for 3 MWEs, every type comes once before any type comes twice
    for seed in range(5):
        selected, report = select_testset(_pool(), SelectionConfig(max_per_type=3, target_mwes=3, seed=seed))
        names = sorted(m.name for it in selected for m in it.mwes)
        assert len(set(names)) == 3, (seed, names)
        assert report.target_reached


def test_no_cap_takes_everything():
    selected, report = select_testset(_pool(), SelectionConfig(max_per_type=0))
    assert report.selected_mwes == 25 and report.capped_mwes == 0


def test_selection_is_seeded():
    a, _ = select_testset(_pool(), SelectionConfig(max_per_type=2, seed=7))
    b, _ = select_testset(_pool(), SelectionConfig(max_per_type=2, seed=7))
    assert [it.id for it in a] == [it.id for it in b]
    others = {tuple(it.id for it in select_testset(_pool(), SelectionConfig(max_per_type=2, seed=s))[0])
              for s in range(10)}
    assert len(others) > 1


def test_disjoint_from_training_and_near_duplicates():
    assert near_duplicate_key("Tom is here!") == near_duplicate_key("  tom IS here .") == "tom is here"
    assert near_duplicate_key("Tom is here") != near_duplicate_key("Tom was here")
    pool = _pool()
    training = ["He kicked the bucket!", "AN IVORY TOWER HERE."]
    exclude = {near_duplicate_key(s) for s in training}
    selected, report = select_testset(pool, SelectionConfig(max_per_type=3), exclude)
    chosen = {near_duplicate_key(it.meta["raw_source"]) for it in selected}
    assert not chosen & exclude
    assert report.excluded_training_duplicates == 2
    assert "20" not in [it.id for it in selected] and "22" not in [it.id for it in selected]
    # repeats inside the pool are selected once at most
    dup = pool + [_item(30, "He kicked the bucket", "kick the bucket")]
    selected, report = select_testset(dup, SelectionConfig(max_per_type=3))
    keys = [near_duplicate_key(it.meta["raw_source"]) for it in selected]
    assert len(keys) == len(set(keys)) and report.excluded_pool_duplicates == 1


def test_parts_from_compositionality_and_confidence():
    rule = PartRule(max_compositionality=0.3, min_confidence=0.5)
    m = TestMwe((0, 1), "kick bucket", "x", name="kick the bucket")
    assert rule.part(m) == ""
    assert rule.part(TestMwe((0, 1), "a", "x", compositionality=0.2)) == "idiomatic"
    assert rule.part(TestMwe((0, 1), "a", "x", compositionality=0.8)) == "literal"
    assert rule.part(TestMwe((0, 1), "a", "x", compositionality=0.8, confidence=0.9)) == "idiomatic"
    assert rule.part(TestMwe((0, 1), "a", "x", confidence=0.1)) == "literal"
    assert lower_tertile([0.9, 0.1, 0.5, 0.3, 0.7, 0.2]) == 0.2 and lower_tertile([]) is None
    items = with_scores(_pool(), {"Kick the Bucket": 0.1, "go to": 0.9})
    items = assign_parts(items, PartRule(max_compositionality=0.5, min_confidence=None))
    parts = {m.name: m.part for it in items for m in it.mwes}
    assert parts == {"go to": "literal", "kick the bucket": "idiomatic", "ivory tower": ""}


def test_new_fields_round_trip_and_are_checked(tmp_path):
    item = TestItem("1", "a b c", "x y", [TestMwe((0, 1), "a b", "x", name="a b", confidence=0.75,
                                                  compositionality=0.25, part="idiomatic")])
    path = tmp_path / "t.jsonl"
    write_testset(path, [item])
    assert read_testset(path) == [item]
    bad = json.loads(path.read_text())
    bad["mwes"][0]["part"] = "idiom"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(InputError, match=r"t.jsonl:1.*part 'idiom'"):
        read_testset(path)
    bad["mwes"][0]["part"], bad["mwes"][0]["compositionality"] = "literal", 1.5
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(InputError, match="compositionality 1.5"):
        read_testset(path)


def test_report_counts():
    items = with_scores(_pool(), {"kick the bucket": 0.1, "go to": 0.9, "ivory tower": 0.5})
    items = assign_parts(items, PartRule(max_compositionality=0.2, min_confidence=None))
    stats = describe_testset(items, {"go to": 500, "ivory tower": 3}, sample=5, seed=3)
    assert stats["mwes"] == 25 and stats["types"] == 3 and stats["max_per_type"] == 21
    assert stats["top10_share"] == 1.0
    assert stats["training_frequency"] == {"never": 2, "rarely (1-9)": 2, "often (10+)": 21}
    assert stats["parts"] == {"literal": 23, "idiomatic": 2}
    assert stats["shape"] == {"contiguous": 25, "gapped": 0}
    t = stats["compositionality_tertiles"]
    assert t["low"] + t["middle"] + t["high"] == 25 and t["unknown"] == 0
    assert len(stats["sample"]) == 5
    md = render_markdown(stats, "toy")
    assert "| go to | 21 |" in md and "25 MWE occurrences of 3 types" in md


@pytest.fixture
def display_files(tmp_path):
    # eflomal is unseeded and learns only from variation: six sentences repeated 8 times left it guessing (and
    # "have got" -> "ho" is rightly filtered as function-only). Here "have got" -> possedere and "used to" ->
    # solere, content verbs, recur with varied subjects and objects, so each is aligned alike run after run
    has = [("I have got", "Io possiedo"), ("She has got", "Lei possiede"), ("Anna has got", "Anna possiede"),
           ("My brother has got", "Mio fratello possiede"), ("They have got", "Loro possiedono")]
    things = [("a cat", "un gatto"), ("two dogs", "due cani"), ("a red car", "un' auto rossa"),
              ("a big house", "una casa grande"), ("three books", "tre libri"), ("a garden", "un giardino")]
    used = [("He used to", "Lui soleva"), ("She used to", "Lei soleva"), ("Anna used to", "Anna soleva"),
            ("My brother used to", "Mio fratello soleva"), ("The old man used to", "Il vecchio soleva")]
    acts = [("swim", "nuotare"), ("run", "correre"), ("read books", "leggere libri"), ("cook", "cucinare"),
            ("travel", "viaggiare"), ("paint", "dipingere")]
    pairs = [(f"{s} {o} .", f"{t} {p} .") for subj, obj in ((has, things), (used, acts))
             for s, t in subj for o, p in obj] + [("We used to sing .", "Noi solevamo cantare .")] * 8
    (tmp_path / "s.en").write_text("".join(f"{s}\n" for s, _ in pairs))
    (tmp_path / "t.it").write_text("".join(f"{t}\n" for _, t in pairs))
    (tmp_path / "lex.txt").write_text("have got\nused to\n")
    (tmp_path / "train.en").write_text("We used to sing!\nsomething else\nthey used to play\n")
    return tmp_path


def test_cli_display_names_cap_disjointness_and_readme(display_files):
    d = display_files
    out, readme, rep = d / "test.jsonl", d / "README.md", d / "rep.json"
    assert main(["testset", "build", "--src", str(d / "s.en"), "--tgt", str(d / "t.it"), "--lexicon", str(d / "lex.txt"),
                 "--pretokenized", "--samplers", "1", "--no-cache", "--max-per-type", "2",
                 "--training-source", str(d / "train.en"), "-o", str(out), "--readme", str(readme),
                 "--report", str(rep), "-q"]) == 0
    items = read_testset(out)
    mwes = [m for it in items for m in it.mwes]
    names = {m.name for m in mwes}
    report = json.loads(rep.read_text())
    # the display name wherever the build names an MWE: kept items, the report's counts and its filtered examples
    shown = names | set(report["top_mwes"]) | {e["name"] for ex in report["filtered_examples"].values() for e in ex}
    assert names == shown == {"have got", "used to"}                   # lexicon forms, never "have get"
    assert {m.surface for m in mwes if m.name == "have got"} <= {"have got", "has got"}
    assert all(m.lemma == {"have got": "have get", "used to": "use to"}[m.name] for m in mwes)
    assert all(sum(m.name == n for m in mwes) == 2 for n in ("have got", "used to"))   # 25 or more of each found
    assert all("We used to sing" not in it.source for it in items)     # in training as a near-duplicate
    text = readme.read_text()
    assert "have got" in text and "used to" in text and "have get" not in text.split("## ")[0]
    assert "| often (10+) |" in text
    assert report["selection"]["excluded_training_duplicates"] <= 8
    assert report["stats"]["training_frequency"]["rarely (1-9)"] == sum(m.name == "used to" for m in mwes)


def _split_config(tmp_path, **test):
    from mwemt.experiments.config import PACKAGE_DATA

    demo = PACKAGE_DATA / "demo"
    src = (demo / "train.en").read_text().splitlines() + (demo / "test.en").read_text().splitlines()
    tgt = (demo / "train.it").read_text().splitlines() + (demo / "test.it").read_text().splitlines()
    tsv = tmp_path / "pairs.tsv"
    tsv.write_text("".join(f"{s}\t{t}\n" for s, t in zip(src, tgt)))
    return {"name": "select", "data": {"split": {"tsv": str(tsv), "valid_size": 30, "test_size": 300},
                                       "lexicon": str(demo / "lexicon.en.txt")},
            "tests": {"mwe": {"source": "split-test", "role": "mwe", "metrics": ["bleu", "mwe"], **test}},
            "systems": {"baseline": {}}}


def test_config_checks_split_test_and_build(tmp_path):
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError

    data = _split_config(tmp_path, build={"max_per_type": 2})
    cfg = config_from_data(data)
    assert cfg.tests["mwe"].build.max_per_type == 2 and cfg.tests["mwe"].build.select == 0
    data["data"]["split"]["test_size"] = 0
    with pytest.raises(ConfigError, match="split-test.*test_size"):
        config_from_data(data)
    data = _split_config(tmp_path, build={"max_per_typ": 2})
    with pytest.raises(ConfigError, match="max_per_type"):
        config_from_data(data)
    data = _split_config(tmp_path)
    with pytest.raises(ConfigError, match="MWE score needs"):
        config_from_data(data)


def test_run_builds_a_capped_training_disjoint_test(tmp_path):
    import os

    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import Pipeline
    from mwemt.experiments.runner import Runner
    from mwemt.fileio import read_lines

    cfg = config_from_data(_split_config(tmp_path, build={"max_per_type": 2, "alignment_extra": 600,
                                                          "samplers": 1}))
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as runner:
        pipe = Pipeline(runner, cfg)
        test = pipe.test_data()["mwe"]
        train = read_lines(pipe.corpus().output("train_src"))
    items = read_testset(test.output("testset"))
    assert items and (test.directory / "README.md").is_file()
    names = [m.display_name for it in items for m in it.mwes]
    assert max(names.count(n) for n in set(names)) <= 2
    train_keys = {near_duplicate_key(s) for s in train}
    assert not any(near_duplicate_key(it.meta["raw_source"]) in train_keys for it in items)
    # systems translate, and BLEU compares with, the pairs as given, not the items' Moses tokens
    assert read_lines(test.output("source")) == [it.meta["raw_source"] for it in items]
    assert read_lines(test.output("reference")) == [it.meta["raw_reference"] for it in items]


def test_mwe_score_on_each_part():
    from mwemt.evaluate.registry import MetricOptions, build_metric

    items = [TestItem("1", "he kicked the bucket and went to school", "x",
                      [TestMwe((1, 2, 3), "kick the bucket", "tirò le cuoia", part="idiomatic"),
                       TestMwe((5, 6), "go to", "andò a", part="literal")]),
             TestItem("2", "she went to bed", "x", [TestMwe((1, 2), "go to", "andò a", part="literal")])]
    hyps = ["lui tirò le cuoia e corse verso scuola", "lei corse verso il letto"]
    refs = [it.mwes for it in items]
    scores = {}
    for name in ("mwe", "mwe-idiomatic", "mwe-literal"):
        metric = build_metric(name, MetricOptions(lang="it", mwe_align="none"))  # parts filter MWEs, alignment or not
        scores[name] = metric.corpus_score(hyps, refs)
    assert scores["mwe-idiomatic"].score == pytest.approx(100.0)
    assert scores["mwe-literal"].score < scores["mwe"].score < scores["mwe-idiomatic"].score
    assert scores["mwe-idiomatic"].extra["mwes"] == 1 and scores["mwe-literal"].extra["mwes"] == 2
    sig = str(scores["mwe-idiomatic"].signature)
    assert "part:idiomatic" in sig and sig.startswith("MWE-idiomatic")


def test_coarse_categories():
    from mwemt.testsets.report import coarse_category

    assert [coarse_category(c) for c in ("verb.motion", "noun.artifact", "adv.all", "adj.pert", "VID",
                                         "LVC.full", "NotMWE", "")] == \
        ["verbal", "nominal", "adverbial", "adjectival", "verbal", "verbal", "other", "unknown"]
    items = [TestItem("1", "a b c d", "x", [TestMwe((0, 1), "a b", "x", "verb.body"), TestMwe((2, 3), "c d", "y", "adv.all")])]
    assert describe_testset(items)["coarse_categories"] == {"verbal": 1, "adverbial": 1}
