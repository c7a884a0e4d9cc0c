#!/usr/bin/env python
"""Identification with a lexicon that has no training data (OEWN), on DiMSUM, before and after
literal-reading estimates from a raw corpus (`mwemt.preprocess.corpus_filters`).

DiMSUM 2016 (Schneider et al.) annotates strong MWEs, contiguous and gappy, of every kind (noun
compounds, named entities, phrasal verbs, idioms), one token per line: offset, form, lemma, POS,
MWE flag (O o B b I i), offset of the previous token of the same MWE, strength, supersense,
sentence id. The forms are annotated with the core annotator (simplemma lemmas, as `mwemt
annotate` does with text) and scored with the PARSEME measures (`mwemt.evaluate.parseme`).

- before: the plain OEWN look-up, max_gap 0, 1 and 2;
- after: the corpus estimates' thresholds and max_gap chosen on DiMSUM **train** (a grid), then
  applied once to DiMSUM **test**; the raw corpus is not DiMSUM (default: Europarl English).

    python studies/identification/dimsum_identify.py --out runs/dimsum --markdown runs/dimsum/dimsum.md
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import replace
from pathlib import Path

from mwemt.evaluate.parseme import IdentificationScores, score_identification
from mwemt.fileio import atomic_write
from mwemt.preprocess.annotate import Annotator, load_lexicon
from mwemt.preprocess.corpus_filters import estimate_for_gaps
from mwemt.preprocess.mwe_context import read_dimsum
from mwemt.provenance import manifest, write_json
from mwemt.records import Mwe

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
DIMSUM = SHARED / "mwe-corpora" / "dimsum16"
OEWN = SHARED / "lexicons" / "wordnet-mwe" / "derived" / "oewn_english_mwe_lemmas.tsv"
EUROPARL = SHARED / "parallel" / "europarl-en-it" / "data" / "pivot" / "triples.en.gz"
GRID = {"max_gap": (0, 1, 2, 3), "min_association": (0.0, 0.25, 0.5, 0.75, 0.9),
        "min_variability": (0.0, 0.25, 0.5, 0.75, 0.9)}


def with_lemmas(sentences, annotator: Annotator) -> list[tuple[list[str], list[str], list[Mwe]]]:
    """(forms, lemmas, gold) with the lemmas `mwemt annotate` would compute, computed once."""
    return [(forms, annotator.lemmatizer.lemmatize(forms), gold) for forms, gold in sentences]


def score(sentences, annotator: Annotator) -> IdentificationScores:
    pred = [annotator.annotate_tokens(forms, lemmas).mwes for forms, lemmas, _ in sentences]
    return score_identification([g for _, _, g in sentences], pred, categories=False)


def cell(s: IdentificationScores, part: str = "global") -> str:
    if part not in s:
        return "- | - | -"
    p = s[part]
    return f"{p.n_pred} | {100 * p.mwe.precision:.1f} | {100 * p.mwe.recall:.1f} | {100 * p.mwe.f1:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default=str(DIMSUM / "dimsum16.train"), help="DiMSUM file to choose settings on")
    ap.add_argument("--test", default=str(DIMSUM / "dimsum16.test"), help="DiMSUM file to report on")
    ap.add_argument("--lexicon", default=str(OEWN), help="lexicon without training data (default: OEWN MWEs)")
    ap.add_argument("--lexicon-format", default="oewn")
    ap.add_argument("--raw-corpus", default=str(EUROPARL), help="raw English text (default: Europarl EN)")
    ap.add_argument("--max-lines", type=int, default=0, help="read at most N corpus lines (default: all)")
    ap.add_argument("--out", help="directory for scores.json and the corpus model")
    ap.add_argument("--markdown", help="write the before/after table (markdown) here")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)

    train, test = read_dimsum(args.train), read_dimsum(args.test)
    lexicon = load_lexicon(args.lexicon, args.lexicon_format)
    plain0 = Annotator(lexicon, pretokenized=True)
    train, test = with_lemmas(train, plain0), with_lemmas(test, plain0)
    print(f"DiMSUM train {len(train)} sentences ({sum(len(g) for *_, g in train)} MWEs), test {len(test)} "
          f"({sum(len(g) for *_, g in test)}); lexicon {len(lexicon)} entries", file=sys.stderr)
    models = estimate_for_gaps(lexicon, args.raw_corpus, GRID["max_gap"], max_lines=args.max_lines)
    base = models[max(GRID["max_gap"])]
    print(f"raw corpus: {base.meta['source']['sentences']} sentences, {base.describe()['entries_seen_in_corpus']} "
          f"entries seen", file=sys.stderr)
    table = {}
    for g, a, v in itertools.product(GRID["max_gap"], GRID["min_association"], GRID["min_variability"]):
        if g == 0 and v > 0:
            continue  # no gapped candidates at max_gap 0
        model = models[g]
        model = type(model)(model.entries, replace(model.thresholds, min_association=a, min_variability=v), model.meta)
        table[(g, a, v)] = score(train, Annotator(lexicon, max_gap=g, pretokenized=True, filters=model))
    best = max(table, key=lambda k: (round(table[k]["global"].mwe.f1, 12), -k[0], -k[1], -k[2]))
    g, a, v = best
    chosen = type(models[g])(models[g].entries, replace(models[g].thresholds, min_association=a, min_variability=v),
                              models[g].meta)
    if out:
        chosen.save(out / "dimsum.corpus-filters.json")
    rows = []
    for gap in (0, 1, 2):
        plain = Annotator(lexicon, max_gap=gap, pretokenized=True)
        rows.append((f"plain look-up, max_gap {gap}", score(train, plain), score(test, plain)))
    filtered = Annotator(lexicon, max_gap=g, pretokenized=True, filters=chosen)
    rows.append((f"corpus estimates: {chosen.thresholds.describe()}", table[best], score(test, filtered)))
    for name in chosen.thresholds.active:  # what each estimate adds, at the chosen settings
        alone = Annotator(lexicon, max_gap=g, pretokenized=True, filters=chosen.without([name]))
        rows.append((f"  without {name}", score(train, alone), score(test, alone)))
    lines = ["| system | train #pred | P | R | F | test #pred | P | R | F | test discontinuous P | R | F |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, tr, te in rows:
        disc = cell(te, "discontinuous").split(" | ", 1)[1]
        lines.append(f"| {label} | {cell(tr)} | {cell(te)} | {disc} |")
    text = "\n".join(lines) + (f"\n\n(MWE-based, x 100; DiMSUM gold: {sum(len(g) for *_, g in train)} train MWEs, "
                               f"{sum(len(g) for *_, g in test)} test MWEs. Raw corpus: {args.raw_corpus}, "
                               f"{base.meta['source']['sentences']} sentences.)")
    print(text)
    if args.markdown:
        with atomic_write(args.markdown) as fh:
            fh.write(text + "\n")
    if out:
        write_json(out / "scores.json", manifest(
            "dimsum-identify", inputs={"train": args.train, "test": args.test, "lexicon": args.lexicon,
                                       "raw_corpus": args.raw_corpus},
            config={"grid": {k: list(x) for k, x in GRID.items()}, "max_lines": args.max_lines},
            chosen={"max_gap": g, "min_association": a, "min_variability": v},
            rows={label: {"train": tr.to_dict(), "test": te.to_dict()} for label, tr, te in rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
