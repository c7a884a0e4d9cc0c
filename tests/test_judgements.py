"""Human judgement formats: readers, MQM weighting, the orientation check and `meta-eval extract`.

Fixtures in tests/fixtures/judgements are written by us in the published layouts; the expected
MQM scores are worked out by hand in the comments.
"""

from __future__ import annotations

import json
import tarfile

import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.human_scores import (
    MqmWeights,
    load_human_scores,
    mqm_segment_scores,
    orientation_warnings,
)
from mwemt.formats import read_testset
from mwemt.judgements import (
    HIGHER_BETTER,
    LOWER_BETTER,
    SegmentScore,
    build_extract,
    collect_texts,
    detect_human_format,
    guess_reference_system,
    match_source_lines,
    read_mqm_ratings,
    read_wmt_mqm_avg,
)


@pytest.fixture
def jd(fixtures):
    return fixtures / "judgements"


def _scores(human) -> dict:
    return {k: (None if v is None else round(v, 6)) for k, v in human.oriented().items()}


def test_formats_are_detected_from_the_header(jd, fixtures):
    assert detect_human_format(jd / "wmt_mqm_avg.tsv") == "wmt-mqm-avg"
    assert detect_human_format(jd / "wmt_mqm_errors.tsv") == "wmt-mqm-errors"
    assert detect_human_format(jd / "marot_sxs.tsv") == "marot-sxs"
    assert detect_human_format(fixtures / "eval" / "human.tsv") == "tsv"


def test_wmt_avg_scores_keep_their_published_orientation(jd):
    scores = {s.key: s for s in read_wmt_mqm_avg(jd / "wmt_mqm_avg.tsv")}
    assert scores[("A", "1")] == SegmentScore("A", "1", -2.55, HIGHER_BETTER)
    assert scores[("B", "3")].score is None and scores[("ref-A", "2")].oriented() == 0
    human = load_human_scores(jd / "wmt_mqm_avg.tsv")
    assert human.format == "wmt-mqm-avg" and "higher is better" in human.orientation and not human.warnings


def test_mqm_error_rows_scored_with_freitag_weights_averaged_over_raters(jd):
    human = load_human_scores(jd / "wmt_mqm_errors.tsv")
    # A/1: rater r1 Major (5) + Minor Fluency/Punctuation (0.1), rater r2 no error -> 5.1 / 2
    # B/1: Non-translation (25) by one rater; B/2: two Minor errors (1 + 1) by one rater
    assert _scores(human) == {("A", "1"): -2.55, ("B", "1"): -25.0, ("ref", "1"): 0.0, ("A", "2"): 0.0,
                              ("B", "2"): -2.0, ("ref", "2"): 0.0, ("A", "3"): 0.0, ("ref", "3"): 0.0}
    assert all(s.orientation == LOWER_BETTER and s.score >= 0 for s in human.scores)
    assert human.weights == "freitag2021" and "Major Non-translation* 25" in human.orientation
    # the same numbers as the published average file, which stores -MQM
    avg = load_human_scores(jd / "wmt_mqm_avg.tsv").oriented()
    assert all(avg[("ref-A" if s == "ref" else s, g)] == pytest.approx(v) for (s, g), v in human.oriented().items())


def test_weights_file_and_marot_scheme(jd):
    human = load_human_scores(jd / "wmt_mqm_errors.tsv", weights=MqmWeights.load(jd / "weights.tsv"))
    # rules: Major Non-translation* 10, * Source* 0, Major * 4, Minor * 0.5
    assert _scores(human)[("A", "1")] == -(4 + 0.5) / 2 and _scores(human)[("B", "1")] == -10.0
    assert _scores(human)[("B", "2")] == -1.0 and human.weights == "file:weights.tsv"
    marot = MqmWeights.load("marot")
    assert marot.weight("Minor", "Fluency/Punctuation") == 0.1 and marot.weight("major", "Non-translation!") == 25
    assert marot.weight("Major", "Source issue") == 0 and marot.weight("Minor", "Accuracy/Creative Reinterpretation") == 0
    assert marot.weight("HOTW-test", "Found") == 0 and marot.weight("No-error", "No-error") == 0
    with pytest.raises(MwemtError, match="neither a scheme"):
        MqmWeights.load("freitag2022")


def test_bad_weights_file_names_the_line(tmp_path):
    p = tmp_path / "w.tsv"
    p.write_text("Major\t*\t5\nMinor\t*\tone\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"w\.tsv:2: weight 'one' is not a number"):
        MqmWeights.load(p)


def test_marot_sxs_skips_attention_checks_and_metadata_rows(jd):
    ratings = list(read_mqm_ratings(jd / "marot_sxs.tsv"))
    assert len(ratings) == 9 and all(r.severity != "HOTW-test" and r.rater for r in ratings)
    assert ratings[3].source == "你好。" and ratings[3].target == "Hi ."  # marks removed
    freitag = {s.key: s.score for s in mqm_segment_scores(ratings, MqmWeights.load())}
    marot = {s.key: s.score for s in mqm_segment_scores(ratings, MqmWeights.load("marot"))}
    # Y/7: rater1 Minor style (1); rater2 Major source issue (Freitag 5, Marot 0) + Minor punctuation (0.1)
    assert freitag[("Y", "7")] == pytest.approx((1 + 5.1) / 2) and marot[("Y", "7")] == pytest.approx((1 + 0.1) / 2)
    # X/9: Minor creative reinterpretation (Freitag 1, Marot 0); the HOTW row is not a rating
    assert freitag[("X", "9")] == 1 and marot[("X", "9")] == 0 and freitag[("Y", "9")] == 25
    assert freitag[("Y", "8")] == 5 and freitag[("X", "7")] == 0


def test_a_published_tar_gz_is_read_as_the_file_inside(jd, tmp_path):
    archive = tmp_path / "sxs.tsv.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(jd / "marot_sxs.tsv", arcname="sxs.tsv")
    assert detect_human_format(archive) == "marot-sxs"
    assert _scores(load_human_scores(archive)) == _scores(load_human_scores(jd / "marot_sxs.tsv"))
    two = tmp_path / "two.tar.gz"
    with tarfile.open(two, "w:gz") as tar:
        tar.add(jd / "marot_sxs.tsv", arcname="a.tsv")
        tar.add(jd / "wmt_mqm_avg.tsv", arcname="b.tsv")
    with pytest.raises(InputError, match="holds 2 files"):
        load_human_scores(two)


def test_texts_of_an_item_must_agree_except_for_whitespace(jd, tmp_path):
    texts = collect_texts(read_mqm_ratings(jd / "marot_sxs.tsv"))
    assert texts.targets[("Y", "7")] == "Hi." and texts.whitespace_variants == 1  # "Hi." twice, "Hi ." once
    assert texts.ids == ["7", "8", "9"] and texts.documents["8"] == ("doc1:zh-en", "2")
    rows = (jd / "wmt_mqm_errors.tsv").read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "mqm.tsv"
    bad.write_text("\n".join(rows[:2] + [rows[2].replace("Katze saß", "Kater lag")]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mqm\.tsv:3: two different translations for \('A', '1'\)"):
        collect_texts(read_mqm_ratings(bad), bad)
    bad.write_text(rows[0] + "\nA\ttalk.1\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"mqm\.tsv:2: 3 columns"):
        list(read_mqm_ratings(bad))


def test_sources_join_text_lines_by_text_then_by_document(jd):
    texts = collect_texts(read_mqm_ratings(jd / "marot_sxs.tsv"))
    lines = (jd / "source.zh").read_text(encoding="utf-8").splitlines()
    m = match_source_lines(texts, lines, "source.zh")
    # 7 exact on line 3; the lone quote of 8 stands on lines 2 and 4: its document's segment 1 is on
    # line 3, so segment 2 is expected on line 4; 9 matches "再见。" once whitespace is ignored
    assert m.lines == {"7": 2, "8": 3, "9": 4}
    assert (m.exact, m.whitespace, m.by_document) == (2, 1, 1)
    with pytest.raises(InputError, match="source of segment '7'.* is on no line"):
        match_source_lines(texts, ["nothing"], "other.zh")
    with pytest.raises(InputError, match="on 2 lines"):
        match_source_lines(texts, ["你好。", "”", "你好。", "”", "再见。"], "other.zh")  # doc1 has no anchor


def test_extract_writes_line_aligned_files_with_ids(jd, tmp_path, capsys):
    out = tmp_path / "ted"
    assert main(["meta-eval", "extract", "--human", str(jd / "wmt_mqm_errors.tsv"), "--out", str(out)]) == 0
    cap = capsys.readouterr()
    assert "references: system ref" in cap.err and "left out 1 segments" in cap.err
    assert "mwemt score --testset" in cap.out and "--hyp A=" in cap.out and "--hyp ref=" not in cap.out
    # segment 3 is left out: B has no translation of it
    assert (out / "ids.txt").read_text().splitlines() == ["1", "2"]
    assert (out / "source.txt").read_text().splitlines() == ["The cat sat.", "It rained."]
    assert (out / "reference.txt").read_text().splitlines() == ["Die Katze saß.", "Es hat geregnet."]
    assert (out / "hyp" / "A.txt").read_text().splitlines() == ["Die Katze saß.", "Es regnete."]
    assert (out / "hyp" / "B.txt").read_text().splitlines() == ["The cat sat.", "Es regnet."]
    assert [it.id for it in read_testset(out / "testset.jsonl")] == ["1", "2"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["segments_left_out"] == 1 and manifest["left_out"] == {"3": ["B"]}
    assert manifest["inputs"]["human"]["sha256"]


def test_extract_joins_references_by_source_text(jd, tmp_path, capsys):
    out = tmp_path / "sxs"
    code = main(["meta-eval", "extract", "--human", str(jd / "marot_sxs.tsv"), "--source-text", str(jd / "source.zh"),
                 "--reference-text", str(jd / "reference.en"), "--out", str(out)])
    assert code == 0
    assert (out / "ids.txt").read_text().splitlines() == ["7", "8", "9"]
    assert (out / "reference.txt").read_text().splitlines() == ["Hello there.", "”", "See you."]
    assert (out / "segments.tsv").read_text().splitlines() == [
        "seg_id\tdoc\tdoc_seg_id\tsource_line", "7\tdoc1:zh-en\t1\t3", "8\tdoc1:zh-en\t2\t4", "9\tdoc2:zh-en\t1\t5"]
    assert (out / "hyp" / "Y.txt").read_text().splitlines() == ["Hi.", "”", "Bye."]
    assert "2 exactly, 1 ignoring whitespace, 1 of them on several lines" in capsys.readouterr().err


def test_extract_refuses_score_only_files_and_bad_references(jd, tmp_path, capsys):
    assert main(["meta-eval", "extract", "--human", str(jd / "wmt_mqm_avg.tsv"), "--out", str(tmp_path / "x")]) == 2
    assert "has no MQM error rows" in capsys.readouterr().err
    assert main(["meta-eval", "extract", "--human", str(jd / "wmt_mqm_errors.tsv"), "--reference-system", "human",
                 "--out", str(tmp_path / "x")]) == 2
    assert "no system 'human'" in capsys.readouterr().err
    assert main(["meta-eval", "extract", "--human", str(jd / "wmt_mqm_errors.tsv"), "--reference-system", "none",
                 "--out", str(tmp_path / "y")]) == 0
    assert "no references written" in capsys.readouterr().err and not (tmp_path / "y" / "reference.txt").exists()
    texts = collect_texts(read_mqm_ratings(jd / "wmt_mqm_errors.tsv"))
    assert guess_reference_system(texts.systems) == "ref"
    assert guess_reference_system(["ref-A", "refB", "X"]) is None
    assert set(build_extract(texts).hypotheses) == {"A", "B", "ref"}  # no reference: every system is scored


def _metric_file(path, scores: dict) -> str:
    path.write_text("system\tseg_id\tscore\n" + "".join(f"{s}\t{g}\t{v}\n" for (s, g), v in scores.items()),
                    encoding="utf-8")
    return str(path)


def test_meta_eval_runs_on_each_published_format(jd, tmp_path, capsys):
    # a metric that ranks like the humans on segments 1 and 2: B/1 lowest, B/2 below A/2
    metric = _metric_file(tmp_path / "m.seg.tsv", {("A", "1"): 0.6, ("B", "1"): 0.1, ("A", "2"): 0.9, ("B", "2"): 0.5})
    # each file's own reference system (excluding a system the file lacks is an error, issue 32)
    for human, ref in (("wmt_mqm_avg.tsv", "ref-A"), ("wmt_mqm_errors.tsv", "ref")):
        assert main(["meta-eval", "--human", str(jd / human), "--metric", metric, "--bootstrap", "0",
                     "--exclude-system", ref, "--allow-partial"]) == 0
        out, err = capsys.readouterr()
        assert "warning: " in err and "1 judged segment ids without a row, e.g. 3" in err
        assert "higher is better" in out and "\nm   " in out
        assert "  1.000  " in out  # tau: both pairs concordant
    assert main(["meta-eval", "--human", str(jd / "marot_sxs.tsv"), "--mqm-weights", "marot", "--json",
                 "--metric", _metric_file(tmp_path / "x.tsv", {("X", "7"): 1, ("Y", "7"): 0, ("X", "9"): 1,
                                                                 ("Y", "9"): 0}), "--bootstrap", "0",
                 "--allow-partial"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["human"]["format"] == "marot-sxs" and obj["human"]["mqm_weights"] == "marot"
    assert obj["results"][0]["values"]["tau_wmt13"] == 1.0


def test_format_errors_list_the_formats(jd, fixtures, capsys):
    metric = str(fixtures / "eval" / "metric.tsv")
    assert main(["meta-eval", "--human", str(jd / "wmt_mqm_avg.tsv"), "--human-format", "wmt-mqm-errors",
                 "--metric", metric]) == 2
    err = capsys.readouterr().err
    assert "not a wmt-mqm-errors file" in err and "tsv, wmt-mqm-avg, wmt-mqm-errors, marot-sxs" in err
    # a published file given where a metric score file is expected
    assert main(["meta-eval", "--human", str(fixtures / "eval" / "human.tsv"), "--metric",
                 str(jd / "wmt_mqm_avg.tsv")]) == 2
    assert "not a tsv file" in capsys.readouterr().err
    with pytest.raises(InputError, match="unknown human score format 'mqm'.*auto or one of tsv"):
        load_human_scores(jd / "wmt_mqm_avg.tsv", "mqm")


def test_lower_better_is_refused_for_formats_that_state_their_orientation(jd, fixtures, capsys):
    assert main(["meta-eval", "--human", str(jd / "wmt_mqm_avg.tsv"), "--human-lower-better",
                 "--metric", str(fixtures / "eval" / "metric.tsv")]) == 2
    assert "flip the sign of every correlation" in capsys.readouterr().err


def test_sign_warning_for_negated_scores_declared_lower_is_better(tmp_path, capsys):
    # -MQM written as a plain tsv, then declared lower-is-better: the sign is probably flipped
    neg = _metric_file(tmp_path / "neg.tsv", {("A", "1"): -2.5, ("B", "1"): 0, ("A", "2"): -1, ("B", "2"): -5})
    metric = _metric_file(tmp_path / "m.tsv", {("A", "1"): 0.2, ("B", "1"): 0.9, ("A", "2"): 0.8, ("B", "2"): 0.1})
    assert main(["meta-eval", "--human", neg, "--human-lower-better", "--metric", metric, "--bootstrap", "0"]) == 0
    cap = capsys.readouterr()
    assert "warning: all 4 human scores are <= 0" in cap.err and "drop --human-lower-better" in cap.err
    assert "-1.000" in cap.out  # what the flipped sign looks like
    assert main(["meta-eval", "--human", neg, "--metric", metric, "--bootstrap", "0"]) == 0
    cap = capsys.readouterr()
    assert "warning" not in cap.err and "   1.000" in cap.out


def test_sign_warning_for_an_error_count_not_declared(tmp_path):
    mqm = [SegmentScore("A", str(g), v) for g, v in enumerate([0, 0, 5, 1, 0, 0.1, 25, 0])]
    (w,) = orientation_warnings(mqm, lower_better=False)
    assert "all 8 human scores are >= 0 and 50% are exactly 0" in w
    assert orientation_warnings(mqm, lower_better=True) == []
    da = [SegmentScore("A", str(g), v) for g, v in enumerate([70, 85.5, 0, 92, 60, 33])]  # one zero in six
    assert orientation_warnings(da, lower_better=False) == []
    z = [SegmentScore("A", str(g), v) for g, v in enumerate([-0.3, 0.8, 0.1, -1.2])]
    assert orientation_warnings(z, lower_better=False) == orientation_warnings(z, lower_better=True) == []


@pytest.mark.shared
def test_wmt21_ted_published_files_agree(shared):
    ted = shared / "judgements/wmt-mqm-en-de/ted/ende"
    recomputed = load_human_scores(ted / "mqm_ted_ende.tsv").oriented()
    published = load_human_scores(ted / "mqm_ted_ende.avg_seg_scores.tsv").oriented()
    assert len(recomputed) == 14 * 529
    alias = {"ref": "ref-A"}
    assert all(published[(alias.get(s, s), g)] == pytest.approx(v, abs=1e-5) for (s, g), v in recomputed.items())


@pytest.mark.shared
def test_wmt23_side_by_side_joins_the_text_files(shared):
    root = shared / "judgements/wmt23-mqm-zh-en"
    archive = root / "sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz"
    ratings = list(read_mqm_ratings(archive))
    texts = collect_texts(ratings, archive)
    assert len(texts.ids) == 377 and len(texts.systems) == 10
    src = (root / "txt/generaltest2023.zh-en.src.zh").read_text(encoding="utf-8").splitlines()
    m = match_source_lines(texts, src, "src")
    assert (m.exact, m.whitespace, m.by_document) == (315, 62, 3)
    # every document keeps one offset between its segment positions and the text lines
    offsets = {}
    for g in texts.ids:
        doc, pos = texts.documents[g]
        offsets.setdefault(doc, set()).add(m.lines[g] - int(pos))
    assert all(len(v) == 1 for v in offsets.values())
    # Marot's default weights reproduce the MQM scores the export embeds in its metadata
    marot = {(s.system, texts.documents[s.segment]): s.score
             for s in mqm_segment_scores(ratings, MqmWeights.load("marot"))}
    embedded = {}
    for line in list(_lines(archive))[1:]:
        seg = json.loads(line.split("\t")[9]).get("segment") or {}
        if "MQM" in seg.get("metrics", {}):
            embedded[(seg["system"], (seg["doc"], seg["docSegId"]))] = seg["metrics"]["MQM"]
    assert len(embedded) == 3770 and all(marot[k] == pytest.approx(v) for k, v in embedded.items())


def _lines(path):
    from mwemt.fileio import iter_lines

    return iter_lines(path)


def test_marot_export_checked_against_its_published_mqm(tmp_path):
    # Y/7: rater1 minor style (1); rater2 major source issue + minor punctuation. marot weights: (1 + 0 + 0.1) / 2
    # = 0.55; freitag2021 counts the source issue: (1 + 5 + 0.1) / 2 = 3.05. Y/8: a major omission marked
    # "(Translation 2)" on Y's own row counts for Y: 5, as the export says. The HOTW row carries X/9's value.
    md = lambda v: '{"segment":{"metrics":{"MQM":%s},"doc":"d"}}' % v  # noqa: E731, UP031
    header = "system\tdoc\tdocSegId\tglobalSegId\trater\tsource\ttarget\tcategory\tseverity\tmetadata\t# Documentation: x"
    rows = [
        f"X\td\t1\t7\trater1\ta\tA\tNo-error\tNo-error\t{md(0)}",
        f"Y\td\t1\t7\trater1\ta\tB\tStyle/Unnatural or awkward\tMinor\t{md(0.55)}",
        "X\td\t1\t7\trater2\ta\tA\tNo-error\tNo-error\t{}",
        "Y\td\t1\t7\trater2\ta\tB\tSource issue\tMajor\t{}",
        "Y\td\t1\t7\trater2\ta\tB\tFluency/Punctuation\tMinor\t{}",
        f"Y\td\t2\t8\trater1\tb\tC\tAccuracy/Omission (Translation 2)\tMajor\t{md(5)}",
        "X\td\t3\t9\trater1\tc\tD\tNo-error\tNo-error\t{}",
        f"X\td\t3\t9\trater1\tc\tD\tFound\tHOTW-test\t{md(0)}",
    ]
    path = tmp_path / "sxs.tsv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    from mwemt.evaluate.human_scores import MqmWeights, load_human_scores
    from mwemt.judgements import read_published_mqm

    assert read_published_mqm(path) == {("X", "7"): 0.0, ("Y", "7"): 0.55, ("Y", "8"): 5.0, ("X", "9"): 0.0}
    marot = load_human_scores(path, weights=MqmWeights.load("marot"))
    assert marot.checks == ["check: MQM recomputed with the marot weights equals the MQM published in the file's "
                            "metadata for 4 of 4 items"]
    freitag = load_human_scores(path)
    assert "for 3 of 4 items; 1 differ, e.g. Y segment 7: 3.05 vs 0.55" in freitag.checks[0]
    assert "--mqm-weights marot" in freitag.describe()
