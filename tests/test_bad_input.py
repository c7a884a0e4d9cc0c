"""Every bad input the foundation, evaluation and compositionality commands accept is refused the
same way: exit code 2, ``file[:line]: what (expected ...)`` on stderr, and no output file at all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mwemt.cli import main

FIX = Path(__file__).resolve().parent / "fixtures"
CUPT = (FIX / "parseme" / "small.cupt").read_text(encoding="utf-8")
CUPT_LINES = CUPT.splitlines()
GOOD_LEX = "take care of\tVID\nwalk off\tVPC\n"
MQM_HEAD = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
MQM_ROW = "A\td\t1\t1\tr1\tThe house.\tDas <v>Haus</v>.\tAccuracy/Mistranslation\tMajor\n"


def _cupt_with(lineno: int, edit) -> str:
    lines = list(CUPT_LINES)
    lines[lineno - 1] = edit(lines[lineno - 1])
    return "\n".join(lines) + "\n"


# name -> (files to write: name -> text or bytes, argv with {tmp} and {out}, file named in the error, line)
CASES = {
    "annotate: bad UTF-8": (
        {"lex.txt": GOOD_LEX, "in.en": b"fine\n\xff\xfe broken\n"},
        ["annotate", "-l", "{tmp}/lex.txt", "-i", "{tmp}/in.en", "-o", "{out}"], "in.en", 2),
    "annotate: empty line": (
        {"lex.txt": GOOD_LEX, "in.en": "a\n\nb\n"},
        ["annotate", "-l", "{tmp}/lex.txt", "-i", "{tmp}/in.en", "-o", "{out}"], "in.en", 2),
    "annotate: empty input file": (
        {"lex.txt": GOOD_LEX, "in.en": ""},
        ["annotate", "-l", "{tmp}/lex.txt", "-i", "{tmp}/in.en", "-o", "{out}"], "in.en", None),
    "annotate: empty lexicon": (
        {"lex.txt": "# only a comment\n", "in.en": "a b\n"},
        ["annotate", "-l", "{tmp}/lex.txt", "-i", "{tmp}/in.en", "-o", "{out}"], "lex.txt", None),
    "annotate: malformed lexicon row": (
        {"lex.txt": "take care of\tVID\nkick the bucket\tVID\tVERB\n", "in.en": "a b\n"},
        ["annotate", "-l", "{tmp}/lex.txt", "-i", "{tmp}/in.en", "-o", "{out}"], "lex.txt", 2),
    "annotate: bad compositionality in lexicon": (
        {"lex.txt": "take care of\tVID\t\t1.7\n", "in.en": "a b\n"},
        ["annotate", "-l", "{tmp}/lex.txt", "-i", "{tmp}/in.en", "-o", "{out}"], "lex.txt", 1),
    "annotate: malformed .cupt row": (
        {"lex.txt": GOOD_LEX, "in.cupt": _cupt_with(6, lambda r: r.rsplit("\t", 1)[0])},
        ["annotate", "-l", "{tmp}/lex.txt", "--input-format", "cupt", "--output-format", "cupt",
         "-i", "{tmp}/in.cupt", "-o", "{out}"], "in.cupt", 6),
    "annotate: bad MWE code in .cupt": (
        {"lex.txt": GOOD_LEX, "in.cupt": _cupt_with(5, lambda r: r.rsplit("\t", 1)[0] + "\t1:VID;x")},
        ["annotate", "-l", "{tmp}/lex.txt", "--input-format", "cupt", "-i", "{tmp}/in.cupt", "-o", "{out}"],
        "in.cupt", 5),
    "lexicon extract: malformed .cupt row": (
        {"in.cupt": _cupt_with(6, lambda r: r.replace("\t", " ", 1))},
        ["lexicon", "extract", "--cupt", "{tmp}/in.cupt", "-o", "{out}"], "in.cupt", 6),
    "lexicon extract: nothing left after --min-count": (
        {"in.cupt": CUPT}, ["lexicon", "extract", "--cupt", "{tmp}/in.cupt", "--min-count", "99", "-o", "{out}"],
        "in.cupt", None),
    "score: MWE index outside the source": (
        {"hyp.it": "one\n", "t.jsonl": '{"id": "1", "source": "a b", "reference": "x", "mwes": '
                                       '[{"indices": [1, 2], "lemma": "a b", "reference": "x"}]}\n'},
        ["score", "--hyp", "{tmp}/hyp.it", "--testset", "{tmp}/t.jsonl", "--metrics", "mwe", "-o", "{out}"],
        "t.jsonl", 1),
    "lexicon convert: empty lexicon": (
        {"lex.txt": ""}, ["lexicon", "convert", "{tmp}/lex.txt", "-f", "list", "-o", "{out}"], "lex.txt", None),
    "lexicon convert: bilingual row without target": (
        {"dict.tsv": "give up\tarrendersi\nkick the bucket\t\n"},
        ["lexicon", "convert", "{tmp}/dict.tsv", "-f", "bilingual", "-o", "{out}"], "dict.tsv", 2),
    "identify-eval: misaligned tokens": (
        {"gold.cupt": CUPT, "pred.cupt": _cupt_with(5, lambda r: r.replace("\ttook\t", "\ttakes\t"))},
        ["identify-eval", "--gold", "{tmp}/gold.cupt", "--pred", "{tmp}/pred.cupt", "--json", "{out}"],
        "pred.cupt", 2),
    "identify-eval: empty pred": (
        {"gold.cupt": CUPT, "pred.cupt": ""},
        ["identify-eval", "--gold", "{tmp}/gold.cupt", "--pred", "{tmp}/pred.cupt", "--json", "{out}"],
        "pred.cupt", None),
    "score: misaligned hypothesis": (
        {"hyp.it": "one\n", "ref.it": "one\ntwo\n"},
        ["score", "--hyp", "{tmp}/hyp.it", "--ref", "{tmp}/ref.it", "-o", "{out}"], "hyp.it", None),
    "score: bad UTF-8 reference": (
        {"hyp.it": "one\ntwo\n", "ref.it": b"one\n\xc3\x28\n"},
        ["score", "--hyp", "{tmp}/hyp.it", "--ref", "{tmp}/ref.it", "-o", "{out}"], "ref.it", 2),
    "score: empty reference": (
        {"hyp.it": "", "ref.it": ""},
        ["score", "--hyp", "{tmp}/hyp.it", "--ref", "{tmp}/ref.it", "-o", "{out}"], "ref.it", None),
    "score: malformed test-set line": (
        {"hyp.it": "one\n", "t.jsonl": '{"id": "1", "source": "a", "reference": "b", "mwes": []}\n{"id": 2\n'},
        ["score", "--hyp", "{tmp}/hyp.it", "--testset", "{tmp}/t.jsonl", "--metrics", "mwe", "-o", "{out}"],
        "t.jsonl", 2),
    "score: compositionality outside [0, 1]": (
        {"hyp.it": "one\n", "ref.it": "one\n", "c.tsv": "mwe\tcompositionality\nivory tower\t4\n"},
        ["score", "--hyp", "{tmp}/hyp.it", "--ref", "{tmp}/ref.it", "--metrics", "tesla-comp",
         "--compositionality", "{tmp}/c.tsv", "-o", "{out}"], "c.tsv", 2),
    "meta-eval: score not a number": (
        {"h.tsv": "A\t1\t0.5\nA\t2\tbad\n", "m.tsv": "A\t1\t0.1\nA\t2\t0.2\n"},
        ["meta-eval", "--human", "{tmp}/h.tsv", "--metric", "{tmp}/m.tsv", "-o", "{out}"], "h.tsv", 2),
    "meta-eval: MQM error row with too few columns": (
        {"h.tsv": MQM_HEAD + "A\td\t1\t1\tr1\tsrc\n", "m.tsv": "A\t1\t0.5\n"},
        ["meta-eval", "--human", "{tmp}/h.tsv", "--metric", "{tmp}/m.tsv", "-o", "{out}"], "h.tsv", 2),
    "meta-eval: bad MQM weights file": (
        {"h.tsv": MQM_HEAD + MQM_ROW, "m.tsv": "A\t1\t0.5\n", "w.tsv": "Major\t*\t5\nMinor\tone\n"},
        ["meta-eval", "--human", "{tmp}/h.tsv", "--mqm-weights", "{tmp}/w.tsv", "--metric", "{tmp}/m.tsv",
         "-o", "{out}"], "w.tsv", 2),
    "meta-eval extract: raters saw two translations": (
        {"h.tsv": MQM_HEAD + MQM_ROW + MQM_ROW.replace("Haus", "Heim")},
        ["meta-eval", "extract", "--human", "{tmp}/h.tsv", "--out", "{out}"], "h.tsv", 3),
    "meta-eval extract: source not in --source-text": (
        {"h.tsv": MQM_HEAD + MQM_ROW, "src.en": "another sentence\n", "ref.de": "ein anderer Satz\n"},
        ["meta-eval", "extract", "--human", "{tmp}/h.tsv", "--source-text", "{tmp}/src.en", "--reference-text",
         "{tmp}/ref.de", "--out", "{out}"], "src.en", None),
    "lexicon convert: bad Turtle": (
        {"lex.ttl": '@prefix ex: <http://example.org/> .\nex:a ex:b "open\n'},
        ["lexicon", "convert", "{tmp}/lex.ttl", "-o", "{out}"], "lex.ttl", 2),
    "testset from-ted: wrong header": (
        {"pairs.tsv": "snt_id\tannotator\n1\tFINAL\n"},
        ["testset", "from-ted", "--pairs", "{tmp}/pairs.tsv", "--out", "{out}"], "pairs.tsv", 1),
    "compositionality evaluate: bad gold row": (
        {"p.tsv": "ivory tower\t0.2\n", "g.tsv": "ivory\ttower\t1\t2\t3\nred\tcar\t1\t2\tx\n"},
        ["compositionality", "evaluate", "--pred", "{tmp}/p.tsv", "--gold", "{tmp}/g.tsv", "--format", "reddy",
         "--json", "{out}"], "g.tsv", 2),
    "compositionality evaluate: bad prediction row": (
        {"p.tsv": "ivory tower\t0.2\nred car\tx\n", "g.tsv": "ivory\ttower\t1\t2\t3\n"},
        ["compositionality", "evaluate", "--pred", "{tmp}/p.tsv", "--gold", "{tmp}/g.tsv", "--format", "reddy",
         "--json", "{out}"], "p.tsv", 2),
}

LOCATED = re.compile(r"error: (?P<file>\S+?)(?::(?P<line>\d+))?: .+\(expected .+\)")


def _write(tmp: Path, files: dict) -> None:
    for name, content in files.items():
        path = tmp / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_located_exits_2_and_writes_nothing(case, tmp_path, capsys):
    files, argv, named, line = CASES[case]
    _write(tmp_path, files)
    out = tmp_path / "out" / "result"
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{out}", str(out)) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    m = LOCATED.search(err)
    assert m, err
    assert Path(m["file"]).name == named, err
    assert (int(m["line"]) if m["line"] else None) == line, err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "out") == sorted(files), "stray files"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ---------------------------------------------------------------- subword: needs a model


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    from mwemt.preprocess.subword import SubwordModel

    prefix = tmp_path_factory.mktemp("spm") / "spm"
    return SubwordModel.train([FIX / "subword" / "train.en"], vocab_size=400).save(prefix)


@pytest.mark.parametrize("case,text,extra,line", [
    ("factor count mismatch", "a|a|O b|b|O\nc|c|B d|d\n", ["--factors", "3"], 2),
    ("bad UTF-8", b"ok\n\xff\n", [], 2),
    ("empty file", "", [], None),
])
def test_subword_apply_bad_input(case, text, extra, line, spm_model, tmp_path, capsys):
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["subword", "apply", "--model", str(spm_model), "-i", str(src), "-o", str(out), "-q", *extra]) == 2
    m = LOCATED.search(capsys.readouterr().err)
    assert m and Path(m["file"]).name == "in.txt" and (int(m["line"]) if m["line"] else None) == line
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["in.txt"]


def test_empty_model_file_is_refused(tmp_path, capsys):
    model, src, out = tmp_path / "empty.model", tmp_path / "in.txt", tmp_path / "out.txt"
    model.write_bytes(b"")
    src.write_text("a b\n")
    assert main(["subword", "apply", "--model", str(model), "-i", str(src), "-o", str(out)]) == 2
    assert "empty.model: not a sentencepiece model" in capsys.readouterr().err and not out.exists()


def test_vectors_on_an_empty_corpus_leave_no_corpus_file(tmp_path, capsys):
    corpus, lex, out = tmp_path / "c.txt", tmp_path / "lex.txt", tmp_path / "vec"
    corpus.write_text("")
    lex.write_text("ivory tower\n")
    assert main(["compositionality", "vectors", "--corpus", str(corpus), "--lexicon", str(lex),
                 "--out", str(out), "-q"]) == 2
    assert "c.txt" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())
