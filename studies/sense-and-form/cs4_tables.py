#!/usr/bin/env python
"""The tables of results/cpu-science-4/README.md, printed from its results.json (Markdown on stdout).

    python studies/sense-and-form/cs4_tables.py results/cpu-science-4

1. each seed group: the mean over its seeds (max - min) per column, and its degenerate lines per test;
2. each system against its same-seed baseline (results.json ``seed_baselines``): the difference per column, with
   ``*`` where the paired bootstrap against that baseline gives p < 0.05 (``seed_p_value``, or ``p_value`` for
   the seed-1 systems, whose baseline is the run's baseline);
3. judged constraints: the tuned threshold and the constrained and accepted lines per system and test.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLUMNS = (("tatoeba/bleu", "Tatoeba BLEU"), ("tatoeba/chrf", "Tatoeba chrF"), ("tatoeba-mwe/bleu", "MWE-test BLEU"),
           ("tatoeba-mwe/mwe-p", "MWE-P"), ("tatoeba-mwe/mwe-verdict", "MWE verdict"), ("ted/mwe-p", "TED MWE-P"),
           ("ted/mwe-verdict", "TED verdict"))
TESTS = ("tatoeba", "tatoeba-mwe", "ted")


def _cell(results: dict, system: str, column: str) -> dict:
    cell = results["scores"].get(system, {}).get(column)
    if cell is None:
        raise SystemExit(f"cs4_tables.py: error: results.json has no score {column!r} for {system!r}")
    return cell


def groups_table(results: dict) -> list[str]:
    out = ["| group | seeds | " + " | ".join(label for _, label in COLUMNS) + " | degenerate lines: "
           + " / ".join(TESTS) + " |", "|---|---:|" + "---:|" * len(COLUMNS) + "---|"]
    in_group = {m for members in results["seed_groups"].values() for m in members}
    rows = list(results["seed_groups"].items()) + [(s, [s]) for s in results["systems"] if s not in in_group]
    for name, members in rows:
        cells = []
        for column, _ in COLUMNS:
            values = [_cell(results, m, column)["score"] for m in members]
            mean = sum(values) / len(values)
            cells.append(f"{mean:.1f} ({max(values) - min(values):.1f})" if len(values) > 1 else f"{mean:.1f}")
        degenerate = " / ".join("+".join(str(results["degenerate"][t]["systems"][m]["any"]) for m in members)
                                for t in TESTS)
        out.append(f"| {name} | {len(members)} | " + " | ".join(cells) + f" | {degenerate} |")
    return out


def differences_table(results: dict) -> list[str]:
    out = ["| system | vs | " + " | ".join(label for _, label in COLUMNS) + " |",
           "|---|---|" + "---:|" * len(COLUMNS)]
    base_of = results.get("seed_baselines") or {}
    baselines = set(results["seed_groups"].get("baseline", [results["baseline"]]))
    for system in results["systems"]:
        if system in baselines:
            continue
        base = base_of.get(system, results["baseline"])
        cells = []
        for column, _ in COLUMNS:
            cell = _cell(results, system, column)
            p = cell.get("seed_p_value") if base != results["baseline"] else cell.get("p_value")
            diff = cell["score"] - _cell(results, base, column)["score"]
            cells.append(f"{diff:+.1f}{'*' if p is not None and p < 0.05 else ''}")
        out.append(f"| {system} | {base} | " + " | ".join(cells) + " |")
    return out


def constraints_table(results: dict) -> list[str]:
    out = ["| system | threshold | " + " | ".join(f"{t}: constrained / accepted" for t in TESTS) + " |",
           "|---|---:|" + "---:|" * len(TESTS)]
    for system, tests in (results.get("constraints") or {}).items():
        thresholds = {tests[t].get("threshold") for t in TESTS if t in tests}
        threshold = thresholds.pop() if len(thresholds) == 1 else None
        cells = [f"{tests[t]['constrained_lines']} / {tests[t]['accepted']}" if t in tests else "" for t in TESTS]
        shown = "" if threshold is None else f"{threshold:.3f}"
        out.append(f"| {system} | {shown} | " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("publication", help="a published run directory holding results.json")
    args = ap.parse_args(argv)
    path = Path(args.publication) / "results.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cs4_tables.py: error: {path}: {exc}", file=sys.stderr)
        return 2
    for table in (groups_table(results), differences_table(results), constraints_table(results)):
        print("\n".join(table) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
