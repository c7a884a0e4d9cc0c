"""A new-user probe of the surface of issues 41, 42 and 44 (the MWE verdict and its agreement commands, line-stable
alignment, the MQM -> MWE verdict conversion, --mwe-breakdown, republishing, judged constraints' sense and form
options, the moved modules): the faults it found, one test each. Every test fails before its fix; none needs a
model or the shared data.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from tests.conftest import FIXTURES, ROOT

EVAL = FIXTURES / "eval"
SCRIPTS = ROOT / "scripts"


def _tree_hash(path: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(path)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------- mwemt score: settings nothing reads


def _score(*args: str) -> int:
    return main(["score", "--hyp", str(EVAL / "hyp_a.it"), "--testset", str(EVAL / "testset.jsonl"), "--lang", "it",
                 *args])


@pytest.mark.parametrize("args, flag, says", [
    (["--metrics", "mwe", "--align", "none", "--symmetrization", "union"], "--symmetrization", "--align none"),
    (["--metrics", "mwe", "--align", "none", "--cache", "C"], "--cache", "--align none"),
    (["--metrics", "mwe-verdict", "--align", "none", "--no-cache"], "--no-cache", "--align none"),
    (["--metrics", "mwe", "--align", str(EVAL / "hyp_a.align"), "--cache", "C"], "--cache", "--align FILE"),
    (["--metrics", "mwe", "--mwe-compat", "zaninello2020", "--cache", "C"], "--cache", "--mwe-compat"),
])
def test_aligner_settings_without_an_aligner_are_refused(args, flag, says, capsys):
    """--align none / FILE (and --mwe-compat) run no aligner: its settings printed the same scores and were
    silently ignored."""
    assert _score(*args) == 2
    err = capsys.readouterr().err
    assert f"{flag} sets the aligner, which does not run here ({says}" in err, err


def test_a_window_with_align_none_is_refused_but_zero_is_fine(capsys):
    assert _score("--metrics", "mwe", "--align", "none", "--mwe-window", "2") == 2
    assert "--mwe-window 2 widens the words aligned to an MWE; --align none" in capsys.readouterr().err
    # the documented 'score before alignment-aware scoring' still runs
    assert _score("--metrics", "mwe", "--align", "none", "--mwe-match", "char", "--mwe-window", "0") == 0


@pytest.mark.parametrize("args, flag, needs", [
    (["--metrics", "mwe", "--extra-max", "5"], "--extra-max", "give --extra SRC TGT or --extra-tsv FILE"),
    (["--metrics", "mwe", "--src-lang", "de"], "--src-lang", "give --extra SRC TGT or --extra-tsv FILE"),
    (["--metrics", "mwe-verdict", "--mwe-table-min-count", "5"], "--mwe-table-min-count", "give --mwe-table"),
    (["--metrics", "mwe-verdict", "--dictionary-format", "bilingual"], "--dictionary-format", "give --dictionary"),
])
def test_settings_of_an_absent_input_are_refused(args, flag, needs, capsys):
    assert _score(*args) == 2
    err = capsys.readouterr().err
    assert flag in err and needs in err, err


def test_help_examples_keep_their_line_breaks():
    """A single backslash before a newline in a (non-raw) help string joined two example lines into one, with six
    spaces in the middle: `mwemt score --help` and `mwemt translate --help` showed such broken examples."""
    from mwemt.cli import score, translate

    assert "--hyp B=hyps/B.t.txt \\\n      --align alignments/B.t.align.gz" in score.EPILOG
    for text in (score.EPILOG, translate.EPILOG):
        assert not re.search(r"\S \s{5,}--", text), re.search(r".{30}\S \s{5,}--.{20}", text)


# ---------------------------------------------------------------- --mwe-breakdown


def test_breakdown_table_without_the_tests_mwes_is_bad_input(tmp_path, capsys):
    """A table that scores none of the test's MWEs ended in 'internal error: ValueError ... tertiles'."""
    table = tmp_path / "other.tsv"
    table.write_text("foo bar\t0.5\nbaz qux\t0.2\n", encoding="utf-8")
    out = tmp_path / "s.json"
    assert _score("--metrics", "mwe", "--align", "none", "--json", "-o", str(out), "--mwe-breakdown", str(table)) == 2
    err = capsys.readouterr().err
    assert f"{table}: 0 sentence(s) of the test set have an MWE this table scores; tertiles need at least 3" in err
    assert "internal error" not in err and not out.exists()
    assert _score("--metrics", "mwe", "--align", "none", "--json", "-o", str(out), "--mwe-breakdown",
                  str(tmp_path)) == 2
    assert f"{tmp_path}: is a directory, not a file" in capsys.readouterr().err


# ---------------------------------------------------------------- MQM spans -> MWE verdicts

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
SRC = "We saw the Eiffel Tower in Paris ."
REF_ROW = f"ref\ttalk\t1\t1\tr1\t{SRC}\tWir sahen den Eiffel Tower in Paris .\tNo-error\tNo-error\t"


def _mqm(tmp_path: Path, rows: list[str], name: str = "mqm.tsv") -> tuple[Path, Path]:
    path = tmp_path / name
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    lexicon = tmp_path / "lex.txt"
    lexicon.write_text("eiffel tower\n", encoding="utf-8")
    return path, lexicon


def test_an_error_marked_nowhere_makes_no_verdict():
    """A stray </v> leaves an Accuracy error without a span: the MWE was judged Y (as if no error were there)."""
    from mwemt.evaluate.mqm_mwe import LineErrors, MqmMweRules, verdict_of

    words, source = [(10, 15)], [(3, 8)]
    rules = MqmMweRules()
    assert verdict_of(LineErrors([("Accuracy/Mistranslation", (), ())], {"r"}), words, source, rules) == \
        (None, "an error without a marked span")
    placed = LineErrors([("Accuracy/Mistranslation", (), ((12, 20),)), ("Fluency/Grammar", (), ())], {"r"})
    assert verdict_of(placed, words, source, rules)[0] == "N"          # a marked error on the words still decides
    other = LineErrors([("Style/Awkward", (), ())], {"r"})
    assert verdict_of(other, words, source, rules) == (None, "other errors only")
    assert verdict_of(other, words, source, MqmMweRules(other_errors="Y"))[0] == "Y"


def test_stray_close_mark_in_a_file(tmp_path):
    from mwemt.evaluate.mqm_mwe import mqm_judgements, source_annotator

    rows = [REF_ROW,
            f"A\ttalk\t1\t1\tr1\t{SRC}\tWir sahen den Eiffel Tower</v> in Paris .\tAccuracy/Mistranslation\tMajor\t",
            f"B\ttalk\t1\t1\tr1\t{SRC}\tWir sahen den Eiffel Tower in Paris .\tNo-error\tNo-error\t"]
    path, lexicon = _mqm(tmp_path, rows)
    j = mqm_judgements(path, source_annotator(lexicon), tgt_lang="de")
    assert {r.system: r.label for r in j.rows} == {"B": 1}
    assert j.counts["rows_left_out"] == {"an error without a marked span": 1}


@pytest.mark.parametrize("rows, says", [
    ([REF_ROW], "only the reference system 'ref' is rated: there is no system line to judge"),
    ([REF_ROW.replace("Eiffel Tower", "house"),
      f"A\ttalk\t1\t1\tr1\t{SRC.replace('Eiffel Tower', 'house')}\tWir sahen das Haus .\tNo-error\tNo-error\t"],
     "no MWE could be judged (0 source MWE(s) of the lexicon found"),
])
def test_mqm_file_with_nothing_to_judge_is_refused(rows, says, tmp_path, capsys):
    """A file with only the reference's rows, or without the lexicon's MWEs, wrote an empty test (exit 0), and
    `mwe-agreement --mqm` then ended in an internal error."""
    path, lexicon = _mqm(tmp_path, rows)
    out = tmp_path / "out"
    assert main(["meta-eval", "mwe-test", "--mqm", str(path), "--lexicon", str(lexicon), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {says}" in err and "internal error" not in err and not out.exists()


def test_mwe_test_refuses_an_input_its_outputs_would_replace_before_any_work(tmp_path, capsys):
    """--mqm OUT/verdicts.tsv was refused only when verdicts.tsv was written, after testset.jsonl and hyp/."""
    out = tmp_path / "out"
    out.mkdir()
    path, lexicon = _mqm(out, [REF_ROW, f"A\ttalk\t1\t1\tr1\t{SRC}\tWir sahen den Turm .\tNo-error\tNo-error\t"],
                         name="verdicts.tsv")
    before = path.read_bytes()
    assert main(["meta-eval", "mwe-test", "--mqm", str(path), "--lexicon", str(lexicon), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out (verdicts.tsv)" in err and "is the same file as the input --mqm" in err
    assert path.read_bytes() == before and sorted(p.name for p in out.iterdir()) == ["lex.txt", "verdicts.tsv"]


# ---------------------------------------------------------------- mwe-agreement and the EN->IT checks


@pytest.mark.parametrize("extra, flag", [(["--model", "m.json"], "--model"), (["--lexicon", "lex.txt"], "--lexicon"),
                                         (["--lang", "fr"], "--lang"), (["--reference-system", "ref"],
                                                                        "--reference-system")])
def test_mqm_options_without_mqm_are_refused(extra, flag, tmp_path, capsys):
    """They judge the MQM rows only; without --mqm the table was printed as if they had been read."""
    assert main(["meta-eval", "mwe-agreement", "--it-checks", str(tmp_path / "checks.tsv"), *extra]) == 2
    assert f"{flag} is read only with --mqm" in capsys.readouterr().err


IT_HEADER = ("snt_id\tannotator\tsource_en\tref_it\tmt_it\tmwe_en\tmwe_ref_it\tref_check\tcorrect\tmwe_mt_it\t"
             "mt_check")


def test_checks_without_a_yes_or_no_verdict_are_bad_input(tmp_path, capsys):
    """Every FINAL verdict unreadable ('maybe') ended in 'internal error: ValueError: zero-size array'."""
    rows = ["1\tFINAL\tso , i 've known a lot of fish .\tho conosciuto un sacco di pesci .\tho conosciuto un sacco "
            "di pesci .\ta lot of\tun sacco di\tY\t\tun sacco di\tmaybe",
            "2\tFINAL\the took care of it .\tse ne è preso cura .\tne ha avuto cura .\ttook care of\tpreso cura\tY\t\t"
            "avuto cura\t?"]
    checks = tmp_path / "checks.tsv"
    checks.write_text("\n".join([IT_HEADER, *rows]) + "\n", encoding="utf-8")
    from mwemt.evaluate.mwe_agreement import read_it_checks

    with pytest.raises(InputError, match="no FINAL row with a Y/N verdict"):
        read_it_checks(checks)
    out = tmp_path / "m.json"
    assert main(["meta-eval", "mwe-verdict-train", "--it-checks", str(checks), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{checks}: no FINAL row with a Y/N verdict" in err and "internal error" not in err and not out.exists()


# ---------------------------------------------------------------- republishing (scripts/rewrite_results.py)


def _publication(tmp_path: Path) -> Path:
    from tests.test_report_gain import BASE, LONG, _publish

    out = _publish(tmp_path, {"baseline": BASE, "longer": LONG})
    manifest = json.loads((out / "publish.json").read_text(encoding="utf-8"))
    manifest["rescore"] = {"t": ["mwemt", "score", "--metrics", "bleu", "--ref", "refs/t.txt.gz", "--hyp",
                                 "baseline=hyps/baseline.t.txt.gz", "--json", "-o", "rescored/t.json"]}
    (out / "publish.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out


@pytest.mark.parametrize("rescore", [False, True])
@pytest.mark.parametrize("damage, says", [
    (lambda d: (d / "results.json").write_text("[]"), "results.json: not a results record"),
    (lambda d: (d / "publish.json").write_text("{oops"), "publish.json: not JSON"),
    (lambda d: (d / "publish.json").write_text("[]"), "publish.json: not a publication manifest"),
])
def test_a_malformed_publication_is_refused_before_anything_is_written(damage, says, rescore, tmp_path):
    """A list-shaped results.json was a traceback; a bad publish.json was read after results.json, .md and .csv
    had been rewritten (a half-rewritten publication, and a traceback)."""
    from mwemt.experiments.republish import rescore_published, rewrite_published

    out = _publication(tmp_path)
    damage(out)
    before = _tree_hash(out)
    with pytest.raises(MwemtError, match=re.escape(says)):
        (rescore_published if rescore else rewrite_published)(out, plot=False)
    assert _tree_hash(out) == before


def test_rescore_checks_its_sources_before_it_scores_or_writes(tmp_path):
    """`rewrite_results.py --rescore --source nosuch=F` scored every test (10 minutes on cpu-science-3-stopping),
    rewrote results.json, publish.json and rescore.sh, deleted the published alignments, and only then refused
    the --source (exit 2)."""
    from mwemt.experiments.republish import rescore_published

    out = _publication(tmp_path)
    (out / "alignments").mkdir()
    (out / "alignments" / "baseline.t.align.gz").write_bytes(gzip.compress(b"0-0\n"))
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    before = _tree_hash(out)
    with pytest.raises(MwemtError, match="--source for nosuch"):
        rescore_published(out, sources={"nosuch": short}, plot=False)
    with pytest.raises(InputError, match="1 source lines for 4 reference lines"):
        rescore_published(out, sources={"t": short}, plot=False)
    assert _tree_hash(out) == before


def test_a_short_hypothesis_file_is_named(tmp_path):
    """It said only 'reference stream 1 has 4 sentences, hypotheses have 3' (sacrebleu's words, no file)."""
    from mwemt.experiments.republish import rewrite_published

    out = _publication(tmp_path)
    hyp = out / "hyps" / "longer.t.txt.gz"
    lines = gzip.decompress(hyp.read_bytes()).decode().splitlines()
    hyp.write_bytes(gzip.compress(("\n".join(lines[:-1]) + "\n").encode()))
    with pytest.raises(InputError, match=re.escape(f"{hyp}: 3 lines for 4 reference lines")):
        rewrite_published(out, plot=False)


def test_check_rescore_refuses_a_bad_record_before_running_rescore_sh(tmp_path):
    """A list-shaped results.json ran rescore.sh (minutes) and then printed a traceback; a file that is not JSON
    gave a message without its name."""
    d = tmp_path / "pub"
    d.mkdir()
    (d / "rescore.sh").write_text("#!/bin/sh\ntouch ran\n", encoding="utf-8")
    for text, says in (("[]", "results.json: not a results record"), ("{oops", "results.json: not JSON")):
        (d / "results.json").write_text(text, encoding="utf-8")
        done = subprocess.run([sys.executable, str(SCRIPTS / "check_rescore.py"), str(d)], capture_output=True,
                              text=True)
        assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert str(d) in done.stderr


# ---------------------------------------------------------------- judged constraints' new options


@pytest.mark.parametrize("extra, says", [
    (["--constraint-senses", "S"], "--constraint-senses is read only by --constraint-ranking context"),
    (["--constraint-forms-file", "F"], "--constraint-forms-file is read only with --constraint-forms N"),
])
def test_constraint_files_their_setting_does_not_read_are_refused(extra, says, tmp_path, capsys):
    """With --constraint-ranking count, or --constraint-forms 1, the file was loaded and ignored (exit 0)."""
    src = tmp_path / "in.en"
    src.write_text("Anna takes care of the garden .\n", encoding="utf-8")
    for name in extra[1:]:
        (tmp_path / name).write_text("{}\n", encoding="utf-8")
    extra = [extra[0], str(tmp_path / extra[1])]
    assert main(["translate", "-m", str(tmp_path / "no-model"), "-i", str(src), "--constraints", "table.jsonl",
                 "--constraint-mode", "judged", "--constraint-threshold", "1", *extra]) == 2
    assert says in capsys.readouterr().err


def test_sense_data_script_reports_bad_input_without_a_traceback(tmp_path):
    src, tgt, lex, dic = (tmp_path / n for n in ("t.en", "t.it", "lex.txt", "dict.tsv"))
    src.write_text("He took care of it .\nShe takes care of him .\n", encoding="utf-8")
    tgt.write_text("Se ne è preso cura .\nSi prende cura di lui .\n", encoding="utf-8")
    lex.write_text("take care of\n", encoding="utf-8")
    dic.write_text("take care of\tprendersi cura di\n", encoding="utf-8")    # bilingual, not the wn-aligned table
    done = subprocess.run([sys.executable, str(SCRIPTS / "sense_data.py"), "--train-src", str(src), "--train-tgt",
                           str(tgt), "--lexicon", str(lex), "--lexicon-format", "list", "--dictionary", str(dic),
                           "--samplers", "1", "--out", str(tmp_path / "out")], capture_output=True, text=True,
                          env={**__import__("os").environ, "MWEMT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 2, done.stderr
    assert f"sense_data: {dic}:1: header" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------- moved modules and scripts


def test_script_paths_named_in_scripts_and_studies_exist():
    """studies/sense-and-form/mwe_in_context_eval.py sent readers to scripts/identify_context_eval.py, which
    moved to studies/identification/."""
    pattern = re.compile(r"\b((?:scripts|bench|studies/[a-z0-9-]+)/[A-Za-z0-9_]+\.(?:py|sh))\b")
    files = [*ROOT.glob("scripts/*.py"), *ROOT.glob("studies/*/*.py"), *ROOT.glob("bench/*.py")]
    missing = sorted({(f.relative_to(ROOT).as_posix(), m) for f in files
                      for m in pattern.findall(f.read_text(encoding="utf-8")) if not (ROOT / m).exists()})
    assert not missing, missing
