"""Issue 37, items 10 and 11: exit codes, messages and --help that teach.

- a missing -i file is exit 2 in every command (annotate and subword apply said 1);
- a NUL byte in text input is refused with file:line (it was dropped silently);
- meta-eval says why a statistic is undefined (a constant metric printed "nan [nan, nan]" alone), and
  refuses too few bootstrap resamples or permutations;
- identify-eval reports a score with no MWE to count as n/a, not 0.00;
- the format options of augment dictionary/backtranslate and testset table explain their choices.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mwemt.cli import build_parser, main
from mwemt.errors import InputError
from mwemt.fileio import iter_lines

FIX = Path(__file__).resolve().parent / "fixtures"
LEX = "take care of\n"


def _run(argv: list, capsys) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# ---------------------------------------------------------------- a missing input file: exit 2


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("spm")
    assert main(["subword", "train", "--input", str(FIX / "subword" / "train.en"), "--model-prefix", str(d / "spm"),
                 "--vocab-size", "400", "-q"]) == 0
    return d / "spm.model"


def test_annotate_missing_input_is_exit_2(tmp_path, capsys):
    """With its progress bar on (no -q), annotate counted the lines of the missing file first: exit 1."""
    (tmp_path / "lex.txt").write_text(LEX)
    rc, _, err = _run(["annotate", "-l", tmp_path / "lex.txt", "-i", tmp_path / "missing.txt",
                       "-o", tmp_path / "out.txt"], capsys)
    assert rc == 2, err
    assert f"{tmp_path / 'missing.txt'}: file not found" in err and not (tmp_path / "out.txt").exists()


def test_subword_apply_missing_input_is_exit_2(spm_model, tmp_path, capsys):
    rc, _, err = _run(["subword", "apply", "--model", spm_model, "-i", tmp_path / "missing.txt",
                       "-o", tmp_path / "out.txt"], capsys)
    assert rc == 2, err
    assert f"{tmp_path / 'missing.txt'}: file not found" in err and not (tmp_path / "out.txt").exists()


# ---------------------------------------------------------------- a NUL byte


def test_a_nul_byte_is_refused_with_file_and_line(tmp_path, capsys):
    (tmp_path / "lex.txt").write_text(LEX)
    text = tmp_path / "in.txt"
    text.write_bytes(b"He took care of it .\nHe took\0 care of it .\n")
    out = tmp_path / "out.txt"
    rc, _, err = _run(["annotate", "-l", tmp_path / "lex.txt", "-i", text, "-o", out, "-q"], capsys)
    assert rc == 2, err
    assert f"{text}:2: a NUL byte (byte 8 of the line) (expected text without NUL bytes" in err
    assert not out.exists()


def test_every_text_reader_refuses_nul(tmp_path):
    """The check is in the one line decoder, so plain, .gz and standard input all refuse it."""
    import gzip

    plain, packed = tmp_path / "a.txt", tmp_path / "a.txt.gz"
    plain.write_bytes(b"ok\n\0\n")
    packed.write_bytes(gzip.compress(b"ok\n\0\n"))
    for path in (plain, packed):
        with pytest.raises(InputError) as exc:
            list(iter_lines(path))
        assert exc.value.line == 2 and "NUL" in exc.value.detail


# ---------------------------------------------------------------- meta-eval: undefined statistics


def _scores(tmp_path: Path) -> tuple[Path, Path, Path]:
    human, metric, flat = tmp_path / "h.tsv", tmp_path / "m.tsv", tmp_path / "c.tsv"
    rows = [(s, g, (g * 7 + 3 * k) % 11 / 10) for k, s in enumerate("ABCD") for g in range(12)]
    human.write_text("".join(f"{s}\t{g}\t{v}\n" for s, g, v in rows))
    metric.write_text("".join(f"{s}\t{g}\t{v + (g % 3) / 40}\n" for s, g, v in rows))
    flat.write_text("".join(f"{s}\t{g}\t0.5\n" for s, g, _ in rows))
    return human, metric, flat


def test_meta_eval_explains_undefined_statistics(tmp_path, capsys):
    """A constant metric: tau13, the Pearsons and Kendalls are undefined; the table says why, once each."""
    human, _, flat = _scores(tmp_path)
    rc, out, err = _run(["meta-eval", "--human", human, "--metric", f"flat={flat}", "--bootstrap", "0"], capsys)
    assert rc == 0, err
    note = out[out.index("nan: the statistic is undefined on these scores, because"):]
    assert "flat tau13: the metric ties all" in note and "pairs the humans rank apart (C + D = 0)" in note
    assert "flat Pearson: the metric gives every item the same score (0.5): a constant has no correlation" in note
    assert "flat Pearson/item: the metric gives every system the same score within each segment" in note
    assert "flat sys Pearson: the metric gives every system the same mean score (0.5)" in note
    assert "flat sys Kendall:" in note and "tau14" not in note and "acc-eq" not in note  # those are defined
    out_json = tmp_path / "m.json"
    assert main(["meta-eval", "--human", str(human), "--metric", f"flat={flat}", "--bootstrap", "0", "--json",
                 "-o", str(out_json)]) == 0
    undefined = json.loads(out_json.read_text())["results"][0]["undefined"]
    assert set(undefined) == {"tau_wmt13", "pearson_seg", "pearson_item", "kendall_item", "pearson_sys",
                              "kendall_sys"}


def test_meta_eval_says_nothing_when_everything_is_defined(tmp_path, capsys):
    human, metric, _ = _scores(tmp_path)
    rc, out, _ = _run(["meta-eval", "--human", human, "--metric", metric, "--bootstrap", "0"], capsys)
    assert rc == 0 and "undefined" not in out and "nan" not in out


def test_meta_eval_too_few_systems_for_system_correlations(tmp_path, capsys):
    human, metric, _ = _scores(tmp_path)
    rc, out, _ = _run(["meta-eval", "--human", human, "--metric", metric, "--bootstrap", "0",
                       "--exclude-system", "C", "--exclude-system", "D"], capsys)
    assert rc == 0
    assert "sys Pearson: only 2 systems have both human and metric scores (3 or more needed)" in out


@pytest.mark.parametrize("flag,value", [("--bootstrap", "1"), ("--bootstrap", "19"), ("--permutations", "1"),
                                        ("--permutations", "19")])
def test_meta_eval_refuses_too_few_resamples(tmp_path, capsys, flag, value):
    human, metric, _ = _scores(tmp_path)
    with pytest.raises(SystemExit) as exc:   # refused by the parser, before any work
        main(["meta-eval", "--human", str(human), "--metric", str(metric), flag, value])
    assert exc.value.code == 2
    assert f"argument {flag}: expected an integer from 20 to 100000, or 0 (no " in capsys.readouterr().err


def test_meta_eval_accepts_none_or_enough_resamples(tmp_path, capsys):
    human, metric, _ = _scores(tmp_path)
    assert _run(["meta-eval", "--human", human, "--metric", metric, "--bootstrap", "0", "--permutations", "0"],
                capsys)[0] == 0
    rc, out, _ = _run(["meta-eval", "--human", human, "--metric", metric, "--bootstrap", "20"], capsys)
    assert rc == 0 and "20 resamples" in out


# ---------------------------------------------------------------- identify-eval: empty partitions


def _cupt(mwe_codes: list[str]) -> str:
    words = ["He", "took", "care", "of", "it"]
    rows = [f"{i}\t{w}\t{w.lower()}\t_\t_\t_\t_\t_\t_\t_\t{c}" for i, (w, c) in enumerate(zip(words, mwe_codes), 1)]
    return "# text = He took care of it\n" + "\n".join(rows) + "\n\n"


def test_identify_eval_reports_an_empty_partition_as_undefined(tmp_path, capsys):
    gold, pred = tmp_path / "gold.cupt", tmp_path / "pred.cupt"
    gold.write_text(_cupt(["*", "1:VID", "1", "1", "*"]))
    pred.write_text(_cupt(["*", "*", "*", "*", "*"]))
    js = tmp_path / "s.json"
    rc, out, err = _run(["identify-eval", "--gold", gold, "--pred", pred, "--json", js], capsys)
    assert rc == 0, err
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line and line[0].isalpha()}
    # nothing predicted: P undefined, R and F 0; no MWE at all (discontinuous): all undefined
    assert rows["global"] == ["1", "0", "n/a", "0.00", "0.00", "n/a", "0.00", "0.00"]
    assert rows["discontinuous"] == ["0", "0", *["n/a"] * 6]
    assert "n/a: undefined: P with no predicted MWE, R with no gold MWE, F with neither" in out
    scores = json.loads(js.read_text())["scores"]
    assert scores["discontinuous"]["mwe_based"] | {} == {"P": None, "R": None, "F": None, "correct": 0,
                                                           "n_pred": 0, "n_gold": 0}
    assert scores["global"]["token_based"]["P"] is None and scores["global"]["token_based"]["R"] == 0.0


def test_identify_eval_without_empty_partitions_has_no_note(tmp_path, capsys):
    gold = tmp_path / "gold.cupt"
    gold.write_text(_cupt(["*", "1:VID", "1", "1", "*"]) + _cupt(["*", "1:VID", "*", "1", "*"]))
    rc, out, _ = _run(["identify-eval", "--gold", gold, "--pred", gold, "--no-categories"], capsys)
    assert rc == 0 and "100.00" in out
    assert "n/a" not in out


# ---------------------------------------------------------------- item 11: --help of the format options


@pytest.mark.parametrize("command,option", [
    (["augment", "dictionary"], "--dict-format"),
    (["augment", "backtranslate"], "--lexicon-format"),
    (["testset", "table"], "--dictionary-format"),
])
def test_format_options_explain_every_choice(command, option):
    from mwemt.cli.argtypes import walk_actions

    actions = [a for path, a in walk_actions(build_parser(only=command[0]))
               if path == tuple(command) and option in a.option_strings]
    assert len(actions) == 1
    text = actions[0].help or ""
    for choice in actions[0].choices:
        assert f"{choice} = " in text, (choice, text)
    assert "(default: %(default)s" in text
