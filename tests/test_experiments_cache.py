"""The stage cache: hits, misses, sharing between systems, and resume after a killed stage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mwemt.errors import MwemtError
from mwemt.experiments.cache import DONE, stage_key
from mwemt.experiments.runner import Runner


def upper(ctx):
    text = ctx.inputs["text"].read_text(encoding="utf-8")
    (ctx.out / "upper.txt").write_text(text.upper() + ctx.config.get("suffix", ""), encoding="utf-8")
    return {"text": "upper.txt"}


def count_words(ctx):
    n = len(ctx.inputs["text"].read_text(encoding="utf-8").split())
    (ctx.out / "count.txt").write_text(str(n), encoding="utf-8")
    return {"count": "count.txt"}


def pipeline(runner, src, suffix=""):
    a = runner.stage("upper", "sys", upper, inputs={"text": src}, config={"suffix": suffix})
    b = runner.stage("count", "sys", count_words, inputs={"text": a.output("text")})
    return a, b


def statuses(runner):
    return [(r.stage, r.status) for r in runner.records]


def test_second_run_is_all_cache_hits(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("take care of it", encoding="utf-8")
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r1:
        _, b1 = pipeline(r1, src)
    assert statuses(r1) == [("upper", "ran"), ("count", "ran")]
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r2:
        _, b2 = pipeline(r2, src)
    assert statuses(r2) == [("upper", "cached"), ("count", "cached")]
    assert b2.output("count").read_text() == "4"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "finished"
    assert [s["status"] for s in manifest["stages"]] == ["cached", "cached"]


def test_changed_input_reruns_exactly_what_depends_on_it(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("give up", encoding="utf-8")
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        pipeline(r, src)
    # a changed input file reruns both stages
    src.write_text("give up now", encoding="utf-8")
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        _, b = pipeline(r, src)
    assert statuses(r) == [("upper", "ran"), ("count", "ran")]
    assert b.output("count").read_text() == "3"
    # an upstream config change that changes its output reruns the downstream stage too
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        pipeline(r, src, suffix="!")
    assert statuses(r) == [("upper", "ran"), ("count", "ran")]
    # an upstream config change that leaves its output identical: downstream is keyed by content, so cached
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        a = r.stage("upper", "sys", upper, inputs={"text": src}, config={"suffix": "", "note": "x"})
        r.stage("count", "sys", count_words, inputs={"text": a.output("text")})
    assert statuses(r) == [("upper", "ran"), ("count", "cached")]
    # back to the first configuration: both are cache hits again
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        pipeline(r, src)
    assert statuses(r) == [("upper", "cached"), ("count", "cached")]


def test_identical_inputs_are_shared_between_systems(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("by the way", encoding="utf-8")
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        a = r.stage("upper", "baseline", upper, inputs={"text": src})
        b = r.stage("upper", "dictionary", upper, inputs={"text": src})
    assert [x.status for x in r.records] == ["ran", "shared"]
    assert a.directory == b.directory


def test_deleted_output_invalidates_entry(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("a lot of", encoding="utf-8")
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        a, _ = pipeline(r, src)
    a.output("text").unlink()
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        pipeline(r, src)
    assert statuses(r)[0] == ("upper", "ran")


def test_failed_stage_writes_no_done_and_reruns(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("ivory tower", encoding="utf-8")
    calls = []

    def flaky(ctx):
        calls.append(1)
        (ctx.out / "partial.txt").write_text("half", encoding="utf-8")
        if len(calls) == 1:
            raise RuntimeError("boom")
        (ctx.out / "ok.txt").write_text("ok", encoding="utf-8")
        return {"ok": "ok.txt"}

    with pytest.raises(RuntimeError), Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        a = r.stage("upper", "sys", upper, inputs={"text": src})
        r.stage("flaky", "sys", flaky, inputs={"text": a.output("text")})
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "failed"
    assert not list((tmp_path / "run" / "stages" / "flaky").rglob(DONE))
    with Runner(tmp_path / "run", log=open(os.devnull, "w")) as r:
        a = r.stage("upper", "sys", upper, inputs={"text": src})
        f = r.stage("flaky", "sys", flaky, inputs={"text": a.output("text")})
    assert statuses(r) == [("upper", "cached"), ("flaky", "ran")]
    assert f.output("ok").read_text() == "ok"


def test_lock_refuses_a_second_runner(tmp_path):
    with Runner(tmp_path / "run", log=open(os.devnull, "w")):
        with pytest.raises(MwemtError, match="another mwemt command"):
            Runner(tmp_path / "run", log=open(os.devnull, "w")).__enter__()


def test_key_depends_on_config_inputs_and_version():
    base = stage_key("train", {"lr": 1}, {"a": "x"}, "1")
    assert base == stage_key("train", {"lr": 1}, {"a": "x"}, "1")
    assert base != stage_key("train", {"lr": 2}, {"a": "x"}, "1")
    assert base != stage_key("train", {"lr": 1}, {"a": "y"}, "1")
    assert base != stage_key("train", {"lr": 1}, {"a": "x"}, "2")
    assert base != stage_key("translate", {"lr": 1}, {"a": "x"}, "1")


KILLABLE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from mwemt.experiments.runner import Runner

    def first(ctx):
        (ctx.out / "a.txt").write_text("first")
        return {"a": "a.txt"}

    def slow(ctx):
        (ctx.out / "started").write_text("1")
        if not (ctx.out / "checkpoint").exists():
            (ctx.out / "checkpoint").write_text("epoch 1")
            time.sleep(60)       # killed here on the first run
        (ctx.out / "b.txt").write_text("resumed from " + (ctx.out / "checkpoint").read_text())
        return {"b": "b.txt"}

    with Runner(sys.argv[1]) as r:
        a = r.stage("first", "sys", first)
        r.stage("slow", "sys", slow, inputs={"a": a.output("a")}, resumable=True)
""")


ROOT = Path(__file__).resolve().parents[1]


def test_resume_after_killed_stage(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = tmp_path / "pipe.py"
    script.write_text(KILLABLE, encoding="utf-8")
    run = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(script), str(run)], stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while not list(run.glob("stages/slow/sys/*/checkpoint")):
        assert proc.poll() is None and time.monotonic() < deadline, "stage never started"
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not list(run.glob("stages/slow/**/DONE"))
    assert list(run.glob("stages/first/**/DONE"))
    out = subprocess.run([sys.executable, str(script), str(run)], stderr=subprocess.PIPE, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert "first        sys              cached" in out.stderr
    assert "slow         sys              resuming" in out.stderr
    b = next(run.glob("stages/slow/sys/*/b.txt"))
    assert b.read_text() == "resumed from epoch 1"
