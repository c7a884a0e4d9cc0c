#!/usr/bin/env python
"""Issue 36's aim, checked on a run's results.json: an MWE gain that costs nothing.

For each group of seeds (results.json ``seed_groups``) against the baseline's group, every seed compared
with the baseline of the same training seed (``seed_baseline`` / ``seed_p_value``; the first seed with
the run's baseline, ``p_value``), a method meets the aim when all of these hold:

- mwe:     the precision-aware MWE score (``--mwe``) is on average at least ``--mwe-gain`` points above
           the baseline's, beyond the seed spread, and significantly higher on every seed;
- ted:     the MWE score on TED's human references (``--ted``) is higher beyond the seed spread and
           significantly on every seed;
- bleu:    the general test's BLEU (``--bleu``) is on average at most ``--bleu-loss`` below the baseline's;
- chrf:    the general test's chrF (``--chrf``) is significantly lower on no seed;
- mwebleu: the MWE test's BLEU (``--mwe-bleu``) is significantly lower on no seed.

The seed spread of a column is what results.md calls it: the largest max - min over the seeds of any
group. Significance: paired bootstrap p < 0.05 (the run's own test; nothing is recomputed here).

    python scripts/aim_check.py results/cpu-science-3            # a Markdown table on stdout
    python scripts/aim_check.py runs/cpu-science-3-60000 --json   # the same as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from mwemt.cli.argtypes import float_range

ALPHA = 0.05


@dataclass(frozen=True)
class Criterion:
    name: str
    column: str
    met: bool
    mean_delta: float | None
    deltas: tuple[float | None, ...]
    p_values: tuple[float | None, ...]
    spread: float
    rule: str


class AimError(Exception):
    """A results.json (or an option) this script cannot check: one line on stderr, exit status 2."""


def read_results(path: str) -> dict:
    """results.json, checked whole before anything is computed: a mapping with a baseline, scores per system and
    column, and seed groups whose members all have scores, the baseline's group and at least one other."""
    p = Path(path)
    p = p / "results.json" if p.is_dir() else p
    if not p.is_file():
        raise AimError(f"{p}: no results.json (expected a run or publish directory, or the file)")
    try:
        results = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AimError(f"{p}: not a readable results.json ({exc})") from None
    if not isinstance(results, dict):
        raise AimError(f"{p}: not a results.json (expected a JSON object as `mwemt run` writes, got "
                       f"{type(results).__name__})")
    scores, groups, baseline = results.get("scores"), results.get("seed_groups"), results.get("baseline")
    if not isinstance(scores, dict) or not all(isinstance(v, dict) for v in scores.values()):
        raise AimError(f"{p}: no `scores` (expected system -> column -> score, as `mwemt run` writes)")
    if not isinstance(baseline, str) or baseline not in scores:
        raise AimError(f"{p}: the baseline {baseline!r} has no scores")
    if not groups:
        raise AimError(f"{p}: the run has no seed groups (systems NAME, NAME-seed2, ...)")
    if not isinstance(groups, dict) or not all(isinstance(m, list) and m and all(isinstance(x, str) for x in m)
                                               for m in groups.values()):
        raise AimError(f"{p}: `seed_groups` is not a mapping of group -> its systems")
    missing = sorted({m for members in groups.values() for m in members if m not in scores})
    if missing:
        raise AimError(f"{p}: seed group member(s) {', '.join(missing)} have no scores")
    if not any(baseline in members for members in groups.values()):
        raise AimError(f"{p}: no seed group holds the baseline {baseline}")
    if len(groups) < 2:
        raise AimError(f"{p}: the only seed group is the baseline's: there is no method to check against it")
    return results


def seed_spread(results: dict, column: str) -> float:
    spreads = [0.0]
    for members in results["seed_groups"].values():
        vals = [_cell_of(results, m, column)["score"] for m in members if m in results["scores"]]
        vals = [v for v in vals if v is not None]
        if len(vals) > 1:
            spreads.append(max(vals) - min(vals))
    return max(spreads)


def paired(results: dict, group: str, column: str) -> tuple[list[float | None], list[float | None]]:
    """Each seed's difference to its same-seed baseline and the paired test's p-value."""
    deltas, ps = [], []
    for m in results["seed_groups"][group]:
        row = _cell_of(results, m, column)
        base = row.get("seed_baseline") or results["baseline"]
        p = row.get("seed_p_value") if row.get("seed_baseline") else row.get("p_value")
        if base not in results["scores"]:
            raise AimError(f"{m}'s same-seed baseline {base} has no scores")
        b = _cell_of(results, base, column)["score"]
        deltas.append(None if row["score"] is None or b is None else row["score"] - b)
        ps.append(p)
    return deltas, ps


def _cell_of(results: dict, system: str, column: str) -> dict:
    row = results["scores"][system].get(column)
    if not isinstance(row, dict) or not (row.get("score") is None or isinstance(row.get("score"), (int, float))):
        raise AimError(f"{system} has no score in column {column!r}")
    return row


def _significant(delta: float | None, p: float | None, sign: int) -> bool:
    return delta is not None and p is not None and p < ALPHA and delta * sign > 0


def check_group(results: dict, group: str, args: argparse.Namespace) -> list[Criterion]:
    out = []

    def crit(name: str, column: str, rule: str, test) -> None:
        if column not in results["scores"][results["baseline"]]:
            known = [c.get("id") for c in results.get("columns") or [] if isinstance(c, dict)]
            known = known or sorted(results["scores"][results["baseline"]])
            raise AimError(f"column {column!r} is not in the run (it has {', '.join(map(str, known))})")
        deltas, ps = paired(results, group, column)
        known = [d for d in deltas if d is not None]
        mean = sum(known) / len(known) if known and len(known) == len(deltas) else None
        spread = seed_spread(results, column)
        out.append(Criterion(name, column, bool(test(deltas, ps, mean, spread)), mean, tuple(deltas), tuple(ps),
                             spread, rule))

    crit("mwe", args.mwe, f"mean gain >= {args.mwe_gain:g}, beyond the seed spread, significant on every seed",
         lambda d, p, mean, spread: mean is not None and mean >= args.mwe_gain and mean > spread
         and all(_significant(x, q, +1) for x, q in zip(d, p)))
    crit("ted", args.ted, "gain beyond the seed spread, significant on every seed",
         lambda d, p, mean, spread: mean is not None and mean > spread
         and all(_significant(x, q, +1) for x, q in zip(d, p)))
    crit("bleu", args.bleu, f"mean loss at most {args.bleu_loss:g}",
         lambda d, p, mean, spread: mean is not None and mean >= -args.bleu_loss)
    crit("chrf", args.chrf, "significantly lower on no seed",
         lambda d, p, mean, spread: not any(_significant(x, q, -1) for x, q in zip(d, p)))
    crit("mwebleu", args.mwe_bleu, "significantly lower on no seed",
         lambda d, p, mean, spread: not any(_significant(x, q, -1) for x, q in zip(d, p)))
    return out


def check(results: dict, args: argparse.Namespace) -> dict[str, list[Criterion]]:
    baseline = next(g for g, members in results["seed_groups"].items() if results["baseline"] in members)
    return {g: check_group(results, g, args) for g in results["seed_groups"] if g != baseline}


def _cell(c: Criterion) -> str:
    seeds = " / ".join("n/a" if d is None else f"{d:+.1f}" + ("*" if q is not None and q < ALPHA else "")
                       for d, q in zip(c.deltas, c.p_values))
    mean = "n/a" if c.mean_delta is None else f"{c.mean_delta:+.1f}"
    return f"{'met' if c.met else '**not met**'}: {mean} ({seeds})"


def markdown(name: str, checked: dict[str, list[Criterion]]) -> str:
    first = next(iter(checked.values()))
    lines = [f"Aim of issue 36 on {name}: each cell is met or not, the mean difference to the same-seed baselines "
             "and each seed's (* p < 0.05, paired bootstrap).", "",
             "| method | " + " | ".join(f"{c.name}: {c.column}" for c in first) + " | all |",
             "|---|" + "---|" * (len(first) + 1)]
    for group, crits in checked.items():
        lines.append(f"| {group} | " + " | ".join(_cell(c) for c in crits) + " | "
                     + ("**met**" if all(c.met for c in crits) else "not met") + " |")
    lines += [""] + [f"- {c.name} ({c.column}): {c.rule}; seed spread {c.spread:.1f}" for c in first]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("results", help="a run or publish directory, or its results.json")
    p.add_argument("--mwe", default="tatoeba-mwe/mwe-p", help="the MWE test's precision-aware MWE column")
    p.add_argument("--ted", default="ted/mwe-p", help="the human-reference MWE column")
    p.add_argument("--bleu", default="tatoeba/bleu", help="the general test's BLEU column")
    p.add_argument("--chrf", default="tatoeba/chrf", help="the general test's chrF column")
    p.add_argument("--mwe-bleu", default="tatoeba-mwe/bleu", help="the MWE test's BLEU column")
    p.add_argument("--mwe-gain", type=float_range(), default=3.0, help="least mean MWE gain (default: %(default)s)")
    p.add_argument("--bleu-loss", type=float_range(), default=0.5, help="largest mean BLEU loss (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="JSON instead of Markdown")
    args = p.parse_args(argv)
    try:
        results = read_results(args.results)
        checked = check(results, args)
        text = (json.dumps({g: [asdict(c) for c in cs] for g, cs in checked.items()}, indent=1) + "\n" if args.json
                else markdown(results.get("name", args.results), checked))
    except AimError as exc:
        print(f"aim_check: error: {exc}", file=sys.stderr)
        return 2
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:   # `| head`: the reader has what it wanted; no traceback, nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
