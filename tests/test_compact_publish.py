"""scripts/compact_publish.py: a publish written with plain-text hypotheses is gzipped in place; its
rescore.sh and publish.json name the new files, and rescoring gives the same numbers."""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import shlex
import sys
from pathlib import Path

from mwemt.cli import main as mwemt_main
from tests.conftest import FIXTURES

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compact_publish.py"


def _load():
    spec = importlib.util.spec_from_file_location("compact_publish", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["compact_publish"] = mod
    spec.loader.exec_module(mod)
    return mod


def _publish(d: Path) -> None:
    (d / "hyps").mkdir(parents=True)
    (d / "refs").mkdir()
    ev = FIXTURES / "eval"
    (d / "refs" / "t.txt").write_bytes((ev / "ref.it").read_bytes())
    (d / "hyps" / "a.t.txt").write_bytes((ev / "hyp_a.it").read_bytes())
    (d / "hyps" / "b.t.txt").write_bytes((ev / "hyp_b.it").read_bytes())
    cmd = ["mwemt", "score", "--metrics", "bleu,chrf", "--lang", "it", "--paired-bs", "--bs-samples", "100",
           "--ref", "refs/t.txt", "--hyp", "a=hyps/a.t.txt", "--hyp", "b=hyps/b.t.txt", "--json", "-o", "rescored/t.json"]
    (d / "rescore.sh").write_text("#!/bin/sh\nset -e\nmkdir -p rescored\n" + shlex.join(cmd) + "\n")
    files = {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(d.rglob("*")) if p.is_file()}
    (d / "publish.json").write_text(json.dumps({"run_directory": "runs/x", "rescore": {"t": cmd}, "files": files}))


def _rescore(d: Path, monkeypatch) -> dict:
    monkeypatch.chdir(d)
    (d / "rescored").mkdir(exist_ok=True)
    line = (d / "rescore.sh").read_text().splitlines()[-1]
    assert mwemt_main(shlex.split(line)[1:]) == 0
    out = json.loads((d / "rescored" / "t.json").read_text())
    return {k: out[k] for k in ("systems", "metrics", "paired_bootstrap")}


def test_compact_keeps_the_scores(tmp_path, monkeypatch):
    mod = _load()
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    _publish(plain)
    _publish(packed)
    n, before, after = mod.compact(packed)
    assert n == 2 and 0 < after and before == sum(p.stat().st_size for p in (plain / "hyps").iterdir())
    assert sorted(p.name for p in (packed / "hyps").iterdir()) == ["a.t.txt.gz", "b.t.txt.gz"]
    assert gzip.decompress((packed / "hyps" / "a.t.txt.gz").read_bytes()) == (plain / "hyps" / "a.t.txt").read_bytes()
    manifest = json.loads((packed / "publish.json").read_text())
    assert "hyps/a.t.txt.gz" in manifest["files"] and "hyps/a.t.txt" not in manifest["files"]
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((packed / rel).read_bytes()).hexdigest() == digest, rel
    assert "a=hyps/a.t.txt.gz" in manifest["rescore"]["t"]
    assert "a=hyps/a.t.txt.gz" in (packed / "rescore.sh").read_text()
    assert _rescore(plain, monkeypatch) == _rescore(packed, monkeypatch)
    assert mod.compact(packed)[0] == 0   # a second run finds nothing to do
