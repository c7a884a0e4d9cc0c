#!/usr/bin/env python
"""A blind comparison of two systems' outputs on the lines where they differ (issue 42's aim: among the changed
lines, a random sample labelled without knowing which system wrote which output).

    python studies/sense-and-form/blind_pairs.py make --src SRC --ref REF --base BASE.txt --system SYS.txt \\
        --report SYS.report.json --sample 40 --seed 42 --out DIR
    python studies/sense-and-form/blind_pairs.py score --out DIR

``make`` draws ``--sample`` of the lines where the two outputs differ (seeded) and writes, in DIR:
- ``blind.tsv``: k, source, reference, output 1, output 2, with the two outputs in a seeded random order per line
  and nothing that says which system wrote which; label it first, in ``labels.tsv`` (k, then ``1``, ``2`` or
  ``same``: which output is the better translation of the source);
- ``forced.tsv``: k and the MWE phrase the constraint forced into the system's output (from the judged
  constraint report), to label **after** ``labels.tsv`` is written: a third column of ``labels.tsv``, ``ok``,
  ``sense`` (the wrong sense, or not an MWE here), ``form`` (the right sense in the wrong inflection) or
  ``broken`` (a fragment, a loop), or ``-`` where no phrase was forced;
- ``blind_key.json``: which output is the system's, per k (read only by ``score``).
``score`` reads the key and the labels and prints better / same / worse for the system and the share of forced
MWEs wrong in sense or form; it writes ``score.json``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from mwemt.fileio import iter_lines

LABELS = ("1", "2", "same")
MWE_LABELS = ("ok", "sense", "form", "broken", "-")


def _lines(path: str) -> list[str]:
    """The lines as written (``.gz`` read as the text inside; split on newlines only)."""
    return list(iter_lines(path, normalize=False))


def _forced(report: str | None) -> dict[int, list[str]]:
    """Line number -> the phrases a judged constraint report says were forced into the kept output."""
    if not report:
        return {}
    data = json.loads(Path(report).read_text(encoding="utf-8"))
    out: dict[int, list[str]] = {}
    for j in data.get("judgements") or []:
        acc = j.get("accepted")   # {MWE: the forced phrase}
        if acc:
            out[int(j["line"])] = [f"{mwe} -> {text}" for mwe, text in acc.items()]
    return out


def make(args) -> int:
    src, ref, base, sys_ = (_lines(p) for p in (args.src, args.ref, args.base, args.system))
    if not len(src) == len(ref) == len(base) == len(sys_):
        print(f"blind_pairs.py: error: line counts differ: src {len(src)}, ref {len(ref)}, base {len(base)}, "
              f"system {len(sys_)}", file=sys.stderr)
        return 2
    changed = [i for i in range(len(src)) if base[i].strip() != sys_[i].strip()]
    rng = random.Random(args.seed)
    picked = sorted(rng.sample(changed, min(args.sample, len(changed))))
    order = random.Random(args.seed + 1)
    forced = _forced(args.report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if (out / "labels.tsv").exists():
        print(f"blind_pairs.py: error: {out / 'labels.tsv'} exists: a new sample would not match its labels",
              file=sys.stderr)
        return 2
    blind, key, forced_rows = [], [], []
    for k, i in enumerate(picked, 1):
        system_first = order.random() < 0.5
        first, second = (sys_[i], base[i]) if system_first else (base[i], sys_[i])
        blind.append("\t".join([str(k), src[i], ref[i], first, second]))
        key.append({"k": k, "line": i + 1, "system": 1 if system_first else 2})
        forced_rows.append(f"{k}\t{' | '.join(forced.get(i + 1, [])) or '-'}")
    (out / "blind.tsv").write_text("k\tsource\treference\toutput 1\toutput 2\n" + "\n".join(blind) + "\n",
                                   encoding="utf-8")
    (out / "forced.tsv").write_text("k\tforced into the system's output\n" + "\n".join(forced_rows) + "\n",
                                    encoding="utf-8")
    (out / "blind_key.json").write_text(json.dumps({"changed_lines": len(changed), "seed": args.seed,
                                                    "items": key}, indent=1) + "\n", encoding="utf-8")
    print(f"{len(changed)} changed lines; {len(picked)} drawn (seed {args.seed}) -> {out}/blind.tsv, forced.tsv")
    return 0


def score(args) -> int:
    out = Path(args.out)
    key = {r["k"]: r for r in json.loads((out / "blind_key.json").read_text(encoding="utf-8"))["items"]}
    better = same = worse = 0
    mwe: dict[str, int] = {m: 0 for m in MWE_LABELS}
    for n, line in enumerate((out / "labels.tsv").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#") or line.startswith("k\t"):
            continue
        cols = line.split("\t")
        if len(cols) < 2 or not cols[0].isdigit() or int(cols[0]) not in key or cols[1] not in LABELS \
                or (len(cols) > 2 and cols[2] not in MWE_LABELS):
            print(f"blind_pairs.py: error: {out / 'labels.tsv'}:{n}: expected k<TAB>{'|'.join(LABELS)}"
                  f"[<TAB>{'|'.join(MWE_LABELS)}], got {line!r}", file=sys.stderr)
            return 2
        k, verdict = int(cols[0]), cols[1]
        if verdict == "same":
            same += 1
        elif int(verdict) == key[k]["system"]:
            better += 1
        else:
            worse += 1
        if len(cols) > 2:
            mwe[cols[2]] += 1
    forced = sum(v for m, v in mwe.items() if m != "-")
    wrong = mwe["sense"] + mwe["form"] + mwe["broken"]
    result = {"labelled": better + same + worse, "better": better, "same": same, "worse": worse,
              "better_to_worse": round(better / worse, 2) if worse else None, "forced_mwes": forced,
              "mwe_labels": mwe, "wrong_sense_or_form": round(wrong / forced, 3) if forced else None}
    (out / "score.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="draw the blind sample")
    for a in ("--src", "--ref", "--base", "--system", "--out"):
        m.add_argument(a, required=True)
    m.add_argument("--report", help="the system's judged constraint report (JSON): what was forced")
    m.add_argument("--sample", type=int, default=40)
    m.add_argument("--seed", type=int, default=42)
    s = sub.add_parser("score", help="unblind the labels")
    s.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    return make(args) if args.cmd == "make" else score(args)


if __name__ == "__main__":
    sys.exit(main())
