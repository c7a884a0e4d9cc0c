#!/usr/bin/env python
"""Is a table match an MWE here? Today's decision of judged constraints against the new one (issue 42, item 3):
precision and recall on the MWE test, on DiMSUM 2016 test and on the PARSEME 1.1 EN held-out split.

The candidates are what judged constraints see: the MWE translation table's multi-word keys looked up in
the sentence (`mwemt.nmt.constraints._constraint_annotator`, no filters). Systems:

- every match (``--constraint-mwe-context none``);
- today (``bundled``): the MWE-in-context classifier at its own threshold, on keys without a category;
- new (``in-context``, `mwemt.preprocess.mwe_in_context`): look-alike rules, then the classifier with the
  OEWN category restored at the recall-first threshold tuned on its training data;
- the new one's parts: rules only (every match the rules let through), classifier with categories only.

Data:

- the MWE test (``--test``, with ``--labels``: one line per test MWE, ``ID<TAB>INDICES<TAB>1|0``, 1 = an MWE
  reading of the entry in this sentence, labelled by hand; see ``--write-unlabelled``): every test MWE the
  table look-up matches is one decision; recall = true items kept / true items, precision = true items
  kept / items kept. Without labels every test MWE counts as true (recall only);
- DiMSUM test and PARSEME EN held-out (sentence k with k % 5 == 0; verbal matches only, as PARSEME
  annotates verbal MWEs only): predictions after overlap resolution against the gold MWEs, as
  studies/identification/identify_context_eval.py scores them (exact precision, lenient precision, recall).

    python studies/sense-and-form/mwe_in_context_eval.py --table runs/issue42/data/table.jsonl \\
        --test results/cpu-science-2-ladder/60000/refs/tatoeba-mwe.jsonl --labels studies/sense-and-form/mwe-test-labels.tsv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from train_mwe_context import PARSEME_TRAIN, parseme_sentences, parseme_split  # noqa: E402

from mwemt.preprocess.mwe_context import Prf, read_dimsum  # noqa: E402

DIMSUM_TEST = PARSEME_TRAIN.parents[2] / "dimsum16" / "dimsum16.test"


def read_labels(path) -> dict[tuple[str, tuple[int, ...]], int]:
    from mwemt.errors import InputError
    from mwemt.fileio import iter_lines

    out = {}
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3 or cols[2].strip() not in ("0", "1"):
            raise InputError(f"{len(cols)} columns", path, lineno, expected="ID<TAB>INDICES (comma-separated)<TAB>1|0")
        out[cols[0], tuple(int(i) for i in cols[1].split(","))] = int(cols[2])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", required=True, help="the MWE translation table whose keys are looked up")
    ap.add_argument("--test", required=True, help="the MWE test (JSONL)")
    ap.add_argument("--labels", help="hand labels of the MWE test's items (see the module docstring)")
    ap.add_argument("--decision", help="an MWE-in-context decision file (default: the bundled one)")
    ap.add_argument("--dimsum-test", default=str(DIMSUM_TEST))
    ap.add_argument("--parseme", default=str(PARSEME_TRAIN))
    ap.add_argument("--write-unlabelled", help="write the MWE test's table matches to label (no decisions shown)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)

    from mwemt.formats import read_testset
    from mwemt.nmt.constraints import _constraint_annotator
    from mwemt.preprocess.identify import find_candidates
    from mwemt.preprocess.mwe_context import bundled_model
    from mwemt.preprocess.mwe_in_context import InContextDecision, bundled_decision
    from mwemt.testsets.mwe_table import MweTranslationTable, mwe_key

    table = MweTranslationTable.read(args.table)
    look = _constraint_annotator(table, lang="en", lemmatizer="simplemma", max_gap=0, mwe_context="none")
    today = bundled_model()
    new = InContextDecision.load(args.decision) if args.decision else bundled_decision()
    systems = {"every match": None, "today (bundled classifier)": today, "new: rules only": new.with_threshold(0.0),
               "new: classifier with categories only": new.without([f"lookalike:{r}" for r in new.rules]),
               "new (rules + classifier with categories)": new}

    def kept(model, cands, forms, lemmas):
        if model is None:
            return list(cands)
        return model.apply(cands, forms, lemmas)[0]

    # the MWE test: one decision per test MWE the table look-up matches
    items = read_testset(args.test)
    labels = read_labels(args.labels) if args.labels else None
    decisions = []   # (id, indices, key, sentence, {system: kept})
    out_of_table = 0
    for it in items:
        forms = it.source.split()
        lemmas = look.lemmatizer.lemmatize(forms)
        cands = find_candidates(lemmas, look.lexicon, 0, forms=forms)
        by_span = {(m.indices, m.lemma.casefold()): m for m in cands}
        for t in it.mwes:
            m = by_span.get((tuple(t.indices), mwe_key(t)))
            if m is None:
                out_of_table += 1
                continue
            row = {name: any(k.indices == m.indices and k.lemma == m.lemma for k in kept(model, cands, forms, lemmas))
                   for name, model in systems.items()}
            decisions.append((it.id, tuple(t.indices), mwe_key(t), forms, row))
    if args.write_unlabelled:
        from mwemt.fileio import atomic_write

        with atomic_write(args.write_unlabelled) as fh:
            fh.write("# ID<TAB>INDICES<TAB>LABEL (1: an MWE reading of the entry here, 0: not)<TAB>entry<TAB>sentence\n")
            for id_, idx, key, forms, _ in decisions:
                marked = " ".join(f"[{w}]" if i in idx else w for i, w in enumerate(forms))
                fh.write(f"{id_}\t{','.join(map(str, idx))}\t?\t{key}\t{marked}\n")
        print(f"wrote {len(decisions)} items to label to {args.write_unlabelled}", file=sys.stderr)
    results: dict = {"mwe_test": {}, "dimsum_test": {}, "parseme_heldout": {}}
    print(f"MWE test: {len(decisions)} test MWEs matched by the table look-up ({out_of_table} not: key not in the "
          f"table or another surface)" + (f"; {sum(labels.get((d[0], d[1]), 1) for d in decisions)} labelled true"
                                          if labels else "; no labels: every item counts as true"))
    for name in systems:
        tp = fp = fn = 0
        for id_, idx, _, _, row in decisions:
            y = labels.get((id_, idx)) if labels else 1
            if y is None:
                raise SystemExit(f"no label for test MWE {id_} {idx}")
            tp += y and row[name]
            fp += (not y) and row[name]
            fn += y and not row[name]
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        results["mwe_test"][name] = {"kept": tp + fp, "true_kept": tp, "false_kept": fp, "true_lost": fn,
                                     "precision": round(p, 4), "recall": round(r, 4)}
        print(f"  {name:45} kept {tp + fp:5d}  P {100 * p:5.1f}  R {100 * r:5.1f}")
    # DiMSUM test and PARSEME held-out: predictions after overlap resolution, as identify_context_eval
    data = {"dimsum_test": (read_dimsum(args.dimsum_test), False),
            "parseme_heldout": ([s for k, s in enumerate(parseme_sentences(args.parseme)) if parseme_split(k) == "heldout"],
                                True)}
    from mwemt.preprocess.identify import resolve_overlaps

    for dname, (sentences, verbal) in data.items():
        print(f"{dname}: {len(sentences)} sentences, {sum(len(g) for _, g in sentences)} gold MWEs")
        for name, model in systems.items():
            prf = Prf()
            for forms, gold in sentences:
                lemmas = look.lemmatizer.lemmatize(forms)
                cands = find_candidates(lemmas, look.lexicon, 0, forms=forms)
                if verbal:   # PARSEME annotates verbal MWEs only: only verbal entries' matches are predictions
                    cats = new.categories
                    cands = [m for m in cands if any(c.startswith("verb.") for c in cats.get(m.lemma.casefold(), ()))]
                ks = kept(model, cands, forms, lemmas)
                pred = resolve_overlaps(ks, by_confidence=True) if model is not None else resolve_overlaps(ks)
                prf.add(gold, pred)
            results[dname][name] = prf.to_json()
            print(f"  {name:45} {prf.row()}")
    if args.json:
        from mwemt.provenance import write_json

        write_json(args.json, {"table": table.signature(), "today": today.signature, "new": new.signature,
                               "new_settings": new.thresholds.describe(), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
