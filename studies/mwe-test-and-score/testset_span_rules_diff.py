#!/usr/bin/env python
"""What the span rules of issue 29 change in an existing test set, from the alignments it stores.

Every item of a test set built by `mwemt testset build` keeps its alignment (``meta.alignment``),
so each MWE's reference can be derived again under the rules before issue 29 (`SpanRules.none()`,
three filters) and under the new ones (`SpanRules()`, the ``function_only`` filter; ``--table``:
known translations as candidates) without realigning. Printed: how many references stay, change
(by kind: negation added, clitic added, article dropped, completed by a known translation, other)
and are dropped (by filter), and up to ``--show`` examples of each. Nothing is rewritten.

``--alternatives`` takes each MWE's stored alternatives as its known translations (when the table
the test was built with is not at hand: it reproduces most stored references). ``--handcheck TSV``
(a hand check as `scripts/testset_sample.py` samples it: id, mwe, genuine, clean_ref, note) prints
each labelled row's stored reference beside the one the current rules derive, and counts the
``clean_ref`` N rows and Y rows whose reference changes (to be read one by one), apart from those
whose stored reference the first-round rules do not derive again either (candidates differ).

    python studies/mwe-test-and-score/testset_span_rules_diff.py results/cpu-science/refs/tatoeba-mwe.jsonl [--table T]
    python studies/mwe-test-and-score/testset_span_rules_diff.py results/cpu-science-2/refs/tatoeba-mwe.jsonl --alternatives \
        --handcheck results/cpu-science-2/refs/tatoeba-mwe.handcheck.tsv
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mwemt.errors import MwemtError  # noqa: E402
from mwemt.fileio import read_lines  # noqa: E402
from mwemt.formats import read_testset  # noqa: E402
from mwemt.preprocess.tokenize import detokenize  # noqa: E402
from mwemt.testsets.align import parse_pharaoh  # noqa: E402
from mwemt.testsets.aligned import (  # noqa: E402
    ARTICLES,
    CLITICS,
    NEGATIONS,
    ReferenceFilters,
    SpanRules,
    aligned_reference,
    filter_reason,
)
from mwemt.testsets.mwe_table import MweTranslationTable, mwe_key  # noqa: E402


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


# the span rules of issue 29's first round, without those the second hand check asked for
FIRST_ROUND = SpanRules(contractions=False, clusters=False, cognates=False, tense=False, gaps=False, edges=False)


def known(m, table: MweTranslationTable | None, alternatives: bool) -> list[tuple[str, ...]]:
    if table is not None:
        return [e.translation for e in table.translations(mwe_key(m), min_count=2)]
    return [tuple(a.split()) for a in m.alternatives] if alternatives else []


def handcheck(testset: Path, tsv: Path, table: MweTranslationTable | None, alternatives: bool) -> int:
    """Each labelled row's stored reference and the one derived now; counts of changed N and Y rows."""
    items = {item.id: item for item in read_testset(testset)}
    counts: Counter = Counter()
    for lineno, line in enumerate(read_lines(tsv), 1):
        if not line.strip() or line.startswith("#") or line.startswith("id\t"):
            continue
        cols = line.split("\t")
        if len(cols) < 4 or cols[0] not in items:
            raise MwemtError(f"{tsv}:{lineno}: expected id, mwe, genuine, clean_ref[, note] with an id of {testset}")
        item, name, clean = items[cols[0]], cols[1], cols[3]
        m = next((m for m in item.mwes if (m.name or m.lemma) == name), None)
        if m is None:
            raise MwemtError(f"{tsv}:{lineno}: item {cols[0]} has no MWE {name!r}")
        src, tgt = item.source.split(), item.reference.split()

        def derive(rules: SpanRules, m=m, src=src, tgt=tgt, item=item) -> str:
            ref = aligned_reference(m.indices, parse_pharaoh(item.meta.get("alignment", "")), tgt, src_tokens=src,
                                    rules=rules, candidates=known(m, table, alternatives))
            reason = filter_reason(ref, len(m.indices), ReferenceFilters(), src_tokens=[src[i] for i in m.indices])
            return f"(dropped: {reason})" if reason else " ... ".join(detokenize(list(r), "it") for r in ref.runs)

        derived = derive(SpanRules())
        # the stored reference, derived again without the second-round rules: a difference there
        # comes from the candidates (a table not at hand), not from the rules
        reproduced = derive(FIRST_ROUND) == m.reference
        changed = derived != m.reference
        state = "unchanged" if not changed else "changed" if reproduced else "not reproduced"
        counts[f"clean_ref {clean}: {state}"] += 1
        print(f"{cols[0]}\t{name}\tgenuine {cols[2]}\tclean_ref {clean}\t{m.reference!r} -> {derived!r}"
              f"{'' if not changed else '  CHANGED' if reproduced else '  (stored reference not reproduced)'}"
              + (f"\t# {cols[4]}" if changed and len(cols) > 4 else ""))
    for key, n in sorted(counts.items()):
        print(f"  {key}: {n}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("testset", type=Path)
    ap.add_argument("--table", type=Path, help="MWE translation table: known translations as span candidates")
    ap.add_argument("--alternatives", action="store_true",
                    help="each MWE's stored alternatives are its known translations (without --table)")
    ap.add_argument("--handcheck", type=Path, help="hand-check TSV: compare its rows' references")
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    table = MweTranslationTable.read(args.table) if args.table else None
    if args.handcheck:
        return handcheck(args.testset, args.handcheck, table, args.alternatives)
    counts: Counter = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    for item in read_testset(args.testset):
        src, tgt = item.source.split(), item.reference.split()
        links = parse_pharaoh(item.meta.get("alignment", ""))
        for m in item.mwes:
            surface = [src[i] for i in m.indices]
            old = aligned_reference(m.indices, links, tgt, src_tokens=src, rules=SpanRules.none())
            cands = known(m, table, args.alternatives)
            new = aligned_reference(m.indices, links, tgt, src_tokens=src, candidates=cands)
            reason = filter_reason(new, len(m.indices), ReferenceFilters(), src_tokens=surface)
            old_words = [w.lower() for w in (old.text.split() if old else [])]
            if reason is not None:
                kind = f"dropped: {reason}"
            elif new.text == (old.text if old else ""):
                kind = "unchanged"
            else:
                plain = aligned_reference(m.indices, links, tgt, src_tokens=src)
                cand_used = bool(cands) and new.text != (plain.text if plain is not None else "")
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
