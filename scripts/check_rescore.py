#!/usr/bin/env python
"""Does a publication's rescore.sh reproduce its results.json? Runs rescore.sh in a scratch copy of each
directory, with an empty alignment cache (MWEMT_CACHE), and compares every value it recomputes with results.json:
each system's score, bootstrap mean and 95% half-width, p-value against the baseline, p-value against its
same-seed baseline, and each column's signature. Nothing is written into the publication.

    python scripts/check_rescore.py results/cpu-science-3 results/cpu-science-3-60000

Prints one line per directory (values compared, values that differ, and the first differences); exits 1 when a
value differs, 2 on bad input. A score differs when it is off by more than 1e-9 (the scores are recomputed from
the same integer statistics, so they agree exactly or not at all).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

TOLERANCE = 1e-9
FIELDS = ("score", "bs_mean", "bs_ci95", "p_value")


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=0, abs_tol=TOLERANCE)
    return a == b


def compare(published: dict, rescored: dict[str, dict], same_seed: dict[str, dict[str, dict]]) -> tuple[int, list[str]]:
    """(values compared, descriptions of those that differ) of ``published`` (results.json) against the rescored
    JSONs: ``rescored`` test -> rescored/TEST.json, ``same_seed`` test -> baseline -> rescored/TEST.vs-B.json."""
    n, differ = 0, []
    columns = {c["id"]: c for c in published["columns"]}
    for cid, column in columns.items():
        test, metric = column["test"], column["metric"]
        run = rescored.get(test)
        if run is None or metric not in run["metrics"]:
            differ.append(f"{cid}: not recomputed by rescore.sh")
            continue
        m = run["metrics"][metric]
        n += 1
        if m["signature"] != column["signature"]:
            differ.append(f"{cid}: signature {m['signature']} != {column['signature']}")
        for system, scores in published["scores"].items():
            row = m["systems"].get(system)
            if row is None:
                differ.append(f"{cid} {system}: not recomputed")
                continue
            for field in FIELDS:
                n += 1
                if not _same(row.get(field), scores[cid].get(field)):
                    differ.append(f"{cid} {system} {field}: {row.get(field)} != {scores[cid].get(field)}")
            baseline = scores[cid].get("seed_baseline")
            if baseline is not None:
                n += 1
                other = same_seed.get(test, {}).get(baseline)
                got = other["metrics"][metric]["systems"][system].get("p_value") if other else "missing"
                if not _same(got, scores[cid].get("seed_p_value")):
                    differ.append(f"{cid} {system} seed_p_value: {got} != {scores[cid].get('seed_p_value')}")
    return n, differ


def _read_json(path: Path, what: str = ""):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path}{what}: not JSON ({exc})") from None


def check(directory: Path) -> tuple[int, list[str]]:
    for name in ("results.json", "rescore.sh"):
        if not (directory / name).is_file():
            raise FileNotFoundError(f"{directory / name}: not found (expected a directory `mwemt run --publish` wrote)")
    published = _read_json(directory / "results.json")
    if not (isinstance(published, dict) and isinstance(published.get("columns"), list)
            and isinstance(published.get("scores"), dict)
            and all(isinstance(c, dict) and {"id", "test", "metric", "signature"} <= set(c) for c in published["columns"])
            and all(isinstance(row, dict) and all(isinstance(row.get(c["id"]), dict) for c in published["columns"])
                    for row in published["scores"].values())):
        raise ValueError(f"{directory / 'results.json'}: not a results record (expected results.json as `mwemt run "
                         "--publish` writes it: columns with id, test, metric and signature, and scores)")
    with tempfile.TemporaryDirectory(prefix="mwemt-check-rescore-") as tmp:
        # the copy sits deep enough in the scratch directory that the files rescore.sh names outside the
        # publication (../../../shared/...: shared data, never copied) can be linked at the same relative places
        copy = Path(tmp, "a", "b", "c", "d", "e", directory.resolve().name)
        shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("rescored"))
        for token in (directory / "rescore.sh").read_text(encoding="utf-8").split():
            if token.startswith("../"):
                link = Path(os.path.normpath(copy / token))
                if Path(tmp) not in link.parents:
                    raise ValueError(f"rescore.sh names {token}, above what this check can mirror")
                if (directory / token).exists() and not link.exists():
                    link.parent.mkdir(parents=True, exist_ok=True)
                    link.symlink_to((directory / token).resolve())
        env = dict(os.environ, MWEMT_CACHE=str(Path(tmp) / "cache"))
        done = subprocess.run(["sh", "rescore.sh"], cwd=copy, env=env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise RuntimeError(f"rescore.sh failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        rescored, same_seed = {}, {}
        for path in sorted((copy / "rescored").glob("*.json")):
            obj = _read_json(path, " (written by rescore.sh)")
            if not isinstance(obj, dict) or not isinstance(obj.get("metrics"), dict):
                raise ValueError(f"{path}: rescore.sh wrote no `mwemt score --json` output here")
            test, _, vs = path.stem.partition(".vs-")
            if vs:
                same_seed.setdefault(test, {})[vs] = obj
            else:
                rescored[test] = obj
    return compare(published, rescored, same_seed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+", type=Path, help="published directories (results.json, rescore.sh)")
    args = p.parse_args(argv)
    worst = 0
    for d in args.dirs:
        try:
            n, differ = check(d)
        except (OSError, ValueError, RuntimeError) as exc:
            print(f"check_rescore: {exc}", file=sys.stderr)
            return 2
        print(f"{d}: {n} values compared, {len(differ)} differ" + "".join(f"\n  {x}" for x in differ[:10]))
        worst = max(worst, 1 if differ else 0)
    return worst


if __name__ == "__main__":
    sys.exit(main())
