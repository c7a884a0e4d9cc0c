"""`mwemt run --executor slurm` against a real Slurm cluster (start one: `sudo scripts/slurm-local.sh up`).

A tiny grid (baseline and IOB, two epochs) run with local stage workers is the reference. The same grid
run as Slurm jobs must give the same scores, translations and model weights, even though the job of
one training is killed with SIGKILL on its way (the run reports it with its log and submits it again),
and must then resume locally with every stage cached (the stage keys do not depend on the executor).
Ctrl-C (SIGINT to `mwemt run`) leaves no job in the queue; a stage that fails for a bad input fails the
run with that stage's own error, word for word the error of a local run.

Resources: a stage left to the defaults gets what the partition has (no GPU on a node without GPU GRES,
no more cores than a node has), a request no node meets stops the run before its first job, naming the
setting, and a run leaves none of its jobs in the queue however it ends.

Without a cluster (no sbatch, or no answer from slurmctld or the accounting database) the Slurm tests
skip, unless MWEMT_REQUIRE_SLURM=1 (CI: .ci/run starts the cluster and sets it), where they fail.
The config and fitting tests at the end need no cluster.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mwemt.errors import MwemtError
from mwemt.experiments.config import SLURM_STAGES, load_config
from mwemt.experiments.executors import (
    EXECUTORS,
    SLURM_DEFAULT_JOBS,
    SLURM_LOGS,
    SlurmAsk,
    SlurmExecutor,
    SlurmNode,
    SlurmRequest,
    cluster_nodes,
    fit,
    gres_gpus,
    mem_mb,
    parse_sinfo,
    time_minutes,
)
from mwemt.schema import ConfigError
from tests.conftest import requires_nmt
from tests.test_experiments_faults import TINY, assert_same_weights, outcome
from tests.test_experiments_processes import ENV, ROOT, wait_until

CONFIG = ROOT / "mwemt" / "data" / "demo" / "demo.yaml"
SYSTEMS = "baseline,iob"
# the local cluster's node has no GPU and few cores: one core and little memory per job
SLURM = ["slurm.train.gpus=0", "slurm.cpus=1", "slurm.train.cpus=1", "slurm.mem=1G", "slurm.train.mem=2G"]
REQUIRED = os.environ.get("MWEMT_REQUIRE_SLURM") == "1"


def slurm_problem() -> str | None:
    """Why there is no usable Slurm cluster here, or None."""
    try:
        import submitit  # noqa: F401
    except ImportError:
        return "submitit is not installed (pip install 'mwemt[slurm]')"
    for program in ("sbatch", "squeue", "scancel", "sacct", "sinfo"):
        if shutil.which(program) is None:
            return f"no {program} on PATH"
    checks = [(["sinfo", "-h", "-o", "%T"], "slurmctld"), (["sacct", "-n", "-X", "-S", "now-1minute"], "accounting")]
    for cmd, what in checks:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{what} does not answer: {exc}"
        if out.returncode != 0:
            return f"{what} does not answer: {out.stderr.strip()[:300]}"
        if what == "slurmctld" and not re.search(r"idle|mixed|alloc", out.stdout):
            return f"no node is up ({out.stdout.strip()})"
    return None


@pytest.fixture(scope="module")
def slurm() -> None:
    problem = slurm_problem()
    if problem is not None:
        message = f"no Slurm cluster: {problem}; start one with `sudo scripts/slurm-local.sh up`"
        if REQUIRED:
            pytest.fail(message + " (MWEMT_REQUIRE_SLURM=1)")
        pytest.skip(message)


def command(run_dir: Path, executor: str, *extra: str, systems: str = SYSTEMS) -> list[str]:
    args = [sys.executable, "-m", "mwemt", "run", str(CONFIG), "--systems", systems, "--run-dir", str(run_dir),
            "-q", "--no-plot", "--executor", executor]
    for o in TINY + (SLURM if executor == "slurm" else []) + list(extra):
        args += ["--set", o]
    return args


def run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=1200)


class Watched:
    """A command whose stderr lines are collected as they come."""

    def __init__(self, args: list[str]):
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT,
                                     env=ENV)
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def find(self, pattern: str) -> re.Match | None:
        return next((m for m in map(re.compile(pattern).search, list(self.lines)) if m), None)

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        wait_until(lambda: self.find(pattern) or self.proc.poll() is not None, timeout, f"no line {pattern!r}")
        found = self.find(pattern)
        assert found, f"ended ({self.proc.poll()}) without {pattern!r}:\n" + "".join(self.lines)[-3000:]
        return found

    def finish(self, timeout: float = 1200) -> int:
        code = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=10)
        return code

    @property
    def text(self) -> str:
        return "".join(self.lines)


def job_processes(job_id: str) -> list[int]:
    """The submitit processes running Slurm job ``job_id`` (the stage runs in them)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"SLURM_JOB_ID={job_id}".encode() in env and b"submitit.core._submit" in cmd:
            found.append(int(entry.name))
    return found


def queued() -> set[str]:
    out = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, timeout=60, check=True)
    return set(out.stdout.split())


def statuses(run_dir: Path) -> dict[tuple[str, str], str]:
    m = json.loads((run_dir / "manifest.json").read_text())
    return {(s["stage"], s["system"]): s["status"] for s in m["stages"]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    run_dir = tmp_path_factory.mktemp("slurm") / "local"
    out = run(command(run_dir, "local", "train.max_epoch=2"))
    assert out.returncode == 0, out.stderr[-3000:]
    return run_dir


@pytest.mark.slow
@pytest.mark.nmt
@requires_nmt
def test_a_slurm_run_gives_the_local_results_though_a_training_job_is_killed(slurm, reference, tmp_path):
    run_dir = tmp_path / "slurm"
    w = Watched(command(run_dir, "slurm", "train.max_epoch=2"))
    running = w.wait_for(r"train +(\S+) +job (\d+) RUNNING", 900)
    system, job = running.group(1), running.group(2)
    wait_until(lambda: job_processes(job) or w.proc.poll() is not None, 60, f"no process of job {job}")
    killed = job_processes(job)
    assert killed, f"job {job} ended before it could be killed:\n{w.text[-3000:]}"
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    code = w.finish()
    assert code == 0, w.text[-4000:]
    log = run_dir / "slurm" / job / f"{job}_0_log.out"
    assert re.search(rf"train +{re.escape(system)} +job {job} died without a result \((FAILED|CANCELLED)[^)]*\); "
                     rf"log {re.escape(str(log))}; submitting it again", w.text), w.text[-4000:]
    assert log.is_file()
    assert re.search(rf"train +{re.escape(system)} +submitted again: job \d+ \(attempt 2 of 3\)", w.text)
    assert f"(executor slurm, at most {SLURM_DEFAULT_JOBS} jobs at once)" in w.text

    # the same numbers, translations, intermediate files and weights as the local run
    assert outcome(run_dir) == outcome(reference)
    assert json.loads((run_dir / "results.json").read_text())["scores"] == \
        json.loads((reference / "results.json").read_text())["scores"]
    assert_same_weights(reference, run_dir)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["executor"] == "slurm"
    assert set(statuses(run_dir).values()) == {"ran"}
    done = json.loads(next(run_dir.glob(f"stages/train/{system}/*/DONE")).read_text())
    assert done["slurm"]["job"] not in ("", job)     # recorded by the job that finished it
    unfinished = [d for d in run_dir.glob("stages/*/*/*") if d.is_dir() and not (d / "DONE").exists()]
    assert not unfinished
    assert not {job} & queued()

    # the stage keys are the executor's business of no one: the grid resumes locally, all cached
    again = run(command(run_dir, "local", "train.max_epoch=2"))
    assert again.returncode == 0, again.stderr[-3000:]
    assert set(statuses(run_dir).values()) == {"cached"}
    assert outcome(run_dir) == outcome(reference)


@pytest.mark.slow
@pytest.mark.nmt
@requires_nmt
def test_ctrl_c_cancels_the_submitted_jobs(slurm, tmp_path):
    run_dir = tmp_path / "interrupted"
    w = Watched(command(run_dir, "slurm", "train.max_epoch=2"))
    # the first job seen running, whichever stage: a short one (annotate) can go from submitted to
    # done between two looks at the queue; the grid still has most of its stages ahead of it then
    w.wait_for(r"job \d+ RUNNING", 600)
    w.proc.send_signal(signal.SIGINT)
    code = w.finish(timeout=120)
    jobs = set(re.findall(r"submitted(?: again)?: job (\d+)", w.text))
    assert code == 130, w.text[-3000:]
    assert jobs and not jobs & queued(), (jobs, queued())
    # what was cancelled has no DONE: the next run (here: local) starts it again and finishes the grid
    again = run(command(run_dir, "local", "train.max_epoch=2"))
    assert again.returncode == 0, again.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.nmt
@requires_nmt
def test_a_stage_that_fails_for_a_bad_input_fails_the_run_with_its_own_error(slurm, tmp_path):
    bad = tmp_path / "bad"
    (tmp_path / "bad.en").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (tmp_path / "bad.it").write_text("uno\ndue\n", encoding="utf-8")
    errors = {}
    for executor in ("local", "slurm"):
        out = run(command(tmp_path / executor, executor, f"data.train={bad}", "slurm.retries=0"))
        assert out.returncode == 2, out.stderr[-3000:]
        errors[executor] = out.stderr.strip().splitlines()[-1]
        assert "submitit" not in out.stderr and "FailedJobError" not in out.stderr
    assert errors["slurm"] == errors["local"]
    assert "parallel files are misaligned" in errors["slurm"] and "bad.en" in errors["slurm"], errors
    assert not list((tmp_path / "slurm").glob("stages/corpus/*/*/DONE"))


def sleepy_stage(ctx) -> dict:
    """A stage whose first attempt waits to be killed (its pid in ``params['marker']``); later ones finish."""
    marker = Path(ctx.params["marker"])
    first = not marker.exists()
    marker.write_text(str(os.getpid()), encoding="utf-8")
    if first:
        time.sleep(300)
    (ctx.out / "out.txt").write_text("done", encoding="utf-8")
    return {"out": "out.txt"}


@pytest.mark.slow
def test_without_an_accounting_database_a_killed_job_still_fails_after_the_grace_period(slurm, tmp_path,
                                                                                        monkeypatch):
    """submitit alone would wait for ever here: sacct fails, so it cannot tell the job died."""
    from mwemt.experiments.runner import Runner

    pid_file = Path("/var/lib/mwemt-slurm/run/slurmdbd.pid")   # the cluster of scripts/slurm-local.sh
    if os.geteuid() != 0 or not pid_file.is_file():
        pytest.skip("stops and restarts the accounting daemon of scripts/slurm-local.sh's cluster (root)")
    # the job imports this module (as pytest named it: tests.test_slurm or test_slurm)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), ENV["PYTHONPATH"]]))
    settings = load_config(CONFIG, ["slurm.cpus=1", "slurm.mem=1G", "slurm.grace=3", "slurm.retries=1"]).slurm
    marker = tmp_path / "pid"
    os.kill(int(pid_file.read_text()), signal.SIGTERM)
    try:
        wait_until(lambda: subprocess.run(["sacct", "-n", "-X"], capture_output=True).returncode != 0, 60,
                   "sacct still answers")

        def kill_first_attempt() -> None:
            wait_until(marker.exists, 120, "the stage never started")
            os.kill(int(marker.read_text()), signal.SIGKILL)

        killer = threading.Thread(target=kill_first_attempt, daemon=True)
        killer.start()
        log = io.StringIO()
        with Runner(tmp_path / "run", jobs=2, executor="slurm", executor_settings=settings, log=log,
                    progress=False) as runner:
            entry = runner.stage("sleepy", "sys", sleepy_stage, params={"marker": str(marker)})
        killer.join(timeout=10)
        text = log.getvalue()
        assert entry.output("out").read_text() == "done", text
        assert "died without a result (state unknown: no accounting database (sacct))" in text, text
        assert re.search(r"submitted again: job \d+ \(attempt 2 of 2\)", text), text
    finally:
        subprocess.run(["bash", str(ROOT / "scripts" / "slurm-local.sh"), "up"], capture_output=True, timeout=300)
    assert slurm_problem() is None


# ---------------------------------------------------------------- no cluster needed

def test_the_slurm_section_gives_each_kind_of_stage_its_resources():
    cfg = load_config(CONFIG, ["slurm.partition=cpu", "slurm.train.partition=gpu", "slurm.translate.cpus=8",
                               "slurm.account=lab", "slurm.train.gpus=2"])
    assert cfg.executor == "local"
    train, translate, corpus = (cfg.slurm.request(k) for k in ("train", "translate", "corpus"))
    # unset: None with the default the partition gives as far as its nodes have it; set: kept, with its key
    assert (train.partition, train.account) == (SlurmAsk("slurm.train.partition", "gpu"), "lab")
    assert (train.gpus, train.time, train.cpus, train.mem) == (
        SlurmAsk("slurm.train.gpus", 2, 1), SlurmAsk("slurm.train.time", None, 1440),
        SlurmAsk("slurm.train.cpus", None, 4), SlurmAsk("slurm.train.mem", None, "16G"))
    assert (translate.partition, translate.cpus, translate.gpus, translate.time) == (
        SlurmAsk("slurm.partition", "cpu"), SlurmAsk("slurm.translate.cpus", 8), SlurmAsk("slurm.gpus", None, 0),
        SlurmAsk("slurm.time", None, 120))
    assert (corpus.cpus, corpus.mem) == (SlurmAsk("slurm.cpus", None, 2), SlurmAsk("slurm.mem", None, "8G"))
    assert cfg.slurm.request("any other stage").cpus == SlurmAsk("slurm.cpus", None, 2)
    assert set(SLURM_STAGES) >= {"corpus", "train", "translate", "score", "report"}
    assert set(EXECUTORS) == {"local", "slurm"} and EXECUTORS["slurm"] is SlurmExecutor


@pytest.mark.parametrize("override, message", [
    ("executor=cluster", "executor"),
    ("slurm.train.gpu=1", "did you mean `gpus`"),
    ("slurm.mem=lots", "not an amount of memory"),
    ("slurm.train.time=0", "at least 1"),
])
def test_a_wrong_slurm_setting_is_refused_with_its_place(override, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(CONFIG, [override])


def test_no_slurm_no_slurm_executor(tmp_path, monkeypatch):
    pytest.importorskip("submitit")
    monkeypatch.setenv("PATH", str(tmp_path))     # no sbatch here
    with pytest.raises(MwemtError, match="sbatch"):
        SlurmExecutor(1, None, tmp_path)


# ---------------------------------------------------------------- resources: what the partition gives

# sinfo --Node's lines (SINFO's format) of a cluster with a default CPU partition and a GPU partition
SINFO_LINES = """\
cpu*|c1|32|128000|(null)|2-00:00:00
cpu*|c2|16|64000|(null)|2-00:00:00
gpu|g1|8|64000|gpu:a100:2(S:0-1)|1-00:00:00
gpu|g2|64|512000|gpu:4,mps:400|1-00:00:00
"""
SMALL = "debug*|vm|2|4000|(null)|infinite\n"     # the local cluster of a small machine


def fitted(lines: str, *overrides: str, stage: str = "train"):
    return fit(load_config(CONFIG, list(overrides)).slurm.request(stage), parse_sinfo(lines))


def test_sinfo_lines_give_each_partitions_nodes_and_limits():
    c1, c2, g1, g2 = parse_sinfo(SINFO_LINES)
    assert (c1.partition, c1.default, c1.cpus, c1.mem_mb, c1.gpus, c1.time_limit) == ("cpu", True, 32, 128000, 0, 2880)
    assert (g1.partition, g1.default, g1.gpus, g1.time_limit) == ("gpu", False, 2, 1440)
    assert g2.gpus == 4
    assert [gres_gpus(t) for t in ("(null)", "gpu", "gpu:a100:2(S:0-1),gpu:v100:1", "mps:200", "gpu:tesla:4(IDX:0-3)")] \
        == [0, 1, 3, 0, 4]
    assert [time_minutes(t) for t in ("infinite", "UNLIMITED", "30", "30:59", "2:00:00", "1-00:00:00", "1-12",
                                      "3-01:30")] == [None, None, 30, 30, 120, 1440, 2160, 4410]
    assert [mem_mb(t) for t in ("8G", "500M", "2048", "1T", "1536K")] == [8192, 500, 2048, 1048576, 2]
    with pytest.raises(MwemtError, match="sinfo's line 1"):
        parse_sinfo("debug*|vm|two|4000|(null)|infinite\n")


def test_unset_resources_are_what_the_partition_gives():
    train = fitted(SINFO_LINES)    # the default partition has no GPU: a training asks for none
    assert (train.partition, train.gpus, train.cpus, train.mem, train.time) == ("cpu", 0, 4, "16G", 1440)
    train = fitted(SINFO_LINES, "slurm.train.partition=gpu")     # one GPU where there are some
    assert (train.partition, train.gpus, train.cpus, train.mem) == ("gpu", 1, 4, "16G")
    train = fitted(SMALL)          # no more than the node has
    assert (train.partition, train.gpus, train.cpus, train.mem, train.time) == ("debug", 0, 2, "4000M", 1440)
    corpus = fitted(SMALL, stage="corpus")
    assert (corpus.gpus, corpus.cpus, corpus.mem, corpus.time) == (0, 2, "4000M", 120)
    # a partition's time limit caps the default; explicit values are kept as they are
    assert fitted(SINFO_LINES, "slurm.train.partition=gpu", "slurm.train.time=60").time == 60
    assert fitted(SINFO_LINES, "slurm.partition=gpu", stage="score").time == 120
    kept = fitted(SINFO_LINES, "slurm.train.partition=gpu", "slurm.train.gpus=3", "slurm.train.cpus=48",
                  "slurm.train.mem=100G")
    assert (kept.gpus, kept.cpus, kept.mem) == (3, 48, "100G")


@pytest.mark.parametrize("lines, stage, overrides, message", [
    (SMALL, "train", ["slurm.train.cpus=4"], "slurm.train.cpus is 4, but the largest node of partition debug has 2 CPUs"),
    (SMALL, "train", ["slurm.train.gpus=1"],
     "slurm.train.gpus is 1, but no node of partition debug has a GPU (GRES gpu)"),
    (SMALL, "score", ["slurm.mem=8G"], "slurm.mem is 8G, but the largest node of partition debug has 4000M"),
    (SMALL, "score", ["slurm.partition=gpu"],
     "slurm.partition is gpu, but the cluster has no partition gpu with nodes (sinfo lists debug)"),
    (SINFO_LINES, "train", ["slurm.train.partition=gpu", "slurm.train.time=2000"],
     "slurm.train.time is 2000 minutes, but partition gpu allows at most 1440"),
    (SINFO_LINES, "train", ["slurm.train.partition=gpu", "slurm.train.gpus=4", "slurm.train.cpus=65"],
     "slurm.train.cpus is 65, but the largest node of partition gpu with 4 GPUs has 64 CPUs"),
    (SINFO_LINES, "train", ["slurm.train.partition=gpu", "slurm.train.cpus=16", "slurm.train.mem=600G"],
     "slurm.train.mem is 600G, but the largest node of partition gpu with 16 CPUs and 1 GPU has 512000M"),
    (SINFO_LINES, "translate", ["slurm.translate.gpus=1"],
     "slurm.translate.gpus is 1, but no node of partition cpu has a GPU"),
])
def test_a_request_no_node_meets_is_refused_naming_its_setting(lines, stage, overrides, message):
    with pytest.raises(MwemtError, match=re.escape(message)):
        fitted(lines, *overrides, stage=stage)


def test_a_cluster_without_a_default_partition_needs_one_named():
    with pytest.raises(MwemtError, match="slurm.partition is not set and the cluster has no default partition: "
                                         "set it to one of gpu"):
        fitted("gpu|g1|8|64000|gpu:2|infinite\n")
    assert fitted("gpu|g1|8|64000|gpu:2|infinite\n", "slurm.partition=gpu").gpus == 1
    request = SlurmRequest(SlurmAsk("p", "gpu"), None, SlurmAsk("t", None, 10), SlurmAsk("c", None, 99),
                           SlurmAsk("m", None, "1G"), SlurmAsk("g", None, 0))
    assert fit(request, [SlurmNode("g1", "gpu", False, 8, 900, 2, None)]).mem == "900M"


def the_partition() -> list[SlurmNode]:
    return [n for n in cluster_nodes() if n.default]


@pytest.mark.slow
def test_a_request_the_cluster_cannot_meet_stops_the_run_before_any_job(slurm, tmp_path):
    """On this cluster, through `mwemt run`: exit 2 with the setting to change, and not one job submitted."""
    nodes = the_partition()
    partition, most = nodes[0].partition, max(n.cpus for n in nodes)
    cases = [(f"slurm.train.cpus={most + 1}",
              f"slurm.train.cpus is {most + 1}, but the largest node of partition {partition} has {most} CPUs")]
    if not any(n.gpus for n in nodes):
        cases.append(("slurm.train.gpus=1", f"slurm.train.gpus is 1, but no node of partition {partition} has a GPU"))
    for k, (override, message) in enumerate(cases):
        run_dir = tmp_path / f"run{k}"
        args = [sys.executable, "-m", "mwemt", "run", str(CONFIG), "--systems", SYSTEMS, "--run-dir", str(run_dir),
                "-q", "--no-plot", "--executor", "slurm", "--set", override]
        out = run(args)
        assert out.returncode == 2, out.stderr[-3000:]
        assert message in out.stderr.strip().splitlines()[-1], out.stderr[-3000:]
        assert "submitted" not in out.stderr and not (run_dir / SLURM_LOGS).exists(), out.stderr[-3000:]
        assert not list(run_dir.glob("stages/*/*/*"))       # no stage started


def given_stage(ctx) -> dict:
    """What the Slurm job running this stage was given."""
    keys = ("SLURM_JOB_PARTITION", "SLURM_CPUS_PER_TASK", "SLURM_MEM_PER_NODE", "SLURM_GPUS_PER_NODE")
    (ctx.out / "env.json").write_text(json.dumps({k: os.environ.get(k, "") for k in keys}), encoding="utf-8")
    if ctx.params.get("fail"):
        raise MwemtError("the stage failed on its own")
    return {"env": "env.json"}


@pytest.mark.slow
def test_a_training_left_to_the_defaults_runs_with_what_the_partition_has(slurm, tmp_path, monkeypatch):
    """The defaults of `slurm.train` on this cluster: its GPU only where it has one, at most a node's cores."""
    from mwemt.experiments.runner import Runner

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), ENV["PYTHONPATH"]]))
    nodes = the_partition()
    gpus = 1 if any(n.gpus for n in nodes) else 0
    cpus = min(4, max(n.cpus for n in nodes if n.gpus >= gpus))
    mem = min(16384, max(n.mem_mb for n in nodes if n.gpus >= gpus and n.cpus >= cpus))
    log = io.StringIO()
    with Runner(tmp_path / "run", jobs=1, executor="slurm", executor_settings=load_config(CONFIG, []).slurm,
                log=log, progress=False) as runner:
        entry = runner.stage("train", "sys", given_stage)
    given = json.loads(entry.output("env").read_text())
    assert given["SLURM_JOB_PARTITION"] == nodes[0].partition
    assert (given["SLURM_CPUS_PER_TASK"], given["SLURM_MEM_PER_NODE"]) == (str(cpus), str(mem)), log.getvalue()
    assert given["SLURM_GPUS_PER_NODE"] == (str(gpus) if gpus else ""), given
    shown = f"{nodes[0].partition}: {cpus} CPU{'s' if cpus > 1 else ''}, {'16G' if mem == 16384 else f'{mem}M'}"
    assert re.search(rf"train +sys +submitted: job \d+ \({re.escape(shown)}, "
                     rf"{'1 GPU' if gpus else 'no GPU'}, 1440 min\)", log.getvalue()), log.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("ending", ["finished", "failed"])
def test_a_run_leaves_none_of_its_jobs_in_the_queue(slurm, tmp_path, monkeypatch, ending):
    """Each job here stays in the queue two minutes after it gave its result (a trap on the job script's exit,
    as an epilogue might): however the run ends, it returns only when Slurm has let all of them go."""
    from mwemt.experiments.runner import Runner

    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT / "tests"), ENV["PYTHONPATH"]]))
    settings = load_config(CONFIG, ["slurm.cpus=1", "slurm.mem=1G"]).slurm
    settings = dataclasses.replace(settings, setup=("trap 'sleep 120' EXIT",))
    log = io.StringIO()
    with contextlib.ExitStack() as stack:
        if ending == "failed":
            stack.enter_context(pytest.raises(MwemtError, match="the stage failed on its own"))
        with Runner(tmp_path / "run", jobs=1, executor="slurm", executor_settings=settings, log=log,
                    progress=False) as runner:
            runner.stage("first", "sys", given_stage)
            runner.stage("second", "sys", given_stage, params={"fail": ending == "failed"})
    jobs = set(re.findall(r"submitted: job (\d+)", log.getvalue()))
    assert len(jobs) == 2, log.getvalue()
    assert not jobs & queued(), (jobs, queued())
