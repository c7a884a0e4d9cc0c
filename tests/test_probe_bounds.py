"""Issue 32, bounds and validation: every size has a bound checked before the work starts, and a value
outside an option's range is a clean error (exit 2), never a traceback, a hang or a silent result.

Each test runs the real command on real files, as a user would (`mwemt.cli.main`, or a subprocess
where the old behaviour was a fork bomb or a hang)."""

from __future__ import annotations

import random
import subprocess
import sys
import time

import pytest

from mwemt.cli import main
from tests.conftest import FIXTURES, ROOT, requires_nmt


def cli(args: list[str], capsys) -> tuple[int, str]:
    """Exit status and stderr of `mwemt ARGS` (argparse's refusals exit through SystemExit)."""
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def refused(args: list[str], capsys, *needles: str) -> str:
    code, err = cli(args, capsys)
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    for needle in needles:
        assert needle in err, err
    return err


# ---------------------------------------------------------------- 4: --workers forks until killed

def test_4_annotate_workers_beyond_the_cores_is_refused_before_any_fork(tmp_path):
    from mwemt.experiments.runner import default_jobs

    text = tmp_path / "in.en"
    text.write_text("She took care of it .\n", encoding="utf-8")
    started = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "mwemt", "annotate", "--lexicon", str(FIXTURES / "core" / "lexicon.txt"),
                          "-i", str(text), "-o", str(tmp_path / "out"), "--workers", "100000"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 2, res.stderr
    assert f"argument --workers: expected an integer from 1 to {default_jobs()}" in res.stderr
    assert "'100000'" in res.stderr and time.perf_counter() - started < 60
    assert not (tmp_path / "out").exists()


def test_4_run_jobs_beyond_the_cores_is_refused_for_the_local_executor(tmp_path, capsys):
    from mwemt.experiments.runner import default_jobs

    run_dir = tmp_path / "run"
    config = str(ROOT / "configs" / "demo.yaml")
    refused(["run", config, "--run-dir", str(run_dir), "--jobs", "100000"], capsys,
            "argument --jobs/-j: expected an integer from 1 to 1000")
    refused(["run", config, "--run-dir", str(run_dir), "--jobs", str(default_jobs() + 1)], capsys,
            f"the local executor runs at most {default_jobs()} stages at once")
    assert not run_dir.exists()


# ---------------------------------------------------------------- 5: translate on a 1 MB line

def test_5_translate_refuses_a_too_long_line_before_loading_the_model(tmp_path, capsys):
    from mwemt.nmt.translate import MAX_LINE_CHARS

    src = tmp_path / "big.en"
    src.write_text("hello world .\n" + "word " * 200_000 + "\n", encoding="utf-8")
    started = time.perf_counter()
    # no model directory at all: the line is refused first, in well under a second of work
    refused(["translate", "-m", str(tmp_path / "no-model"), "-i", str(src), "-o", str(tmp_path / "out.it")],
            capsys, f"{src}:2: a line of 1,000,000 characters", f"limit of {MAX_LINE_CHARS:,} characters")
    assert time.perf_counter() - started < 30
    assert not (tmp_path / "out.it").exists()


# ---------------------------------------------------------------- 6: align on a 200 KB line pair

def _long_pair(tmp_path, n_chars: int):
    rng = random.Random(1)
    words = " ".join("".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 7))) for _ in range(n_chars // 3))
    line = words[:n_chars]
    src, tgt = tmp_path / "p.en", tmp_path / "p.it"
    src.write_text("the cat sat .\n" + line + "\nhe took care of it .\n", encoding="utf-8")
    tgt.write_text("il gatto .\n" + line + "\nse ne occupava .\n", encoding="utf-8")
    return src, tgt


def test_6_align_refuses_a_too_long_line_before_tokenizing(tmp_path, capsys):
    from mwemt.testsets.align import MAX_LINE_CHARS

    src, tgt = _long_pair(tmp_path, 200_000)
    started = time.perf_counter()
    refused(["align", "--src", str(src), "--tgt", str(tgt), "--no-cache", "-o", str(tmp_path / "out.align")],
            capsys, f"{src}:2: a line of 200,000 characters", f"limit of {MAX_LINE_CHARS:,} characters",
            "at most 1024 tokens")
    assert time.perf_counter() - started < 10
    assert not (tmp_path / "out.align").exists()


def _grid_grow_diag_final_and(forward, reverse, n_src, n_tgt):
    """The textbook form, scanning the whole n_src x n_tgt grid on every pass: the oracle."""
    from mwemt.testsets.align import _NEIGHBORS

    union, links = forward | reverse, set(forward & reverse)
    src_done, tgt_done = {i for i, _ in links}, {j for _, j in links}
    grown = True
    while grown:
        grown = False
        for i in range(n_src):
            for j in range(n_tgt):
                if (i, j) in links:
                    for di, dj in _NEIGHBORS:
                        p = (i + di, j + dj)
                        if p in union and p not in links and (p[0] not in src_done or p[1] not in tgt_done):
                            links.add(p)
                            src_done.add(p[0])
                            tgt_done.add(p[1])
                            grown = True
    for direction in (forward, reverse):
        for i, j in sorted(direction):
            if i not in src_done and j not in tgt_done:
                links.add((i, j))
                src_done.add(i)
                tgt_done.add(j)
    return frozenset(links)


def test_6_grow_diag_final_and_is_the_grid_scan_in_time_of_the_links():
    from mwemt.testsets.align import grow_diag_final_and

    rng = random.Random(3)
    for _ in range(800):
        n, m = rng.randint(0, 10), rng.randint(0, 10)
        cells = [(i, j) for i in range(n) for j in range(m)]
        fwd = frozenset(rng.sample(cells, rng.randint(0, len(cells))))
        rev = frozenset(rng.sample(cells, rng.randint(0, len(cells))))
        assert grow_diag_final_and(fwd, rev, n, m) == _grid_grow_diag_final_and(fwd, rev, n, m)
    # a pair too long for eflomal has no links: the old grid scan took minutes on 40,000 x 40,000
    started = time.perf_counter()
    assert grow_diag_final_and(frozenset(), frozenset(), 40_000, 40_000) == frozenset()
    diagonal = frozenset((k, k) for k in range(5000))
    assert grow_diag_final_and(diagonal, diagonal, 5000, 5000) == diagonal
    assert time.perf_counter() - started < 5


# ---------------------------------------------------------------- 7, 9, 10: tracebacks from bad numbers

def test_7_identify_eval_negative_digits(tmp_path, capsys):
    refused(["identify-eval", "--gold", "g.cupt", "--pred", "p.cupt", "--digits", "-3"], capsys,
            "argument --digits: expected an integer from 0 to 10, got '-3'")


@pytest.mark.parametrize("command", [
    ["score", "--hyp", "h.txt", "--ref", "r.txt", "--paired-bs"],
    ["meta-eval", "--human", "h.tsv", "--metric", "m.tsv"],
    ["compare", "--testset", "t.jsonl", "--hyp", "a=a.txt", "--hyp", "b=b.txt"],
])
def test_9_negative_seed_of_bootstrap_commands(command, capsys):
    refused([*command, "--seed", "-1"], capsys, "argument --seed: expected an integer from 0 to 4294967295, got '-1'")


def test_10_translate_negative_threads(capsys):
    refused(["translate", "-m", "model", "--threads", "-1"], capsys, "argument --threads: expected an integer from 1",
            "or 0 (one per core), got '-1'")


# ---------------------------------------------------------------- 8: seeds, on the command line and in configs

@pytest.mark.parametrize("command", [
    ["train", "--config", "configs/nmt-tiny.yaml", "--dry-run", "--seed"],
    ["subword", "train", "-i", "x.txt", "-m", "x", "--seed"],
    ["augment", "split", "--tsv", "x.tsv", "--out", "d", "--seed"],
    ["translate", "-m", "model", "--seed"],
])
@pytest.mark.parametrize("value", ["-3", "-1", "99999999999999999999", "4294967296"])
def test_8_seed_outside_0_to_2_32_is_refused_by_argparse(command, value, capsys):
    refused([*command, value], capsys, f"argument --seed: expected an integer from 0 to 4294967295, got '{value}'")


@pytest.mark.parametrize("override,key", [("seed=-1", "seed"), ("seed=99999999999999999999", "seed"),
                                          ("train.seed=-3", "train.seed"), ("score.bootstrap_seed=-1", "score.bootstrap_seed")])
def test_8_seed_outside_the_range_is_refused_when_the_config_loads(override, key, capsys):
    config = str(ROOT / "configs" / "nmt-tiny.yaml")
    for command in (["run", config], ["train", "--config", config]):  # --dry-run too: checked at load
        err = refused([*command, "--set", override, "--dry-run"], capsys, f"override '{override}': {key}: must be")
        assert "at least 0" in err or "at most 4294967295" in err
    assert cli(["train", "--config", config, "--set", "seed=4294967295", "--dry-run"], capsys)[0] == 0


def test_8_a_seed_in_the_config_file_is_checked_with_its_line(tmp_path, capsys):
    text = (ROOT / "configs" / "nmt-tiny.yaml").read_text(encoding="utf-8")
    config = tmp_path / "c.yaml"
    assert "\nseed: 1\n" in text
    config.write_text(text.replace("../", str(ROOT) + "/").replace("\nseed: 1\n", "\nseed: -3\n"), encoding="utf-8")
    line = text.splitlines().index("seed: 1") + 1
    refused(["train", "--config", str(config), "--dry-run"], capsys, f"{config}:{line}:",
            "seed: must be at least 0, got -3")


# ---------------------------------------------------------------- 14: testset from-ted --max-gap -1

def test_14_from_ted_negative_max_gap(tmp_path, capsys):
    from mwemt.errors import MwemtError
    from mwemt.testsets.testset import build_ted_testset, read_ted_pairs

    refused(["testset", "from-ted", "--pairs", str(FIXTURES / "testset" / "pairs.tsv"), "--out",
             str(tmp_path / "t.jsonl"), "--max-gap", "-1"], capsys, "argument --max-gap: expected an integer ≥ 0")
    assert not (tmp_path / "t.jsonl").exists()
    rows = read_ted_pairs(FIXTURES / "testset" / "pairs.tsv", "FINAL")
    with pytest.raises(MwemtError, match="max_gap must be 0 or more, not -1"):
        build_ted_testset(rows, max_gap=-1)


# ---------------------------------------------------------------- 16: nan metric scores in meta-eval

def _meta_files(tmp_path, metric_rows: dict):
    human = tmp_path / "human.tsv"
    human.write_text("system\tseg_id\tscore\n" + "".join(f"{s}\t{g}\t{(g * 3 + ord(s)) % 5}\n"
                                                          for s in "AB" for g in range(1, 5)), encoding="utf-8")
    metric = tmp_path / "m.seg.tsv"
    metric.write_text("system\tseg_id\tscore\n" + "".join(f"{s}\t{g}\t{v}\n" for (s, g), v in metric_rows.items()),
                      encoding="utf-8")
    return human, metric


def test_16_nan_and_none_metric_scores_count_as_missing(tmp_path, capsys):
    # 6 of the 8 judged items have a row whose score is nan or None: 75% missing, far over the 1% rule
    scores = {(s, g): (g if (s, g) in {("A", 1), ("B", 2)} else ("nan" if g % 2 else "None")) for s in "AB"
              for g in range(1, 5)}
    human, metric = _meta_files(tmp_path, scores)
    out = tmp_path / "meta.txt"
    refused(["meta-eval", "--human", str(human), "--metric", str(metric), "--bootstrap", "0", "--permutations", "0",
             "-o", str(out)], capsys,
            "has no row for 0 and a row without a score (None/nan) for 6 of the 8 items judged", "(75.0%)",
            "--allow-partial")
    assert not out.exists()
    # with every score present the same files correlate
    human, metric = _meta_files(tmp_path, {(s, g): g * (2 if s == "A" else 1) for s in "AB" for g in range(1, 5)})
    assert cli(["meta-eval", "--human", str(human), "--metric", str(metric), "--bootstrap", "0", "--permutations",
                "0", "-o", str(out)], capsys)[0] == 0


# ---------------------------------------------------------------- 19: values accepted that must be refused

@pytest.mark.parametrize("flag,value,expected", [
    ("--factors", "0", "expected an integer from 1 to 100 (factors per token)"),
    ("--threshold", "-4", "expected an integer ≥ 0"),
    ("--nwords", "-2", "expected an integer ≥ 1, or -1 (all)"),
])
def test_19_prepare_values(tmp_path, capsys, flag, value, expected):
    for side in ("en", "it"):
        (tmp_path / f"t.{side}").write_text("a b\n", encoding="utf-8")
    refused(["prepare", "--src", "en", "--tgt", "it", "--trainpref", str(tmp_path / "t"), "--destdir",
             str(tmp_path / "bin"), flag, value], capsys, f"argument {flag}: {expected}, got '{value}'")
    assert not (tmp_path / "bin").exists()


def test_19_testset_build_idiomatic_below_outside_0_1(tmp_path, capsys):
    refused(["testset", "build", "--src", "s", "--tgt", "t", "--lexicon", "l", "-o", str(tmp_path / "o.jsonl"),
             "--idiomatic-below", "7"], capsys, "argument --idiomatic-below: expected a number from 0 to 1, got '7'")


def test_19_meta_eval_excluding_an_unknown_system(tmp_path, capsys):
    human, metric = _meta_files(tmp_path, {(s, g): g for s in "AB" for g in range(1, 5)})
    refused(["meta-eval", "--human", str(human), "--metric", str(metric), "--exclude-system", "NOPE",
             "--bootstrap", "0"], capsys, "--exclude-system NOPE: no such system in", "(its systems: A, B)")
    assert cli(["meta-eval", "--human", str(human), "--metric", str(metric), "--exclude-system", "B",
                "--bootstrap", "0", "--permutations", "0"], capsys)[0] == 0


def _dictionary_inputs(tmp_path):
    (tmp_path / "train.en").write_text("".join(f"sentence {k} .\n" for k in range(10)), encoding="utf-8")
    (tmp_path / "train.it").write_text("".join(f"frase {k} .\n" for k in range(10)), encoding="utf-8")
    d = tmp_path / "dict.tsv"
    d.write_text("take care of\tprendersi cura di\nivory tower\ttorre d'avorio\n", encoding="utf-8")
    return d


def test_19_augment_dictionary_ratio_is_bounded_before_any_work(tmp_path, capsys):
    from mwemt.augment.dictionary import DictionaryConfig, augment_with_dictionary
    from mwemt.augment.ratio import MAX_RATIO
    from mwemt.errors import MwemtError

    d = _dictionary_inputs(tmp_path)
    refused(["augment", "dictionary", "--dict", str(d), "--train", str(tmp_path / "train"), "--out",
             str(tmp_path / "aug"), "--ratio", "1e6"], capsys,
            f"argument --ratio: expected a number > 0 and ≤ {MAX_RATIO:g}, got '1e6'")
    assert not list(tmp_path.glob("aug*"))
    # the library refuses it too, before reading a file (this training prefix does not exist)
    with pytest.raises(MwemtError, match=f"more than {MAX_RATIO:g}"):
        augment_with_dictionary(d, tmp_path / "absent", tmp_path / "aug", DictionaryConfig(ratio=1e6), progress=False)
    # the largest ratio still works: 10 pairs x 10 = 100 synthetic pairs
    assert cli(["augment", "dictionary", "--dict", str(d), "--train", str(tmp_path / "train"), "--out",
                str(tmp_path / "aug"), "--ratio", str(MAX_RATIO), "-q"], capsys)[0] == 0
    assert len((tmp_path / "aug.en").read_text(encoding="utf-8").splitlines()) == 10 + 100


def test_19_config_ratio_is_bounded(capsys):
    config = str(ROOT / "configs" / "nmt-tiny.yaml")
    refused(["train", "--config", config, "--set", "augment.dictionary.ratio=1000000", "--dry-run"], capsys,
            "augment.dictionary.ratio: must be at most 10")


# ---------------------------------------------------------------- 20: a line over sentencepiece's limit

def test_20_subword_train_names_the_line_over_sentencepieces_limit(tmp_path, capsys):
    from mwemt.preprocess.subword import MAX_SENTENCE_BYTES

    text = tmp_path / "train.txt"
    text.write_text("a b c\nd e f\n" + "x" * 5000 + "\ng h\n", encoding="utf-8")
    refused(["subword", "train", "-i", str(text), "-m", str(tmp_path / "sp"), "--vocab-size", "20", "--no-byte-fallback", "-q"], capsys,
            f"{text}:3: a line of 5,000 bytes", f"sentencepiece's limit of {MAX_SENTENCE_BYTES:,} bytes")
    assert not list(tmp_path.glob("sp*"))
    # the longest line sentencepiece takes trains
    text.write_text("a b c\nd e f\n" + "x" * MAX_SENTENCE_BYTES + "\ng h\n", encoding="utf-8")
    assert cli(["subword", "train", "-i", str(text), "-m", str(tmp_path / "sp"), "--vocab-size", "20", "--no-byte-fallback", "-q"],
               capsys)[0] == 0


# ---------------------------------------------------------------- 23: augment backtranslate --max-tokens 0

def test_23_backtranslate_max_tokens_zero(tmp_path, capsys):
    from mwemt.augment.backtranslate import (
        BacktranslationConfig,
        PrecomputedTranslations,
        augment_with_backtranslation,
    )
    from mwemt.errors import MwemtError

    _dictionary_inputs(tmp_path)
    mono = tmp_path / "mono.it"
    mono.write_text("mi prendo cura di lui .\n", encoding="utf-8")
    trans = tmp_path / "mono.en"
    trans.write_text("i take care of him .\n", encoding="utf-8")
    lexicon = tmp_path / "lex.it"
    lexicon.write_text("prendere cura\n", encoding="utf-8")
    common = ["augment", "backtranslate", "--mono", str(mono), "--target-lexicon", str(lexicon), "--translations",
              str(trans), "--train", str(tmp_path / "train"), "--out", str(tmp_path / "bt")]
    refused([*common, "--max-tokens", "0"], capsys, "argument --max-tokens: expected an integer ≥ 1, got '0'")
    with pytest.raises(MwemtError, match="max_tokens must be at least 1, not 0"):
        augment_with_backtranslation(mono, lexicon, tmp_path / "train", tmp_path / "bt",
                                     PrecomputedTranslations(mono, trans), BacktranslationConfig(max_tokens=0),
                                     progress=False)
    assert not list(tmp_path.glob("bt*"))


# ---------------------------------------------------------------- 25: a bad compositionality score

def test_25_testset_build_names_the_bad_compositionality_value(tmp_path, capsys):
    src, tgt = tmp_path / "s.en", tmp_path / "t.it"
    src.write_text("She took care of it .\n", encoding="utf-8")
    tgt.write_text("Se ne è presa cura .\n", encoding="utf-8")
    comp = tmp_path / "c.tsv"
    comp.write_text("take care of\tabc\n", encoding="utf-8")
    refused(["testset", "build", "--src", str(src), "--tgt", str(tgt), "--lexicon", str(FIXTURES / "core" / "lexicon.txt"),
             "--compositionality", str(comp), "-o", str(tmp_path / "t.jsonl"), "--no-cache"], capsys,
            f"{comp}:1: no compositionality scores: the score 'abc' is not a number")
    assert not (tmp_path / "t.jsonl").exists()
    # a file with only the standard header keeps the plain message
    comp.write_text("mwe\tcompositionality\n", encoding="utf-8")
    err = refused(["testset", "build", "--src", str(src), "--tgt", str(tgt), "--lexicon",
                   str(FIXTURES / "core" / "lexicon.txt"), "--compositionality", str(comp), "-o",
                   str(tmp_path / "t.jsonl"), "--no-cache"], capsys, f"{comp}: no compositionality scores")
    assert "is not a number" not in err


# ---------------------------------------------------------------- 24 (and 5): a trained model

@pytest.fixture(scope="module")
def iob_model(tmp_path_factory):
    from tests.test_nmt_train import train

    return train("iob", tmp_path_factory.mktemp("bounds-nmt") / "iob")


@requires_nmt
@pytest.mark.nmt
def test_24_annotated_input_is_told_what_the_model_needs(iob_model, tmp_path, capsys):
    src = tmp_path / "in.iob.en"
    # the first token has 2 factors and the second 3: the old message said "expected 2 factors"
    src.write_text("she|she|O\nthe|O cat|cat|O\n", encoding="utf-8")
    err = refused(["translate", "-m", str(iob_model), "-i", str(src), "--input-format", "annotated", "-q"], capsys,
                  f"{src}:2: input has 2 factor(s) per token but the model expects 3")
    assert "expected 2 factors" not in err
    src.write_text("she|she|O\nthe|the|O cat|O\n", encoding="utf-8")
    refused(["translate", "-m", str(iob_model), "-i", str(src), "--input-format", "annotated", "-q"], capsys,
            f"{src}:2: token 2 'cat|O' has 2 factors (expected 3 factors per token, what the model needs")


@requires_nmt
@pytest.mark.nmt
def test_5_a_line_longer_than_the_models_source_positions_is_refused(iob_model, tmp_path, capsys):
    from mwemt.nmt.translate import MAX_LINE_CHARS, Translator

    positions = Translator.load(iob_model)._max_source_pieces()
    assert positions is not None
    src = tmp_path / "in.en"
    long_line = " ".join(["the cat"] * positions)  # within the character limit, over the model's positions
    assert len(long_line) <= MAX_LINE_CHARS
    src.write_text("The cat sleeps.\n" + long_line + "\n", encoding="utf-8")
    refused(["translate", "-m", str(iob_model), "-i", str(src), "-o", str(tmp_path / "out"), "-q"], capsys,
            f"{src}:2: the line is", f"more than the model's {positions} source positions")
    assert not (tmp_path / "out").exists()
