"""`mwemt compare`: bucketing and statistics on hand-worked examples, the report's contents, bad input.

The fixture (tests/fixtures/compare, README there) has 7 MWE occurrences of 5 types in 6 sentences:

    sentence  type             contiguous  category  train.en count  dictionary  compositionality
    c1        take care of     yes         VPC       3               yes         0.8
    c2        give up          yes         VPC       1               no          0.5
    c3        kick the bucket  yes         VID       0               yes         0.1
    c4        look up          no (gap)    VPC       2               no          0.6
    c5        cats and dogs    yes         VID       0               no          0.05
    c6        take care of     yes         VPC       3               yes         0.8
    c6        give up          yes         VPC       1               no          0.5

`base` translates take care of (c1, c6) and look up: hits 1,0,0,1,0,1,0. `mwe` translates all but
take care of in c1: 0,1,1,1,1,1,1. `copy` is `base`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import html5lib
import numpy as np
import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.bootstrap import BootstrapSettings, resample_indices
from mwemt.evaluate.compare import CompareSettings, compare_systems, load_compare_inputs, write_report
from mwemt.evaluate.compare import buckets as B
from mwemt.evaluate.compare.examples import matched_spans, merge_adjacent, select_examples
from mwemt.evaluate.compare.html import SECTIONS
from mwemt.evaluate.compare.mwes import build_mwe_table, count_in_corpus
from mwemt.evaluate.compare.resample import paired_ratio_bootstrap, percentile_interval, resample_weights
from mwemt.evaluate.compare.word_accuracy import word_counts
from mwemt.evaluate.mwe_match import MweMatching
from mwemt.evaluate.mwe_score import MweScore
from mwemt.evaluate.registry import MetricOptions
from mwemt.formats import read_testset

SYSTEMS = ("base", "mwe", "copy")


@pytest.fixture(scope="module")
def fx():
    return Path(__file__).resolve().parent / "fixtures" / "compare"


def _inputs(fx, systems=SYSTEMS, **kwargs):
    return load_compare_inputs([(s, fx / f"{s}.it") for s in systems], testset=fx / "testset.jsonl",
                               lang="it", **kwargs)


@pytest.fixture(scope="module")
def report(fx):
    inputs = _inputs(fx, src=fx / "src.en", train_src=fx / "train.en", train_tgt=fx / "train.it",
                     mwe_compositionality=fx / "compositionality.en.tsv", dictionary=fx / "dictionary.tsv")
    return compare_systems(inputs, options=HAND_WORKED, settings=CompareSettings(bootstrap=BootstrapSettings(300, 7)))


# the hits below are worked by hand with the MWE score searching the whole hypothesis by characters
HAND_WORKED = MetricOptions(mwe_align="none", mwe_matching=MweMatching())


def _bucket(report, key):
    dim = next(d for d in report["mwe"]["buckets"] if d["key"] == key)
    return {b["label"]: (b["mwes"], [b["systems"][s]["hits"] for s in SYSTEMS]) for b in dim["buckets"]}


# ---------------------------------------------------------------- buckets


def test_frequency_labels_follow_compare_mt():
    assert B.frequency_labels(B.WORD_FREQ_CUTOFFS) == ["0", "1", "2", "3", "4", "5-9", "10-99", "100-999", ">=1000"]
    assert B.frequency_labels(B.MWE_FREQ_CUTOFFS) == ["0", "1", "2-4", "5-9", "10-99", ">=100"]
    assert B.frequency_labels((3,)) == ["0-2", ">=3"]


def test_frequency_bucket_edges():
    counts = [0, 1, 2, 4, 5, 9, 10, 99, 100, 5000]
    assert B.frequency_bucket(counts, (1, 2, 5, 10, 100)).tolist() == [0, 1, 2, 2, 3, 3, 4, 4, 5, 5]


@pytest.mark.parametrize("bad", [(), (0, 5), (5, 5), (5, 2)])
def test_cutoffs_must_increase_from_one(bad):
    with pytest.raises(ValueError):
        B.check_cutoffs(bad)


def test_parse_cutoffs():
    assert B.parse_cutoffs("1, 2,5") == (1, 2, 5)
    with pytest.raises(ValueError, match="whole numbers"):
        B.parse_cutoffs("1,two")


def test_tertiles_by_hand():
    cuts = B.tertile_cuts([0.6, 0.1, 0.4, 0.2, 0.5, 0.3])   # sorted: .1 .2 | .3 .4 | .5 .6
    assert cuts == (0.2, 0.4)
    assert [B.tertile(v, cuts) for v in (0.1, 0.2, 0.3, 0.4, 0.5, None)] == [0, 0, 1, 1, 2, -1]
    assert B.tertile_cuts([0.05, 0.8, 0.5, 0.1, 0.6]) == (0.1, 0.6)   # n = 5: 2nd and 4th values
    same = B.tertile_cuts([0.5, 0.5, 0.5])
    assert {B.tertile(0.5, same)} == {0}                               # equal values share a bucket
    assert B.tertile_cuts([]) is None


def test_gapped():
    assert not B.is_gapped((3, 4, 5)) and B.is_gapped((1, 4)) and not B.is_gapped((7,))


# ---------------------------------------------------------------- statistics


def test_resample_weights_count_the_drawn_indices():
    settings = BootstrapSettings(50, 3)
    w = resample_weights(9, settings)
    idxs = resample_indices(9, 50, 3)
    assert w.shape == (50, 9) and (w.sum(axis=1) == 9).all()
    for b in range(50):
        assert w[b].tolist() == np.bincount(idxs[b], minlength=9).tolist()


def test_ratio_bootstrap_by_hand():
    # 4 sentences, one bucket: baseline hits 1 of 2, 0 of 1, 1 of 1, 0 of 0; the other system all
    den = np.array([[2.0], [1.0], [1.0], [0.0]])
    base = np.array([[1.0], [0.0], [1.0], [0.0]])
    weights = resample_weights(4, BootstrapSettings(400, 1))
    est = paired_ratio_bootstrap([base, den, base], [den, den, den], weights)
    assert est[0].value[0] == pytest.approx(50.0) and est[1].value[0] == 100.0
    assert est[1].lo[0] == est[1].hi[0] == 100.0      # always 100 whatever the resample
    assert est[0].p_value is None
    assert est[2].p_value[0] == 1.0                    # a copy of the baseline
    assert 0.0 <= est[0].lo[0] <= 50.0 <= est[0].hi[0] <= 100.0


def test_ratio_bootstrap_empty_bucket_is_nan():
    zero = np.zeros((3, 1))
    est = paired_ratio_bootstrap([zero, zero], [zero, zero], resample_weights(3, BootstrapSettings(20, 1)))
    assert np.isnan(est[1].value[0]) and np.isnan(est[1].lo[0]) and np.isnan(est[1].p_value[0])


def test_percentile_interval_is_sacrebleus():
    from sacrebleu.significance import estimate_ci

    values = np.random.default_rng(0).normal(size=1000)
    lo, hi = percentile_interval(values)
    assert (hi - lo) / 2 == pytest.approx(estimate_ci(values)[1])


def test_word_counts_by_hand():
    # reference: the cat sat on the mat / hypothesis: the cat on a mat mat
    freq = {"the": 1000, "cat": 3, "on": 50, "mat": 1, "a": 200}          # "sat" never seen
    c = word_counts([["the", "cat", "sat", "on", "the", "mat"]], [["the", "cat", "on", "a", "mat", "mat"]], freq,
                    B.WORD_FREQ_CUTOFFS)
    # buckets: 0: sat | 1: mat | 3: cat | 10-99: on | 100-999: a | >=1000: the
    assert c.ref[0].tolist() == [1, 1, 0, 1, 0, 0, 1, 0, 2]
    assert c.hyp[0].tolist() == [0, 2, 0, 1, 0, 0, 1, 1, 1]
    assert c.matched[0].tolist() == [0, 1, 0, 1, 0, 0, 1, 0, 1]     # "the": min(2, 1); "mat": min(1, 2)


def test_mwe_counts_in_training_source(fx):
    keys = ["take care of", "give up", "look up", "kick the bucket", "cats and dogs"]
    lines = (fx / "train.en").read_text().splitlines()
    counts = count_in_corpus(keys, lines, lang="en", max_gap=3)
    # took/takes care of, "took good care of" (one word between); "Look it up" and "looked up"
    assert [counts[k] for k in keys] == [3, 1, 2, 0, 0]
    assert count_in_corpus(keys, lines, lang="en", max_gap=0)["take care of"] == 2


def test_mwe_table(fx):
    table = build_mwe_table(read_testset(fx / "testset.jsonl"))
    assert len(table) == 7 and table.type_keys == ["take care of", "give up", "kick the bucket", "look up",
                                                   "cats and dogs"]
    assert table.sentence.tolist() == [0, 1, 2, 3, 4, 5, 5]
    assert table.gapped.tolist() == [False, False, False, True, False, False, False]


def test_examples_order_and_diversity():
    hits = np.array([[0, 0, 0, 1], [1, 1, 1, 0]], dtype=bool)
    scores = np.array([[0.5, 0.2, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
    types = np.array([0, 0, 1, 2])
    wins, losses = select_examples(hits, scores, types, per_direction=2)
    assert wins.direction == "win" and wins.occurrences == (2, 1)   # gaps 1.0, 0.8 (type 0 once), then 0.5
    assert losses.occurrences == (3,)


def test_marks_in_hypothesis():
    metric = MweScore("it")
    text = "Ce ne siamo occupati e abbiamo rinunciato ."
    [(start, end, kind)] = matched_spans(text, "rinunciato", metric)
    assert text[start:end] == "rinunciato" and kind == "exact"
    [(start, end, kind)] = matched_spans("Ha smess di fumare .", "smesso", metric)
    assert kind == "partial"
    assert matched_spans("Luca mangia .", "gelato", metric) == []      # 'Luca' is not close to 'gelato'
    assert merge_adjacent("Fa attenzione ai", [(0, 2, "exact"), (3, 13, "exact")]) == [(0, 13, "exact")]


def test_reference_marks_follow_the_test_sets_reference_indices():
    from mwemt.evaluate.compare.examples import reference_spans
    from mwemt.records import TestItem, TestMwe

    metric = MweScore("it")
    found = TestMwe((1, 2, 3), "kick the bucket", "morti")
    given = TestMwe((1, 2, 3), "kick the bucket", "morti", reference_indices=(0, 1))
    item = TestItem("x", "They kicked the bucket yesterday .", "Sono morti ieri .", [found])
    assert reference_spans(item, found, metric) == [(5, 10, "exact")]       # searched: "morti"
    assert reference_spans(item, given, metric) == [(0, 10, "exact")]       # given: "Sono morti"


# ---------------------------------------------------------------- the report


def test_hits_and_buckets_by_hand(report):
    assert report["systems"] == list(SYSTEMS) and report["baseline"] == "base"
    assert _bucket(report, "all") == {"all": (7, [3, 6, 3])}
    assert _bucket(report, "contiguity") == {"contiguous": (6, [2, 5, 2]), "gapped": (1, [1, 1, 1])}
    assert _bucket(report, "category") == {"VPC": (5, [3, 4, 3]), "VID": (2, [0, 2, 0])}
    freq = _bucket(report, "frequency")
    assert freq["0"] == (2, [0, 2, 0]) and freq["1"] == (2, [0, 2, 0]) and freq["2-4"] == (3, [3, 2, 3])
    assert freq["5-9"] == (0, [0, 0, 0])
    assert _bucket(report, "compositionality") == {"low (<=0.10)": (2, [0, 2, 0]),
                                                    "middle (0.10-0.60]": (3, [1, 3, 1]),
                                                    "high (>0.60)": (2, [2, 1, 2])}
    assert _bucket(report, "dictionary") == {"in dictionary": (3, [2, 2, 2]), "not in dictionary": (4, [1, 4, 1])}
    assert report["mwe"]["skipped"] == []


def test_rates_deltas_and_tests(report):
    overall = report["mwe"]["buckets"][0]["buckets"][0]["systems"]
    assert overall["base"]["rate"] == pytest.approx(300 / 7)
    assert overall["mwe"]["delta"] == pytest.approx(300 / 7)
    assert overall["copy"]["p_value"] == 1.0 and overall["copy"]["delta"] == 0.0
    assert overall["base"]["lo"] <= overall["base"]["rate"] <= overall["base"]["hi"]
    empty = next(b for b in report["mwe"]["buckets"][1]["buckets"] if b["label"] == "5-9")["systems"]["mwe"]
    assert empty["rate"] is None and empty["p_value"] is None


def test_per_mwe_table(report):
    types = {t["key"]: t for t in report["mwe"]["types"]}
    care = types["take care of"]
    assert care["occurrences"] == 2 and care["train_count"] == 3 and care["in_dictionary"] is True
    assert care["compositionality"] == 0.8 and care["gapped"] == 0
    assert [care["systems"][s]["hits"] for s in SYSTEMS] == [2, 1, 2]
    assert care["systems"]["mwe"]["delta"] == -50.0
    assert types["give up"]["systems"]["mwe"]["delta"] == 100.0 and types["look up"]["gapped"] == 1
    assert types["look up"]["name"] == "look sth. up" and care["name"] == "take care of"   # display name, else lemma


def test_examples_both_ways(report):
    groups = {(g["system"], g["direction"]): g for g in report["mwe"]["examples"]}
    wins, losses = groups[("mwe", "win")], groups[("mwe", "loss")]
    assert wins["available"] == 4 and sorted(e["sentence"] for e in wins["items"]) == [2, 3, 5, 6]
    assert [e["sentence"] for e in losses["items"]] == [1] and losses["items"][0]["mwe"] == "take care of"
    assert groups[("copy", "win")]["items"] == [] and groups[("copy", "loss")]["items"] == []
    ex = next(e for e in wins["items"] if e["sentence"] == 3)
    src = ex["source"]
    assert [src["text"][a:b] for a, b, _ in src["spans"]] == ["kicked the bucket"]
    ref = ex["reference"]
    assert [ref["text"][a:b] for a, b, _ in ref["spans"]] == ["morti"]
    hyp = {h["system"]: h for h in ex["hypotheses"]}
    assert hyp["mwe"]["hit"] and not hyp["base"]["hit"] and hyp["mwe"]["score"] == 100.0


def test_aggregate_and_signature(report):
    keys = [m["key"] for m in report["aggregate"]]
    assert keys == ["bleu", "chrf", "mwe"]
    mwe = report["aggregate"][2]["systems"]
    assert mwe["copy"]["p_value"] == 1.0 and mwe["mwe"]["delta"] > 0
    sig = report["signature"]
    assert sig.startswith("compare|bs:300|seed:7|hit:mwe>=1|") and "wordfreqsrc:train" in sig
    assert "at least 1" in report["hit_definition"]


def test_word_accuracy_uses_training_target(report):
    wa = report["word_accuracy"]
    assert wa["frequency_source_key"] == "train" and len(wa["labels"]) == 9
    # frequencies in train.it (case-sensitive): 0: è preso cane smesso fumare Sono morti ieri Piove a catinelle
    # Ce ne siamo occupati abbiamo rinunciato | 1: del Ha Ha cercato parola e | 2: Si di la | 3: cura | 5-9: "." x 6
    assert wa["ref_words"] == [17, 6, 3, 1, 0, 6, 0, 0, 0]
    # mwe.it, bucket 0: 17 words (è occupato cane smesso fumare Sono morti ieri Piove a catinelle + 6 in c6),
    # 16 of them in the reference (all but "occupato"): F = 2 * 16 / (17 + 17)
    assert wa["systems"]["mwe"]["f"][0] == pytest.approx(100 * 32 / 34)
    assert wa["systems"]["mwe"]["recall"][0] == pytest.approx(100 * 16 / 17)
    base, copy = wa["systems"]["base"], wa["systems"]["copy"]
    assert base["f"] == copy["f"] and all(p in (1.0, None) for p in copy["p_value"])


def test_hit_threshold_changes_hits(fx, tmp_path):
    hyp = tmp_path / "near.it"
    hyp.write_text("Si è occupato del cane .\nHa smess di fumare .\nx\nx\nx\nx\n", encoding="utf-8")
    for threshold, expected in ((1.0, 0), (0.8, 1)):   # "smess" for "smesso": 1 - 1/6 = 0.83
        inputs = load_compare_inputs([("base", fx / "base.it"), ("near", hyp)], testset=fx / "testset.jsonl",
                                     lang="it")
        r = compare_systems(inputs, ["mwe"], HAND_WORKED, CompareSettings(threshold, bootstrap=BootstrapSettings(20)))
        types = {t["key"]: t for t in r["mwe"]["types"]}
        assert types["give up"]["systems"]["near"]["hits"] == expected


def test_without_testset_the_mwe_sections_say_why(fx, tmp_path):
    inputs = load_compare_inputs([("a", fx / "base.it"), ("b", fx / "mwe.it")], ref=fx / "ref.it", lang="it")
    r = compare_systems(inputs, settings=CompareSettings(bootstrap=BootstrapSettings(20)))
    assert r["mwe"] == {"skipped": "no MWE test set given"} and r["word_accuracy"]["frequency_source_key"] == "ref"
    paths = write_report(tmp_path / "rep", r)
    assert "Not available: no MWE test set given" in paths["index.html"].read_text()


# ---------------------------------------------------------------- the HTML page


def _resource_urls(doc) -> list[str]:
    urls = []
    for el in doc.iter():
        tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""
        for attr in ("src", "href", "data", "poster", "srcset", "action"):
            if el.get(attr):
                urls.append(el.get(attr))
        if tag == "style" and el.text:
            urls += re.findall(r"url\(([^)]*)\)|@import\s+([^;]+)", el.text)
        if el.get("style"):
            urls += re.findall(r"url\(([^)]*)\)", el.get("style"))
    return [str(u) for u in urls]


def test_html_parses_with_every_section_and_loads_nothing(report, tmp_path):
    paths = write_report(tmp_path / "report", report)
    text = paths["index.html"].read_text(encoding="utf-8")
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    doc = parser.parse(text)                          # strict: a parse error raises
    ids = {el.get("id") for el in doc.iter() if el.get("id")}
    for key, _title in SECTIONS:
        assert key in ids, key
    assert {"per-mwe-table", "aggregate-table", "bucket-frequency", "bucket-compositionality", "bucket-dictionary",
            "bucket-contiguity", "bucket-category", "signature"} <= ids
    urls = _resource_urls(doc)
    assert urls and all(u.startswith("#") for u in urls), urls   # only links within the page
    assert not re.search(r"https?://", text)
    assert all(not s.get("src") for s in doc.iter("script"))
    assert not list(doc.iter("link")) and not list(doc.iter("iframe")) and not list(doc.iter("img"))
    svgs = [el for el in doc.iter() if isinstance(el.tag, str) and el.tag.endswith("svg")]
    assert len(svgs) >= 6                            # aggregate, 5 dimensions, word accuracy
    table = doc.find(".//table[@id='per-mwe-table']")
    assert len(table.find("tbody").findall("tr")) == 5
    marks = ["".join(m.itertext()) for m in doc.iter("mark")]
    assert "kicked the bucket" in marks and "morti" in marks
    assert "sortable" in text and 'data-js' in text


def test_markdown_and_json(report, tmp_path):
    paths = write_report(tmp_path / "report", report)
    md = paths["report.md"].read_text(encoding="utf-8")
    for heading in ("## Aggregate scores", "## MWE accuracy by bucket", "## Per-MWE table", "## Examples",
                    "## Word accuracy by frequency bucket"):
        assert heading in md
    assert "**kicked the bucket**" in md and "| all | 7 (5) |" in md
    stored = json.loads(paths["report.json"].read_text(encoding="utf-8"))
    assert stored["signature"] == report["signature"] and stored["mwe"]["n_mwes"] == 7


# ---------------------------------------------------------------- the command and bad input


def _args(fx, out, *extra, systems=SYSTEMS):
    hyps = [a for s in systems for a in ("--hyp", f"{s}={fx / (s + '.it')}")]
    return ["compare", *hyps, "--testset", str(fx / "testset.jsonl"), "--lang", "it", "--bs-samples", "50",
            "-q", "-o", str(out), *extra]


def test_cli_writes_three_files(fx, tmp_path, capsys):
    out = tmp_path / "rep"
    code = main(_args(fx, out, "--src", str(fx / "src.en"), "--baseline", "mwe"))
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "report.json", "report.md"]
    r = json.loads((out / "report.json").read_text())
    assert r["systems"] == ["mwe", "base", "copy"] and r["provenance"]["kind"] == "compare"
    assert r["provenance"]["config"]["baseline"] == "mwe"


def _fails(args, capsys, *needles):
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    for n in needles:
        assert n in err, err
    return err


def test_hypotheses_of_different_lengths(fx, tmp_path, capsys):
    short = tmp_path / "short.it"
    short.write_text("Si è preso cura del cane .\n", encoding="utf-8")
    out = tmp_path / "rep"
    _fails(_args(fx, out) + ["--hyp", f"short={short}"], capsys, "short.it", "1 lines", "6 sentences")
    assert not out.exists()


def test_testset_that_does_not_match_the_reference(fx, tmp_path, capsys):
    ref = tmp_path / "other.it"
    lines = (fx / "ref.it").read_text(encoding="utf-8").splitlines()
    lines[3] = "Ha cercato il libro ."
    ref.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "rep"
    _fails(_args(fx, out, "--ref", str(ref)), capsys, "testset.jsonl:4", "'c4'", "line 4 of", "other.it")
    assert not out.exists()
    with pytest.raises(InputError, match="source"):
        src = tmp_path / "src.en"
        src.write_text("x\n" * 6, encoding="utf-8")
        _inputs(fx, src=src)


def test_unknown_baseline_name(fx, tmp_path, capsys):
    out = tmp_path / "rep"
    _fails(_args(fx, out, "--baseline", "bsae"), capsys, "'bsae' is not a system", "base, mwe, copy")
    assert not out.exists()


def test_one_system_is_not_a_comparison(fx, tmp_path, capsys):
    _fails(_args(fx, tmp_path / "rep", systems=("base",)), capsys, "two or more --hyp")


def test_report_directory_is_replaced_whole_or_not_at_all(fx, report, tmp_path, monkeypatch):
    out = tmp_path / "rep"
    write_report(out, report)
    before = (out / "index.html").read_text()
    import mwemt.evaluate.compare.markdown as md

    def broken(_report):
        raise RuntimeError("render failed")

    monkeypatch.setattr(md, "render_markdown", broken)
    with pytest.raises(RuntimeError):
        write_report(out, report)
    assert (out / "index.html").read_text() == before and sorted(p.name for p in out.iterdir()) == [
        "index.html", "report.json", "report.md"]
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]          # no temporary directory left


def test_report_never_replaces_a_directory_with_other_files(report, tmp_path):
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(MwemtError, match="holds other files"):
        write_report(tmp_path, report)
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_bad_settings_are_clear(fx, tmp_path, capsys):
    _fails(_args(fx, tmp_path / "r", "--mwe-freq-buckets", "5,2"), capsys, "increasing")
    with pytest.raises(SystemExit) as exc:  # argparse refuses it (its range: mwemt.cli.argtypes)
        main(_args(fx, tmp_path / "r", "--hit-threshold", "0"))
    assert exc.value.code == 2 and "argument --hit-threshold: expected a number > 0" in capsys.readouterr().err
