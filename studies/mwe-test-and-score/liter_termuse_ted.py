#!/usr/bin/env python
"""LiTER and term use on the TED MT output that people checked (issue 29, item 5): the corpus
values, and how the per-MWE flags line up with the human verdicts on the MWE translations.

The adjudicated TED MWEs of Monti et al. (``FINAL`` rows with a Y/N ``mt_check``) as a test set
(`build_ted_testset`), the annotated MT sentences (``mt_it``) as the hypothesis. For every MWE,
LiTER says whether the MT holds a word-for-word translation (MultiWordNet blocklist minus the
reference sentence's words) and term use whether it holds one of the MWE's given translations (an
MWE table, `mwemt testset table`). Printed: each metric's score and signature, and the share of
human-correct (Y) verdicts among the MWEs flagged and not flagged.

    python studies/mwe-test-and-score/liter_termuse_ted.py --table ted_table_merged.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mwemt.evaluate.liter import Liter, word_dictionary  # noqa: E402
from mwemt.evaluate.term_use import TermUse, read_terms  # noqa: E402
from mwemt.testsets.mwe_table import mwe_key, read_dictionary  # noqa: E402
from mwemt.testsets.testset import build_ted_testset, read_ted_pairs  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, default=SHARED / "testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv")
    ap.add_argument("--dictionary", type=Path, default=SHARED / "lexicons/wordnet-mwe/derived/en-ita.multiwordnet.tsv")
    ap.add_argument("--table", type=Path, required=True, help="MWE translation table (term use's given translations)")
    ap.add_argument("--min-count", type=int, default=2, help="term use: least alignment count (default: %(default)s)")
    args = ap.parse_args()

    items, _ = build_ted_testset(read_ted_pairs(args.pairs, "FINAL"))
    verdicts = [c.get("mt_check", "").strip().upper() for it in items for c in it.meta["mwe_checks"]]
    hyps = [it.meta["mt_it"] for it in items]
    refs = [it.mwes for it in items]
    liter = Liter(word_dictionary(read_dictionary(args.dictionary, min_words=1)), "it",
                  dictionary_name=args.dictionary.name, references=[it.reference for it in items])
    terms = read_terms(args.table, "it", args.min_count)
    for metric, flag_key, what in ((liter, "literal_flags", "literal"),
                                   (TermUse(terms, "it", match="exact", terms_name=args.table.name,
                                            min_count=args.min_count), "used_flags", "term used"),
                                   (TermUse(terms, "it", match="lemma", terms_name=args.table.name,
                                            min_count=args.min_count), "used_flags", "term used")):
        stats = metric.sentence_stats(hyps, refs)
        score = metric.score_from_totals(stats.totals())
        # the flags come in test-set order over the MWEs the metric counted: rebuild which those are
        counted = []
        for it in items:
            for m in it.mwes:
                if metric is liter:
                    ok = bool(liter.blocklist(m, it.reference))
                else:
                    ok = bool(terms.get(mwe_key(m)))
                counted.append(ok)
        v = [verdict for verdict, ok in zip(verdicts, counted) if ok]
        flags = list(stats.info[flag_key])
        assert len(flags) == len(v)
        rows = [(f, x) for f, x in zip(flags, v) if x in ("Y", "N")]
        on = [x for f, x in rows if f]
        off = [x for f, x in rows if not f]
        print(f"{metric.name} = {score:.1f}  ({int(stats.totals()[0])} of {int(stats.totals()[1])} MWEs {what})")
        print(f"  {metric.signature(stats)}")
        print(f"  human Y among MWEs {what}: {on.count('Y')}/{len(on)} = {on.count('Y') / max(len(on), 1):.3f}; "
              f"not {what}: {off.count('Y')}/{len(off)} = {off.count('Y') / max(len(off), 1):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
