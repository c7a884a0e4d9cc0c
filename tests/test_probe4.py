"""Issue 44: the faults a new-user probe found at 8957f08 (items 1-4 and 6-15; item 5 is the line-stable alignment's).

Each test is one item and fails on 8957f08. Decoding tests use the tiny baseline of tests/test_nmt_train.py
(trained once for the module, about 20 s); the rest need no model.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from mwemt.cli import main
from mwemt.errors import InputError, MwemtError
from tests.conftest import FIXTURES, ROOT, requires_nmt

NMT = FIXTURES / "nmt"
EVAL = FIXTURES / "eval"
SCRIPTS = ROOT / "scripts"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from mwemt.experiments.experiment import train_system
    from tests.test_nmt_train import tiny_config

    return train_system(tiny_config("none"), "none", tmp_path_factory.mktemp("probe4"), progress=False)


def _table(path: Path):
    from tests.test_methods_model import constraint_table

    table = constraint_table()
    table.write(path)
    return table


def _lines(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _run(argv: list, capsys) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def _unloadable(model: Path, tmp_path: Path) -> Path:
    """A copy of ``model`` whose checkpoint is no checkpoint: a command that loads it fails saying so, one that
    refuses its input first never gets there."""
    broken = tmp_path / "unloadable"
    shutil.copytree(model, broken)
    for ckpt in (broken / "checkpoints").iterdir():
        ckpt.write_bytes(b"not a checkpoint\n")
    return broken


def _script(name: str, *args, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kw)


# ---------------------------------------------------------------- 1: judged tuning without evidence


@requires_nmt
@pytest.mark.nmt
def test_1_judged_tuning_refuses_empty_validation_files_and_a_set_with_nothing_constrained(model, tmp_path, capsys):
    table = tmp_path / "t.jsonl"
    _table(table)
    src = _lines(tmp_path / "in.en", ["Anna thinks about the baby ."])
    empty_src, empty_ref = tmp_path / "e.en", tmp_path / "e.it"
    empty_src.write_text("")
    empty_ref.write_text("")
    judged = ["translate", "-m", model, "-i", src, "-o", tmp_path / "o.it", "-q", "--constraints", table,
              "--constraint-mode", "judged", "--constraint-mwe-context", "none"]
    code, err = _run([*judged, "--constraint-tune", empty_src, empty_ref], capsys)
    assert code == 2 and f"{empty_src}: the validation source has no line with text" in err, err
    assert "internal error" not in err
    # lines with nothing to constrain: refused, and no threshold is recorded (none was measured)
    plain_src = _lines(tmp_path / "v.en", ["Anna works today .", "The dog sleeps ."])
    plain_ref = _lines(tmp_path / "v.it", ["Anna lavora oggi .", "Il cane dorme ."])
    record = tmp_path / "threshold.json"
    code, err = _run([*judged, "--constraint-tune", plain_src, plain_ref, "--constraint-tuning", record], capsys)
    assert code == 2 and "no validation line could be constrained" in err, err
    assert not record.exists() and not (tmp_path / "o.it").exists()


# ---------------------------------------------------------------- 2: whitespace inside a table token


@pytest.mark.parametrize("token", ["cura\ndi", "cura\tdi", "cura di", "cura\u00a0di", "cura\u2003di"])
def test_2_the_table_reader_refuses_a_token_with_whitespace(tmp_path, token):
    from mwemt.testsets.mwe_table import MweTranslationTable

    path = tmp_path / "t.jsonl"
    rows = [{"format": "mwemt-mwe-table", "version": 1, "provenance": {}},
            {"key": "take care of", "translations": [{"tokens": ["prendersi", token], "count": 2,
                                                      "sources": ["aligned"]}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match="contains whitespace") as exc:
        MweTranslationTable.read(path)
    assert exc.value.path == str(path) and exc.value.line == 2


# ---------------------------------------------------------------- 3: an output given twice


def test_3_the_tuning_record_may_be_neither_the_output_nor_an_input(tmp_path, capsys):
    src = _lines(tmp_path / "in.en", ["Anna thinks about the baby ."])
    ref = _lines(tmp_path / "in.it", ["Anna pensa al bambino ."])
    same = tmp_path / "same.out"
    base = ["translate", "-m", tmp_path / "no-model", "-i", src, "--constraints", tmp_path / "t.jsonl",
            "--constraint-mode", "judged", "--constraint-tune", src, ref]
    code, err = _run([*base, "-o", same, "--constraint-tuning", same], capsys)
    assert code == 2 and "is the same file as the output" in err, err
    assert not same.exists()
    code, err = _run([*base, "-o", tmp_path / "o.it", "--constraint-tuning", ref], capsys)   # an input
    assert code == 2 and "is the same file as the input" in err, err
    assert ref.read_text(encoding="utf-8") == "Anna pensa al bambino .\n"


# ---------------------------------------------------------------- 4: NaN and infinity in float settings


@pytest.mark.parametrize("section, key, value", [("train", "min_improvement", float("nan")),
                                                 ("train", "lr", float("nan")), ("train", "lr", float("inf")),
                                                 ("hints", "rate", float("nan")),
                                                 ("hints", "matched_rate", float("nan")),
                                                 ("translate", "constraint_threshold", float("-inf"))])
def test_4_every_float_setting_must_be_finite(section, key, value):
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError

    data = {"name": "finite", "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid")},
            "systems": {"baseline": {}}, section: {key: value}}
    if key == "matched_rate":
        data[section]["version"] = 2
    if key == "constraint_threshold":
        data[section]["constraints"] = "judged"
        data["data"].update(lexicon=str(NMT / "lexicon.txt"), lexicon_format="list")
    with pytest.raises(ConfigError, match="must be a finite number") as exc:
        config_from_data(data)
    assert f"{section}.{key}" in str(exc.value)


# ---------------------------------------------------------------- 6: compact_publish acts on listed files only


def _publish(d: Path) -> dict:
    import hashlib

    (d / "hyps").mkdir(parents=True)
    (d / "hyps" / "a.t.txt").write_text("uno\ndue\n", encoding="utf-8")
    (d / "rescore.sh").write_text("#!/bin/sh\nmwemt score --hyp a=hyps/a.t.txt --ref refs/t.txt\n", encoding="utf-8")
    files = {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.rglob("*"))
             if p.is_file()}
    manifest = {"run_directory": "runs/x", "rescore": {"t": ["mwemt", "score", "--hyp", "a=hyps/a.t.txt"]},
                "files": files}
    (d / "publish.json").write_text(json.dumps(manifest), encoding="utf-8")
    return manifest


def _tree(d: Path) -> dict:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_6_compact_publish_gzips_only_listed_files_and_checks_the_manifest_before_writing(tmp_path):
    pub = tmp_path / "pub"
    _publish(pub)
    (pub / "hyps" / "notes.txt").write_text("mine, not the publisher's\n", encoding="utf-8")   # not listed
    r = _script("compact_publish.py", pub)
    assert r.returncode == 0, r.stderr
    assert (pub / "hyps" / "notes.txt").read_text(encoding="utf-8") == "mine, not the publisher's\n"
    assert not (pub / "hyps" / "notes.txt.gz").exists() and "notes.txt" in r.stderr
    assert sorted(p.name for p in (pub / "hyps").iterdir()) == ["a.t.txt.gz", "notes.txt"]
    # a manifest without files: nothing is written, nothing removed
    bad = tmp_path / "bad"
    manifest = _publish(bad)
    del manifest["files"]
    (bad / "publish.json").write_text(json.dumps(manifest), encoding="utf-8")
    before = _tree(bad)
    r = _script("compact_publish.py", bad)
    assert r.returncode == 2 and "no `files`" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert _tree(bad) == before
    # a listed file changed since publishing: refused, nothing written
    changed = tmp_path / "changed"
    _publish(changed)
    (changed / "hyps" / "a.t.txt").write_text("edited\n", encoding="utf-8")
    before = _tree(changed)
    r = _script("compact_publish.py", changed)
    assert r.returncode == 2 and "sha256" in r.stderr and _tree(changed) == before, r.stderr


# ---------------------------------------------------------------- 7: readme_examples --check writes nowhere else


def test_7_readme_examples_check_never_writes_into_the_repository(tmp_path):
    name = f".probe4-{uuid.uuid4().hex}.txt"
    readme = tmp_path / "README.md"
    readme.write_text(f"<!-- example: writes -->\n```console\n$ echo written > results/{name}; cat results/{name}\n"
                      "written\n```\n", encoding="utf-8")
    target = ROOT / "results" / name
    try:
        r = _script("readme_examples.py", "--check", "--readme", readme, timeout=300)
        assert r.returncode == 0, r.stderr
        assert not target.exists(), "the example wrote into the repository"
    finally:
        target.unlink(missing_ok=True)


# ---------------------------------------------------------------- 8: settings no metric reads


@pytest.mark.parametrize("metrics, extra, flag", [
    ("mwe-p", ["--mwe-precision", "0.25"], "--mwe-precision"),
    ("bleu", ["--src-lang", "it"], "--src-lang"),
    ("bleu", ["--hyp-tokenized"], "--hyp-tokenized"),
    ("bleu", ["--no-cache"], "--no-cache"),
    ("mwe", ["--mwe-wordnet", "no-such-wordnet.tab"], "--mwe-wordnet"),
])
def test_8_score_refuses_a_setting_that_no_metric_reads(capsys, metrics, extra, flag):
    code, err = _run(["score", "--hyp", EVAL / "hyp_a.it", "--testset", EVAL / "testset.jsonl", "--lang", "it",
                      "--metrics", metrics, *extra], capsys)
    assert code == 2 and flag in err, err


# ---------------------------------------------------------------- 9: dropped constraints are not counted


@requires_nmt
@pytest.mark.nmt
@pytest.mark.parametrize("mode", ["unordered", "ordered"])
def test_9_a_line_whose_only_constraint_is_dropped_is_neither_constrained_nor_accepted(model, mode):
    from mwemt.nmt.constraints import ConstraintOptions, constrained_translate
    from mwemt.nmt.translate import Translator
    from mwemt.testsets.mwe_table import MweTranslationTable

    tr = Translator.load(model)
    lines = ["Anna thinks about the baby .", "The dog sleeps ."]
    table = MweTranslationTable()
    table.add("think about", ["\u0436\u0436\u0436"], 2)          # no piece of the target dictionary spells it
    hyps, report = constrained_translate(tr, lines, table, ConstraintOptions(mode), beam=3, batch_size=2)
    assert hyps == tr.translate(lines, beam=3, batch_size=2)
    assert (report.lines_with_mwes, report.constrained_lines, report.accepted, report.constraints) == (1, 0, 0, 0)
    assert report.unspellable == 1 and report.per_line == [[], []]
    assert report.to_json()["constrained_lines"] == 0 and "1 constraint(s) left out" in report.summary()


# ---------------------------------------------------------------- 10: scripts fail cleanly


def _results(groups: dict, scores: dict | None = None) -> dict:
    cols = ["tatoeba-mwe/mwe-p", "ted/mwe-p", "tatoeba/bleu", "tatoeba/chrf", "tatoeba-mwe/bleu"]
    members = [m for ms in groups.values() for m in ms]
    return {"name": "g", "baseline": "baseline", "columns": [{"id": c} for c in cols],
            "scores": scores if scores is not None else {m: {c: {"score": 30.0, "p_value": 0.5} for c in cols}
                                                         for m in members},
            "seed_groups": groups}


@pytest.mark.parametrize("content, said", [
    ("{not json", "not a readable results.json"),
    ("", "not a readable results.json"),
    ("[1, 2]", "not a results.json"),
    (json.dumps(_results({"baseline": ["baseline", "baseline-seed2"]})), "the only seed group is the baseline's"),
    (json.dumps({**_results({"baseline": ["baseline"], "x": ["x", "x-seed2"]}),
                 "scores": _results({"baseline": ["baseline"], "x": ["x"]})["scores"]}), "x-seed2"),
])
def test_10_aim_check_says_what_is_wrong_with_exit_2(tmp_path, content, said):
    (tmp_path / "results.json").write_text(content, encoding="utf-8")
    r = _script("aim_check.py", tmp_path)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_10_aim_check_refuses_a_nan_gain_and_stops_quietly_on_a_closed_pipe(tmp_path):
    (tmp_path / "results.json").write_text(json.dumps(_results({"baseline": ["baseline"], "x": ["x"]})),
                                           encoding="utf-8")
    r = _script("aim_check.py", tmp_path, "--mwe-gain", "nan")
    assert r.returncode == 2 and "--mwe-gain" in r.stderr and "Traceback" not in r.stderr
    # a reader that has gone (`| head`): no traceback
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / "aim_check.py"), str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_10_compact_publish_says_why_it_cannot_write_without_a_traceback(tmp_path):
    """What the machine refuses (here: a directory where its temporary file goes) is one line and exit 2, for
    any user (the read-only directory below needs one who is not root)."""
    pub = tmp_path / "pub"
    _publish(pub)
    (pub / "hyps" / "a.t.txt.gz.part").mkdir()
    r = _script("compact_publish.py", pub)
    assert r.returncode == 2 and "a.t.txt.gz.part" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert (pub / "hyps" / "a.t.txt").is_file() and not (pub / "hyps" / "a.t.txt.gz").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_10_compact_publish_in_a_read_only_directory_is_a_clear_error(tmp_path):
    pub = tmp_path / "pub"
    _publish(pub)
    before = _tree(pub)
    for d in (pub / "hyps", pub):
        d.chmod(0o555)
    try:
        r = _script("compact_publish.py", pub)
    finally:
        for d in (pub, pub / "hyps"):
            d.chmod(0o755)
    assert r.returncode == 2 and "cannot write there" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert _tree(pub) == before


# ---------------------------------------------------------------- 11: options outside the mode that reads them


@pytest.mark.parametrize("extra, flag", [(["--constraint-candidates", "5"], "--constraint-candidates"),
                                         (["--constraint-mwe-context", "none"], "--constraint-mwe-context")])
def test_11_translate_refuses_judged_options_in_another_mode(tmp_path, capsys, extra, flag):
    src = _lines(tmp_path / "in.en", ["Anna thinks about the baby ."])
    code, err = _run(["translate", "-m", tmp_path / "no-model", "-i", src, "-o", tmp_path / "o.it",
                      "--constraints", tmp_path / "t.jsonl", *extra], capsys)   # unordered, the default mode
    assert code == 2 and f"{flag} judges constraints" in err, err


def _grid(**systems) -> dict:
    return {"name": "modes", "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"),
                                      "lexicon": str(NMT / "lexicon.txt"), "lexicon_format": "list"},
            "systems": {"baseline": {}, **systems}}


@pytest.mark.parametrize("system, key", [
    ({"model_of": "baseline", "translate": {"constraints": "unordered", "constraint_candidates": 5}},
     "constraint_candidates"),
    ({"model_of": "baseline", "translate": {"constraints": "ordered", "constraint_mwe_context": "none"}},
     "constraint_mwe_context"),
    ({"encoding": "hints", "hints": {"version": 2, "rate": 0.3}}, "rate"),
    ({"encoding": "hints", "hints": {"matched_rate": 0.3}}, "matched_rate"),
    ({"encoding": "hints", "hints": {"version": 1, "plain_copy": False}}, "plain_copy"),
    ({"encoding": "iob", "hints": {"rate": 0.3}}, "hints"),
])
def test_11_config_refuses_keys_the_mode_does_not_read(system, key):
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError

    with pytest.raises(ConfigError, match=key) as exc:
        config_from_data(_grid(x=system))
    assert "systems.x" in str(exc.value)
    # a top-level default of version-1 systems is no error for a system that switches to version 2
    cfg = config_from_data({**_grid(x={"encoding": "hints", "hints": {"version": 2, "matched_rate": 0.4}}),
                            "hints": {"rate": 0.2}})
    assert cfg.systems["x"].hints.matched_rate == 0.4


# ---------------------------------------------------------------- 12: checks that came late, or confused


def test_12_tune_extra_without_a_training_sample_is_refused_by_the_config():
    from mwemt.experiments.config import config_from_data
    from mwemt.schema import ConfigError

    judged = {"model_of": "baseline", "translate": {"constraints": "judged", "constraint_tune_extra": 100}}
    with pytest.raises(ConfigError, match="constraint_tune_extra"):
        config_from_data(_grid(judged=judged))
    cfg = config_from_data({**_grid(judged=judged), "data": {**_grid()["data"], "train_size": 30}})
    assert cfg.systems["judged"].translate.constraint_tune_extra == 100


def test_12_thresholds_are_bounded_and_read_like_every_input(tmp_path, capsys):
    from mwemt.nmt.constraints import read_threshold

    record = {"format": "mwemt-constraint-threshold", "version": 1, "threshold": 0.25}
    gz = tmp_path / "threshold.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(record).encode()))
    assert read_threshold(gz) == 0.25
    src = _lines(tmp_path / "in.en", ["Anna thinks about the baby ."])
    base = ["translate", "-m", tmp_path / "no-model", "-i", src, "-o", tmp_path / "o.it", "--constraints",
            tmp_path / "t.jsonl", "--constraint-mode", "judged"]
    code, err = _run([*base, "--constraint-threshold", ""], capsys)
    assert code == 2 and "--constraint-threshold is empty" in err and "Is a directory" not in err, err
    code, err = _run([*base, "--constraint-threshold", "1e300"], capsys)
    assert code == 2 and "from -100 to 100" in err, err


@requires_nmt
@pytest.mark.nmt
def test_12_translate_checks_its_inputs_before_the_model_loads(model, tmp_path, capsys):
    unloadable = _unloadable(model, tmp_path)     # loading it fails: a check that comes first is never reached
    table = tmp_path / "t.jsonl"
    _table(table)
    src = _lines(tmp_path / "in.en", ["Anna thinks about the baby ."])
    ref2 = _lines(tmp_path / "two.it", ["uno .", "due ."])
    base = ["translate", "-m", unloadable, "-i", src, "-o", tmp_path / "o.it", "--constraints", table,
            "--constraint-mode", "judged"]
    code, err = _run([*base, "--constraint-tune", src, ref2], capsys)
    assert code == 2 and "2 reference lines for 1 source lines" in err, err
    code, err = _run([*base, "--constraint-tune", tmp_path / "missing.en", ref2], capsys)
    assert code == 2 and "missing.en: file not found" in err, err
    not_a_table = _lines(tmp_path / "bad.jsonl", ["{\"key\": 1}"])
    code, err = _run([*base[:-4], "--constraints", not_a_table, "--constraint-mode", "judged",
                      "--constraint-threshold", "0.5"], capsys)
    assert code == 2 and "bad.jsonl:1" in err, err
    # an input without a line to translate: no model is loaded, and the output is written
    empty = tmp_path / "empty.en"
    empty.write_text("")
    code, err = _run(["translate", "-m", unloadable, "-i", empty, "-o", tmp_path / "e.it", "-q"], capsys)
    assert code == 0 and "no line to translate" in err and "the model was not loaded" in err, err
    assert (tmp_path / "e.it").read_text() == ""
    assert "checkpoint" not in err


# ---------------------------------------------------------------- 13: judged output and the batch size


@pytest.mark.slow
@requires_nmt
@pytest.mark.nmt
def test_13_judged_decisions_do_not_depend_on_the_batch_size(model):
    from mwemt.nmt.constraints import ConstraintOptions, JudgedConstraints, constrained_translate
    from mwemt.nmt.translate import Translator
    from tests.test_methods_model import LINES, constraint_table

    tr = Translator.load(model)
    table = constraint_table()
    seen = {}
    for batch_size in (1, 2, 3, 64):
        first, judgements, _ = JudgedConstraints(tr, table, ConstraintOptions("judged", mwe_context="none")).judge(
            LINES, beam=4, batch_size=batch_size)
        seen[batch_size] = (first, [(j.line, [(o.forced, o.output, o.drop) for o in j.options]) for j in judgements])
    assert all(v == seen[1] for v in seen.values())
    drops = sorted(d for _, opts in seen[1][1] for _, _, d in opts)
    t = drops[len(drops) // 2]   # a threshold at an observed drop: the decision there is the delicate one
    outputs = {bs: constrained_translate(tr, LINES, table, ConstraintOptions("judged", mwe_context="none",
                                                                               threshold=t),
                                         beam=4, batch_size=bs) for bs in (1, 64)}
    assert outputs[1][0] == outputs[64][0]
    assert [j.accepted for j in outputs[1][1].judgements] == [j.accepted for j in outputs[64][1].judgements]


# ---------------------------------------------------------------- 14: wording


def test_14_wording_of_a_model_file_an_unwritable_publish_and_two_references(tmp_path, capsys):
    from mwemt.experiments.publish import check_publish_target
    from mwemt.fileio import refuse_unwritable

    src = _lines(tmp_path / "in.en", ["Hello ."])
    not_a_dir = _lines(tmp_path / "model.txt", ["I am a file"])
    code, err = _run(["translate", "-m", not_a_dir, "-i", src, "-o", tmp_path / "o.it"], capsys)
    assert code == 2 and "is a file, not a directory" in err and "not found" not in err, err
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            with pytest.raises(MwemtError) as publish:
                check_publish_target(ro / "pub", tmp_path / "run")
            with pytest.raises(MwemtError) as run_dir:
                refuse_unwritable(ro / "run", "--run-dir")
        finally:
            ro.chmod(0o755)
        wording = str(run_dir.value).split(": ", 1)[1]   # after the option and path
        assert str(publish.value).endswith(wording), (publish.value, run_dir.value)
    # --ref and the test set's references differ: say which metric reads which
    other = _lines(tmp_path / "other.it", ["x", "y", "z", "w"])
    code, err = _run(["score", "--hyp", EVAL / "hyp_a.it", "--ref", other, "--testset", EVAL / "testset.jsonl",
                      "--lang", "it", "--align", "none", "--metrics", "bleu,mwe"], capsys)
    assert code == 0 and "differ on 4 line(s)" in err and "bleu score against --ref" in err, err
    code, err = _run(["score", "--hyp", EVAL / "hyp_a.it", "--ref", EVAL / "ref.it", "--testset",
                      EVAL / "testset.jsonl", "--lang", "it", "--align", "none", "--metrics", "bleu,mwe"], capsys)
    assert code == 0 and "differ" not in err, err     # the same sentences, tokenized or not: no note


# ---------------------------------------------------------------- 15: bench/gpu.py


def _gpu_check(*args, out: Path) -> subprocess.CompletedProcess:
    """bench/gpu.py in its own process group, stopped (and failed) if it starts running its steps."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "gpu.py"), "--out", str(out), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"bench/gpu.py {' '.join(args)} ran its steps instead of refusing at once")
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_15_gpu_check_refuses_unknown_precisions_and_a_missing_gpu_at_once(tmp_path):
    r = _gpu_check("--device", "cpu", "--precisions", "fp99", out=tmp_path / "a")
    assert r.returncode == 2 and "fp99" in r.stderr, r.stderr
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --device cuda would run the check")
    r = _gpu_check("--small", out=tmp_path / "b")
    assert r.returncode == 2 and "sees no GPU" in r.stderr and "--device cpu" in r.stderr, r.stderr
