"""Issue 37 (a new user's probe), the NMT items: 5, 6, 8, 9, 11 and 12. Item 13 (kill -9 during training) is in
tests/test_probe2_kill.py.

One tiny EN->IT model is trained once, a few updates (weak: many hypotheses never end), and serves every test
that needs a model directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mwemt.cli import main
from mwemt.errors import MwemtError
from tests.conftest import FIXTURES, ROOT, requires_nmt

NMT = FIXTURES / "nmt"
DEMO = ROOT / "mwemt" / "data" / "demo"


def cli(args: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


def mwemt(*args: str) -> subprocess.CompletedProcess:
    """`mwemt ARGS` in a process of its own (stderr as a user sees it: logging configured by the CLI)."""
    return subprocess.run([sys.executable, "-m", "mwemt", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "internal error" not in err, err


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(workdir, model directory) of a tiny baseline trained for 4 updates."""
    from tests.test_nmt_train import train

    root = tmp_path_factory.mktemp("probe2")
    return root, train("none", root / "work")


def train_again(root: Path, **train_settings):
    """The same system in the same working directory with other train settings: every stage before
    training is a cache hit."""
    from tests.test_nmt_train import train

    return train("none", root / "work", **train_settings)


def config_error(**sections):
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError

    data = {"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid")}, "systems": {"b": {}}, **sections}
    with pytest.raises(ConfigError) as err:
        config_from_data(data)
    return str(err.value)


# ---------------------------------------------------------------- 5: a reverse model of the wrong direction

@requires_nmt
def test_5_backtranslation_refuses_a_reverse_model_of_the_wrong_direction(trained, tmp_path, capsys):
    _, model = trained   # EN->IT: back-translation into EN needs IT->EN
    out = tmp_path / "bt"
    code, err = cli(["augment", "backtranslate", "--mono", str(DEMO / "mono.it"), "--target-lexicon",
                     str(DEMO / "lexicon.it.txt"), "--reverse-model", str(model), "--train", str(NMT / "train"),
                     "--src-lang", "en", "--tgt-lang", "it", "--out", str(out), "-q"], capsys)
    assert code == 2, err
    no_traceback(err)
    assert f"{model / 'preprocess.json'}: the reverse model translates en->it" in err
    assert "needs a it->en model" in err
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------- 6: output independent of the batch size

@pytest.mark.slow
@requires_nmt
def test_6_beam_search_output_does_not_depend_on_the_batch_size(trained):
    from mwemt.fileio import read_lines
    from mwemt.nmt.translate import Translator

    _, model = trained
    lines = read_lines(NMT / "train.en")[:120]
    tr = Translator.load(model)
    one = tr.translate(lines, batch_size=1)
    # the weak model's hypotheses run to their length limit: with the batch's longest source setting it
    # (fairseq's rule), 117 of these 120 lines differed between batch sizes 1 and 128
    assert sum(len(h.split()) > 20 for h in one) > 10
    for batch_size in (128, 7):
        other = tr.translate(lines, batch_size=batch_size)
        differ = [k + 1 for k, (a, b) in enumerate(zip(one, other)) if a != b]
        assert not differ, f"batch size {batch_size}: lines {differ[:10]} differ from batch size 1"


# ---------------------------------------------------------------- 8: messages instead of tracebacks

def test_8_subword_vocab_too_small_names_the_size_that_works(tmp_path, capsys):
    code, err = cli(["subword", "train", "--input", str(NMT / "train.en"), str(NMT / "train.it"), "--joint",
                     "--model-prefix", str(tmp_path / "spm"), "--vocab-size", "50", "-q"], capsys)
    assert code == 2, err
    no_traceback(err)
    assert "INTERNAL" not in err and "--character_coverage" not in err and "required_chars" not in err, err
    # 3 control pieces + 256 byte pieces + 4 factor escapes + the 35 distinct characters of the text
    assert "vocabulary size 50 is too small for this text: sentencepiece needs at least 298 pieces" in err
    assert "subword.vocab_size" in err and "--vocab-size" in err
    assert not list(tmp_path.iterdir())
    # the bound is exact: 298 trains
    code, err = cli(["subword", "train", "--input", str(NMT / "train.en"), str(NMT / "train.it"), "--joint",
                     "--model-prefix", str(tmp_path / "spm"), "--vocab-size", "298", "-q"], capsys)
    assert code == 0, err


def test_8_subword_vocab_size_in_a_config_has_the_real_lower_bound():
    err = config_error(subword={"vocab_size": 50})
    assert "subword.vocab_size: must be at least 264, got 50" in err   # 263 special pieces + a character


@requires_nmt
def test_8_max_tokens_below_the_longest_sentence_is_refused_before_fairseq_starts(trained):
    root, _ = trained
    with pytest.raises(MwemtError) as err:
        train_again(root, max_tokens=1)
    msg = str(err.value)
    no_traceback(msg)
    assert msg.startswith("train.max_tokens 1 cannot hold the longest sentence pair: pair ")
    assert "set train.max_tokens to at least " in msg
    assert "fairseq-train failed" not in msg


def test_8_non_positive_layer_and_dimension_counts_are_refused_in_the_config():
    err = config_error(model={"args": {"encoder_layers": -2}})
    assert "model.args.encoder_layers" in err and "-2" in err and "positive integer" in err
    err = config_error(model={"args": {"decoder_embed_dim": 0}})
    assert "model.args.decoder_embed_dim" in err
    from mwemt.experiments.config import config_from_data

    config_from_data({"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid")}, "systems": {"b": {}},
                      "model": {"args": {"encoder_layers": 3, "activation_fn": "gelu"}}})


@requires_nmt
def test_8_a_bad_extra_argument_shows_fairseqs_reason(trained):
    root, _ = trained
    with pytest.raises(MwemtError) as err:
        train_again(root, extra_args=["--no-such-flag"])
    msg = str(err.value)
    assert "fairseq-train refused its command line: unrecognized arguments: --no-such-flag" in msg, msg
    assert "train.extra_args" in msg


# ---------------------------------------------------------------- 9: silent fallbacks and clipping

@requires_nmt
def test_9_translating_without_a_best_checkpoint_warns_even_when_quiet(trained, tmp_path):
    _, model = trained
    copy = tmp_path / "model"
    shutil.copytree(model, copy)
    (copy / "checkpoints" / "checkpoint_best.pt").unlink()
    src = tmp_path / "in.en"
    src.write_text("She took care of the dog .\n", encoding="utf-8")
    res = mwemt("translate", "-m", str(copy), "-i", str(src), "-o", str(tmp_path / "out.it"), "-q")
    assert res.returncode == 0, res.stderr
    assert "WARNING" in res.stderr and "has no checkpoint_best.pt" in res.stderr, res.stderr
    assert "translating with checkpoint_last.pt, the last weights, not the best" in res.stderr
    # asked for by name: no warning
    res = mwemt("translate", "-m", str(copy), "-i", str(src), "-o", str(tmp_path / "out2.it"), "-q",
                "--checkpoint", "checkpoint_last.pt")
    assert res.returncode == 0 and "WARNING" not in res.stderr, res.stderr


def test_9_a_vocabulary_beyond_any_text_is_refused(tmp_path, capsys):
    code, err = cli(["subword", "train", "--input", str(NMT / "train.en"), "--model-prefix", str(tmp_path / "spm"),
                     "--vocab-size", "100000000", "-q"], capsys)
    assert code == 2, err
    assert "vocabulary size 100000000: expected 10 to 1,000,000 pieces" in err
    assert not list(tmp_path.iterdir())
    assert "subword.vocab_size" in config_error(subword={"vocab_size": 10 ** 10})


def test_9_a_vocabulary_larger_than_the_text_supports_is_said(tmp_path, capsys, caplog):
    import logging

    with caplog.at_level(logging.WARNING):
        code, err = cli(["subword", "train", "--input", str(NMT / "train.en"), "--model-prefix",
                         str(tmp_path / "spm"), "--vocab-size", "900000", "-q"], capsys)
    assert code == 0, err
    assert "asked for 900000 pieces, but the training text supports only" in caplog.text


def test_9_train_size_beyond_the_corpus_is_said(tmp_path, caplog):
    import logging

    from mwemt.experiments.stages import CorpusSection, corpus_stage

    ctx = SimpleNamespace(config=CorpusSection(src_lang="en", tgt_lang="it", seed=1, train_size=5000),
                          inputs={"train_src": NMT / "train.en", "train_tgt": NMT / "train.it",
                                  "valid_src": NMT / "valid.en", "valid_tgt": NMT / "valid.it"},
                          out=tmp_path)
    with caplog.at_level(logging.WARNING):
        corpus_stage(ctx)
    assert "data.train_size is 5000, but the training data has only 300 pairs: training on all 300" in caplog.text
    caplog.clear()
    ctx.config = CorpusSection(src_lang="en", tgt_lang="it", seed=1, train_size=100)
    with caplog.at_level(logging.WARNING):
        corpus_stage(ctx)
    assert "train_size" not in caplog.text
    assert json.loads((tmp_path / "corpus.json").read_text())["train_pairs"] == 100


def test_9_testset_build_refuses_to_write_an_empty_test_set(tmp_path, capsys):
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("kick the bucket\nspill the beans\n", encoding="utf-8")   # in no sentence
    out = tmp_path / "test.jsonl"
    code, err = cli(["testset", "build", "--src", str(NMT / "valid.en"), "--tgt", str(NMT / "valid.it"),
                     "--lexicon", str(lexicon), "--lexicon-format", "list", "-o", str(out), "--no-cache", "-q"],
                    capsys)
    assert code == 2, err
    no_traceback(err)
    assert "no MWE test item could be built: 40 pairs, 0 MWEs found" in err and "nothing was written" in err
    assert not out.exists()


# ---------------------------------------------------------------- 11: translate --help states its defaults

def test_11_translate_help_states_the_sampling_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["translate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--topk TOPK with --sampling: sample from the k most likely tokens (default: -1 = all tokens)" in text
    assert "--seed SEED random seed of --sampling, for the same output on every run (default: none: a new " \
           "sample each run)" in text
    assert "without --seed every run samples differently" in text


# ---------------------------------------------------------------- 12: noise on stderr

@requires_nmt
def test_12_prepare_prints_no_tensorboardx_advice(tmp_path):
    res = mwemt("prepare", "--trainpref", str(NMT / "train"), "--validpref", str(NMT / "valid"), "--src", "en",
                "--tgt", "it", "--destdir", str(tmp_path / "bin"), "--quiet")
    assert res.returncode == 0, res.stderr
    assert "tensorboardX" not in res.stderr, res.stderr


@requires_nmt
def test_12_int8_decoding_prints_no_torch_deprecation(trained, tmp_path):
    _, model = trained
    src = tmp_path / "in.en"
    src.write_text("She took care of the dog .\n", encoding="utf-8")
    res = mwemt("translate", "-m", str(model), "-i", str(src), "-o", str(tmp_path / "out.it"), "-q",
                "--precision", "int8")
    assert res.returncode == 0, res.stderr
    assert "Warning" not in res.stderr and "deprecated" not in res.stderr, res.stderr
