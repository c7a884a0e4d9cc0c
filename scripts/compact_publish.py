#!/usr/bin/env python
"""Gzip the hypotheses of a publish written before `mwemt run --publish` wrote them gzip.

A publish from before (results/cpu-science, results/cpu-science-2, the ladder's rungs) keeps every system's
translation as plain text, megabytes in all; the tracked tree travels to GPU machines and must stay small.
This replaces each DIR/hyps/SYSTEM.TEST.txt that publish.json lists by SYSTEM.TEST.txt.gz (`mwemt score`
reads gzip), rewrites rescore.sh and publish.json (its rescore commands and file hashes) to name the new
files, and checks first that each gzip decompresses to the same bytes. References and test sets stay as
they are (documents and scripts name them). The scores do not change: the same lines are scored.

Only files publish.json lists (with their recorded sha256) are touched; a hyps/*.txt it does not list is
left alone and named. The manifest is checked whole, and the directory's permissions too, before anything
is written; a problem is one line on stderr and exit status 2.

    python scripts/compact_publish.py results/cpu-science-2 [--dry-run]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from mwemt.fileio import sha256_file, unwritable_reason, write_text
from mwemt.provenance import write_json


class PublishError(Exception):
    """A publish directory this script cannot compact: nothing was written."""


def read_manifest(record: Path) -> dict:
    """publish.json, checked: a mapping whose ``files`` maps relative paths to sha256 digests and whose rescore
    commands (if any) are mappings of argument lists."""
    if not record.is_file():
        raise PublishError(f"{record}: not a publish directory (no publish.json)")
    try:
        manifest = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PublishError(f"{record}: not a readable publish record ({exc})") from None
    if not isinstance(manifest, dict):
        raise PublishError(f"{record}: not a publish record (expected a JSON object, got {type(manifest).__name__})")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise PublishError(f"{record}: no `files` (expected the published files with their sha256, as "
                           "`mwemt run --publish` writes them)")
    for rel, digest in files.items():
        path = Path(rel)
        if path.is_absolute() or ".." in path.parts:
            raise PublishError(f"{record}: file {rel!r} is not a path inside the publish directory")
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise PublishError(f"{record}: file {rel!r} has no sha256 ({digest!r})")
    for key in ("rescore", "rescore_same_seed"):
        commands = manifest.get(key)
        if commands is not None and not (isinstance(commands, dict) and all(
                isinstance(v, list) and all(isinstance(a, str) for a in v) for v in commands.values())):
            raise PublishError(f"{record}: `{key}` is not a mapping of commands (lists of arguments)")
    return manifest


def plan(out: Path) -> tuple[dict, list[Path], list[Path]]:
    """(manifest, the listed plain hypothesis files to gzip, the unlisted hyps/*.txt left alone), all checked
    before anything is written: each listed file exists and still has its recorded sha256, no gzip file is in
    the way, and every file this writes may be written."""
    record = out / "publish.json"
    manifest = read_manifest(record)
    files = manifest["files"]
    plain, problems = [], []
    for rel in sorted(files):
        if not (rel.startswith("hyps/") and rel.endswith(".txt") and rel.count("/") == 1):
            continue
        p = out / rel
        gz = f"{rel}.gz"
        if not p.is_file():
            problems.append(f"{p}: listed in publish.json but missing")
        elif sha256_file(p) != files[rel]:
            problems.append(f"{p}: its sha256 is not the one publish.json records (changed since publishing)")
        elif gz in files or (out / gz).exists():
            problems.append(f"{out / gz}: already there (a gzip of {rel} would replace it)")
        else:
            plain.append(p)
    if problems:
        raise PublishError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
                           + "; nothing was written")
    listed = {out / rel for rel in files}
    unlisted = [p for p in sorted((out / "hyps").glob("*.txt")) if p not in listed]
    if plain:
        script = out / "rescore.sh"
        for target in (out / "hyps", record, *([script] if script.is_file() else [])):
            why = unwritable_reason(target)
            if why is not None:
                raise PublishError(f"{target}: cannot write there: {why} (expected a publish directory you may "
                                   "write: change its permissions); nothing was written")
    return manifest, plain, unlisted


def compact(out: Path, dry_run: bool = False) -> tuple[int, int, int]:
    """(files, bytes before, bytes after) of gzipping the hyps/*.txt publish.json lists."""
    manifest, plain, unlisted = plan(out)
    if unlisted:
        shown = ", ".join(p.name for p in unlisted[:5]) + (" ..." if len(unlisted) > 5 else "")
        print(f"compact_publish: {out}: {len(unlisted)} file(s) in hyps/ that publish.json does not list, left "
              f"alone: {shown}", file=sys.stderr)
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
            raise PublishError(f"{gz}: gzip does not give the file back; nothing replaced")
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
    write_json(out / "publish.json", manifest)
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
        try:
            n, before, after = compact(Path(d), args.dry_run)
        except PublishError as exc:
            print(f"compact_publish: error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:   # the machine, not the manifest: a full disk, a permission changed meanwhile
            print(f"compact_publish: error: {exc.filename or d}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"{d}: {n} hypothesis files, {before / 1e6:.2f} MB" + ("" if args.dry_run else f" -> {after / 1e6:.2f} MB"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
