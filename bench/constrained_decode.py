"""Lexically constrained decoding vs plain beam search: speed side by side, constraint use and BLEU.

    python bench/constrained_decode.py                       # trains a small baseline on Tatoeba first (cached)
    python bench/constrained_decode.py --model WORKDIR/model --table table.jsonl --src TEST.en --ref TEST.it

The same model decodes the same sentences twice per round, once with plain beam search and once with
fairseq's lexically constrained beam search (`mwemt translate --constraints TABLE`, unordered), in this
process, one thread, order flipped every round. Speed is sentences per CPU-second (work done, robust
to the other jobs on a shared machine) and per wall-second; the ratio is constrained / plain. Two
inputs are timed: the first ``--lines`` sentences, and the first ``--lines`` that the table gives at
least one constraint. With ``--judged THRESHOLD`` judged constraints are timed too (their first pass, one
constrained decoding per candidate and the choice; issue 42's target: at most 2x plain decoding on the whole
test), e.g. with a grid's model and table:

    python bench/constrained_decode.py --model RUN/stages/train/baseline/KEY/model --table TABLE.jsonl \
        --src TEST.en --ref TEST.it --lines 500 --judged 1.0 --acceptance guarded

Without ``--model`` the bench trains the `small` preset (128-dim 3+3, the grid's) on a seeded sample
of Tatoeba EN-IT with `mwemt train`'s stages (cached in ``--workdir``) and decodes the split's test
part. Without ``--table`` the MWE translation table is the MultiWordNet EN-IT dictionary's multi-word
entries (`MweTranslationTable.add_dictionary`), which needs no alignment. *Constraint use* is the
share of constraint phrases whose tokens occur, in order and contiguous, in the casefolded Moses
tokens of the output; BLEU is sacreBLEU against the references.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TSV = ROOT.parent / "shared" / "data" / "parallel" / "tatoeba-en-it" / "eng-ita.anki.tsv"
DICTIONARY = ROOT.parent / "shared" / "data" / "lexicons" / "wordnet-mwe" / "derived" / "en-ita.multiwordnet.tsv"


def train_model(workdir: Path, pairs: int, updates: int) -> tuple[Path, Path, Path]:
    """A small baseline on Tatoeba (cached), and its test split's source and reference files."""
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import train_system

    if not TSV.exists():
        sys.exit(f"{TSV} not found: give --model, --table, --src and --ref")
    cfg = config_from_data({
        "name": "constrained-bench", "seed": 1, "src_lang": "en", "tgt_lang": "it",
        "data": {"split": {"tsv": str(TSV), "valid_size": 500, "test_size": 2000, "train_size": pairs}},
        "subword": {"vocab_size": 8000}, "model": {"preset": "small"},
        "train": {"max_update": updates, "max_epoch": 0, "early_stop": "loss", "patience": -1, "log_interval": 50},
        "systems": {"baseline": {}}})
    model = train_system(cfg, "baseline", workdir, progress=False)
    corpus = next(d for d in (workdir / "stages" / "corpus" / "shared").iterdir() if (d / "DONE").exists())
    return model, corpus / "test.en", corpus / "test.it"


def dictionary_table(path: Path):
    from mwemt.testsets.mwe_table import MweTranslationTable, read_dictionary

    table = MweTranslationTable(provenance={"dictionary": str(path.name)})
    table.add_dictionary(read_dictionary(path, min_words=2), lang="it")
    return table


def used(phrase: tuple[str, ...], hyp_tokens: list[str]) -> bool:
    """Whether the phrase's tokens occur, casefolded, in order and contiguous in the output's tokens."""
    phrase = tuple(t.casefold() for t in phrase)
    n = len(phrase)
    return any(tuple(hyp_tokens[i:i + n]) == phrase for i in range(len(hyp_tokens) - n + 1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="model directory (default: train a small baseline, cached in --workdir)")
    ap.add_argument("--table", help="MWE translation table JSONL (default: the MultiWordNet dictionary's MWEs)")
    ap.add_argument("--src", help="source sentences (default: the trained model's test split)")
    ap.add_argument("--ref", help="references, line-aligned with --src")
    ap.add_argument("--workdir", default=str(ROOT / "runs" / "bench-constrained"))
    ap.add_argument("--pairs", type=int, default=20000, help="training pairs of the default model")
    ap.add_argument("--updates", type=int, default=400, help="training updates of the default model")
    ap.add_argument("--lines", type=int, default=300, help="first N source sentences (default: %(default)s)")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64, help="the pipeline's translate.batch_size")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--judged", type=float, metavar="THRESHOLD",
                    help="also time judged constraints (issue 42 item 6: target at most 2x plain decoding on the "
                         "whole test) at this threshold: the first pass, every candidate's constrained decoding, "
                         "the choice; MWEs in context by --mwe-context")
    ap.add_argument("--mwe-context", default="none", help="judged: constraint_mwe_context (default: %(default)s)")
    ap.add_argument("--acceptance", default="plain", help="judged: constraint_acceptance (default: %(default)s)")
    a = ap.parse_args()

    import logging
    import warnings

    import sacrebleu

    from mwemt.nmt.cpu import describe
    from mwemt.nmt.translate import Translator
    from mwemt.preprocess.tokenize import tokenize
    from mwemt.testsets.mwe_table import MweTranslationTable

    warnings.filterwarnings("ignore")
    logging.basicConfig(level=logging.WARNING)
    if a.model:
        model, src_path, ref_path = Path(a.model), a.src, a.ref
        if not (src_path and ref_path):
            sys.exit("--model needs --src and --ref")
    else:
        model, src_path, ref_path = train_model(Path(a.workdir), a.pairs, a.updates)
    table = MweTranslationTable.read(a.table) if a.table else dictionary_table(DICTIONARY)
    src = Path(src_path).read_text(encoding="utf-8").splitlines()
    ref = Path(ref_path).read_text(encoding="utf-8").splitlines()
    print(describe(), flush=True)
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    tr = Translator.load(model, threads=1, device="cpu")
    constraints = tr.table_constraints(src, table)
    first = list(range(min(a.lines, len(src))))
    hit = [i for i, c in enumerate(constraints) if c]
    print(f"model {model}; table {table.signature()}; of the first {len(first)} sentences "
          f"{sum(1 for i in first if constraints[i])} have constraints; of all {len(src)}, {len(hit)} "
          f"({sum(len(c) for c in constraints)} phrases); beam {a.beam}, batch {a.batch_size}, 1 thread, "
          f"{a.rounds} rounds", flush=True)
    inputs = {"first": first, "constrained only": hit[:a.lines]}    # the first N lines; the first N with constraints
    modes = ("plain", "constrained") + (("judged",) if a.judged is not None else ())
    settings = [(name, mode) for name in inputs for mode in modes]
    from mwemt.nmt.constraints import ConstraintOptions, constrained_translate

    judged = (ConstraintOptions("judged", threshold=a.judged, mwe_context=a.mwe_context, acceptance=a.acceptance)
              if a.judged is not None else None)
    tr.translate(src[:16], beam=a.beam, batch_size=16)                 # warm-up
    totals = {s: [0.0, 0.0, 0] for s in settings}
    outputs: dict = {}
    for r in range(a.rounds):
        for s in (settings if r % 2 == 0 else settings[::-1]):
            name, mode = s
            idx = inputs[name]
            lines = [src[i] for i in idx]
            kwargs = {"constraints": [constraints[i] for i in idx]} if mode == "constrained" else {}
            c0, w0 = time.process_time(), time.perf_counter()
            if mode == "judged":
                hyps, _ = constrained_translate(tr, lines, table, judged, beam=a.beam, batch_size=a.batch_size)
            else:
                hyps = tr.translate(lines, beam=a.beam, batch_size=a.batch_size, **kwargs)
            totals[s][0] += time.process_time() - c0
            totals[s][1] += time.perf_counter() - w0
            totals[s][2] += len(lines)
            outputs[s] = hyps
        print(f"  round {r + 1}/{a.rounds} done; "
              f"{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}", flush=True)
    print()
    print(f"{'input':<17} {'decoding':<12} {'sent/CPU-s':>10} {'sent/wall-s':>11} {'use':>7} {'BLEU':>6}")
    sig = None
    for name, idx in inputs.items():
        speeds = {}
        for mode in modes:
            cpu, wall, n = totals[(name, mode)]
            hyps = outputs[(name, mode)]
            phrases = [p for i in idx for p in constraints[i]]
            found = sum(used(p, [t.casefold() for t in tokenize(h, "it")])
                        for i, h in zip(idx, hyps) for p in constraints[i])
            metric = sacrebleu.BLEU()
            bleu = metric.corpus_score(hyps, [[ref[i] for i in idx]])
            sig = metric.get_signature()
            speeds[mode] = (n / cpu, n / wall)
            share = f"{100 * found / len(phrases):.1f}%" if phrases else "-"
            print(f"{name:<17} {mode:<12} {n / cpu:>10.1f} {n / wall:>11.1f} {share:>7} {bleu.score:>6.2f}")
        (pc, pw) = speeds["plain"]
        for mode in modes[1:]:
            cc, cw = speeds[mode]
            print(f"{name:<17} {'ratio':<12} {cc / pc:>10.3f} {cw / pw:>11.3f}   ({mode} / plain; "
                  f"slowdown {pc / cc:.2f}x by CPU time, {pw / cw:.2f}x by wall time)")
    print(f"\nBLEU signature: {sig}")
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
