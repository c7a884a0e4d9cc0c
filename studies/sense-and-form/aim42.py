#!/usr/bin/env python
"""Issue 42's aim, checked on a run's results.json (cpu-science-4) and a blind sample's labels.

Against the same-seed baselines (results.json ``seed_groups`` / ``seed_baselines``), a group of seeds meets the
aim when all of these hold:

- verdict:    the MWE verdict on the MWE test (``--verdict``, default tatoeba-mwe/mwe-verdict) is higher on every
              seed, and its mean gain is larger than the baseline group's seed spread (max - min over its seeds);
- bleu, chrf: the general test's BLEU and chrF (``--bleu``, ``--chrf``) are on average at most 0.2 lower;
- degenerate: on every seed and every test, no more degenerate lines (results.json ``degenerate``, "any") than
              the same-seed baseline;
- blind:      (with ``--blind DIR``, `blind_pairs.py score`'s score.json) better lines outnumber worse ones at
              least 3:1 and at most 25% of the forced MWEs are wrong in sense or form (or broken).

    python studies/sense-and-form/aim42.py results/cpu-science-4 --group judged-v4 \\
        --blind studies/sense-and-form/cs4-blind-seed1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _score(results: dict, system: str, column: str) -> float | None:
    cell = results["scores"].get(system, {}).get(column)
    return None if cell is None else cell.get("score")


def check(results: dict, group: str, *, verdict: str, bleu: str, chrf: str, blind: Path | None) -> list[dict]:
    groups = results.get("seed_groups") or {}
    if group not in groups or "baseline" not in groups:
        raise SystemExit(f"aim42.py: error: results.json has no seed group {group!r} (groups: {', '.join(groups)})")
    members = groups[group]
    base_of = results.get("seed_baselines") or {}
    bases = [base_of.get(m, results["baseline"]) for m in members]
    rows = []

    def deltas(column):
        return [(_score(results, m, column) or 0.0) - (_score(results, b, column) or 0.0)
                for m, b in zip(members, bases)]

    base_values = [_score(results, b, verdict) for b in groups["baseline"]]
    spread = max(base_values) - min(base_values)
    d = deltas(verdict)
    rows.append({"criterion": "verdict", "column": verdict, "deltas": d, "mean": sum(d) / len(d),
                 "rule": f"every seed > 0 and mean > the baselines' spread {spread:.2f}",
                 "met": all(x > 0 for x in d) and sum(d) / len(d) > spread})
    for name, column in (("bleu", bleu), ("chrf", chrf)):
        d = deltas(column)
        rows.append({"criterion": name, "column": column, "deltas": d, "mean": sum(d) / len(d),
                     "rule": "mean >= -0.2", "met": sum(d) / len(d) >= -0.2})
    worse = []
    counts = []
    for test, info in (results.get("degenerate") or {}).items():
        for m, b in zip(members, bases):
            sys_any, base_any = info["systems"][m]["any"], info["systems"][b]["any"]
            counts.append((test, m, sys_any, base_any))
            if sys_any > base_any:
                worse.append(f"{test} {m}: {sys_any} > {base_any}")
    rows.append({"criterion": "degenerate", "column": "degenerate any",
                 "deltas": [s - b for _, _, s, b in counts], "mean": None,
                 "rule": "no test and seed with more degenerate lines than its baseline",
                 "met": not worse, "detail": "; ".join(worse) or "none more"})
    if blind is not None:
        s = json.loads((blind / "score.json").read_text(encoding="utf-8"))
        ratio_ok = s["worse"] == 0 and s["better"] > 0 or (s["worse"] and s["better"] / s["worse"] >= 3)
        rows.append({"criterion": "blind better:worse", "column": str(blind), "deltas": [s["better"], s["worse"]],
                     "mean": None, "rule": ">= 3:1", "met": bool(ratio_ok),
                     "detail": f"better {s['better']}, same {s['same']}, worse {s['worse']}"})
        wrong = s["wrong_sense_or_form"]
        rows.append({"criterion": "blind wrong sense/form", "column": str(blind), "deltas": [wrong], "mean": None,
                     "rule": "<= 25%", "met": wrong is not None and wrong <= 0.25,
                     "detail": ", ".join(f"{k} {v}" for k, v in s["mwe_labels"].items() if k != "-")
                     + (f": {wrong:.1%} wrong" if wrong is not None else "")})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a run directory or a publication (its results.json)")
    ap.add_argument("--group", required=True, help="the seed group to check, e.g. judged-v4")
    ap.add_argument("--verdict", default="tatoeba-mwe/mwe-verdict")
    ap.add_argument("--bleu", default="tatoeba/bleu")
    ap.add_argument("--chrf", default="tatoeba/chrf")
    ap.add_argument("--blind", type=Path, help="a blind sample's folder with score.json (blind_pairs.py score)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    path = Path(args.results)
    path = path / "results.json" if path.is_dir() else path
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"aim42.py: error: {path}: {exc}", file=sys.stderr)
        return 2
    rows = check(results, args.group, verdict=args.verdict, bleu=args.bleu, chrf=args.chrf, blind=args.blind)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"| {args.group} | per seed | mean | rule | |\n|---|---|---:|---|---|")
    for r in rows:
        per = ", ".join(f"{x:+.2f}" if isinstance(x, float) else str(x) for x in r["deltas"])
        mean = "" if r["mean"] is None else f"{r['mean']:+.2f}"
        print(f"| {r['criterion']} ({r['column']}) | {r.get('detail') or per} | {mean} | {r['rule']} | "
              f"{'met' if r['met'] else 'not met'} |")
    print(f"\naim {'met' if all(r['met'] for r in rows) else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
