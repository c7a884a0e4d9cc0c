#!/usr/bin/env python
"""Gzip the hypotheses of a publish written before `mwemt run --publish` wrote them gzip.

A publish from before (results/cpu-science, results/cpu-science-2, the ladder's rungs) keeps every system's
translation as plain text, megabytes in all; the tracked tree travels to GPU machines and must stay small.
This replaces each DIR/hyps/SYSTEM.TEST.txt by SYSTEM.TEST.txt.gz (`mwemt score` reads gzip), rewrites
rescore.sh and publish.json (its rescore commands and file hashes) to name the new files, and checks first
that each gzip decompresses to the same bytes. References and test sets stay as they are (documents and
scripts name them). The scores do not change: the same lines are scored.

    python scripts/compact_publish.py results/cpu-science-2 [--dry-run]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from mwemt.fileio import sha256_file, write_text
from mwemt.provenance import write_json


def compact(out: Path, dry_run: bool = False) -> tuple[int, int, int]:
    """(files, bytes before, bytes after) of gzipping DIR/hyps/*.txt."""
    record = out / "publish.json"
    if not record.is_file():
        raise SystemExit(f"compact_publish: {record}: not a publish directory (no publish.json)")
    manifest = json.loads(record.read_text(encoding="utf-8"))
    plain = sorted((out / "hyps").glob("*.txt"))
    before = sum(p.stat().st_size for p in plain)
    if dry_run or not plain:
        return len(plain), before, 0
    renamed = {}
    for p in plain:
        data = p.read_bytes()
        gz = p.with_name(p.name + ".gz")
        tmp = gz.with_name(gz.name + ".part")
        tmp.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
        if gzip.decompress(tmp.read_bytes()) != data:
            tmp.unlink()
            raise SystemExit(f"compact_publish: {gz}: gzip does not give the file back; nothing replaced")
        tmp.replace(gz)
        renamed[f"hyps/{p.name}"] = f"hyps/{gz.name}"
    files = {}
    for rel, digest in manifest["files"].items():
        new = renamed.get(rel, rel)
        files[new] = sha256_file(out / new) if new != rel else digest
    manifest["files"] = files
    for key in ("rescore", "rescore_same_seed"):
        if key in manifest:
            manifest[key] = _rename(manifest[key], renamed)
    script = out / "rescore.sh"
    if script.is_file():
        text = script.read_text(encoding="utf-8")
        for old, new in renamed.items():
            text = text.replace(f"={old} ", f"={new} ").replace(f"={old}\n", f"={new}\n")
        write_text(script, text)
        if "rescore.sh" in files:
            files["rescore.sh"] = sha256_file(script)
    write_json(record, manifest)
    for p in plain:
        p.unlink()
    after = sum((out / new).stat().st_size for new in renamed.values())
    return len(plain), before, after


def _rename(obj, renamed: dict[str, str]):
    if isinstance(obj, dict):
        return {k: _rename(v, renamed) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rename(v, renamed) for v in obj]
    if isinstance(obj, str) and "=" in obj:
        name, _, path = obj.partition("=")
        return f"{name}={renamed.get(path, path)}"
    return obj


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("dirs", nargs="+", help="publish directories (each with publish.json)")
    p.add_argument("--dry-run", action="store_true", help="only count what would be gzipped")
    args = p.parse_args(argv)
    for d in args.dirs:
        n, before, after = compact(Path(d), args.dry_run)
        print(f"{d}: {n} hypothesis files, {before / 1e6:.2f} MB" + ("" if args.dry_run else f" -> {after / 1e6:.2f} MB"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
