"""The GPU check: what a person with an NVIDIA GPU runs to see that mwemt's main job works there.

    python bench/gpu.py [--out DIR] [--device cuda] [--small] [--paper-big] [--precisions fp32,bf16]

Without a GPU, ``--device cuda`` (the default) stops at once with exit status 2; unknown ``--precisions``
are refused (exit 2) before any step.

Steps, each a real command, each reported PASS or FAIL with its wall time:

1. ``demo``: `mwemt demo` with ``train.device`` set to ``--device`` (the README's main job: five systems
   trained, every test translated, scored and compared).
2. ``hints model``: `mwemt run configs/demo.yaml` for one more system of the hint encoding, in the same
   run directory (the demo's stages are reused): what the next step needs.
3. ``translate --constraints`` / ``translate --hint-table``: `mwemt translate --device DEVICE` with the
   run's MWE translation table, on the baseline and on the hint model.
4. ``decode speed``: source words per second of the baseline model on the demo's test set, for each
   decoding precision on ``--device`` and fp32 on the CPU, measured side by side in this run (the model
   loaded once per setting, one warm-up pass, then the best of three passes).
5. with ``--paper-big`` (needs ../shared/data): one epoch of configs/paper-big.yaml's baseline for each
   training precision (fp32, bf16 autocast, fairseq's --fp16): seconds per epoch, fairseq's words per
   second and the validation loss against fp32's. This is the measurement that ``train.precision: auto``
   on a GPU waits for (docs/nmt.md).

It exits 1 when a step failed. ``--device cpu`` rehearses the whole check on a machine without a GPU.
To bring mwemt to a GPU machine without network, see docs/nmt.md ("Training on a GPU").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "mwemt" / "data" / "demo"
SMALL = ["data.train_size=300", "train.max_epoch=2", "tests.general.max_items=40", "tests.mwe.max_items=40",
         "score.bootstrap=100"]
HINTS = "systems.hints-gpu-check={encoding: hints}"
DECODE_SPEED = r"""
import json, sys, time
from mwemt.nmt.translate import Translator
model, device, precision, src = sys.argv[1:5]
lines = open(src, encoding="utf-8").read().splitlines()
tr = Translator.load(model, device=device, precision=precision, threads=0)
tr.translate(lines, beam=5, batch_size=64, progress=False)       # warm-up: kernels, caches
times = []
for _ in range(3):
    t0 = time.perf_counter()
    tr.translate(lines, beam=5, batch_size=64, progress=False)
    if device == "cuda":
        import torch
        torch.cuda.synchronize()
    times.append(time.perf_counter() - t0)
words = sum(len(line.split()) for line in lines)
print(json.dumps({"words": words, "seconds": min(times)}))
"""


class Check:
    def __init__(self, out: Path):
        self.out = out
        self.rows: list[tuple[str, str, float, str]] = []

    def run(self, name: str, args: list[str], *, expect: Path | None = None) -> bool:
        """One step: ``args`` (a command) run in the repository; PASS when it exits 0 (and ``expect`` exists)."""
        log = self.out / f"{name.replace(' ', '-').replace('/', '-')}.log"
        print(f"--- {name}: {' '.join(args)}", flush=True)
        t0 = time.monotonic()
        with open(log, "w", encoding="utf-8") as fh:
            code = subprocess.run(args, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, env=_env()).returncode
        wall = time.monotonic() - t0
        ok = code == 0 and (expect is None or expect.exists())
        why = "" if ok else (f"exit {code}" if code else f"{expect} missing") + f"; see {log}"
        self.rows.append((name, "PASS" if ok else "FAIL", wall, why))
        print(f"    {'PASS' if ok else 'FAIL'} in {wall:.1f} s {why}", flush=True)
        return ok

    def note(self, name: str, ok: bool, wall: float, detail: str) -> None:
        self.rows.append((name, "PASS" if ok else "FAIL", wall, detail))
        print(f"--- {name}\n    {'PASS' if ok else 'FAIL'} in {wall:.1f} s {detail}", flush=True)

    def report(self) -> bool:
        print("\nstep                              result   wall s  detail")
        for name, res, wall, why in self.rows:
            print(f"{name:<33} {res:<6} {wall:8.1f}  {why}")
        return all(r[1] == "PASS" for r in self.rows)


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}


def _mwemt(*args: str) -> list[str]:
    return [sys.executable, "-m", "mwemt", *args]


def _sets(values: list[str]) -> list[str]:
    return [a for v in values for a in ("--set", v)]


def stage_output(run_dir: Path, stage: str, system: str, output: str) -> Path | None:
    """An output of a stage the run's manifest lists (the newest run of it)."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    for s in manifest["stages"]:
        if s["stage"] == stage and s["system"] == system:
            done = json.loads((run_dir / s["directory"] / "DONE").read_text(encoding="utf-8"))
            return run_dir / s["directory"] / done["outputs"][output]["path"]
    return None


def decode_speed(check: Check, model: Path, device: str, precision: str) -> float | None:
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", DECODE_SPEED, str(model), device, precision, str(DEMO / "test.en")],
                         cwd=ROOT, capture_output=True, text=True, env=_env())
    wall = time.monotonic() - t0
    if out.returncode != 0:
        check.note(f"decode {device} {precision}", False, wall, out.stderr.strip().splitlines()[-1][:120]
                   if out.stderr.strip() else f"exit {out.returncode}")
        return None
    r = json.loads(out.stdout.strip().splitlines()[-1])
    wps = r["words"] / r["seconds"]
    check.note(f"decode {device} {precision}", True, wall, f"{wps:,.0f} words/s ({r['words']} words, best of 3)")
    return wps


def epoch_loss(summary: dict) -> float | None:
    """The last validation loss of a train stage's summary. Not ``summary["best"]``: a config that stops on
    BLEU (paper-big does) keeps the best row's valid_bleu there, not its loss."""
    return next((v["valid_loss"] for v in reversed(summary.get("validations") or [])
                 if v.get("valid_loss") is not None), None)


def paper_big_epoch(check: Check, out: Path, device: str, chosen: list[str] | None = None) -> None:
    """One epoch of paper-big's baseline per training precision (fairseq's own --fp16 through extra_args)."""
    variants = {"fp32": ["train.precision=fp32"], "bf16": ["train.precision=bf16"],
                "fp16": ["train.precision=fp32", "train.extra_args=[--fp16]"]}
    variants = {k: v for k, v in variants.items() if chosen is None or k in chosen}
    run_dir = out / "paper-big"
    losses: dict[str, float] = {}
    for name, sets in variants.items():
        ok = check.run(f"paper-big epoch {name}",
                       _mwemt("run", "configs/paper-big.yaml", "--run-dir", str(run_dir), "--systems", "baseline",
                              "--no-plot", "-q", *_sets([f"train.device={device}", "train.max_epoch=1", *sets])))
        summary = stage_output(run_dir, "train", "baseline", "summary") if ok else None
        if summary is not None:
            t = json.loads(summary.read_text(encoding="utf-8"))
            loss = epoch_loss(t)
            detail = f"{t['wall_seconds']:.0f} s training"
            if loss is None:
                check.rows[-1] = (*check.rows[-1][:3], detail + ", no validation loss in the log")
                print(f"    {detail}, no validation loss in the log", flush=True)
                continue
            losses[name] = loss
            detail += f", valid loss {loss:.3f}"
            if "fp32" in losses and name != "fp32":
                detail += f" ({100 * (losses[name] / losses['fp32'] - 1):+.1f}% vs fp32)"
            check.rows[-1] = (*check.rows[-1][:3], detail)
            print(f"    {detail}", flush=True)


STEPS = ("demo", "decode", "paper-big")
TRAIN_PRECISIONS = ("fp32", "bf16", "fp16")


def _choices(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    chosen = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in allowed]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of {what} ({', '.join(allowed)}), "
                                         f"got {text!r}")
    return list(dict.fromkeys(chosen))


def steps(text: str) -> list[str]:
    """--only: a comma-separated list of STEPS."""
    return _choices(text, STEPS, "steps")


def train_precisions(text: str) -> list[str]:
    """--paper-big-precisions: a comma-separated list of TRAIN_PRECISIONS."""
    return _choices(text, TRAIN_PRECISIONS, "training precisions")


def precisions(text: str) -> list[str]:
    """--precisions: a comma-separated list of `mwemt.nmt.translate.DECODE_PRECISIONS`."""
    from mwemt.nmt.translate import DECODE_PRECISIONS

    return _choices(text, tuple(DECODE_PRECISIONS), "decoding precisions")


def torch_probe() -> dict:
    """torch's version, its CUDA and the GPU it sees (None: none), asked in a fresh interpreter."""
    code = ("import json, torch; ok = torch.cuda.is_available(); print(json.dumps({'torch': torch.__version__, "
            "'cuda': torch.version.cuda, 'gpu': torch.cuda.get_device_name(0) if ok else None}))")
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    if probe.returncode != 0:
        return {"error": (probe.stderr.strip().splitlines() or [f"exit {probe.returncode}"])[-1]}
    return json.loads(probe.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="keep every run and log here (default: a new temporary directory)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: rehearse without a GPU")
    ap.add_argument("--small", action="store_true", help="a smaller demo (300 pairs, 2 epochs, 40 test lines)")
    ap.add_argument("--paper-big", action="store_true", help="also one epoch of paper-big's baseline per precision")
    ap.add_argument("--precisions", default="fp32,bf16", type=precisions,
                    help="decoding precisions to time on --device (fp32, bf16, int8; int8 is CPU only)")
    ap.add_argument("--only", type=steps, help="run only these steps: demo (the demo, the hints model and both "
                    "translate checks), decode (needs the demo step or --decode-model), paper-big (with --paper-big)")
    ap.add_argument("--decode-model", metavar="DIR", help="time decoding with this model directory (an "
                    "`mwemt train` output) instead of the demo's baseline")
    ap.add_argument("--paper-big-precisions", type=train_precisions, default=list(TRAIN_PRECISIONS),
                    help="training precisions of the paper-big epochs (default: fp32,bf16,fp16)")
    args = ap.parse_args(argv)
    if args.decode_model and not (Path(args.decode_model) / "checkpoints").is_dir():
        ap.error(f"argument --decode-model: {args.decode_model} is not a model directory (no checkpoints/ in it)")
    if args.device == "cuda" and "int8" in args.precisions:
        ap.error("argument --precisions: int8 decoding runs on the CPU only: time it with --device cpu")
    info = torch_probe()
    if "error" in info:
        print(f"bench/gpu.py: error: torch cannot be imported ({info['error']}); install mwemt's NMT extras first",
              file=sys.stderr)
        return 2
    if args.device == "cuda" and not info["gpu"]:   # every step would fail, each in its own log: say it once, now
        print(f"bench/gpu.py: error: --device cuda, but torch {info['torch']} sees no GPU (CUDA "
              f"{info['cuda'] or 'not built in'}): run this on a machine with an NVIDIA GPU and its driver, or "
              "rehearse the check with --device cpu", file=sys.stderr)
        return 2
    out = Path(args.out or tempfile.mkdtemp(prefix="mwemt-gpu-check-")).absolute()
    out.mkdir(parents=True, exist_ok=True)
    print(f"torch, CUDA, GPU: {info['torch']} {info['cuda']} {info['gpu'] or 'none'}; Python "
          f"{sys.version.split()[0]}; output in {out}")
    check = Check(out)
    small = SMALL if args.small else []
    demo_dir = out / "demo"
    device_set = [f"train.device={args.device}"]
    chosen_steps = args.only or STEPS
    baseline = Path(args.decode_model).absolute() if args.decode_model else None
    if "demo" in chosen_steps:
        check.run("demo", _mwemt("demo", "--run-dir", str(demo_dir), "-q", *_sets(device_set + small)),
                  expect=demo_dir / "results.md")
        if check.run("hints model", _mwemt("run", "configs/demo.yaml", "--run-dir", str(demo_dir), "--systems",
                                            "hints-gpu-check", "--no-plot", "-q",
                                            *_sets([HINTS, *device_set, *small]))):
            baseline = baseline or stage_output(demo_dir, "train", "baseline", "model")
            hints = stage_output(demo_dir, "train", "hints-gpu-check", "model")
            table = stage_output(demo_dir, "mwe_table", "shared", "table")
            test = str(DEMO / "test.en")
            check.run("translate --constraints",
                      _mwemt("translate", "-m", str(baseline), "-i", test, "-o", str(out / "constrained.it"), "-q",
                             "--device", args.device, "--constraints", str(table)), expect=out / "constrained.it")
            check.run("translate --hint-table",
                      _mwemt("translate", "-m", str(hints), "-i", test, "-o", str(out / "hinted.it"), "-q",
                             "--device", args.device, "--hint-table", str(table)), expect=out / "hinted.it")
    if "decode" in chosen_steps and baseline is None:
        check.note("decode speed", False, 0.0, "no model: run the demo step or give --decode-model DIR")
    elif "decode" in chosen_steps:
        cpu = decode_speed(check, baseline, "cpu", "fp32")
        for precision in args.precisions:
            if args.device == "cpu" and precision == "fp32":
                continue   # measured just above
            wps = decode_speed(check, baseline, args.device, precision)
            if wps and cpu:
                check.rows[-1] = (*check.rows[-1][:3], check.rows[-1][3] + f"; {wps / cpu:.1f}x cpu fp32")
                print(f"    {wps / cpu:.1f}x cpu fp32", flush=True)
    if args.paper_big and "paper-big" in chosen_steps:
        if (ROOT.parent / "shared" / "data").is_dir():
            paper_big_epoch(check, out, args.device, args.paper_big_precisions)
        else:
            check.note("paper-big epoch", False, 0.0, "needs ../shared/data next to the checkout")
    ok = check.report()
    print(f"\n{'all steps passed' if ok else 'SOME STEPS FAILED'} (device {args.device}); logs in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
