"""End to end on CPU: tiny factored and baseline models train a few updates through the pipeline that
`mwemt train` runs, save, train again after an interruption and translate."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from mwemt.errors import MwemtError
from tests.conftest import FIXTURES, requires_nmt

pytestmark = [requires_nmt, pytest.mark.nmt]

NMT = FIXTURES / "nmt"


def tiny_config(encoding: str, **train):
    """A one-system experiment config, as `mwemt train` reads it."""
    from mwemt.experiments.config import config_from_data

    data = {
        "name": f"test-{encoding}", "seed": 1, "src_lang": "en", "tgt_lang": "it",
        "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"), "lexicon": str(NMT / "lexicon.txt"),
                 "lexicon_format": "list"},
        "subword": {"vocab_size": 400},
        "model": {"preset": "tiny"},
        "train": {"max_tokens": 1024, "max_epoch": 0, "max_update": 4, "warmup_updates": 4, "lr": 3e-3,
                  "patience": -1, "early_stop": "loss", "eval_max_len": [0, 8], "log_interval": 1, **train},
        "systems": {encoding: {"encoding": encoding}},
    }
    return config_from_data(data)


def train(encoding: str, workdir, **train_settings):
    from mwemt.experiments.experiment import train_system

    return train_system(tiny_config(encoding, **train_settings), encoding, workdir, progress=False)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("nmt")
    iob = train("iob", root / "iob", early_stop="bleu")
    base = train("none", root / "base")
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
    with pytest.raises(MwemtError, match=r"<input>:1: input has 2 factor\(s\) per token but the model expects 3"):
        tr.translate(["the|O cat|O"], input_format="annotated")


def test_translate_errors_name_the_input_file_and_line(models, tmp_path, capsys):
    """Issue 15: errors said `input line 2`, not which file; and an IOB tag X passed as <unk>."""
    from mwemt.cli import main

    src = tmp_path / "test.iob.en"
    for bad, message in [("the|the|O cat|cat", "token 2 'cat|cat' has 2 factors (expected 3 factors"),
                         ("the|the|O cat|cat|X", "position 2: bad tag 'X' (expected IOB tags B, I or O"),
                         ("the|the|O cat|take_care|I", "position 2: I of 'take_care' follows no B")]:
        src.write_text(f"she|she|O\n{bad}\n")
        assert main(["translate", "-m", str(models["iob"]), "-i", str(src), "--input-format", "annotated",
                     "-q"]) == 2
        assert f"{src}:2: {message}" in capsys.readouterr().err


def test_a_damaged_checkpoint_or_dictionary_is_a_located_error(models, tmp_path, capsys):
    """Issue 15: a truncated checkpoint gave `error: Invalid argument` (exit 1), a damaged
    dictionary a ValueError traceback line."""
    from mwemt.cli import main

    src = tmp_path / "in.en"
    src.write_text("She took care of the dog.\n")
    broken = tmp_path / "m"
    shutil.copytree(models["iob"], broken)
    ckpt = broken / "checkpoints" / "checkpoint_best.pt"
    ckpt.write_bytes(ckpt.read_bytes()[:5000])
    assert main(["translate", "-m", str(broken), "-i", str(src), "-q"]) == 2
    err = capsys.readouterr().err
    assert f"{ckpt}: cannot load the checkpoint" in err and "Traceback" not in err
    ckpt.write_bytes(b"")
    assert main(["translate", "-m", str(broken), "-i", str(src), "-q"]) == 2
    assert f"{ckpt}: cannot load the checkpoint" in capsys.readouterr().err
    shutil.copyfile(models["iob"] / "checkpoints" / "checkpoint_best.pt", ckpt)
    target_dict = broken / "dict.it.txt"
    lines = target_dict.read_text(encoding="utf-8").splitlines()
    lines[3] = "a line without a count"
    target_dict.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["translate", "-m", str(broken), "-i", str(src), "-q"]) == 2
    assert f"{target_dict}:4: dictionary line 'a line without a count'" in capsys.readouterr().err


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

    (data_bin,) = (models["root"] / "iob" / "stages" / "prepare" / "iob").glob("*/data-bin")
    cmd = [sys.executable, "-m", "fairseq_cli.generate", str(data_bin), "--user-dir", str(PLUGIN_DIR),
           "--task", "factored_translation", "--path", str(models["iob"] / "checkpoints" / "checkpoint_best.pt"),
           "--gen-subset", "valid", "--beam", "2", "--max-len-b", "5", "--cpu", "--max-tokens", "4000",
           "--remove-bpe", "sentencepiece"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert sum(1 for ln in res.stdout.splitlines() if ln.startswith("H-")) == 40   # no sentence dropped
    assert "BLEU4" in res.stdout


def test_the_model_directory_is_the_train_stage_and_one_set_of_markers(models):
    """One pipeline: WORKDIR/model holds the train stage's files (hard links, not a link to the stage
    directory); no second cache (`*.done.json`) exists."""
    work = models["root"] / "iob"
    assert models["iob"] == work / "model" and models["iob"].is_dir() and not models["iob"].is_symlink()
    (stage_model,) = (work / "stages" / "train").glob("iob/*/model")
    ckpt = "checkpoints/checkpoint_last.pt"
    assert (models["iob"] / ckpt).samefile(stage_model / ckpt)
    assert not list(work.rglob("*.done.json"))
    assert {p.name for p in (work / "stages").iterdir()} == {"corpus", "annotate", "subword", "prepare", "train"}


@pytest.mark.slow
def test_training_a_finished_model_again_changes_nothing(models):
    from mwemt.fileio import sha256_file

    ckpt = models["none"] / "checkpoints" / "checkpoint_last.pt"
    before = sha256_file(ckpt), (models["none"] / "manifest.json").read_bytes()
    assert train("none", models["root"] / "base") == models["none"]
    assert (sha256_file(ckpt), (models["none"] / "manifest.json").read_bytes()) == before


def test_an_interrupted_training_starts_again_and_ends_with_the_same_weights(models, tmp_path):
    """A train stage without DONE (a killed run) is trained again from an empty directory, not resumed
    from its checkpoint (fairseq's resume is not bit-identical): the same weights as the first time."""
    import json

    import torch

    work = tmp_path / "iob"
    shutil.copytree(models["root"] / "iob", work, symlinks=True)
    (done,) = list((work / "stages" / "train" / "iob").glob("*/DONE"))
    done.unlink()
    model_dir = train("iob", work, early_stop="bleu")
    summary = json.loads((model_dir / "manifest.json").read_text())["training"]
    assert summary["resumed"] is False and done.exists()
    assert [v["updates"] for v in summary["validations"]] == [4]       # one training in the log, not two

    def weights(d):
        return torch.load(d / "checkpoints" / "checkpoint_last.pt", map_location="cpu", weights_only=False)["model"]

    a, b = weights(models["iob"]), weights(model_dir)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_misaligned_raw_corpus_is_refused_before_training(tmp_path):
    from mwemt.errors import InputError

    for lang, lines in (("en", (NMT / "train.en").read_text().splitlines()),
                        ("it", (NMT / "train.it").read_text().splitlines()[:-1])):
        (tmp_path / f"short.{lang}").write_text("".join(ln + "\n" for ln in lines))
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import train_system

    cfg = config_from_data({"data": {"train": str(tmp_path / "short"), "valid": str(NMT / "valid")},
                            "systems": {"b": {}}})
    with pytest.raises(InputError, match="misaligned"):
        train_system(cfg, "b", tmp_path / "w", progress=False)
    assert not list((tmp_path / "w" / "stages").glob("annotate/*/*/DONE"))


def test_config_errors_are_clear():
    from mwemt.errors import MwemtError
    from mwemt.experiments.config import config_from_data

    with pytest.raises(MwemtError, match=r"model.factor_embed_dims: has 2 sizes but the system's encoding gives 3"):
        config_from_data({"data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"),
                                   "lexicon": str(NMT / "lexicon.txt")},
                          "model": {"factor_embed_dims": [48, 16]}, "systems": {"iob": {"encoding": "iob"}}})
    with pytest.raises(MwemtError, match="train.max_tokenz: unknown key; did you mean `max_tokens`"):
        tiny_config("none", max_tokenz=5)


@pytest.mark.slow
def test_two_process_cpu_data_parallel(tmp_path):
    """fairseq's own data-parallel training on CPU: 2 processes under torchrun, gloo all-reduce."""
    import json

    model_dir = train("iob", tmp_path / "ddp", distributed_world_size=2, threads=1)
    log = (model_dir / "train.log").read_text()
    assert "distributed init (rank 0)" in log and "distributed init (rank 1)" in log
    assert "legacy_ddp" in log
    summary = json.loads((model_dir / "manifest.json").read_text())["training"]
    assert summary["validations"][-1]["updates"] == 4
    from mwemt.nmt.translate import Translator

    assert len(Translator.load(model_dir).translate(["The cat takes care of the dog."], max_len_b=4)) == 1
