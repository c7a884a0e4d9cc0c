"""Draw a seeded sample of MWE occurrences from a built MWE test set, for checking by hand (issue 29, item 7).

    python scripts/testset_sample.py results/cpu-science-2/refs/tatoeba-mwe.jsonl            # 100 MWEs, seed 29
    python scripts/testset_sample.py TEST.jsonl --n 100 --seed 29 --tsv sample.tsv           # + a TSV to label

The sample is drawn over MWE occurrences (not sentences): every MWE of every item is one unit, the units are
listed in file order and `random.Random(seed).sample` picks n of them, printed in file order. Each is shown with
its id, the MWE (the lexicon's name and the surface form), the source, the reference, the reference span (the
MWE's translation in the reference, with its token indices), the part (idiomatic / literal), the classifier's
confidence and the alternatives the item carries. `--tsv` writes id, mwe and empty label columns
(genuine, clean_ref, note) to fill in.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


def read_units(path: Path) -> list[tuple[dict, dict]]:
    """Every (item, mwe) pair of a test-set JSONL, in file order; a bad line is a located error."""
    units = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                mwes = item["mwes"]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                print(f"{path}:{n}: expected a test-set item (JSON with 'mwes'): {e}", file=sys.stderr)
                raise SystemExit(2) from None
            units.extend((item, m) for m in mwes)
    return units


def sample(units: list, n: int, seed: int) -> list[int]:
    """Indices of n units drawn with `seed`, in file order."""
    return sorted(random.Random(seed).sample(range(len(units)), min(n, len(units))))


def show(k: int, item: dict, m: dict) -> str:
    toks = item["reference"].split()
    span_idx = m.get("reference_indices") or []
    name = m.get("name") or m.get("lemma")
    surface = m.get("surface", "")
    lines = [f"[{k}] id {item['id']}  MWE: {name}" + (f"  (as: {surface})" if surface and surface.lower() != name.lower() else ""),
             f"    src : {item.get('meta', {}).get('raw_source', item['source'])}",
             f"    ref : {item.get('meta', {}).get('raw_reference', item['reference'])}",
             f"    span: {m.get('reference', '')!r}  tokens {span_idx} "
             f"({' '.join(toks[i] for i in span_idx if 0 <= i < len(toks))})",
             f"    part: {m.get('part', '?')}  confidence: {m.get('confidence', '-')}",
             f"    alts: {'; '.join(m.get('alternatives', [])) or '-'}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("testset", type=Path)
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--seed", type=int, default=29)
    p.add_argument("--tsv", type=Path, help="also write id/mwe rows with empty label columns here")
    a = p.parse_args(argv)
    units = read_units(a.testset)
    picked = sample(units, a.n, a.seed)
    print(f"# {len(picked)} of {len(units)} MWEs of {a.testset}, seed {a.seed}\n")
    for k, i in enumerate(picked, 1):
        print(show(k, *units[i]) + "\n")
    if a.tsv:
        rows = ["id\tmwe\tgenuine\tclean_ref\tnote"]
        rows += [f"{units[i][0]['id']}\t{units[i][1].get('name') or units[i][1]['lemma']}\t\t\t" for i in picked]
        a.tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
