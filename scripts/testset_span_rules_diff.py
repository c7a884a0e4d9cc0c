#!/usr/bin/env python
"""What the span rules of issue 29 change in an existing test set, from the alignments it stores.

Every item of a test set built by `mwemt testset build` keeps its alignment (``meta.alignment``),
so each MWE's reference can be derived again under the rules before issue 29 (`SpanRules.none()`,
three filters) and under the new ones (`SpanRules()`, the ``function_only`` filter; ``--table``:
known translations as candidates) without realigning. Printed: how many references stay, change
(by kind: negation added, clitic added, article dropped, completed by a known translation, other)
and are dropped (by filter), and up to ``--show`` examples of each. Nothing is rewritten.

    python scripts/testset_span_rules_diff.py results/cpu-science/refs/tatoeba-mwe.jsonl [--table T]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mwemt.formats import read_testset  # noqa: E402
from mwemt.preprocess.align import parse_pharaoh  # noqa: E402
from mwemt.preprocess.aligned_testset import (  # noqa: E402
    ARTICLES,
    CLITICS,
    NEGATIONS,
    ReferenceFilters,
    SpanRules,
    aligned_reference,
    filter_reason,
)
from mwemt.preprocess.mwe_table import MweTranslationTable, mwe_key  # noqa: E402


def kind_of(old: list[str], new: list[str], candidate: bool) -> str:
    added = [w for w in new if w not in old]
    removed = [w for w in old if w not in new]
    if candidate and added:
        return "completed by a known translation"
    if added and all(w in NEGATIONS["it"] or w in {"era", "è", "ho", "ha", "sono"} for w in added):
        return "negation added"
    if added and all(w in CLITICS["it"] for w in added):
        return "clitic added"
    if removed and not added and all(w in ARTICLES["it"] for w in removed):
        return "article dropped"
    return "other"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("testset", type=Path)
    ap.add_argument("--table", type=Path, help="MWE translation table: known translations as span candidates")
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    table = MweTranslationTable.read(args.table) if args.table else None
    counts: Counter = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for item in read_testset(args.testset):
        src, tgt = item.source.split(), item.reference.split()
        links = parse_pharaoh(item.meta.get("alignment", ""))
        for m in item.mwes:
            surface = [src[i] for i in m.indices]
            old = aligned_reference(m.indices, links, tgt, src_tokens=src, rules=SpanRules.none())
            cands = [e.translation for e in table.translations(mwe_key(m), min_count=2)] if table else ()
            new = aligned_reference(m.indices, links, tgt, src_tokens=src, candidates=cands)
            reason = filter_reason(new, len(m.indices), ReferenceFilters(), src_tokens=surface)
            old_words = [w.lower() for w in (old.text.split() if old else [])]
            if reason is not None:
                kind = f"dropped: {reason}"
            elif new.text == (old.text if old else ""):
                kind = "unchanged"
            else:
                cand_used = bool(cands) and new.text != aligned_reference(
                    m.indices, links, tgt, src_tokens=src).text
                kind = kind_of(old_words, [w.lower() for w in new.text.split()], cand_used)
            counts[kind] += 1
            if kind != "unchanged" and len(examples[kind]) < args.show:
                examples[kind].append(f"{' '.join(surface)}: {old.text if old else '-'} -> "
                                      f"{new.text if new else '-'}   | {item.source} | {item.reference}")
    total = sum(counts.values())
    print(f"{args.testset}: {total} MWEs" + (f"; candidates from {args.table}" if args.table else ""))
    for kind, n in counts.most_common():
        print(f"  {kind}: {n} ({100 * n / total:.1f}%)")
        for e in examples.get(kind, []):
            print(f"      {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
