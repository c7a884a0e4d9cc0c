"""scripts/testset_sample.py: the seeded hand-check sample of an MWE test set (issue 29, item 7)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "testset_sample.py"


def _item(i: int, n_mwes: int) -> dict:
    mwes = [{"indices": [k, k + 1], "lemma": f"mwe{i}-{k}", "name": f"mwe{i}-{k}", "reference": "x",
             "reference_indices": [0], "alternatives": ["a", "b"] if k == 0 else []} for k in range(n_mwes)]
    return {"id": str(i), "source": "s t u", "reference": "x y", "mwes": mwes}


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_sample_is_seeded_over_mwe_occurrences(tmp_path):
    test = tmp_path / "t.jsonl"
    test.write_text("".join(json.dumps(_item(i, 1 + i % 2)) + "\n" for i in range(10)), encoding="utf-8")
    # 15 MWE occurrences in 10 items: every occurrence is a unit
    a, b = _run(test, "--n", 6, "--seed", 29, "--tsv", tmp_path / "a.tsv"), _run(test, "--n", 6, "--seed", 29)
    assert a.returncode == 0 and a.stdout == b.stdout
    assert a.stdout.startswith("# 6 of 15 MWEs")
    rows = (tmp_path / "a.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "id\tmwe\tgenuine\tclean_ref\tnote" and len(rows) == 7
    names = [r.split("\t")[1] for r in rows[1:]]
    order = [f"mwe{i}-{k}" for i in range(10) for k in range(1 + i % 2)]
    assert names == sorted(names, key=order.index)          # printed in file order
    assert _run(test, "--n", 6, "--seed", 30).stdout != a.stdout
    assert "alts: a; b" in _run(test, "--n", 15).stdout          # all of them when n covers the test


def test_bad_line_is_a_located_error(tmp_path):
    test = tmp_path / "t.jsonl"
    test.write_text(json.dumps(_item(0, 1)) + "\n{not json\n", encoding="utf-8")
    r = _run(test)
    assert r.returncode == 2 and f"{test}:2:" in r.stderr
