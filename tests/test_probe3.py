"""Issue 37, the third probe: what a fresh run of every command on bad inputs found after the first two.

- a missing input that a command hashes before reading it (compositionality vectors --corpus,
  augment backtranslate-real --mono) was exit 1 with a bare "No such file or directory";
- a config with a control character (a NUL byte) was an internal error (YAML's reader refused it
  before the parser's error handling began);
- a back-translation manifest that is not UTF-8 text, or JSON that is not an object, was an internal error;
- prepare --src-dict of a file that is not a fairseq dictionary was fairseq's internal error;
- a path argument whose name is not UTF-8 broke the command after it had written its output (the
  JSON report or manifest cannot hold the name): refused before any work now;
- two outputs given the same new path (-o X --report X) wrote one over the other: refused now.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mwemt.cli import main

FIX = Path(__file__).resolve().parent / "fixtures"
AUG = FIX / "augment"
LEX = "take care of\n"
TEXT = "He took care of it .\n"


def _run(argv: list, capsys) -> tuple[int, str]:
    rc = main([a if isinstance(a, str) else str(a) for a in argv])
    return rc, capsys.readouterr().err


def _lexicon(tmp_path: Path) -> tuple[Path, Path]:
    lex, text = tmp_path / "lex.txt", tmp_path / "in.txt"
    lex.write_text(LEX, encoding="utf-8")
    text.write_text(TEXT, encoding="utf-8")
    return lex, text


# ---------------------------------------------------------------- missing inputs that are hashed first


def test_a_missing_corpus_of_compositionality_vectors_is_exit_2_naming_it(tmp_path, capsys):
    lex = tmp_path / "lex.txt"
    lex.write_text("ivory tower\n", encoding="utf-8")
    missing = tmp_path / "nope.txt"
    rc, err = _run(["compositionality", "vectors", "--corpus", missing, "--lexicon", lex, "--out", tmp_path / "vec",
                    "--models", "ppmi", "-q"], capsys)
    assert rc == 2, err
    assert f"{missing}: file not found" in err and "internal error" not in err
    assert not (tmp_path / "vec").exists()


def _backtranslation_manifest(tmp_path: Path) -> Path:
    assert main(["augment", "backtranslate", "--mono", str(AUG / "mono.it"), "--target-lexicon", str(AUG / "it_mwe.txt"),
                 "--translations", str(AUG / "mono.bt.en"), "--train", str(AUG / "train"), "--ratio", "0.25",
                 "--max-gap", "1", "--out", str(tmp_path / "bt"), "-q"]) == 0
    return tmp_path / "bt.manifest.json"


def _real(manifest: Path, tmp_path: Path, mono: Path = AUG / "mono.it") -> list:
    return ["augment", "backtranslate-real", "--bt-manifest", manifest, "--mono", mono, "--mono-source",
            AUG / "mono.bt.en", "--train", AUG / "train", "--out", tmp_path / "real", "-q"]


def test_a_missing_mono_of_backtranslate_real_is_exit_2_naming_it(tmp_path, capsys):
    manifest = _backtranslation_manifest(tmp_path)
    capsys.readouterr()
    rc, err = _run(_real(manifest, tmp_path, mono=tmp_path / "gone.it"), capsys)
    assert rc == 2, err
    assert f"{tmp_path / 'gone.it'}: file not found" in err
    assert not list(tmp_path.glob("real*"))


# ---------------------------------------------------------------- manifests that are not JSON objects


def test_a_manifest_that_is_not_utf8_is_exit_2_naming_it(tmp_path, capsys):
    bad = tmp_path / "bt.manifest.json"
    bad.write_bytes(b'{"kind": "augment.backtranslate", "tag": "caf\xe9"}\n')
    rc, err = _run(_real(bad, tmp_path), capsys)
    assert rc == 2, err
    assert f"{bad}: not a back-translation manifest" in err and "internal error" not in err


def test_a_manifest_that_is_a_json_list_is_exit_2_naming_it(tmp_path, capsys):
    bad = tmp_path / "bt.manifest.json"
    bad.write_text("[1, 2]\n", encoding="utf-8")
    rc, err = _run(_real(bad, tmp_path), capsys)
    assert rc == 2, err
    assert f"{bad}: not a back-translation manifest" in err and "internal error" not in err


# ---------------------------------------------------------------- a config with a control character


def test_a_config_with_a_nul_byte_is_exit_2_naming_its_line(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\nseed: 1\x00\n", encoding="utf-8")
    for argv in (["run", cfg, "--dry-run", "--run-dir", tmp_path / "r", "-q"], ["train", "--config", cfg, "--dry-run"]):
        rc, err = _run(argv, capsys)
        assert rc == 2, err
        assert f"{cfg}:2: not valid YAML" in err and "U+0000" in err and "internal error" not in err


# ---------------------------------------------------------------- prepare --src-dict of another kind of file


def test_prepare_refuses_a_src_dict_that_is_not_a_dictionary_naming_its_line(tmp_path, capsys):
    nmt = FIX / "nmt"
    notdict = tmp_path / "dict.en.txt"
    notdict.write_text("the 12\nThis is a sentence .\n", encoding="utf-8")
    rc, err = _run(["prepare", "--src", "en", "--tgt", "it", "--trainpref", nmt / "train", "--destdir", tmp_path / "bin",
                    "--src-dict", notdict, "-q"], capsys)
    assert rc == 2, err
    assert f"{notdict}:2: not a dictionary line" in err and "internal error" not in err
    assert not (tmp_path / "bin").exists()


def test_prepare_still_reuses_the_dictionaries_of_an_earlier_prepare(tmp_path, capsys):
    nmt = FIX / "nmt"
    assert main(["prepare", "--src", "en", "--tgt", "it", "--trainpref", str(nmt / "train"), "--destdir",
                 str(tmp_path / "a"), "-q"]) == 0
    assert main(["prepare", "--src", "en", "--tgt", "it", "--trainpref", str(nmt / "train"), "--destdir",
                 str(tmp_path / "b"), "--src-dict", str(tmp_path / "a" / "dict.en.txt"), "--tgt-dict",
                 str(tmp_path / "a" / "dict.it.txt"), "-q"]) == 0
    assert (tmp_path / "a" / "dict.en.txt").read_bytes() == (tmp_path / "b" / "dict.en.txt").read_bytes()


# ---------------------------------------------------------------- argument values that are not UTF-8


def test_an_output_name_that_is_not_utf8_is_refused_before_any_work(tmp_path, capsys):
    lex, text = _lexicon(tmp_path)
    out = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.txt")
    rc, err = _run(["annotate", "-l", lex, "-i", text, "-o", out, "--report", tmp_path / "r.json", "-q"], capsys)
    assert rc == 2, err
    assert "--output" in err and "caf\\xe9.txt" in err and "is not UTF-8" in err and "internal error" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "lex.txt"]   # nothing written


def test_an_input_name_that_is_not_utf8_is_refused_naming_the_option(tmp_path, capsys):
    lex, text = _lexicon(tmp_path)
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/in\xff.txt"))
    odd.write_text(TEXT, encoding="utf-8")
    rc, err = _run(["testset", "from-ted", "--pairs", odd, "-o", tmp_path / "t.jsonl"], capsys)
    assert rc == 2, err
    assert "--pairs" in err and "in\\xff.txt" in err and "internal error" not in err
    assert not (tmp_path / "t.jsonl").exists()


# ---------------------------------------------------------------- two outputs, one new path


def test_two_outputs_given_the_same_new_path_are_refused(tmp_path, capsys):
    lex, text = _lexicon(tmp_path)
    same = tmp_path / "o.txt"
    rc, err = _run(["annotate", "-l", lex, "-i", text, "-o", same, "--report", tmp_path / "." / "o.txt", "-q"], capsys)
    assert rc == 2, err
    assert "--report" in err and "--output" in err and "not another output" in err
    assert not same.exists()


def test_an_output_and_a_report_at_different_paths_are_both_written(tmp_path, capsys):
    lex, text = _lexicon(tmp_path)
    rc, err = _run(["annotate", "-l", lex, "-i", text, "-o", tmp_path / "o.txt", "--report", tmp_path / "r.json",
                    "-q"], capsys)
    assert rc == 0, err
    assert "take_care_of" in (tmp_path / "o.txt").read_text(encoding="utf-8")
    assert isinstance(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")), dict)
