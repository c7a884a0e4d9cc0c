#!/usr/bin/env python
"""Two-fold check of MWE identification on a PARSEME .cupt corpus, before and after the filters.

Sentences are split deterministically into two halves by position (even / odd sentence number,
so both halves mix the corpus' documents). For each fold, the MWE lexicon is extracted from one
half and the core annotator (`mwemt.preprocess.annotate.annotate_cupt`) marks the other half, matching
on the LEMMA column; both the lexicon and the text go through the "none" lemmatiser (lowercasing
only), so they are normalised identically.

- before: the plain look-up, for every max_gap in --gaps (what `mwemt annotate` did without filters);
- after: identification filters learned from the lexicon half only (`mwemt.preprocess.filters`,
  thresholds and max_gap by repeated k-fold cross-validation inside that half), applied to the
  other half; nothing is tuned on the half that is scored.

Predictions are written as .cupt (with the two halves, as NAME.train.cupt / NAME.gold.cupt, and
each fold's filter model as NAME.filters.json) and scored with `mwemt.evaluate.parseme`; the
pooled rows add the two folds' counts. With --test, a lexicon (and filters) from the whole
--train file is also applied to the test file. --markdown writes the before/after tables.

    python studies/identification/parseme_twofold.py --train ../shared/data/mwe-corpora/parseme-1.1/EN/train.cupt \\
        --out runs/parseme_twofold --markdown runs/parseme_twofold/en.md
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tqdm import tqdm

from mwemt.evaluate.parseme import IdentificationScores, PartitionScore, evaluate_cupt
from mwemt.fileio import atomic_write
from mwemt.formats import CuptSentence, lexicon_from_sentences, read_cupt, write_cupt
from mwemt.preprocess.annotate import AnnotatorConfig, annotate_cupt, build_annotator
from mwemt.preprocess.filters import FilterModel, learn_filters, parsed_from_cupt
from mwemt.provenance import manifest, write_json
from mwemt.records import LexiconEntry

FIXED_PARTS = ("global", "seen-in-train", "unseen-in-train", "continuous", "discontinuous")


def halves(sentences: list[CuptSentence]) -> tuple[list[CuptSentence], list[CuptSentence]]:
    """Even-numbered and odd-numbered sentences (0-based position)."""
    return sentences[0::2], sentences[1::2]


def predict(sentences: list[CuptSentence], lexicon: list[LexiconEntry], max_gap: int,
            filters: str | Path = "none") -> list[CuptSentence]:
    """What `mwemt annotate --input-format cupt --output-format cupt` does: match on the LEMMA column
    (with the filter model saved at ``filters``, or none)."""
    annotator = build_annotator(AnnotatorConfig(lexicon_format="cupt", lemmatizer="none", max_gap=max_gap,
                                                filters=str(filters)), entries=lexicon, log=lambda msg: None)
    return [cs.with_mwes(sent.mwes) for cs, sent in annotate_cupt(annotator, sentences)]


def run_split(name: str, train: list[CuptSentence], test: list[CuptSentence], gaps: list[int],
              out: Path | None, learn: dict) -> tuple[dict[int, IdentificationScores], IdentificationScores, FilterModel]:
    lexicon = lexicon_from_sentences(train)
    if out is not None:  # the halves too, so any run can be re-scored with `mwemt identify-eval`
        write_cupt(out / f"{name}.train.cupt", train)
        write_cupt(out / f"{name}.gold.cupt", test)
    before = {}
    for gap in tqdm(gaps, desc=f"{name} plain look-up", unit=" gap", file=sys.stderr):
        pred = predict(test, lexicon, gap)
        if out is not None:
            write_cupt(out / f"{name}.gap{gap}.pred.cupt", pred)
        before[gap] = evaluate_cupt(test, pred, train)
    model = learn_filters([parsed_from_cupt(cs) for cs in train], **learn)
    with tempfile.TemporaryDirectory() as tmp:
        saved = (out or Path(tmp)) / f"{name}.filters.json"
        model.save(saved)
        pred = predict(test, lexicon, model.thresholds.max_gap, saved)
    if out is not None:
        write_cupt(out / f"{name}.filtered.pred.cupt", pred)
    return before, evaluate_cupt(test, pred, train), model


def pooled(scores: list[IdentificationScores]) -> dict[str, PartitionScore]:
    """Partition name -> the folds' counts added up (a partition missing in a fold counts 0)."""
    out: dict[str, PartitionScore] = {}
    for s in scores:
        for p in s.partitions:
            if p.name in out:
                q = out[p.name]
                out[p.name] = PartitionScore(p.name, q.n_gold + p.n_gold, q.n_pred + p.n_pred,
                                             q.mwe + p.mwe, q.token + p.token)
            else:
                out[p.name] = p
    return out


def part_names(*tables: dict[str, PartitionScore]) -> list[str]:
    cats = sorted({n for t in tables for n in t if n.startswith("category:")})
    return [n for n in FIXED_PARTS if any(n in t for t in tables)] + cats


def row(label: str, s: IdentificationScores, part: str) -> str:
    if part not in s:
        return f"{label:<28} {part:<16} (no such MWEs)"
    p = s[part]
    return (f"{label:<28} {part:<16} {p.n_gold:>5} {p.n_pred:>5}  "
            f"{100 * p.mwe.precision:6.2f} {100 * p.mwe.recall:6.2f} {100 * p.mwe.f1:6.2f}  "
            f"{100 * p.token.precision:6.2f} {100 * p.token.recall:6.2f} {100 * p.token.f1:6.2f}")


def prf(p: PartitionScore | None) -> str:
    if p is None:
        return "- | - | -"
    return f"{100 * p.mwe.precision:.1f} | {100 * p.mwe.recall:.1f} | {100 * p.mwe.f1:.1f}"


def comparison_table(title: str, before: dict[str, PartitionScore], after: dict[str, PartitionScore],
                     before_label: str) -> str:
    """A markdown table: partition, #gold, then MWE-based P | R | F before and after."""
    lines = [f"**{title}**", "",
             "| partition | #gold | #pred before | P before | R before | F before | #pred after | P after | R after | F after |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name in part_names(before, after):
        b, a = before.get(name), after.get(name)
        n_gold = (b or a).n_gold
        lines.append(f"| {name} | {n_gold} | {b.n_pred if b else 0} | {prf(b)} | {a.n_pred if a else 0} | {prf(a)} |")
    lines.append(f"\n(MWE-based, x 100. before = {before_label}.)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", required=True, help="annotated .cupt file to split in two")
    ap.add_argument("--test", help="optional .cupt test file, scored with the lexicon of the whole --train")
    ap.add_argument("--gaps", default="0,1,2,3,4", help="max_gap values of the plain look-up (default: %(default)s)")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds inside each lexicon half "
                                                         "(default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3, help="cross-validation partitions (default: %(default)s)")
    ap.add_argument("--context", action="store_true",
                    help="also learn the opt-in contextual filter (needs mwemt[contextual]; slow on CPU)")
    ap.add_argument("--out", help="directory for predicted .cupt files, filter models and scores.json")
    ap.add_argument("--markdown", help="write the before/after tables (markdown) here")
    args = ap.parse_args(argv)
    gaps = [int(g) for g in args.gaps.split(",")]
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    learn = {"folds": args.folds, "repeats": args.repeats}
    if args.context:
        from mwemt.preprocess.context import OccurrenceEncoder

        learn.update(context=True, encoder=OccurrenceEncoder())

    sentences = list(read_cupt(args.train))
    a, b = halves(sentences)
    print(f"{args.train}: {len(sentences)} sentences -> halves of {len(a)} and {len(b)}", file=sys.stderr)
    splits = {"fold1 (lex A -> B)": ("fold1", a, b), "fold2 (lex B -> A)": ("fold2", b, a)}
    if args.test:
        splits["test (lex train -> test)"] = ("test", sentences, list(read_cupt(args.test)))
    runs, after, models = {}, {}, {}
    for label, (name, tr, te) in splits.items():
        runs[label], after[label], models[label] = run_split(name, tr, te, gaps, out, learn)

    head = (f"{'run':<28} {'partition':<16} {'#gold':>5} {'#pred':>5}  {'MWE-P':>6} {'MWE-R':>6} {'MWE-F':>6}  "
            f"{'Tok-P':>6} {'Tok-R':>6} {'Tok-F':>6}")
    print(head)
    print("-" * len(head))
    for label, res in runs.items():
        for gap, s in res.items():
            for part in ("global", "seen-in-train"):
                print(row(f"{label} gap={gap}", s, part))
        for part in ("global", "seen-in-train"):
            print(row(f"{label} filters", after[label], part))
    folds = list(splits)[:2]
    mean_f = {g: sum(runs[k][g]["global"].mwe.f1 for k in folds) / 2 for g in gaps}
    best = max(gaps, key=lambda g: (round(mean_f[g], 12), -g))
    print(f"best max_gap of the plain look-up by mean global MWE-based F over the two folds: {best} "
          f"(F = {100 * mean_f[best]:.2f}; " + ", ".join(f"gap {g}: {100 * f:.2f}" for g, f in mean_f.items()) + ")")
    for label in splits:
        print(f"filters of {label}: {models[label].thresholds.describe()}")

    before_pool = pooled([runs[k][best] for k in folds])
    after_pool = pooled([after[k] for k in folds])
    s, t = before_pool["seen-in-train"], after_pool["seen-in-train"]
    print(f"pooled two-fold, seen-in-train MWE-based: before (gap {best}) P {100 * s.mwe.precision:.2f} "
          f"R {100 * s.mwe.recall:.2f} F {100 * s.mwe.f1:.2f}; after P {100 * t.mwe.precision:.2f} "
          f"R {100 * t.mwe.recall:.2f} F {100 * t.mwe.f1:.2f}")
    if args.markdown:
        tables = [comparison_table("pooled over the two folds", before_pool, after_pool,
                                   f"plain look-up, max_gap {best} (the best of {args.gaps})")]
        for k in folds:
            tables.append(comparison_table(k, pooled([runs[k][best]]), pooled([after[k]]),
                                           f"plain look-up, max_gap {best}"))
            tables[-1] += f" after = {models[k].thresholds.describe()}."
        with atomic_write(args.markdown) as fh:
            fh.write("\n\n".join(tables) + "\n")
    if out is not None:
        write_json(out / "scores.json", manifest(
            "parseme-twofold", inputs={"train": args.train, **({"test": args.test} if args.test else {})},
            config={"gaps": gaps, "split": "even/odd sentence position", "lemmatizer": "none",
                    "lemmas": "cupt LEMMA column",
                    "filters": {k: v for k, v in learn.items() if k != "encoder"}},
            best_max_gap=best,
            runs={label: {str(g): s.to_dict() for g, s in res.items()} for label, res in runs.items()},
            filtered={label: {"settings": models[label].thresholds.describe(),
                              "signature": models[label].signature, **after[label].to_dict()} for label in splits},
            pooled={"before": {n: p.to_dict() for n, p in before_pool.items()},
                    "after": {n: p.to_dict() for n, p in after_pool.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
