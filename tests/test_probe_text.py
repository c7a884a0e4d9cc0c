"""Issue 32, the readers and text items, run as a user would (the real CLI on real files):

11  a truncated or non-gzip ``.gz`` is a clean error naming the file, exit 2 (every reader);
13  a reference with a byte-order mark: the score is of the text without it, and its signature says
    ``norm:nfc-zw``, so no number differs from sacrebleu's under sacrebleu's own signature;
15  ``score --sentence-scores`` refuses what ``meta-eval`` could not read back (duplicate segment ids,
    a system name with a TAB) before any work;
17  ``subword decode`` refuses factored pieces, and ``--factors N`` decodes them into factored words;
18  one normalization for every reader (NFC, no zero-width space, word joiner or BOM).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.cli import main

FIX = Path(__file__).resolve().parent / "fixtures"
EVAL = FIX / "eval"
AUG = FIX / "augment"
LEX = "take care of\nivory tower\n"


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _cli(argv: list[str], stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwemt", *map(str, argv)], input=stdin, capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def _damaged_gz(tmp_path: Path) -> dict[str, Path]:
    good = gzip.compress(b"She took care of it.\nThe ivory tower.\n")
    files = {"truncated": tmp_path / "cut.gz", "not gzip": tmp_path / "plain.gz"}
    files["truncated"].write_bytes(good[: len(good) - 12])
    files["not gzip"].write_text("Dog barks.\n", encoding="utf-8")
    return files


# ---------------------------------------------------------------- 11: damaged .gz

@pytest.mark.parametrize("kind", ["truncated", "not gzip"])
def test_annotate_damaged_gz_names_the_file(tmp_path, capsys, kind):
    (tmp_path / "lex.txt").write_text(LEX, encoding="utf-8")
    bad = _damaged_gz(tmp_path)[kind]
    out = tmp_path / "out.iob"
    rc, _, err = _run(["annotate", "-l", tmp_path / "lex.txt", "-i", bad, "-o", out], capsys)
    assert rc == 2, err
    assert f"{bad}:" in err or f"{bad.name}:" in err
    assert ("truncated" in err) if kind == "truncated" else ("not gzip" in err)
    assert "Traceback" not in err and "EOFError" not in err
    assert not out.exists()


@pytest.mark.parametrize("kind", ["truncated", "not gzip"])
def test_backtranslate_damaged_gz_names_the_file(tmp_path, capsys, kind):
    bad = _damaged_gz(tmp_path)[kind]
    rc, _, err = _run(["augment", "backtranslate", "--mono", bad, "--target-lexicon", AUG / "it_mwe.txt",
                       "--translations", AUG / "mono.bt.en", "--train", AUG / "train", "--ratio", "0.25",
                       "--seed", "1", "--out", tmp_path / "train.bt"], capsys)
    assert rc == 2, err
    assert str(bad) in err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("train.bt*"))


def test_score_damaged_gz_reference(tmp_path, capsys):
    bad = _damaged_gz(tmp_path)["truncated"]
    rc, _, err = _run(["score", "--hyp", EVAL / "hyp_a.it", "--ref", bad, "--metrics", "bleu"], capsys)
    assert rc == 2 and str(bad) in err and "truncated" in err


def test_truncated_tar_gz(tmp_path, capsys):
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = ("She took care of it.\n" * 2000).encode()
        info = tarfile.TarInfo("in.en")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    bad = tmp_path / "in.tar.gz"
    bad.write_bytes(buf.getvalue()[:200])
    (tmp_path / "lex.txt").write_text(LEX, encoding="utf-8")
    rc, _, err = _run(["annotate", "-l", tmp_path / "lex.txt", "-i", bad, "-o", tmp_path / "o"], capsys)
    assert rc == 2 and str(bad) in err and "Traceback" not in err


# ---------------------------------------------------------------- 13: byte-order mark vs sacrebleu

def _score_json(capsys, hyp: Path, ref: Path) -> tuple[dict, str]:
    rc, out, err = _run(["score", "--hyp", hyp, "--ref", ref, "--metrics", "bleu,chrf", "--json"], capsys)
    assert rc == 0, err
    return json.loads(out), err


def _metric(obj: dict, key: str) -> tuple[float, str]:
    """(score, signature) of the only system for one metric of `mwemt score --json`."""
    metric = obj["metrics"][key]
    (system,) = metric["systems"].values()
    return float(system["score"]), metric["signature"]


def test_bom_reference_never_differs_from_sacrebleu_under_its_signature(tmp_path, capsys):
    import sacrebleu

    hyps = (EVAL / "hyp_a.it").read_text(encoding="utf-8").splitlines()
    refs = (EVAL / "ref.it").read_text(encoding="utf-8").splitlines()
    ref_bom = tmp_path / "ref_bom.it"
    ref_bom.write_bytes(b"\xef\xbb\xbf" + (EVAL / "ref.it").read_bytes())
    # what sacrebleu computes on the raw file (it keeps the mark as part of the first word)
    raw_refs = ref_bom.read_text(encoding="utf-8").splitlines()
    assert raw_refs[0].startswith("\ufeff")
    raw_chrf = sacrebleu.corpus_chrf(hyps, [raw_refs])
    clean_chrf = sacrebleu.corpus_chrf(hyps, [refs])
    clean_bleu = sacrebleu.corpus_bleu(hyps, [refs])
    assert raw_chrf.score != pytest.approx(clean_chrf.score)   # the mark matters to sacrebleu

    obj, err = _score_json(capsys, EVAL / "hyp_a.it", ref_bom)
    chrf, chrf_sig = _metric(obj, "chrf")
    bleu, bleu_sig = _metric(obj, "bleu")
    # the score of the text without the mark, said so on stderr and in the signature
    assert chrf == pytest.approx(clean_chrf.score, abs=1e-9)
    assert bleu == pytest.approx(clean_bleu.score, abs=1e-9)
    assert "norm:nfc-zw" in chrf_sig and "norm:nfc-zw" in bleu_sig
    assert "ref_bom.it" in err and "normalized" in err
    sacre = sacrebleu.metrics.CHRF()
    sacre.corpus_score(hyps, [raw_refs])
    assert chrf_sig != "chrF|" + sacre.get_signature().format()

    # a clean file: exactly sacrebleu's number under exactly sacrebleu's signature, no warning
    obj, err = _score_json(capsys, EVAL / "hyp_a.it", EVAL / "ref.it")
    chrf, chrf_sig = _metric(obj, "chrf")
    assert chrf == pytest.approx(clean_chrf.score, abs=1e-9)
    metric = sacrebleu.metrics.CHRF()
    metric.corpus_score(hyps, [refs])
    assert chrf_sig == "chrF|" + metric.get_signature().format()
    assert "normalized" not in err


def test_sacrebleu_cli_on_the_same_bom_file_differs_and_signature_says_so(tmp_path, capsys):
    """The sacrebleu command line on the same files: its chrF differs from ours, and ours is not
    printed under its signature."""
    ref_bom = tmp_path / "ref_bom.it"
    ref_bom.write_bytes(b"\xef\xbb\xbf" + (EVAL / "ref.it").read_bytes())
    proc = subprocess.run([sys.executable, "-m", "sacrebleu", str(ref_bom), "-i", str(EVAL / "hyp_a.it"),
                           "-m", "chrf", "--format", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    sacre = json.loads(proc.stdout)
    obj, _ = _score_json(capsys, EVAL / "hyp_a.it", ref_bom)
    chrf, sig = _metric(obj, "chrf")
    assert abs(chrf - float(sacre["score"])) > 0.01
    assert sig.split("|", 1)[1] != sacre["signature"]


# ---------------------------------------------------------------- 15: sentence scores meta-eval can read

def test_sentence_scores_refuse_duplicate_testset_ids(tmp_path, capsys):
    items = [json.loads(line) for line in (EVAL / "testset.jsonl").read_text(encoding="utf-8").splitlines()]
    items[2]["id"] = items[0]["id"]
    testset = tmp_path / "dup.jsonl"
    testset.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in items), encoding="utf-8")
    seg = tmp_path / "seg"
    rc, _, err = _run(["score", "--hyp", EVAL / "hyp_a.it", "--testset", testset, "--metrics", "bleu",
                       "--sentence-scores", seg], capsys)
    assert rc == 2
    assert f"{testset}:3:" in err and "duplicate segment id" in err
    assert not seg.exists()


def test_sentence_scores_refuse_a_tab_in_a_system_name(tmp_path, capsys):
    seg = tmp_path / "seg"
    rc, _, err = _run(["score", "--hyp", f"a\tb={EVAL / 'hyp_a.it'}", "--ref", EVAL / "ref.it",
                       "--metrics", "bleu", "--sentence-scores", seg], capsys)
    assert rc == 2
    assert "'a\\tb'" in err and "TAB" in err
    assert not seg.exists()


def test_sentence_scores_meta_eval_reads_back(tmp_path, capsys):
    """The refusals above leave what is written readable: a clean run's file goes into meta-eval's reader."""
    from mwemt.judgements import read_score_tsv

    seg = tmp_path / "seg"
    rc, _, err = _run(["score", "--hyp", f"A={EVAL / 'hyp_a.it'}", "--hyp", f"B={EVAL / 'hyp_b.it'}",
                       "--testset", EVAL / "testset.jsonl", "--metrics", "bleu", "--sentence-scores", seg], capsys)
    assert rc == 0, err
    rows = read_score_tsv(seg / "bleu.seg.tsv")
    assert len(rows) == 2 * len((EVAL / "testset.jsonl").read_text(encoding="utf-8").splitlines())


# ---------------------------------------------------------------- 17: subword decode of factored pieces

@pytest.fixture(scope="module")
def factored_model(tmp_path_factory) -> tuple[Path, Path, Path]:
    d = tmp_path_factory.mktemp("spm")
    src = FIX / "subword" / "train.iob.en"
    assert main(["subword", "train", "--input", str(src), "--factored", "--model-prefix", str(d / "spm"),
                 "--vocab-size", "400", "-q"]) == 0
    lines = src.read_text(encoding="utf-8").splitlines()[:20]
    iob = d / "in.iob"
    iob.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pieces = d / "in.sp"
    assert main(["subword", "apply", "--model", str(d / "spm.model"), "-i", str(iob), "-o", str(pieces),
                 "--factors", "3", "--subword-iob", "bio", "-q"]) == 0
    return d / "spm.model", iob, pieces


def test_subword_decode_refuses_factored_pieces(factored_model, tmp_path, capsys):
    model, _, pieces = factored_model
    out = tmp_path / "back"
    rc, _, err = _run(["subword", "decode", "--model", model, "-i", pieces, "-o", out, "-q"], capsys)
    assert rc == 2
    assert f"{pieces}:1:" in err and "--factors 3" in err
    assert not out.exists()


def test_subword_decode_factors_inverts_apply(factored_model, tmp_path, capsys):
    model, iob, pieces = factored_model
    out = tmp_path / "back.iob"
    rc, _, err = _run(["subword", "decode", "--model", model, "-i", pieces, "-o", out, "--factors", "3", "-q"],
                      capsys)
    assert rc == 0, err
    assert out.read_bytes() == iob.read_bytes()
    assert "|" not in "".join(line.split("|")[0] for line in out.read_text().split())  # words, then factors


def test_subword_decode_plain_pieces_with_pipes_when_told(factored_model, tmp_path, capsys):
    """--factors 1: the '|' belong to the text; decoded as plain pieces, as before."""
    model, _, pieces = factored_model
    out = tmp_path / "plain"
    rc, _, err = _run(["subword", "decode", "--model", model, "-i", pieces, "-o", out, "--factors", "1", "-q"],
                      capsys)
    assert rc == 0, err
    assert out.read_text(encoding="utf-8").split("\n")[0].startswith("my|my|O")


# ---------------------------------------------------------------- 18: one normalization for every reader

NFD_ZW = "Cafe\u0301 took\u200b care of it.\n"


def test_annotate_normalizes_combining_accent_and_zero_width_space(tmp_path):
    lex = tmp_path / "lex.txt"
    lex.write_text("take care\ncafé society\n", encoding="utf-8")
    proc = _cli(["annotate", "--lexicon", lex, "--encoding", "iob", "-q"], stdin=NFD_ZW)
    assert proc.returncode == 0, proc.stderr
    tokens = proc.stdout.split()
    assert tokens[0].split("|")[0] == "Caf\u00e9"          # one precomposed token, no lone accent
    assert len(tokens) == 6                                 # Café took care of it .
    assert tokens[1].endswith("|B") and tokens[2].endswith("|I")   # took care matched
    assert "\u200b" not in proc.stdout and "\u0301" not in proc.stdout


def test_annotate_file_bom_and_word_joiner(tmp_path):
    lex = tmp_path / "lex.txt"
    lex.write_text("ivory tower\n", encoding="utf-8")
    src = tmp_path / "in.en"
    src.write_bytes("\ufeffThe ivory\u2060 tower .\nThe ivory tower\ufeff .\n".encode())
    proc = _cli(["annotate", "--lexicon", lex, "--encoding", "wws", "-i", src, "-q"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["The ivory_tower .", "The ivory_tower ."]


def test_zero_width_joiners_are_kept(tmp_path):
    """U+200C/U+200D shape Persian, Indic scripts and emoji: they are text, not noise."""
    from mwemt.fileio import iter_lines

    f = tmp_path / "t.txt"
    f.write_text("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001F469\u200d\U0001F4BB\n", encoding="utf-8")
    assert list(iter_lines(f)) == ["\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \U0001F469\u200d\U0001F4BB"]


def test_score_normalizes_hypotheses_and_says_so(tmp_path, capsys):
    """A hypothesis in NFD with a zero-width space scores as the same NFC text, and the signature says the
    text was normalized."""
    ref = tmp_path / "ref.txt"
    ref.write_text("Il caff\u00e8 \u00e8 caldo .\n", encoding="utf-8")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("Il caffe\u0300 e\u0300\u200b caldo .\n", encoding="utf-8")
    obj, err = _score_json(capsys, hyp, ref)
    bleu, sig = _metric(obj, "bleu")
    assert bleu == pytest.approx(100.0)
    assert "norm:nfc-zw" in sig and "hyp.txt" in err


def test_gz_and_plain_readers_normalize_the_same(tmp_path):
    from mwemt.fileio import iter_lines

    text = "\ufeffCafe\u0301 took\u200b care\n"
    plain = tmp_path / "a.txt"
    plain.write_text(text, encoding="utf-8")
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    changed: list[int] = []
    assert list(iter_lines(plain, changed=changed)) == list(iter_lines(gz)) == ["Caf\u00e9 took care"]
    assert changed == [1]
