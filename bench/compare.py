"""Time of `mwemt compare` at the size of the issue: 5 systems x 3,000 sentences x 1,000 MWE types.

    python bench/compare.py [--sentences 3000] [--types 1000] [--systems 5] [--train 20000]

Data (built first, not timed): real EN-IT sentence pairs from Tatoeba (../shared/data; the bundled
demo sample, repeated, when it is absent). The first ``--train`` pairs are the training corpus;
the test sentences come from the rest. MWE types are English word bigrams: each test sentence gets
up to two of its bigrams as MWEs (reusing chosen types first, adding new ones up to ``--types``),
with a one- or two-word span of its Italian reference as the MWE's reference translation. The
systems are the references with words dropped and replaced at rates 10%-30% (seeded), so lengths
and vocabulary are real while the scores mean nothing.

Timed, side by side in this run, from the same files:
  compare   the whole command's work: load and check inputs, score (BLEU, chrF, MWE score, paired
            bootstrap 1,000), MWE analysis with MWE counts in the training source and word counts
            in the training target, render and write the three files;      target <= 30 s
  score     score_systems alone with the same metrics and bootstrap (what `mwemt score --paired-bs`
            computes): the ratio compare / score is the cost of the analysis on top of scoring;
  counts    the MWE counts in the training source alone (part of compare).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.compare import CompareSettings, compare_systems, load_compare_inputs, write_report
from mwemt.evaluate.compare.analysis import default_metrics
from mwemt.evaluate.compare.mwes import count_in_corpus
from mwemt.evaluate.registry import MetricOptions
from mwemt.evaluate.scoring import score_systems
from mwemt.nmt.cpu import describe
from mwemt.preprocess.tokenize import tokenize

ROOT = Path(__file__).resolve().parents[1]
TATOEBA = ROOT.parent / "shared" / "data" / "parallel" / "tatoeba-en-it" / "eng-ita.anki.tsv"
DEMO = ROOT / "mwemt" / "data" / "demo"


def pairs() -> tuple[list[tuple[str, str]], str]:
    if TATOEBA.is_file():
        seen, out = set(), []
        for line in TATOEBA.read_text(encoding="utf-8").splitlines():
            cols = line.split("\t")
            if len(cols) >= 2 and cols[0] not in seen and 4 <= len(cols[0].split()) <= 30:
                seen.add(cols[0])
                out.append((cols[0], cols[1]))
        random.Random(1).shuffle(out)
        return out, f"Tatoeba EN-IT ({TATOEBA})"
    en = (DEMO / "train.en").read_text(encoding="utf-8").splitlines()
    it = (DEMO / "train.it").read_text(encoding="utf-8").splitlines()
    return list(zip(en, it)) * 40, "the bundled demo sample, repeated (shared data not found)"


def bigrams(tokens: list[str]) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(len(tokens) - 1) if tokens[i].isalpha() and tokens[i + 1].isalpha()]


def build(directory: Path, n_sentences: int, n_types: int, n_systems: int, n_train: int) -> dict:
    data, origin = pairs()
    rng = random.Random(7)
    train, rest = data[:n_train], data[n_train:]
    (directory / "train.en").write_text("".join(e + "\n" for e, _ in train), encoding="utf-8")
    (directory / "train.it").write_text("".join(i + "\n" for _, i in train), encoding="utf-8")
    types: set[str] = set()
    items = []
    for en, it in rest:
        if len(items) >= n_sentences:
            break
        src = tokenize(en, "en")
        candidates = bigrams(src)
        rng.shuffle(candidates)
        chosen = [c for c in candidates if " ".join(src[i].lower() for i in c) in types][:2]
        for c in candidates:
            key = " ".join(src[i].lower() for i in c)
            if len(chosen) < 2 and c not in chosen and key not in types and len(types) < n_types:
                chosen.append(c)
                types.add(key)
        words = [w for w in it.split() if any(ch.isalpha() for ch in w)]
        if not chosen or not words:
            continue
        mwes = []
        for c in sorted(set(chosen)):
            start = rng.randrange(len(words))
            mwes.append({"indices": list(c), "lemma": " ".join(src[i].lower() for i in c),
                         "reference": " ".join(words[start:start + rng.choice((1, 2))]).strip(".,!?;:"),
                         "category": rng.choice(("VID", "LVC", "VPC", "NC", "ADV"))})
        items.append({"id": f"b{len(items) + 1}", "source": " ".join(src), "reference": it, "mwes": mwes})
    (directory / "testset.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items),
                                             encoding="utf-8")
    vocab = sorted({w for _, it in train[:5000] for w in it.split()})
    for k in range(n_systems):
        drop, swap = 0.10 + 0.05 * k, 0.05 + 0.02 * k
        lines = []
        for x in items:
            out = []
            for w in x["reference"].split():
                r = rng.random()
                if r < drop:
                    continue
                out.append(rng.choice(vocab) if r < drop + swap else w)
            lines.append(" ".join(out))
        (directory / f"sys{k + 1}.it").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return {"origin": origin, "sentences": len(items), "types": len(types),
            "occurrences": sum(len(x["mwes"]) for x in items), "train": len(train)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=3000)
    ap.add_argument("--types", type=int, default=1000)
    ap.add_argument("--systems", type=int, default=5)
    ap.add_argument("--train", type=int, default=20000)
    args = ap.parse_args()
    print(f"{describe()}; load average {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    with tempfile.TemporaryDirectory(prefix="mwemt-bench-compare-") as tmp:
        d = Path(tmp)
        facts = build(d, args.sentences, args.types, args.systems, args.train)
        print(f"data: {facts['origin']}: {facts['sentences']} test sentences, {facts['occurrences']} MWE occurrences "
              f"of {facts['types']} types, {args.systems} systems, training corpus {facts['train']} pairs")
        hyps = [(f"sys{k + 1}", d / f"sys{k + 1}.it") for k in range(args.systems)]
        settings = CompareSettings(bootstrap=BootstrapSettings(1000))
        options = MetricOptions(lang="it")

        t0 = time.perf_counter()
        inputs = load_compare_inputs(hyps, testset=d / "testset.jsonl", train_src=d / "train.en",
                                     train_tgt=d / "train.it", lang="it")
        report = compare_systems(inputs, None, options, settings)
        write_report(d / "report", report)
        t_compare = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in (d / "report").iterdir())

        t0 = time.perf_counter()
        inputs = load_compare_inputs(hyps, testset=d / "testset.jsonl", lang="it")
        score_systems(inputs.score, default_metrics(inputs), options, bootstrap=settings.bootstrap)
        t_score = time.perf_counter() - t0

        t0 = time.perf_counter()
        count_in_corpus([t["key"] for t in report["mwe"]["types"]],
                        (d / "train.en").read_text(encoding="utf-8").splitlines(), lang="en", max_gap=3)
        t_counts = time.perf_counter() - t0

    print(f"metrics: {', '.join(m['key'] for m in report['aggregate'])}; bootstrap 1000 resamples")
    print(f"compare (everything, report {size / 1e6:.1f} MB):  {t_compare:6.1f} s   target <= 30 s: "
          f"{'met' if t_compare <= 30 else 'NOT met'} ({t_compare / 30:.2f} of the budget)")
    print(f"score alone (same metrics and bootstrap):    {t_score:6.1f} s   compare / score = {t_compare / t_score:.2f}")
    print(f"MWE counts in the {facts['train']}-line training source: {t_counts:6.1f} s (part of compare)")
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
