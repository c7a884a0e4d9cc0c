"""`mwemt score` and `mwemt meta-eval` end to end on the tiny fixtures."""

from __future__ import annotations

import json

import pytest

from mwemt.cli import main


@pytest.fixture
def ev(fixtures):
    return fixtures / "eval"


def test_score_table_has_all_systems_and_signatures(ev, capsys):
    code = main(["score", "--hyp", str(ev / "hyp_a.it"), "--hyp", f"B={ev / 'hyp_b.it'}", "--ref", str(ev / "ref.it"),
                 "--testset", str(ev / "testset.jsonl"), "--metrics", "bleu,chrf,mwe", "--lang", "it",
                 "--paired-bs", "--bs-samples", "100"])
    out = capsys.readouterr().out
    assert code == 0
    assert "hyp_a.it" in out and "\nB " in out
    assert "BLEU signature: BLEU|nrefs:1|bs:100|seed:12345|case:mixed" in out
    assert "chrF signature: chrF|nrefs:1|bs:100|seed:12345|case:mixed" in out
    assert "MWE signature: MWE|" in out and "|bs:100|seed:12345" in out
    assert "p=" in out and "0-100 scale" in out


def test_score_json_matches_library_and_writes_sentence_scores(ev, tmp_path):
    out = tmp_path / "s.json"
    seg = tmp_path / "seg"
    code = main(["score", "--hyp", str(ev / "hyp_a.it"), "--testset", str(ev / "testset.jsonl"),
                 "--metrics", "mwe,bleu", "--lang", "it", "--align", str(ev / "hyp_a.align"), "--json",
                 "--mwe-match", "char", "--mwe-window", "0",
                 "-o", str(out), "--sentence-scores", str(seg)])
    assert code == 0
    obj = json.loads(out.read_text())
    mwe = obj["metrics"]["mwe"]
    assert "align:given" in mwe["signature"]
    expected = (100 * (1 - (1 + 1 + 2 / 9) / 3) + 100 * (1 - 1.1 / 2) + 100) / 3
    assert mwe["systems"]["hyp_a.it"]["score"] == pytest.approx(expected)
    assert obj["provenance"]["inputs"]["testset"]["sha256"]
    rows = (seg / "mwe.seg.tsv").read_text().splitlines()
    assert rows[0] == "system\tseg_id\tscore" and rows[3] == "hyp_a.it\t3\tNone"
    assert (seg / "bleu.seg.tsv").exists()


def test_score_rejects_misaligned_hypothesis(ev, tmp_path, capsys):
    short = tmp_path / "short.it"
    short.write_text("Una riga.\n", encoding="utf-8")
    code = main(["score", "--hyp", str(short), "--ref", str(ev / "ref.it")])
    err = capsys.readouterr().err
    assert code == 2 and "short.it: 1 lines but" in err and "expected one hypothesis line" in err


def test_score_bad_alignment_names_file_and_line(ev, tmp_path, capsys):
    bad = tmp_path / "bad.align"
    bad.write_text("0-0\n0-40\n\n0-0\n", encoding="utf-8")
    code = main(["score", "--hyp", str(ev / "hyp_a.it"), "--testset", str(ev / "testset.jsonl"),
                 "--metrics", "mwe", "--lang", "it", "--align", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "bad.align:2:" in err
    bad.write_text("0-0\n0:1\n\n0-0\n", encoding="utf-8")
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--testset", str(ev / "testset.jsonl"),
                 "--metrics", "mwe", "--align", str(bad)]) == 2
    assert "bad.align:2: bad alignment pair '0:1'" in capsys.readouterr().err


def test_mwe_without_testset_is_a_user_error(ev, capsys):
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--ref", str(ev / "ref.it"), "--metrics", "mwe"]) == 2
    assert "--testset" in capsys.readouterr().err
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--ref", str(ev / "ref.it"), "--metrics", "blue"]) == 2


def test_score_with_tesla(ev, capsys):
    code = main(["score", "--hyp", str(ev / "hyp_a.it"), "--hyp", str(ev / "hyp_b.it"), "--ref", str(ev / "ref.it"),
                 "--metrics", "tesla", "--lang", "it", "--paired-bs", "--bs-samples", "50"])
    out = capsys.readouterr().out
    assert code == 0 and "tesla signature: tesla|" in out and "wn:none" in out and "|bs:50|seed:12345" in out


def test_meta_eval_cli(ev, tmp_path, capsys):
    code = main(["meta-eval", "--human", str(ev / "human.tsv"), "--metric", str(ev / "metric.tsv"),
                 "--bootstrap", "0"])
    out = capsys.readouterr().out
    assert code == 0 and "0.600" in out and "0.500" in out
    out_json = tmp_path / "m.json"
    assert main(["meta-eval", "--human", str(ev / "human.tsv"), "--human-lower-better", "--metric",
                 f"M={ev / 'metric.tsv'}", "--json", "-o", str(out_json), "--bootstrap", "50"]) == 0
    res = json.loads(out_json.read_text())["results"][0]
    assert res["metric"] == "M" and res["values"]["tau_wmt13"] == pytest.approx(-0.6)  # human negated
    assert set(res["ci"]) >= {"tau_wmt13", "tau_wmt14", "acc_eq", "pearson_seg", "pearson_item", "kendall_item",
                              "pairwise_acc_sys", "pearson_sys", "kendall_sys"}


def test_score_wires_tesla_compositionality(ev, tmp_path):
    out = tmp_path / "t.json"
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--hyp", str(ev / "hyp_b.it"), "--ref", str(ev / "ref.it"),
                 "--metrics", "tesla-comp,tesla-01", "--compositionality", str(ev / "comp.it.tsv"), "--lang", "it",
                 "--json", "-o", str(out)]) == 0
    metrics = json.loads(out.read_text())["metrics"]
    assert "comp:comp.it.tsv@" in metrics["tesla-comp"]["signature"]
    for key in ("tesla-comp", "tesla-01"):
        a, b = metrics[key]["systems"]["hyp_a.it"]["extra"], metrics[key]["systems"]["hyp_b.it"]["extra"]
        # reference sentence 4 holds both MWEs; hypothesis a has them, b's sentence 4 is empty
        assert (a["ref_mwes"], a["ref_mwes_matched"], b["ref_mwes_matched"]) == (2, 2, 0)


def test_score_copy_of_the_baseline_is_not_significant(ev, tmp_path):
    out = tmp_path / "s.json"
    assert main(["score", "--hyp", f"base={ev / 'hyp_a.it'}", "--hyp", f"copy={ev / 'hyp_a.it'}", "--ref",
                 str(ev / "ref.it"), "--metrics", "bleu,chrf", "--paired-bs", "--bs-samples", "100", "--json",
                 "-o", str(out)]) == 0
    metrics = json.loads(out.read_text())["metrics"]
    # sacrebleu's paired test, used for BLEU and chrF before, gave p = 1/101 = 0.0099 here
    assert [metrics[m]["systems"]["copy"]["p_value"] for m in ("bleu", "chrf")] == [1.0, 1.0]


def _mwe_json(args, tmp_path, capsys):
    out = tmp_path / "m.json"
    code = main(["score", *args, "--json", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    return json.loads(out.read_text())["metrics"]["mwe"]


def test_score_mwe_aligns_by_default_without_an_alignment_file(ev, tmp_path, capsys):
    base = ["--hyp", str(ev / "hyp_a.it"), "--testset", str(ev / "testset.jsonl"), "--metrics", "mwe", "--lang", "it"]
    aligned = _mwe_json([*base, "--cache", str(tmp_path / "cache")], tmp_path, capsys)
    assert "alignment_skipped" not in aligned["systems"]["hyp_a.it"]["extra"] or \
        aligned["systems"]["hyp_a.it"]["extra"]["alignment_skipped"] == 0
    assert "|align:lex1+" in aligned["signature"] and ",win1|span:ref|match:char+near0.75+order1|" in aligned["signature"]
    whole = _mwe_json([*base, "--align", "none", "--mwe-match", "char"], tmp_path, capsys)
    assert "|align:none|match:char|" in whole["signature"]
    assert whole["systems"]["hyp_a.it"]["score"] == pytest.approx(84.75308641975309)  # mwemt's score before
    assert aligned["systems"]["hyp_a.it"]["score"] <= whole["systems"]["hyp_a.it"]["score"]
    again = _mwe_json([*base, "--cache", str(tmp_path / "cache")], tmp_path, capsys)
    assert again["systems"]["hyp_a.it"]["score"] == aligned["systems"]["hyp_a.it"]["score"]
    # matching options are in the signature
    lemma = _mwe_json([*base, "--align", "none", "--mwe-match", "lemma,elision,fw=0.5"], tmp_path, capsys)
    assert "|match:char+lemma0.5+elision|fw:0.5[it]|" in lemma["signature"]
    code = main(["score", *base, "--mwe-match", "lemmas"])
    assert code == 2 and "unknown matching option 'lemmas'" in capsys.readouterr().err


def test_score_mwe_compat_mode(ev, tmp_path, capsys):
    base = ["--hyp", str(ev / "hyp_b.it"), "--testset", str(ev / "testset.jsonl"), "--metrics", "mwe", "--lang", "it"]
    res = _mwe_json([*base, "--mwe-compat", "zaninello2020"], tmp_path, capsys)
    assert res["signature"].startswith("MWE|compat:zaninello2020|")
    assert res["systems"]["hyp_b.it"]["extra"]["nan_mwes"] == 2  # sentence 4 is empty: its two MWEs are NaN
    code = main(["score", *base, "--mwe-compat", "zaninello2020", "--align", str(ev / "hyp_a.align")])
    assert code == 2 and "--mwe-compat zaninello2020 reproduces" in capsys.readouterr().err
    code = main(["score", *base, "--mwe-match", "synonyms"])
    assert code == 2 and "--mwe-wordnet" in capsys.readouterr().err


def test_score_mwe_extra_text_for_the_aligner_is_in_the_signature(ev, tmp_path, capsys):
    src, tgt = tmp_path / "extra.en", tmp_path / "extra.it"
    src.write_text("I woke up .\nHe took care of it .\nI phoned him .\n", encoding="utf-8")
    tgt.write_text("Mi sono svegliato .\nSe ne è preso cura .\nGli ho telefonato .\n", encoding="utf-8")
    base = ["--hyp", str(ev / "hyp_a.it"), "--testset", str(ev / "testset.jsonl"), "--metrics", "mwe", "--lang", "it",
            "--cache", str(tmp_path / "cache")]
    res = _mwe_json([*base, "--extra", str(src), str(tgt), "--mwe-window", "0"], tmp_path, capsys)
    assert ",prior=test+extra.it:3|span:ref|match:" in res["signature"]  # no ",win" with --mwe-window 0
    res = _mwe_json([*base, "--align", "eflomal", "--extra", str(src), str(tgt), "--mwe-window", "0"], tmp_path, capsys)
    assert "extra=extra.it:3|span:ref|match:" in res["signature"] and "|align:eflomal-" in res["signature"]
    code = main(["score", *base, "--align", "none", "--extra", str(src), str(tgt)])
    assert code == 2 and "need --align eflomal" in capsys.readouterr().err


def test_meta_eval_stops_when_segment_ids_do_not_line_up(tmp_path, capsys):
    # the human file uses the test set's ids (101..140), the metric file line numbers (1..40): only the
    # ids 101..140 vs 1..40 never meet, and a file numbered 1..120 would meet on 20 ids by accident
    human = tmp_path / "human.tsv"
    human.write_text("system\tseg_id\tscore\n" + "".join(f"{s}\t{g}\t{(g * 7 + ord(s)) % 5}\n"
                                                          for s in "AB" for g in range(101, 141)), encoding="utf-8")
    metric = tmp_path / "m.seg.tsv"
    metric.write_text("system\tseg_id\tscore\n" + "".join(f"{s}\t{g}\t{g % 3}\n" for s in "AB" for g in range(1, 121)),
                      encoding="utf-8")
    assert main(["meta-eval", "--human", str(human), "--metric", str(metric), "--bootstrap", "0"]) == 2
    err = capsys.readouterr().err
    assert "has no row for 40 of the 80 items judged" in err and "(50.0%)" in err
    assert "20 judged segment ids without a row, e.g. 121, 122, 123" in err
    assert "100 segment ids the human file does not judge, e.g. 1, 2, 3" in err
    assert "mwemt score --ids" in err and "--allow-partial" in err
    assert main(["meta-eval", "--human", str(human), "--metric", str(metric), "--bootstrap", "0",
                 "--allow-partial"]) == 0
    out, err = capsys.readouterr()
    assert "correlating the common items" in err and "20 segments, 2 systems, 40 judged items" in out


def test_meta_eval_compare_one_pair(ev, tmp_path, capsys):
    other = tmp_path / "other.tsv"
    rows = (ev / "metric.tsv").read_text().splitlines()
    other.write_text("\n".join([rows[0], *[r.rsplit("\t", 1)[0] + f"\t{k % 4}" for k, r in enumerate(rows[1:])]])
                     + "\n", encoding="utf-8")
    third = tmp_path / "third.tsv"
    third.write_text((ev / "metric.tsv").read_text(), encoding="utf-8")
    code = main(["meta-eval", "--human", str(ev / "human.tsv"), "--metric", str(ev / "metric.tsv"),
                 "--metric", str(other), "--metric", f"copy={third}", "--compare", "metric,copy",
                 "--bootstrap", "20", "--permutations", "20"])
    out = capsys.readouterr().out
    assert code == 0 and "Paired comparisons" in out and "other" not in out
    assert "metric  copy" in out and "+0.000  [+0.000, +0.000]  1.000" in out
    # the pair comes out as asked, A - B, even when B is the earlier --metric
    code = main(["meta-eval", "--human", str(ev / "human.tsv"), "--metric", str(ev / "metric.tsv"),
                 "--metric", str(other), "--compare", "other,metric", "--bootstrap", "20", "--permutations", "20"])
    rows = [x.split()[:2] for x in capsys.readouterr().out.splitlines()]
    assert code == 0 and ["other", "metric"] in rows and ["metric", "other"] not in rows
    assert main(["meta-eval", "--human", str(ev / "human.tsv"), "--metric", str(ev / "metric.tsv"),
                 "--compare", "metric,nope"]) == 2
    assert "--compare names nope" in capsys.readouterr().err


def test_score_writes_the_given_segment_ids(ev, tmp_path, capsys):
    ids = tmp_path / "ids.txt"
    ids.write_text("s10\ns11\ns12\ns13\n", encoding="utf-8")
    seg = tmp_path / "seg"
    assert main(["score", "--hyp", f"A={ev / 'hyp_a.it'}", "--ref", str(ev / "ref.it"), "--ids", str(ids),
                 "--metrics", "chrf", "--sentence-scores", str(seg)]) == 0
    rows = (seg / "chrf.seg.tsv").read_text().splitlines()
    assert [r.split("\t")[1] for r in rows] == ["seg_id", "s10", "s11", "s12", "s13"]
    assert "line numbers" not in capsys.readouterr().err
    # without ids: line numbers, and a note that says so
    assert main(["score", "--hyp", f"A={ev / 'hyp_a.it'}", "--ref", str(ev / "ref.it"), "--metrics", "chrf",
                 "--sentence-scores", str(seg)]) == 0
    err = capsys.readouterr().err
    assert "segment ids in" in err and "are line numbers 1..4" in err
    for text, message in (("s10\ns11\ns10\ns13\n", "ids.txt:3: duplicate segment id 's10' (also line 1)"),
                          ("s10\ns11\n", "ids.txt: 2 segment ids for 4 sentences"),
                          ("s10\n\ns12\ns13\n", "ids.txt:2: segment id ''")):
        ids.write_text(text, encoding="utf-8")
        assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--ref", str(ev / "ref.it"), "--ids", str(ids)]) == 2
        assert message in capsys.readouterr().err
    # ids that contradict the test set's
    ids.write_text("1\n2\n9\n4\n", encoding="utf-8")
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--testset", str(ev / "testset.jsonl"), "--ids", str(ids),
                 "--metrics", "chrf"]) == 2
    assert "ids.txt:3: segment id '9', but sentence 3 of the test set has id '3'" in capsys.readouterr().err


def test_tesla_comp_says_what_it_did(ev, tmp_path, capsys):
    # one MWE with a prediction, one listed without (NA): both are found in the references and counted
    comp = tmp_path / "comp.tsv"
    rows = (ev / "comp.it.tsv").read_text(encoding="utf-8").splitlines()
    body = [r for r in rows if r.strip() and not r.startswith("mwe")]
    comp.write_text("mwe\tcompositionality\n" + body[0] + "\n" + body[1].split("\t")[0] + "\tNA\n", encoding="utf-8")
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--hyp", str(ev / "hyp_b.it"), "--ref", str(ev / "ref.it"),
                 "--metrics", "tesla-comp", "--compositionality", str(comp), "--lang", "it",
                 "--tesla-default", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "tesla-comp: reference MWEs per system" in out
    assert "unmatched: predicted  default 0.25" in out
    # hypothesis b lacks both reference MWEs: one weighted by its prediction, one by the default
    assert "hyp_b.it         2       0                     1             1" in out
    assert "comp-default:0.25" in out
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--ref", str(ev / "ref.it"), "--metrics", "tesla-comp",
                 "--compositionality", str(comp), "--lang", "it", "--tesla-default", "2"]) == 2
    assert "expected a weight in [0, 1] or 'median'" in capsys.readouterr().err
