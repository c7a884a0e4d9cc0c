"""Issue 15's defects, one regression test each: an output that is an input is refused, faults of
the machine or of a model directory give one located line and exit 2 (never a traceback), wrong
input is refused instead of silently changing a score, and messages say what is wrong.

The model-directory faults (corrupt checkpoint or dictionary, bad IOB tags, translate errors naming
the input file) need a trained model: they are in tests/test_nmt_train.py beside its tiny models.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures"
EVAL = FIX / "eval"
LEX = FIX / "core" / "lexicon.txt"


def run_cli(argv, capsys) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return code, err


# ---------------------------------------------------------------- defect 5: -o equal to an input


def _linked(tmp_path: Path, src: Path, how: str) -> Path:
    """``src`` itself, a symlink to it or a hard link to it: every way to name the same file."""
    if how == "same":
        return src
    link = tmp_path / f"{how}-link"
    (os.symlink if how == "symlink" else os.link)(src, link)
    return link


@pytest.fixture
def spm_model(tmp_path_factory) -> Path:
    from mwemt.preprocess.subword import SubwordModel

    prefix = tmp_path_factory.mktemp("spm") / "spm"
    SubwordModel.train([FIX / "subword" / "train.en"], vocab_size=300).save(prefix)
    return prefix.with_suffix(".model")


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("command", ["score -o ref", "annotate", "subword apply", "translate"])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(command, how, tmp_path, capsys, spm_model):
    text = "She took care of the children .\nHe walked off .\n"
    src = tmp_path / "input.txt"
    src.write_text(text)
    out = _linked(tmp_path, src, how)
    model_dir = tmp_path / "model"
    model_dir.mkdir()  # never loaded: the check comes first
    argv = {
        "score -o ref": ["score", "--hyp", EVAL / "hyp_a.it", "--ref", src, "-o", out],
        "annotate": ["annotate", "-l", LEX, "-i", src, "-o", out, "-q"],
        "subword apply": ["subword", "apply", "--model", spm_model, "-i", src, "-o", out, "-q"],
        "translate": ["translate", "-m", model_dir, "-i", src, "-o", out, "-q"],
    }[command]
    code, err = run_cli(argv, capsys)
    assert code == 2, err
    assert "would destroy the input" in err and "Traceback" not in err
    assert src.read_text() == text
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".part")) == []


# ---------------------------------------------------------------- defect 6: tracebacks -> one line


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_is_one_line_and_exit_2(capsys):
    code, err = run_cli(["score", "--hyp", EVAL / "hyp_a.it", "--ref", EVAL / "ref.it", "-o", "/dev/full"], capsys)
    assert code == 2
    assert err.strip() == "mwemt score: error: /dev/full: cannot write: No space left on device"


def test_negative_width_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:  # argparse refuses it (its range: mwemt.cli.argtypes)
        run_cli(["score", "--hyp", EVAL / "hyp_a.it", "--ref", EVAL / "ref.it", "--width", "-3"], capsys)
    assert exc.value.code == 2 and "argument --width: expected an integer from 0 to 10" in capsys.readouterr().err


def test_a_run_directory_under_a_file_is_one_line_and_exit_2(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("not a directory\n")
    code, err = run_cli(["run", ROOT / "configs" / "demo.yaml", "--run-dir", blocker / "run", "-q"], capsys)
    assert code == 2, err
    assert "a part of this path is a file, not a directory" in err
    assert "Traceback" not in err and blocker.read_text() == "not a directory\n"


def _no_gpu() -> bool:
    import torch

    return not torch.cuda.is_available()


@pytest.mark.skipif(not _no_gpu(), reason="this machine has a GPU")
def test_device_cuda_without_a_gpu_is_refused_before_any_work(tmp_path, capsys):
    code, err = run_cli(["translate", "-m", tmp_path, "-i", EVAL / "ref.it", "--device", "cuda"], capsys)
    assert code == 2 and "device is cuda, but torch" in err and "finds no CUDA GPU" in err

    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import train_system

    nmt = FIX / "nmt"
    cfg = config_from_data({
        "name": "cuda", "src_lang": "en", "tgt_lang": "it",
        "data": {"train": str(nmt / "train"), "valid": str(nmt / "valid")},
        "train": {"device": "cuda"}, "systems": {"baseline": {}},
    })
    with pytest.raises(MwemtError, match="train.device is cuda"):
        train_system(cfg, "baseline", tmp_path / "work", progress=False)
    assert not (tmp_path / "work" / "stages").exists()  # nothing ran


def test_a_missing_data_file_in_a_train_config_is_refused_before_any_stage(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("name: bad\nsrc_lang: en\ntgt_lang: it\ndata:\n  train: /nonexistent/train\n"
                      f"  valid: {FIX / 'nmt' / 'valid'}\nsystems:\n  baseline: {{}}\n")
    code, err = run_cli(["train", "-c", config, "--workdir", tmp_path / "work", "-q"], capsys)
    assert code == 2 and f"{config}:5: data.train: corpus file not found: /nonexistent/train.en" in err
    assert not (tmp_path / "work").exists()


def test_tesla_refuses_a_huge_segment_without_allocating_it(tmp_path):
    """A 1.4 MB line once made TESLA allocate 51.9 GiB. Under a 3 GiB address-space limit the
    command must still end with a located error, quickly."""
    words = "the cat sat on a mat while dogs ran".split()
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("a short line\n" + " ".join(words[i % len(words)] for i in range(250_000)) + "\n")
    ref = tmp_path / "ref.txt"
    ref.write_text("a short line\n" + " ".join(words[i % len(words)] for i in range(250_000)) + "\n")
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    proc = subprocess.run(
        [sys.executable, "-c", limit + "import sys; from mwemt.cli import main; sys.exit(main(sys.argv[1:]))",
         "score", "--hyp", str(hyp), "--ref", str(ref), "--metrics", "tesla", "--no-wordnet"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2, proc.stderr
    assert f"{hyp}:2: hypothesis of 250000 tokens is too long for tesla (at most 1000 tokens" in proc.stderr


def test_tesla_names_the_reference_file_for_a_long_reference(tmp_path, capsys):
    ref = tmp_path / "ref.txt"
    ref.write_text("a b c\n" + "word " * 1500 + "\n")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("a b c\nword\n")
    code, err = run_cli(["score", "--hyp", hyp, "--ref", ref, "--metrics", "tesla", "--no-wordnet"], capsys)
    assert code == 2 and f"{ref}:2: reference of 1500 tokens is too long" in err


# ---------------------------------------------------------------- defect 7: silent acceptance


def _testset_line(mwe_reference: str) -> str:
    return json.dumps({"id": "1", "source": "I woke up early .", "reference": "Mi sono svegliato presto .",
                       "mwes": [{"indices": [1, 2], "lemma": "wake up", "reference": mwe_reference}]})


@pytest.mark.parametrize("reference", ["", "   "])
def test_an_mwe_with_an_empty_reference_translation_is_refused(reference, tmp_path):
    from mwemt.formats import read_testset

    path = tmp_path / "t.jsonl"
    path.write_text(_testset_line("si è svegliato") + "\n" + _testset_line(reference) + "\n")
    with pytest.raises(InputError, match="empty reference translation") as info:
        read_testset(path)
    assert info.value.line == 2


def test_an_alignment_source_index_outside_the_source_is_refused(tmp_path, capsys):
    align = tmp_path / "a.align"
    lines = (EVAL / "hyp_a.align").read_text().splitlines()
    n_src = len(json.loads((EVAL / "testset.jsonl").read_text().splitlines()[1])["source"].split())
    lines[1] = f"0-0 {n_src}-1"  # one past the last source token of sentence 2
    align.write_text("\n".join(lines) + "\n")
    code, err = run_cli(["score", "--hyp", EVAL / "hyp_a.it", "--testset", EVAL / "testset.jsonl",
                         "--metrics", "mwe", "--lang", "it", "--align", align], capsys)
    assert code == 2, err
    assert f"{align}:2: alignment points to source token {n_src}, but the test-set source has {n_src} tokens" in err


CUPT_HEAD = "# global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC PARSEME:MWE\n"


def _cupt_row(ident: str, form: str) -> str:
    return "\t".join([ident, form, form.lower(), "_", "_", "_", "_", "_", "_", "_", "*"])


@pytest.mark.parametrize("rows,line,message", [
    ([("1", "Vado"), ("2-40", "al"), ("2", "a"), ("3", "il"), ("4", "mare")], 4, "ends after the last word 4"),
    ([("1", "Vado"), ("2-3", "al"), ("2", "a"), ("3-4", "xy"), ("3", "il"), ("4", "mare")], 6, "range '3-4'"),
])
def test_cupt_multiword_ranges_must_lie_within_the_sentence(rows, line, message, tmp_path):
    from mwemt.formats import read_cupt

    path = tmp_path / "x.cupt"
    path.write_text(CUPT_HEAD + "# text = Vado al mare\n" + "".join(_cupt_row(*r) + "\n" for r in rows) + "\n")
    with pytest.raises(InputError, match=message) as info:
        list(read_cupt(path))
    assert info.value.line == line


def test_train_refuses_a_workdir_in_use(tmp_path, capsys):
    """Two `mwemt train` on one workdir would overwrite each other: the second is refused."""
    from mwemt.experiments.runner import Runner

    nmt = FIX / "nmt"
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"name": "lock", "src_lang": "en", "tgt_lang": "it", "train": {"device": "cpu"},
                                  "data": {"train": str(nmt / "train"), "valid": str(nmt / "valid")},
                                  "systems": {"baseline": {}}}))
    workdir = tmp_path / "work"
    with Runner(workdir, config={}, seed=1, progress=False):
        code, err = run_cli(["train", "-c", config, "--workdir", workdir, "-q"], capsys)
    assert code == 2 and "another mwemt command is using" in err
    assert not (workdir / "stages").exists()


# ---------------------------------------------------------------- defect 8: messages


def test_an_unknown_metric_is_not_called_a_tesla_variant(capsys):
    code, err = run_cli(["score", "--hyp", EVAL / "hyp_a.it", "--ref", EVAL / "ref.it", "--metrics", "chrff"], capsys)
    assert code == 2
    assert "unknown metric 'chrff' (did you mean 'chrf'?); known metrics: " in err
    assert "variant" not in err


def test_a_system_identical_to_the_baseline_gets_p_1_for_every_metric(tmp_path, capsys):
    from mwemt.evaluate.registry import metric_names

    copy = tmp_path / "copy.it"
    copy.write_text((EVAL / "hyp_a.it").read_text())
    metrics = list(metric_names())
    out = tmp_path / "s.json"
    # LiTER and term use need a dictionary and given translations
    (tmp_path / "dict.tsv").write_text("take\tprendere\ncare\tcura\nlot\tlotto\nfish\tpesce\n")
    (tmp_path / "terms.tsv").write_text("take care of\tpreso cura di\na lot of\tun sacco di\n")
    code, err = run_cli(["score", "--hyp", f"base={EVAL / 'hyp_a.it'}", "--hyp", f"same={copy}",
                         "--hyp", f"other={EVAL / 'hyp_b.it'}", "--ref", EVAL / "ref.it",
                         "--testset", EVAL / "testset.jsonl", "--lang", "it", "--no-wordnet",
                         "--compositionality", EVAL / "comp.it.tsv", "--metrics", ",".join(metrics),
                         "--dictionary", tmp_path / "dict.tsv", "--dictionary-format", "bilingual",
                         "--terms", tmp_path / "terms.tsv",
                         "--paired-bs", "--bs-samples", "200", "--json", "-o", out], capsys)
    assert code == 0, err
    data = json.loads(out.read_text())["metrics"]
    assert set(data) == set(metrics)
    for key, entry in data.items():
        assert entry["systems"]["base"]["p_value"] is None
        if entry["systems"]["same"]["score"] is None:   # undefined on this test set (n/a): no test either
            assert entry["systems"]["same"]["p_value"] is None and entry.get("undefined"), key
            continue
        assert entry["systems"]["same"]["p_value"] == 1.0, key
