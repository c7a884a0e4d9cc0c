"""Decoding speed on CPU: batch size and precision against today's default, side by side, with BLEU.

    python bench/decode_speed.py --model WORKDIR/model --src TEST.en --ref TEST.it

The model in docs/examples.md and docs/nmt.md is the `small` preset trained for 600 updates on 100k Tatoeba pairs
(`mwemt train` with the config in docs/nmt.md, "Decoding speed"); the test set is that split's test part.

Settings, all beam 5 on the same length-sorted input (`Translator.translate` sorts by length):
``fp32, batch 32`` (the default of `mwemt translate` before this bench), ``fp32, batch 128``,
``bf16`` (autocast) and ``int8`` (dynamic quantization of the linear layers), each at both batch
sizes. Settings run in rounds, order flipped every round, one thread, in this process; speed is
sentences per CPU-second (work done, robust to other jobs) and per wall-second. BLEU is sacreBLEU
on the detokenized output; the check is |BLEU - BLEU(fp32, batch 32)| <= 0.2.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="model directory written by `mwemt train`")
    ap.add_argument("--src", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--lines", type=int, default=1000, help="first N test sentences (default: %(default)s)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 128])
    a = ap.parse_args()

    import logging
    import warnings

    import sacrebleu

    from mwemt.nmt.cpu import describe
    from mwemt.nmt.translate import DECODE_PRECISIONS, Translator

    warnings.filterwarnings("ignore")
    logging.basicConfig(level=logging.WARNING)
    src = Path(a.src).read_text(encoding="utf-8").splitlines()[:a.lines]
    ref = Path(a.ref).read_text(encoding="utf-8").splitlines()[:a.lines]
    print(describe(), flush=True)
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    translators = {p: Translator.load(a.model, threads=1, device="cpu", precision=p) for p in DECODE_PRECISIONS}
    settings = [(p, b) for p in DECODE_PRECISIONS for b in a.batch_sizes]
    for translator in translators.values():                 # warm-up: first-call allocations, kernel choice
        translator.translate(src[:16], beam=a.beam, batch_size=16)
    totals = {s: [0.0, 0.0, 0] for s in settings}
    outputs = {}
    for r in range(a.rounds):
        for s in (settings if r % 2 == 0 else settings[::-1]):
            cpu, wall = time.process_time(), time.perf_counter()
            hyps = translators[s[0]].translate(src, beam=a.beam, batch_size=s[1])
            totals[s][0] += time.process_time() - cpu
            totals[s][1] += time.perf_counter() - wall
            totals[s][2] += len(src)
            outputs[s] = hyps
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    base = settings[0]
    metric = sacrebleu.BLEU()
    bleu = {s: metric.corpus_score(outputs[s], [ref]) for s in settings}
    sig = metric.get_signature()
    speed = {s: (t[2] / t[0], t[2] / t[1]) for s, t in totals.items()}
    print(f"\n{len(src)} sentences, beam {a.beam}, 1 thread, {a.rounds} rounds; BLEU signature {sig}")
    print(f"{'setting':18s} {'sent/CPU-s':>10s} {'ratio':>6s} {'wall ratio':>10s} {'BLEU':>6s} {'dBLEU':>6s} "
          f"{'same output':>11s}")
    for s in settings:
        same = sum(x == y for x, y in zip(outputs[s], outputs[base])) / len(src)
        print(f"{s[0] + ', batch ' + str(s[1]):18s} {speed[s][0]:10.1f} {speed[s][0] / speed[base][0]:6.3f} "
              f"{speed[s][1] / speed[base][1]:10.3f} {bleu[s].score:6.2f} {bleu[s].score - bleu[base].score:+6.2f} "
              f"{same:11.1%}")
    ok = [s for s in settings if abs(bleu[s].score - bleu[base].score) <= 0.2]
    best = max(ok, key=lambda s: speed[s][0])
    print(f"\nfastest within 0.2 BLEU: {best[0]}, batch {best[1]}: {speed[best][0] / speed[base][0]:.2f}x "
          f"sentences/s (CPU time), {speed[best][1] / speed[base][1]:.2f}x (wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
