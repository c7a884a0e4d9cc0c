#!/usr/bin/env python3
"""Predicted compositionality of every lexicon MWE type that occurs in a text, for a test-set build.

Why: `mwemt testset build --compositionality` and the run's ``tests.NAME.build.compositionality``
put each test MWE in the idiomatic or literal part by its type's predicted compositionality. The
test is selected inside the run, so the file must cover every type the pool can hold: this script
annotates the text (a source<TAB>target TSV's source side, or plain lines) with the same annotator
as the build and predicts each type found from cached vectors (`mwemt compositionality vectors`;
types not collapsed when the vectors were built are folded in).

  python scripts/lexicon_compositionality.py --tsv ../shared/data/parallel/tatoeba-en-it/eng-ita.anki.tsv \\
      --lexicon ../shared/data/lexicons/wordnet-mwe/derived/oewn_english_mwe_lemmas.tsv --lexicon-format oewn \\
      --vectors VECTORS_DIR -o results/compositionality/oewn-tatoeba.tsv
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter


def main(argv: list[str] | None = None) -> int:
    from mwemt.augment.corpus import iter_tsv_pairs
    from mwemt.compositionality.predict import score_mwes
    from mwemt.fileio import iter_lines
    from mwemt.formats import write_compositionality
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--tsv", help="source<TAB>target pairs: the source side is annotated")
    src.add_argument("--text", help="plain text, one sentence per line")
    p.add_argument("--lexicon", required=True)
    p.add_argument("--lexicon-format", default="auto")
    p.add_argument("--lang", default="en")
    p.add_argument("--max-gap", type=int, default=0)
    p.add_argument("--vectors", required=True, help="a vectors directory of `mwemt compositionality vectors`")
    p.add_argument("--model", default="svd", help="ppmi, svd or w2v (default: %(default)s)")
    p.add_argument("-o", "--out", required=True)
    args = p.parse_args(argv)
    started = time.perf_counter()
    annotator = build_annotator(AnnotatorConfig(lang=args.lang, lexicon=(args.lexicon,),
                                                lexicon_format=args.lexicon_format, max_gap=args.max_gap))
    lines = (s for _, s, _ in iter_tsv_pairs(args.tsv)) if args.tsv else iter_lines(args.text)
    seen: set[str] = set()
    types: Counter[str] = Counter()
    for line in lines:
        key = line.casefold()
        if key in seen:
            continue
        seen.add(key)
        for m in annotator.annotate_text(line).mwes:
            types[m.lemma] += 1
    print(f"{len(seen):,} distinct sentences, {len(types):,} MWE types", file=sys.stderr)
    scores = score_mwes(list(types), args.vectors, model=args.model)
    rows = [(s.mwe, s.score) for s in scores if s.score is not None]
    write_compositionality(args.out, rows)
    print(f"{len(rows):,} of {len(scores):,} types predicted ({args.model}); written to {args.out} in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
