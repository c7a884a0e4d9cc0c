#!/usr/bin/env python
"""Two-fold check of lexicon-based MWE identification on a PARSEME .cupt corpus.

Sentences are split deterministically into two halves by position (even / odd sentence number,
so both halves mix the corpus' documents). For each fold, the MWE lexicon is extracted from one
half and the core annotator (`mwemt.preprocess.annotate.annotate_cupt`) marks the other half, matching on the
LEMMA column; both the lexicon and the text go through the "none" lemmatiser (lowercasing only),
so they are normalised identically. Every max_gap in --gaps is tried; predictions are written as
.cupt (with the two halves, as NAME.train.cupt / NAME.gold.cupt) and scored with
`mwemt.evaluate.parseme`. With --test, a lexicon from the whole --train file is also applied to
the test file.

    python scripts/parseme_twofold.py --train ../shared/data/mwe-corpora/parseme-1.1/EN/train.cupt \
        --out runs/parseme_twofold
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from mwemt.evaluate.parseme import IdentificationScores, evaluate_cupt
from mwemt.formats import CuptSentence, lexicon_from_sentences, read_cupt, write_cupt
from mwemt.preprocess.annotate import AnnotatorConfig, annotate_cupt, build_annotator
from mwemt.provenance import manifest, write_json
from mwemt.records import LexiconEntry


def halves(sentences: list[CuptSentence]) -> tuple[list[CuptSentence], list[CuptSentence]]:
    """Even-numbered and odd-numbered sentences (0-based position)."""
    return sentences[0::2], sentences[1::2]


def predict(sentences: list[CuptSentence], lexicon: list[LexiconEntry], max_gap: int) -> list[CuptSentence]:
    """What `mwemt annotate --input-format cupt --output-format cupt` does: match on the LEMMA column."""
    annotator = build_annotator(AnnotatorConfig(lexicon_format="cupt", lemmatizer="none", max_gap=max_gap),
                                entries=lexicon)
    return [cs.with_mwes(sent.mwes) for cs, sent in annotate_cupt(annotator, sentences)]


def run_split(name: str, train: list[CuptSentence], test: list[CuptSentence], gaps: list[int],
              out: Path | None) -> dict[int, IdentificationScores]:
    lexicon = lexicon_from_sentences(train)
    if out is not None:  # the halves too, so any run can be re-scored with `mwemt identify-eval`
        write_cupt(out / f"{name}.train.cupt", train)
        write_cupt(out / f"{name}.gold.cupt", test)
    results = {}
    for gap in tqdm(gaps, desc=name, unit=" gap", file=sys.stderr):
        pred = predict(test, lexicon, gap)
        if out is not None:
            write_cupt(out / f"{name}.gap{gap}.pred.cupt", pred)
        results[gap] = evaluate_cupt(test, pred, train, categories=False)
    return results


def row(label: str, s: IdentificationScores, part: str) -> str:
    if part not in s:
        return f"{label:<28} {part:<16} (no such MWEs)"
    p = s[part]
    return (f"{label:<28} {part:<16} {p.n_gold:>5} {p.n_pred:>5}  "
            f"{100 * p.mwe.precision:6.2f} {100 * p.mwe.recall:6.2f} {100 * p.mwe.f1:6.2f}  "
            f"{100 * p.token.precision:6.2f} {100 * p.token.recall:6.2f} {100 * p.token.f1:6.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", required=True, help="annotated .cupt file to split in two")
    ap.add_argument("--test", help="optional .cupt test file, scored with the lexicon of the whole --train")
    ap.add_argument("--gaps", default="0,1,2,3,4", help="max_gap values to try (default: %(default)s)")
    ap.add_argument("--out", help="directory for predicted .cupt files and scores.json")
    args = ap.parse_args(argv)
    gaps = [int(g) for g in args.gaps.split(",")]
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)

    sentences = list(read_cupt(args.train))
    a, b = halves(sentences)
    print(f"{args.train}: {len(sentences)} sentences -> halves of {len(a)} and {len(b)}", file=sys.stderr)
    runs = {"fold1 (lex A -> B)": run_split("fold1", a, b, gaps, out),
            "fold2 (lex B -> A)": run_split("fold2", b, a, gaps, out)}
    if args.test:
        runs["test (lex train -> test)"] = run_split("test", sentences, list(read_cupt(args.test)), gaps, out)

    head = (f"{'run':<28} {'partition':<16} {'#gold':>5} {'#pred':>5}  {'MWE-P':>6} {'MWE-R':>6} {'MWE-F':>6}  "
            f"{'Tok-P':>6} {'Tok-R':>6} {'Tok-F':>6}")
    print(head)
    print("-" * len(head))
    for label, res in runs.items():
        for gap, s in res.items():
            for part in ("global", "seen-in-train"):
                print(row(f"{label} gap={gap}", s, part))
    # the best gap by mean global MWE-based F over the two folds
    mean_f = {g: sum(runs[k][g]["global"].mwe.f1 for k in list(runs)[:2]) / 2 for g in gaps}
    best = max(gaps, key=lambda g: (round(mean_f[g], 12), -g))
    print(f"best max_gap by mean global MWE-based F over the two folds: {best} "
          f"(F = {100 * mean_f[best]:.2f}; " + ", ".join(f"gap {g}: {100 * f:.2f}" for g, f in mean_f.items()) + ")")
    if out is not None:
        write_json(out / "scores.json", manifest(
            "parseme-twofold", inputs={"train": args.train, **({"test": args.test} if args.test else {})},
            config={"gaps": gaps, "split": "even/odd sentence position", "lemmatizer": "none",
                    "lemmas": "cupt LEMMA column"},
            best_max_gap=best,
            runs={label: {str(g): s.to_dict() for g, s in res.items()} for label, res in runs.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
