"""`mwemt run --executor slurm` against a real Slurm cluster (start one: `sudo scripts/slurm-local.sh up`).

A tiny grid (baseline and IOB, two epochs) run with local stage workers is the reference. The same grid
run as Slurm jobs must give the same scores, translations and model weights, even though the job of
one training is killed with SIGKILL on its way (the run reports it with its log and submits it again),
and must then resume locally with every stage cached (the stage keys do not depend on the executor).
Ctrl-C (SIGINT to `mwemt run`) leaves no job in the queue; a stage that fails for a bad input fails the
run with that stage's own error, word for word the error of a local run.

Without a cluster (no sbatch, or no answer from slurmctld or the accounting database) the Slurm tests
skip, unless MWEMT_REQUIRE_SLURM=1 (CI: .ci/run starts the cluster and sets it), where they fail.
The config tests at the end need no cluster.
"""

from __future__ import annotations

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
from mwemt.experiments.executors import EXECUTORS, SLURM_DEFAULT_JOBS, SlurmExecutor
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
                               "slurm.account=lab"])
    assert cfg.executor == "local"
    train, translate, corpus = (cfg.slurm.resources(k) for k in ("train", "translate", "corpus"))
    assert (train.partition, train.account, train.gpus, train.time, train.mem) == ("gpu", "lab", 1, 1440, "16G")
    assert (translate.partition, translate.cpus, translate.gpus, translate.time) == ("cpu", 8, 0, 120)
    assert (corpus.cpus, corpus.mem) == (2, "8G")
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
