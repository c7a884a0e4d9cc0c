#!/usr/bin/env python
"""Today's candidate ranking of judged constraints against the sense-from-context ranking (issue 42, item 1),
on the MWE test's items whose MWE has two or more candidates.

Today (`mwemt.nmt.constraints.CandidateFinder`): attested translations by alignment count, then dictionary
entries by target-side frequency (the model's target dictionary and subword model). New
(`mwemt.testsets.senses.SenseRanker`): attested translations by fit to the line's source context plus a
smoothed count prior; dictionary senses by gloss and members' training contexts. The reference is read
only to score the top candidate, after ranking:

- exact: the top candidate's tokens are the reference's aligned MWE translation (casefolded tokens);
- sense: every content word of the top candidate matches a word of that translation by Italian lemma or
  stem (`mwemt.nmt.constraints.Presence`, how judged decoding decides that an output has a candidate);
- top-3 sense: one of the first three does (judged decoding decodes the first ``--candidates``; the new
  ranking's are three different senses, `SenseRanker.best`, the forms of a sense being item 2's).

    python studies/sense-and-form/sense_eval.py --table runs/issue42/data/table.jsonl --senses runs/issue42/data/senses.jsonl.gz \\
        --test results/cpu-science-2-ladder/60000/refs/tatoeba-mwe.jsonl \\
        --target-dict runs/R/stages/prepare/baseline/*/data-bin/dict.it.txt --spm runs/R/stages/subword/baseline/*/spm/spm.model
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", required=True)
    ap.add_argument("--senses", required=True)
    ap.add_argument("--dictionary", default=None,
                    help="read the dictionary senses from this wn-aligned TSV (default: those stored in --senses)")
    ap.add_argument("--test", required=True)
    ap.add_argument("--target-dict", required=True, help="the model's fairseq target dictionary (dict.it.txt)")
    ap.add_argument("--spm", required=True, help="the model's target subword model (spm.model)")
    ap.add_argument("--min-count", type=int, default=1)
    ap.add_argument("--candidates", type=int, default=3)
    ap.add_argument("--json", help="write the per-item rankings and the counts here")
    ap.add_argument("--examples", type=int, default=0, help="print N items where the two top-1s differ")
    args = ap.parse_args(argv)

    from fairseq.data import Dictionary

    from mwemt.formats import read_testset
    from mwemt.nmt.constraints import Presence, TargetFrequency, table_translations
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.preprocess.subword import SubwordModel
    from mwemt.testsets.mwe_table import SOURCES, MweTranslationTable, mwe_key, translation_tokens
    from mwemt.testsets.senses import DictionarySenses, SenseContexts, SenseRanker

    table = MweTranslationTable.read(args.table)
    freq = TargetFrequency(Dictionary.load(args.target_dict), SubwordModel.load(args.spm))
    items = read_testset(args.test)
    keys = {mwe_key(m) for it in items for m in it.mwes}
    ranker = SenseRanker(SenseContexts.read(args.senses),
                         DictionarySenses.read(args.dictionary, keys=keys) if args.dictionary else None)
    presence = Presence("it")
    lem = get_lemmatizer("simplemma", "en")

    def today(key):
        # CandidateFinder.candidates' order, over every candidate (not cut to --candidates)
        found = [(e, freq.phrase(e.translation)) for e in table_translations(table, key, args.min_count, SOURCES)]
        found.sort(key=lambda ef: (-ef[0].count, -ef[1][0], -ef[1][1], len(ef[0].translation)))
        return [e for e, _ in found]

    rows = []
    for it in items:
        tokens = it.source.split()
        lemmas = lem.lemmatize(tokens)
        for m in it.mwes:
            key = mwe_key(m)
            old = today(key)
            if len(old) < 2:
                continue
            new = [r.entry for r in ranker.best(key, old, lemmas, m.indices, args.candidates)]
            gold = translation_tokens(m.reference, "it")
            gold_words = presence.words(" ".join(t for t in gold if t != "..."))
            seen = any(e.count > 0 for e in old)

            def scores(ranking, gold=gold, gold_words=gold_words):
                return {"exact": ranking[0].translation == gold,
                        "sense": presence.has(ranking[0].translation, gold_words),
                        "top3": any(presence.has(e.translation, gold_words) for e in ranking[:args.candidates])}

            rows.append({"id": it.id, "key": key, "seen": seen, "n": len(old), "reference": " ".join(gold),
                         "source": it.source, "today": [e.text for e in old[:3]], "new": [e.text for e in new[:3]],
                         "today_scores": scores(old), "new_scores": scores(new)})
    out = {}
    print("| items (2+ candidates) | n | today exact | new exact | today sense | new sense | today top-3 | new top-3 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, sel in (("all", rows), ("seen in training", [r for r in rows if r["seen"]]),
                      ("never seen (dictionary only)", [r for r in rows if not r["seen"]])):
        n = len(sel)
        cell = {f"{w}_{k}": sum(r[f"{w}_scores"][k] for r in sel) for w in ("today", "new")
                for k in ("exact", "sense", "top3")}
        out[name] = {"n": n, **cell}
        pct = lambda v, n=n: f"{v} ({100 * v / n:.1f}%)" if n else "-"  # noqa: E731
        print(f"| {name} | {n} | {pct(cell['today_exact'])} | {pct(cell['new_exact'])} | {pct(cell['today_sense'])} "
              f"| {pct(cell['new_sense'])} | {pct(cell['today_top3'])} | {pct(cell['new_top3'])} |")
    print(f"\n(ranker {ranker.signature()}; table {table.signature()})")
    shown = 0
    for r in rows:
        if shown < args.examples and r["today"][0] != r["new"][0]:
            shown += 1
            print(f"- {r['source']} | {r['key']} | ref {r['reference']} | today {r['today']} "
                  f"({'ok' if r['today_scores']['sense'] else 'x'}) | new {r['new']} "
                  f"({'ok' if r['new_scores']['sense'] else 'x'})")
    if args.json:
        from mwemt.provenance import write_json

        write_json(args.json, {"counts": out, "ranker": ranker.signature(), "table": table.signature(), "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
