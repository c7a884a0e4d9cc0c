#!/usr/bin/env python
"""Build the MWE-in-context decision of judged constraints (`mwemt.preprocess.mwe_in_context`; issue 42,
item 3) and save it with its provenance (default: the bundled one).

- verb forms: the words after a modal in a raw English corpus (default: 200,000 lines of the English
  Wikipedia sample the bundled classifier's corpus statistics come from);
- entry categories: the OEWN MWE list's;
- threshold: on the bundled classifier's own annotated training data only (DiMSUM 2016 train, and the
  PARSEME 1.1 EN training split: sentence k with k % 5 != 0, verbal entries only), every OEWN look-up match
  scored with leave-one-out entry statistics (its own label taken out of its entry's counts); the highest
  threshold that keeps ``--target-recall`` of the annotated MWEs, a match a look-alike rule rejects counting
  as lost. DiMSUM test and the PARSEME held-out split are not read.

    python scripts/train_mwe_in_context.py            # rebuilds mwemt/data/identification/oewn-en.in-context.json.gz
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_mwe_context import (
    DIMSUM_TRAIN,
    OEWN,
    PARSEME_TRAIN,
    WIKI,
    load_lexicon,
    parseme_sentences,
    parseme_split,
    rel,
)

from mwemt.fileio import iter_lines, sha256_file
from mwemt.formats import read_lexicon_entries
from mwemt.preprocess.identify import find_candidates
from mwemt.preprocess.mwe_context import Evidence, bundled_model, label_matches, read_dimsum
from mwemt.preprocess.mwe_in_context import (
    BUNDLED,
    RULES,
    InContextDecision,
    VerbForms,
    fired_rules,
    oewn_categories,
    tune_threshold,
)
from mwemt.preprocess.tokenize import tokenize
from mwemt.provenance import versions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lexicon", default=str(OEWN))
    ap.add_argument("--dimsum-train", default=str(DIMSUM_TRAIN))
    ap.add_argument("--parseme-train", default=str(PARSEME_TRAIN))
    ap.add_argument("--raw-corpus", default=str(WIKI))
    ap.add_argument("--max-lines", type=int, default=200000)
    ap.add_argument("--target-recall", type=float, default=0.95,
                    help="share of the training data's annotated MWEs kept (default: %(default)s)")
    ap.add_argument("--out", default=str(BUNDLED))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    say = lambda msg: print(f"[{time.perf_counter() - t0:6.1f}s] {msg}", file=sys.stderr, flush=True)  # noqa: E731

    classifier = bundled_model()
    categories = oewn_categories(read_lexicon_entries(args.lexicon, "oewn"))
    lines = itertools.islice(iter_lines(args.raw_corpus, allow_empty=True), args.max_lines)
    verbs = VerbForms.from_corpus(tokenize(line, "en") for line in lines)
    say(f"{len(verbs.words)} verb forms from {args.max_lines} lines of {rel(args.raw_corpus)}; "
        f"{len(categories)} entry categories")

    lexicon = load_lexicon(args.lexicon, "oewn")
    sentences = [(f, g, False) for f, g in read_dimsum(args.dimsum_train)]
    sentences += [(f, g, True) for k, (f, g) in enumerate(parseme_sentences(args.parseme_train))
                  if parseme_split(k) == "train"]
    scored: list[tuple[float, int]] = []   # (P, label) of the matches no rule rejects
    rejected_positives = 0
    by_rule = {r: [0, 0] for r in RULES}   # rule -> [annotated MWEs it rejects, matches it rejects]
    for forms, gold, verbal in sentences:
        lemmas = lexicon.lemmatizer.lemmatize(forms)
        cands = find_candidates(lemmas, lexicon, 0, forms=forms)
        if verbal:
            cands = [m for m in cands if m.category.startswith("verb.")]
        if not cands:
            continue
        labels = label_matches(cands, gold)
        override = []
        for m, y in zip(cands, labels):   # leave-one-out entry statistics: this match's own label taken out
            ev = classifier.entries.get(m.lemma, Evidence())
            override.append(replace(ev, annotated=max(0, ev.annotated - y), matches=max(0, ev.matches - 1)))
        x = classifier.design(cands, forms, [w.lower() for w in lemmas], override=override)
        probs = 1.0 / (1.0 + np.exp(-(x @ classifier.weights + classifier.bias)))
        for m, y, p in zip(cands, labels, probs):
            fired = fired_rules(m, forms, lemmas, categories, verbs)
            for r in fired:
                by_rule[r][0] += y
                by_rule[r][1] += 1
            if not fired:
                scored.append((float(p), y))
            else:
                rejected_positives += y
    threshold, tuning = tune_threshold(scored, args.target_recall)
    tuning["annotated_rejected_by_rules"] = rejected_positives
    say(f"{len(scored)} matches, {sum(y for _, y in scored)} annotated; threshold {threshold} "
        f"(recall {tuning['recall']}, precision {tuning['precision']}); rules {by_rule}")
    inputs = {"lexicon": args.lexicon, "dimsum_train": args.dimsum_train, "parseme_train": args.parseme_train,
              "raw_corpus": args.raw_corpus}
    meta = {"source": {"files": {k: {"path": rel(v), "sha256": sha256_file(v)} for k, v in inputs.items()},
                       "max_lines": args.max_lines, "parseme_split": "train: sentence k with k % 5 != 0",
                       "versions": versions()},
            "tuning": {**tuning, "rules_on_training_matches": {r: {"annotated": a, "matches": n}
                                                               for r, (a, n) in by_rule.items()}}}
    decision = InContextDecision(classifier, categories, verbs, threshold, tuple(RULES), meta)
    decision.save(args.out)
    say(f"saved {args.out}: {decision.signature}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
