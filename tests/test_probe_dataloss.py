"""Issue 32, data loss and files: outputs never destroy what a command did not write.

Each test runs the real command line on real files in a temporary directory, as a user would, and
checks what is left on disk afterwards (items 1-3, 12, 21, 22 and the two "also" items of issue 32).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.cli import main
from tests.conftest import FIXTURES, requires_nmt

ROOT = Path(__file__).resolve().parents[1]
NMT = FIXTURES / "nmt"
EVAL = FIXTURES / "eval"


def mwemt(*argv: str | Path, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """`python -m mwemt ARGV` in a fresh process, as a user runs it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "mwemt", *map(str, argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


@pytest.fixture
def data_dir(tmp_path):
    """data/ with a train pair (t.en, t.it), an unrelated file, and mode 750."""
    data = tmp_path / "data"
    data.mkdir()
    for lang in ("en", "it"):
        lines = (NMT / f"train.{lang}").read_text(encoding="utf-8").splitlines()[:20]
        (data / f"t.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (data / "notes.txt").write_text("my notes\n")
    data.chmod(0o750)
    return data


# ---------------------------------------------------------------- items 1, 2, 21: prepare --overwrite

@requires_nmt
def test_prepare_overwrite_into_the_input_directory_deletes_nothing(data_dir):
    """Item 2: the inputs and an unrelated file stay, the mode stays, the command is refused (exit 2)."""
    before = snapshot(data_dir)
    r = mwemt("prepare", "--src", "en", "--tgt", "it", "--trainpref", data_dir / "t", "--destdir", data_dir,
              "--overwrite", "-q")
    assert r.returncode == 2, r.stderr
    assert "holds the input" in r.stderr and "t.en" in r.stderr
    assert snapshot(data_dir) == before
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o750


@requires_nmt
def test_prepare_overwrite_into_the_current_directory_deletes_nothing(data_dir):
    """Item 1: `--destdir .` in the directory of the inputs: refused with a clear message, nothing deleted."""
    before = snapshot(data_dir)
    r = mwemt("prepare", "--src", "en", "--tgt", "it", "--trainpref", "t", "--destdir", ".", "--overwrite", "-q",
              cwd=data_dir)
    assert r.returncode == 2, r.stderr
    assert "Invalid argument" not in r.stderr and "holds the input t.en" in r.stderr
    assert snapshot(data_dir) == before


@pytest.mark.slow
@requires_nmt
def test_prepare_overwrite_replaces_only_its_own_earlier_output(data_dir, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o750)
    args = ["prepare", "--src", "en", "--tgt", "it", "--trainpref", data_dir / "t", "--destdir", out, "-q"]
    assert mwemt(*args, "--validpref", data_dir / "t").returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o750             # the directory is kept, not replaced
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["outputs"]) == sorted(p.name for p in out.iterdir())
    assert "valid.en-it.en.bin" in manifest["outputs"]

    # a file of other origin: refused even with --overwrite, and kept
    (out / "my-notes.txt").write_text("keep me\n")
    before = snapshot(out)
    r = mwemt(*args, "--overwrite")
    assert r.returncode == 2 and "did not write" in r.stderr and "my-notes.txt" in r.stderr
    assert snapshot(out) == before
    (out / "my-notes.txt").unlink()

    # prepare's own output: replaced, and the valid split it no longer writes is removed
    assert mwemt(*args, "--overwrite").returncode == 0
    assert not (out / "valid.en-it.en.bin").exists() and (out / "train.en-it.en.bin").is_file()
    assert stat.S_IMODE(out.stat().st_mode) == 0o750

    # a directory an earlier mwemt prepared (its manifest lists no outputs) is still recognized
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["outputs"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert mwemt(*args, "--overwrite").returncode == 0
    assert "outputs" in json.loads((out / "manifest.json").read_text())

    # a dictionary reused from the destination is an input there
    r = mwemt("prepare", "--src", "en", "--tgt", "it", "--testpref", data_dir / "t", "--destdir", out,
              "--src-dict", out / "dict.en.txt", "--overwrite", "-q")
    assert r.returncode == 2 and "holds the input" in r.stderr and (out / "dict.en.txt").is_file()

    # a directory of files without a prepare manifest: refused, kept
    other = tmp_path / "other"
    other.mkdir()
    (other / "dict.en.txt").write_text("not prepare's\n")
    r = mwemt("prepare", "--src", "en", "--tgt", "it", "--trainpref", data_dir / "t", "--destdir", other,
              "--overwrite", "-q")
    assert r.returncode == 2 and "no manifest.json of an earlier prepare" in r.stderr
    assert (other / "dict.en.txt").read_text() == "not prepare's\n"


@requires_nmt
def test_prepare_into_a_new_directory_gets_the_usual_mode(data_dir, tmp_path):
    """Built in a temporary directory (mkdtemp: 0700), renamed into place with the umask's mode."""
    out = tmp_path / "new" / "data-bin"
    assert mwemt("prepare", "--src", "en", "--tgt", "it", "--trainpref", data_dir / "t", "--destdir", out,
                 "-q").returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask


@requires_nmt
def test_prepare_into_a_non_empty_directory_names_the_flag(data_dir, tmp_path):
    """Item 21: the command line says --overwrite; the library says overwrite=True."""
    from mwemt.nmt.prepare import DestinationNotEmpty, prepare

    out = tmp_path / "out"
    args = ["prepare", "--src", "en", "--tgt", "it", "--trainpref", data_dir / "t", "--destdir", out, "-q"]
    assert mwemt(*args).returncode == 0
    r = mwemt(*args)
    assert r.returncode == 2
    assert "--overwrite" in r.stderr and "overwrite=True" not in r.stderr
    pair = (data_dir / "t.en", data_dir / "t.it")
    with pytest.raises(DestinationNotEmpty, match="overwrite=True"):
        prepare({"train": pair}, out, src_lang="en", tgt_lang="it", progress=False)


# ---------------------------------------------------------------- item 3: compare's report directory

def test_compare_refuses_a_report_directory_holding_its_inputs(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    shutil.copyfile(EVAL / "hyp_a.it", d / "index.html")
    shutil.copyfile(EVAL / "hyp_b.it", d / "report.md")
    before = snapshot(d)
    r = mwemt("compare", "--ref", EVAL / "ref.it", "--hyp", f"a={d / 'index.html'}", "--hyp", f"b={d / 'report.md'}",
              "--lang", "it", "-o", d, "-q")
    assert r.returncode == 2, r.stderr
    assert "index.html" in r.stderr and "destroy the input" in r.stderr
    assert snapshot(d) == before

    # the reference, and a hard link to a hypothesis named like a report file, are inputs too
    e = tmp_path / "e"
    e.mkdir()
    shutil.copyfile(EVAL / "ref.it", e / "report.md")
    os.link(d / "index.html", e / "report.json")
    before = snapshot(e)
    r = mwemt("compare", "--ref", e / "report.md", "--hyp", f"a={d / 'index.html'}", "--hyp", f"b={EVAL / 'hyp_b.it'}",
              "--lang", "it", "-o", e, "-q")
    assert r.returncode == 2 and "--ref" in r.stderr
    assert snapshot(e) == before
    assert main(["compare", "--ref", str(EVAL / "ref.it"), "--hyp", f"a={d / 'index.html'}", "--hyp",
                 f"b={EVAL / 'hyp_b.it'}", "--lang", "it", "-o", str(e), "-q"]) == 2
    assert snapshot(e) == before


def test_a_report_never_replaces_a_file_this_process_read(tmp_path):
    """The library's own guard (for `mwemt run` and API users): replacing a report directory refuses a
    report file that was read as an input, whatever it is called."""
    from mwemt.errors import MwemtError
    from mwemt.evaluate.compare import publish_report
    from mwemt.fileio import forget_inputs, read_lines

    written = tmp_path / "written"
    assert main(["compare", "--ref", str(EVAL / "ref.it"), "--hyp", f"a={EVAL / 'hyp_a.it'}", "--hyp",
                 f"b={EVAL / 'hyp_b.it'}", "--lang", "it", "-o", str(written), "-q"]) == 0
    d = tmp_path / "d"
    d.mkdir()
    shutil.copyfile(EVAL / "hyp_a.it", d / "report.md")
    forget_inputs()
    read_lines(d / "report.md")
    with pytest.raises(MwemtError, match="destroy the input"):
        publish_report(written, d)
    assert (d / "report.md").read_bytes() == (EVAL / "hyp_a.it").read_bytes()
    forget_inputs()


# ---------------------------------------------------------------- item 22: a file where a directory must be

@pytest.mark.parametrize("argv", [
    ["annotate", "--lexicon", str(NMT / "lexicon.txt"), "--input", "{src}", "-o", "{f}/out"],
    ["annotate", "--lexicon", str(NMT / "lexicon.txt"), "--input", "{src}", "-o", "{f}/deeper/out"],
    ["score", "--ref", str(EVAL / "ref.it"), "--hyp", str(EVAL / "hyp_a.it"), "--lang", "it",
     "--sentence-scores", "{f}/x"],
    ["meta-eval", "extract", "--human", str(FIXTURES / "judgements" / "wmt_mqm_errors.tsv"), "--out", "{f}/x"],
], ids=["annotate", "annotate-deeper", "score", "meta-eval-extract"])
def test_an_output_under_a_regular_file_says_it_is_a_file(tmp_path, capsys, argv):
    f = tmp_path / "f"
    f.write_text("a file, not a directory\n")
    src = tmp_path / "in.en"
    src.write_text("She took care of the ivory tower .\n")
    argv = [a.format(f=f, src=src) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{f} is a file, not a directory" in err, err
    assert "File exists" not in err and "Not a directory" not in err
    assert f.read_text() == "a file, not a directory\n"


def test_make_directory_names_the_file_in_the_way(tmp_path):
    from mwemt.errors import MwemtError
    from mwemt.fileio import make_directory

    (tmp_path / "f").write_text("x")
    with pytest.raises(MwemtError, match=re.escape(f"{tmp_path / 'f'} is a file, not a directory")):
        make_directory(tmp_path / "f" / "a" / "b")


# ---------------------------------------------------------------- item 12: vectors directories

@pytest.fixture(scope="module")
def vectors(tmp_path_factory):
    from tests.test_compositionality import tiny_corpus

    root = tmp_path_factory.mktemp("vectors")
    corpus, lex = root / "corpus.txt", root / "lex.txt"
    corpus.write_text("".join(f"{line}\n" for line in tiny_corpus(300)))
    lex.write_text("apple pie\nivory tower\n")
    assert main(["compositionality", "vectors", "--corpus", str(corpus), "--lexicon", str(lex), "--out",
                 str(root / "vec"), "--models", "ppmi,svd", "--min-count", "2", "--ppmi-window", "2",
                 "--context-ranks", "1-60", "--svd-dim", "8", "--workers", "1", "-q"]) == 0
    return root


@pytest.mark.parametrize("damaged", ["ppmi.npz", "svd.npy", "manifest.json"])
def test_a_damaged_vectors_file_is_a_clean_error_naming_it(vectors, tmp_path, capsys, damaged):
    vec = tmp_path / "vec"
    shutil.copytree(vectors / "vec", vec)
    data = (vec / damaged).read_bytes()
    (vec / damaged).write_bytes(data[: len(data) // 2])           # truncated
    out = tmp_path / "comp.tsv"
    argv = ["compositionality", "predict", "--vectors", str(vec), "--mwes", str(vectors / "lex.txt"),
            "--model", "svd" if damaged == "svd.npy" else "ppmi", "-o", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert str(vec / damaged) in err and "internal error" not in err, err
    assert not out.exists()


def test_a_failed_vectors_build_leaves_no_directory_it_created(tmp_path, capsys):
    lex = tmp_path / "lex.txt"
    lex.write_text("ivory tower\n")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"the ivory tower is tall\nthe \xff tower\n")
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    for corpus, out in ((bad, tmp_path / "a" / "b" / "vec"), (empty, tmp_path / "vec")):
        assert main(["compositionality", "vectors", "--corpus", str(corpus), "--lexicon", str(lex), "--out", str(out),
                     "--workers", "1", "-q"]) == 2
        assert corpus.name in capsys.readouterr().err
        assert not out.exists()
    assert not (tmp_path / "a").exists()
    # an existing --out directory is the user's: it stays
    keep = tmp_path / "keep"
    keep.mkdir()
    assert main(["compositionality", "vectors", "--corpus", str(empty), "--lexicon", str(lex), "--out", str(keep),
                 "--workers", "1", "-q"]) == 2
    assert keep.is_dir()


# ---------------------------------------------------------------- also: results name no machine

ABSOLUTE = re.compile(r"(?:^|[\s\"'(=])/(?:work|home|root|tmp|Users|mnt|scratch)/")


def test_committed_cpu_science_results_record_no_absolute_path():
    for name in ("results.md", "results.json", "publish.json", "factor-concat/results.md",
                 "factor-concat/results.json"):
        path = ROOT / "results" / "cpu-science" / name
        text = path.read_text(encoding="utf-8")
        assert not ABSOLUTE.search(text), f"{name}: {ABSOLUTE.search(text).group(0)!r}"
    meta = json.loads((ROOT / "results" / "cpu-science" / "results.json").read_text())["meta"]
    assert meta["config"] == "configs/cpu-science.yaml" and (ROOT / meta["config"]).is_file()


def test_run_results_and_publish_record_relative_paths(tmp_path, monkeypatch):
    """A run started in the repository, with an absolute config and run directory, records both
    relative to it: in results.md, results.json and publish.json."""
    import time

    from mwemt.experiments.config import load_config
    from mwemt.experiments.experiment import _run_meta
    from mwemt.experiments.publish import publish_run
    from mwemt.experiments.results import build_results, write_results
    from mwemt.experiments.runner import Runner
    from mwemt.schema import to_plain

    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    config = repo / "configs" / "c.yaml"
    config.write_text("name: c\nseed: 1\ndata:\n  train: package:demo/train\n  valid: package:demo/dev\n"
                      "tests:\n  t: {source: package:demo/test.en, reference: package:demo/test.it}\n"
                      "systems:\n  baseline: {}\n")
    monkeypatch.chdir(repo)
    cfg = load_config(config.resolve())
    run_dir = (repo / "runs" / "c").resolve()
    with Runner(run_dir, config=to_plain(cfg), seed=cfg.seed, total=0, progress=False, log=open(os.devnull, "w")) as r:
        meta = _run_meta(cfg, run_dir, r, time.monotonic())
        write_results(r.run_dir, build_results([], name="c", baseline="baseline", meta=meta), plot=False)
        published = publish_run(r.run_dir, tmp_path / "published", {})
    assert meta["config"] == os.path.join("configs", "c.yaml") and meta["run directory"] == os.path.join("runs", "c")
    assert published["run_directory"] == os.path.join("runs", "c")
    for name in ("results.md", "results.json"):
        assert str(tmp_path) not in (run_dir / name).read_text()
    assert str(tmp_path) not in (tmp_path / "published" / "publish.json").read_text()


# ---------------------------------------------------------------- also: the model directory stands alone

@pytest.mark.slow
@requires_nmt
@pytest.mark.nmt
def test_the_trained_model_directory_can_be_moved_and_still_translates(tmp_path):
    work = tmp_path / "work"
    r = mwemt("train", "--config", ROOT / "configs" / "nmt-tiny.yaml", "--workdir", work, "--max-epoch", "0",
              "--max-update", "4", "--set", "train.warmup_updates=4", "--set", "train.early_stop=loss",
              "--set", "train.patience=-1", "-q")
    assert r.returncode == 0, r.stderr[-3000:]
    printed = Path(r.stdout.strip().splitlines()[-1].removeprefix("model directory: "))
    assert printed == work / "model"
    assert printed.is_dir() and not printed.is_symlink()
    assert not any(p.is_symlink() for p in printed.rglob("*"))

    moved = tmp_path / "elsewhere" / "my-model"
    moved.parent.mkdir()
    shutil.move(str(printed), str(moved))                      # mv
    copied = tmp_path / "copied"
    shutil.copytree(moved, copied, symlinks=True)              # cp -r (links kept as links)
    src = tmp_path / "in.en"
    src.write_text("She took care of the ivory tower .\nHe is a big fish .\n")
    for model in (moved, copied):
        out = tmp_path / f"{model.name}.it"
        r = mwemt("translate", "--model", model, "-i", src, "-o", out, "--quiet")
        assert r.returncode == 0, r.stderr[-3000:]
        assert len(out.read_text().splitlines()) == 2

    # training again publishes a fresh copy; a directory holding other files is refused, not replaced
    assert mwemt("train", "--config", ROOT / "configs" / "nmt-tiny.yaml", "--workdir", work, "--max-epoch", "0",
                 "--max-update", "4", "--set", "train.warmup_updates=4", "--set", "train.early_stop=loss",
                 "--set", "train.patience=-1", "-q").returncode == 0
    assert (work / "model" / "checkpoints" / "checkpoint_best.pt").is_file()
    (work / "model" / "my-notes.txt").write_text("keep me\n")
    r = mwemt("train", "--config", ROOT / "configs" / "nmt-tiny.yaml", "--workdir", work, "--max-epoch", "0",
              "--max-update", "4", "--set", "train.warmup_updates=4", "--set", "train.early_stop=loss",
              "--set", "train.patience=-1", "-q")
    assert r.returncode == 2 and "my-notes.txt" in r.stderr
    assert (work / "model" / "my-notes.txt").read_text() == "keep me\n"
