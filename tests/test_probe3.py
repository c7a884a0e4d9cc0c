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

import pytest

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


# ---------------------------------------------------------------- a per-type cap far above any count

_SELECT = """
import json, sys
from mwemt.formats import TestItem, TestMwe
from mwemt.testsets.select import SelectionConfig, select_testset
items = [TestItem(id=str(i), source=f"s{i}", reference=f"r{i}",
                  mwes=[TestMwe(indices=(0,), lemma=f"t{i % 3}", reference="x")]) for i in range(12)]
chosen, report = select_testset(items, SelectionConfig(max_per_type=int(sys.argv[1]), seed=4))
print(json.dumps([it.id for it in chosen]))
"""


def test_a_huge_max_per_type_ends_and_selects_as_a_cap_above_every_count(tmp_path):
    """--max-per-type 10**20 (in range: no maximum) looped over every level up to the cap: it never ended."""
    import subprocess
    import sys

    def ids(cap: int) -> list[str]:
        r = subprocess.run([sys.executable, "-c", _SELECT, str(cap)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    assert ids(10**20) == ids(50) == [str(i) for i in range(12)]
    assert len(ids(2)) == 6


def test_a_huge_max_span_factor_is_no_limit_not_an_overflow():
    """--max-span-factor 1e308 (in range: any number above 0) made the span limit inf: int(inf) crashed."""
    from mwemt.testsets.aligned import ReferenceFilters

    assert ReferenceFilters(max_span_factor=1e308, max_span_slack=2).max_span(3) > 10**15
    assert ReferenceFilters(max_span_factor=2.0, max_span_slack=2).max_span(3) == 8


def test_lexicon_filters_bounds_repeats_before_any_work(tmp_path, capsys):
    """--repeats 10**20 was accepted and cross-validated without end."""
    from mwemt.cli import build_parser

    argv = ["lexicon", "filters", "--cupt", str(FIX / "parseme" / "small.cupt"), "--out", str(tmp_path / "f.json")]
    assert build_parser("lexicon").parse_args([*argv, "--repeats", "100"]).repeats == 100
    with pytest.raises(SystemExit) as stop:   # argparse's refusal, before any work
        build_parser("lexicon").parse_args([*argv, "--repeats", "100000000000000000000"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--repeats" in err and "from 1 to 100" in err


def test_backtranslate_says_why_no_sentence_was_selected(tmp_path, capsys):
    """--max-tokens 1 left no candidate, and the message blamed the lexicon alone ('no sentence contains an MWE')."""
    rc, err = _run(["augment", "backtranslate", "--mono", AUG / "mono.it", "--target-lexicon", AUG / "it_mwe.txt",
                    "--translations", AUG / "mono.bt.en", "--train", AUG / "train", "--ratio", "0.25",
                    "--max-tokens", "1", "--out", tmp_path / "bt", "-q"], capsys)
    assert rc == 2, err
    assert "longer than max_tokens 1" in err and "0 without an MWE" in err


# ---------------------------------------------------------------- counts far out of any use: refused by the parser


@pytest.mark.parametrize("argv,flag", [
    (["score", "--hyp", "h.it", "--ref", "r.it", "--paired-bs"], "--bs-samples"),
    (["compare", "--hyp", "a.it", "--hyp", "b.it", "--ref", "r.it"], "--bs-samples"),
    (["meta-eval", "--human", "h.tsv", "--metric", "m.tsv"], "--bootstrap"),
    (["meta-eval", "--human", "h.tsv", "--metric", "m.tsv"], "--permutations"),
    (["prepare", "--src", "en", "--tgt", "it", "--trainpref", "t", "--destdir", "d"], "--factors"),
])
def test_huge_counts_are_refused_before_any_work(argv, flag, capsys):
    """10**20 resamples overflowed numpy (compare, meta-eval: internal errors); --factors 10**20 built that many
    factor names (prepare never ended)."""
    from mwemt.cli import build_parser

    with pytest.raises(SystemExit) as stop:
        build_parser(argv[0]).parse_args([*argv, flag, "100000000000000000000"])
    assert stop.value.code == 2 and f"argument {flag}: expected an integer from " in capsys.readouterr().err


def test_compositionality_vectors_takes_a_huge_max_sentences_as_all(tmp_path, capsys):
    """--max-sentences 10**20 (in range: no maximum) was an internal error (itertools.islice takes at most
    sys.maxsize); it means every sentence."""
    corpus, lex = tmp_path / "c.txt", tmp_path / "lex.txt"
    corpus.write_text("We ate apple pie today .\nShe lives in an ivory tower .\nApple pie is sweet .\n", encoding="utf-8")
    lex.write_text("apple pie\nivory tower\n", encoding="utf-8")
    small = ["--models", "ppmi", "--dim", "5", "--svd-dim", "2", "--min-count", "1", "--context-ranks", "1-20",
             "--workers", "1", "-q"]
    rc, err = _run(["compositionality", "vectors", "--corpus", corpus, "--lexicon", lex, "--out", tmp_path / "v",
                    "--max-sentences", "100000000000000000000", *small], capsys)
    assert rc == 0, err
    rc, err = _run(["compositionality", "vectors", "--corpus", corpus, "--lexicon", lex, "--out", tmp_path / "w",
                    *small], capsys)
    assert rc == 0, err
    assert (tmp_path / "v" / "corpus.txt").read_bytes() == (tmp_path / "w" / "corpus.txt").read_bytes()


# ---------------------------------------------------------------- language codes end file names


@pytest.mark.parametrize("code", ["", "../x", "e n", "en/it"])
def test_a_language_code_that_is_no_file_suffix_is_refused(tmp_path, capsys, code):
    """augment split --src-lang ../x wrote OUT/train.../x (a directory train.. and a file in it), and '' wrote
    OUT/train.: codes end file names, so they are checked before any work."""
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"sentence {k} .\tfrase {k} .\n" for k in range(12)), encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        main(["augment", "split", "--tsv", str(pairs), "--out", str(tmp_path / "o"), "--valid-size", "2",
              "--test-size", "2", "--src-lang", code])
    assert stop.value.code == 2 and "argument --src-lang: expected a language code" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_language_codes_with_regions_and_scripts_still_work(tmp_path, capsys):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"sentence {k} .\tfrase {k} .\n" for k in range(12)), encoding="utf-8")
    rc, err = _run(["augment", "split", "--tsv", pairs, "--out", tmp_path / "o", "--valid-size", "2", "--test-size",
                    "2", "--src-lang", "pt_BR", "--tgt-lang", "zh-Hans"], capsys)
    assert rc == 0, err
    assert (tmp_path / "o" / "train.pt_BR").is_file() and (tmp_path / "o" / "train.zh-Hans").is_file()
