"""End to end on CPU: tiny factored and baseline models train a few updates, save, resume and translate."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from mwemt.errors import MwemtError
from tests.conftest import FIXTURES, requires_nmt

pytestmark = [requires_nmt, pytest.mark.nmt]

NMT = FIXTURES / "nmt"


def tiny_config(encoding: str, **train) -> dict:
    cfg = {
        "name": f"test-{encoding}", "seed": 1, "src_lang": "en", "tgt_lang": "it",
        "data": {"train": {"src": str(NMT / "train.en"), "tgt": str(NMT / "train.it")},
                 "valid": {"src": str(NMT / "valid.en"), "tgt": str(NMT / "valid.it")}},
        "preprocess": {"encoding": encoding, "lexicon": str(NMT / "lexicon.txt") if encoding != "none" else None,
                       "lexicon_format": "list"},
        "subword": {"vocab_size": 400},
        "model": {"preset": "tiny"},
        "train": {"max_tokens": 1024, "max_epoch": 0, "max_update": 4, "warmup_updates": 4, "lr": 3e-3,
                  "patience": -1, "early_stop": "loss", "eval_max_len": [0, 8], "log_interval": 1, **train},
    }
    return cfg


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from mwemt.nmt.train import train

    root = tmp_path_factory.mktemp("nmt")
    iob = train(tiny_config("iob", early_stop="bleu"), root / "iob", progress=False)
    base = train(tiny_config("none"), root / "base", progress=False)
    return {"iob": iob, "none": base, "root": root}


def test_model_directory_is_self_contained(models):
    import json

    d = models["iob"]
    for name in ("checkpoints/checkpoint_best.pt", "checkpoints/checkpoint_last.pt", "dict.en.txt",
                 "dict.en.factor1.txt", "dict.en.factor2.txt", "dict.it.txt", "spm.model", "lexicon.txt",
                 "preprocess.json", "manifest.json", "train.log"):
        assert (d / name).is_file(), name
    pre = json.loads((d / "preprocess.json").read_text())
    assert pre["factors"] == 3 and pre["encoding"] == "iob" and len(pre["lexicon"]["sha256"]) == 64
    man = json.loads((d / "manifest.json").read_text())
    assert man["versions"]["torch"] and man["versions"]["fairseq-fixed"]
    assert man["training"]["validations"], "no validation line was parsed from the fairseq log"
    assert man["training"]["validations"][-1]["updates"] == 4
    assert man["training"]["validations"][-1]["valid_bleu"] is not None   # early stopping on BLEU
    assert (models["none"] / "dict.en.txt").is_file() and not (models["none"] / "dict.en.factor1.txt").exists()
    # the precision `train.precision: auto` chose, and why, are in the manifest and the log
    from mwemt.nmt.cpu import resolve_precision

    precision, why = resolve_precision("auto", "cpu")
    assert (man["training"]["precision"], man["training"]["precision_reason"]) == (precision, why)
    assert f"precision {precision} ({why})" in (d / "train.log").read_text(encoding="utf-8")


@pytest.mark.parametrize("precision", ["bf16", "int8"])
def test_decoding_precisions_translate_every_line(models, precision):
    from mwemt.nmt.translate import Translator

    lines = ["My sister takes care of the dog.", "", "By the way, the doctor thinks about the books."]
    tr = Translator.load(models["iob"], device="cpu", precision=precision)
    out = tr.translate(lines, beam=2, batch_size=2, max_len_a=0, max_len_b=5)
    assert len(out) == 3 and out[1] == "" and out[0] and out[2]
    with pytest.raises(MwemtError, match="decoding precision"):
        Translator.load(models["iob"], precision="fp16")


@pytest.mark.parametrize("kind", ["iob", "none"])
def test_translate_raw_text(models, kind):
    from mwemt.nmt.translate import Translator

    tr = Translator.load(models[kind])
    lines = ["My sister takes care of the dog.", "", "By the way, the doctor thinks about the books."]
    out = tr.translate(lines, beam=2, batch_size=2, max_len_a=0, max_len_b=5)
    assert len(out) == 3 and out[1] == ""
    assert all(isinstance(x, str) and x and "▁" not in x for x in (out[0], out[2]))
    # batching and order do not change results
    assert tr.translate(list(reversed(lines)), beam=2, batch_size=1, max_len_a=0, max_len_b=5) == list(reversed(out))
    sampled = tr.translate(lines[:1], sampling=True, topk=5, seed=7, max_len_b=5)
    assert sampled == tr.translate(lines[:1], sampling=True, topk=5, seed=7, max_len_b=5)


def test_translate_cli_from_file(models, tmp_path):
    from mwemt.cli import main

    src = tmp_path / "in.en"
    src.write_text("The cat took care of the garden.\nAnna looks at the house in the ivory tower.\n")
    out = tmp_path / "out.it"
    assert main(["translate", "--model", str(models["iob"]), "-i", str(src), "-o", str(out), "--beam", "2",
                 "-q"]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_wrong_factor_count_at_inference(models):
    from mwemt.errors import MwemtError
    from mwemt.nmt.translate import Translator

    tr = Translator.load(models["iob"])
    with pytest.raises(MwemtError, match=r"input line 1: input has 2 factor\(s\) per token but the model expects 3"):
        tr.translate(["the|O cat|O"], input_format="annotated")


def test_missing_model_files(models, tmp_path):
    from mwemt.errors import InputError
    from mwemt.nmt.translate import Translator

    broken = tmp_path / "m"
    shutil.copytree(models["iob"], broken)
    (broken / "spm.model").unlink()
    with pytest.raises(InputError, match=r"spm\.model: missing model file \(source sentencepiece model\)"):
        Translator.load(broken)
    shutil.rmtree(broken / "checkpoints")
    with pytest.raises(InputError, match="missing model file: no checkpoint"):
        Translator.load(broken)


def test_factor_count_and_vocabulary_mismatch_are_refused(models, tmp_path):
    from mwemt.errors import MwemtError
    from mwemt.nmt.translate import Translator

    mixed = tmp_path / "mixed"
    shutil.copytree(models["iob"], mixed)
    shutil.copyfile(models["none"] / "checkpoints" / "checkpoint_best.pt", mixed / "checkpoints" / "checkpoint_best.pt")
    with pytest.raises(MwemtError, match="factor-count mismatch: .* has 1 source factor"):
        Translator.load(mixed)
    swapped = tmp_path / "swapped"
    shutil.copytree(models["iob"], swapped)
    lines = (swapped / "dict.en.factor1.txt").read_text().splitlines()
    (swapped / "dict.en.factor1.txt").write_text("\n".join(lines[:-8]) + "\n")
    with pytest.raises(MwemtError, match="vocabulary mismatch: the checkpoint's 'lemma' embedding"):
        Translator.load(swapped)


def test_fairseq_generate_loads_a_saved_checkpoint(models):
    """torch >= 2.6 loads with weights_only=True; the plugin allow-lists what fairseq pickles."""
    from mwemt.nmt.train import PLUGIN_DIR

    data_bin = models["root"] / "iob" / "work" / "data-bin"
    cmd = [sys.executable, "-m", "fairseq_cli.generate", str(data_bin), "--user-dir", str(PLUGIN_DIR),
           "--task", "factored_translation", "--path", str(models["iob"] / "checkpoints" / "checkpoint_best.pt"),
           "--gen-subset", "valid", "--beam", "2", "--max-len-b", "5", "--cpu", "--max-tokens", "4000",
           "--remove-bpe", "sentencepiece"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert sum(1 for ln in res.stdout.splitlines() if ln.startswith("H-")) == 40   # no sentence dropped
    assert "BLEU4" in res.stdout


@pytest.mark.slow
def test_training_a_finished_model_again_changes_nothing(models):
    from mwemt.fileio import sha256_file
    from mwemt.nmt.train import train

    ckpt = models["none"] / "checkpoints" / "checkpoint_last.pt"
    before = sha256_file(ckpt), (models["none"] / "manifest.json").read_bytes()
    assert train(tiny_config("none"), models["root"] / "base", progress=False) == models["none"]
    assert (sha256_file(ckpt), (models["none"] / "manifest.json").read_bytes()) == before


def test_training_resumes_from_last_checkpoint(models):
    import json

    from mwemt.nmt.train import train

    model_dir = train(tiny_config("iob", early_stop="bleu", max_update=6), models["root"] / "iob", progress=False)
    summary = json.loads((model_dir / "manifest.json").read_text())["training"]
    assert summary["resumed"] is True
    assert [v["updates"] for v in summary["validations"]][-1] == 6
    assert "num_updates: 6" in summary["stop_reason"]


def test_misaligned_raw_corpus_is_refused_before_training(tmp_path):
    from mwemt.errors import InputError
    from mwemt.nmt.train import train

    short = tmp_path / "short.it"
    short.write_text("".join(ln + "\n" for ln in (NMT / "train.it").read_text().splitlines()[:-1]))
    cfg = tiny_config("none")
    cfg["data"]["train"]["tgt"] = str(short)
    with pytest.raises(InputError, match="misaligned"):
        train(cfg, tmp_path / "w", progress=False)


def test_config_errors_are_clear():
    from mwemt.errors import MwemtError
    from mwemt.nmt.config import resolve

    cfg = tiny_config("iob")
    cfg["model"]["factor_embed_dims"] = [48, 16]
    with pytest.raises(MwemtError, match="factor_embed_dims has 2 sizes but encoding iob gives 3"):
        resolve(cfg)
    cfg = tiny_config("none")
    cfg["train"]["max_tokenz"] = 5
    with pytest.raises(MwemtError, match="unknown key 'train.max_tokenz'"):
        resolve(cfg)


@pytest.mark.slow
def test_two_process_cpu_data_parallel(tmp_path):
    """fairseq's own data-parallel training on CPU: 2 processes under torchrun, gloo all-reduce."""
    import json

    from mwemt.nmt.train import train

    cfg = tiny_config("iob", distributed_world_size=2, threads=1)
    model_dir = train(cfg, tmp_path / "ddp", progress=False)
    log = (model_dir / "train.log").read_text()
    assert "distributed init (rank 0)" in log and "distributed init (rank 1)" in log
    assert "legacy_ddp" in log
    summary = json.loads((model_dir / "manifest.json").read_text())["training"]
    assert summary["validations"][-1]["updates"] == 4
    from mwemt.nmt.translate import Translator

    assert len(Translator.load(model_dir).translate(["The cat takes care of the dog."], max_len_b=4)) == 1
