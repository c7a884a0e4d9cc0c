"""studies/sense-and-form/aim42.py (issue 42's aim) and blind_pairs.py on hand-made inputs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "studies" / "sense-and-form" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _results(verdicts, bleus, degenerate):
    systems = ["baseline", "baseline-seed2", "m", "m-seed2"]
    scores = {s: {"t/v": {"score": v}, "g/bleu": {"score": b}, "g/chrf": {"score": 60.0}}
              for s, v, b in zip(systems, verdicts, bleus)}
    return {"baseline": "baseline", "scores": scores,
            "seed_groups": {"baseline": ["baseline", "baseline-seed2"], "m": ["m", "m-seed2"]},
            "seed_baselines": {"m": "baseline", "m-seed2": "baseline-seed2"},
            "degenerate": {"g": {"systems": {s: {"any": a} for s, a in zip(systems, degenerate)}}}}


def test_the_aim_is_met_only_when_every_criterion_holds():
    aim = _load("aim42")
    kw = dict(verdict="t/v", bleu="g/bleu", chrf="g/chrf", blind=None)
    ok = aim.check(_results([60, 61, 64, 65], [40, 41, 40, 40.8], [3, 3, 3, 2]), "m", **kw)
    assert all(r["met"] for r in ok)
    # a gain on every seed, but not beyond the baselines' spread (1 + 3 = 4 > mean gain 3)
    small = aim.check(_results([60, 64, 63, 67], [40, 41, 40, 41], [3, 3, 3, 3]), "m", **kw)
    assert not small[0]["met"] and all(r["met"] for r in small[1:])
    # BLEU 0.3 lower on average; one more degenerate line on one seed
    cost = aim.check(_results([60, 61, 64, 65], [40, 41, 39.7, 40.7], [3, 3, 4, 3]), "m", **kw)
    assert [r["met"] for r in cost] == [True, False, True, False]


def test_blind_pairs_hides_the_system_and_unblinds_the_labels(tmp_path):
    bp = _load("blind_pairs")
    n = 12
    for name, lines in {"src": [f"s{i}" for i in range(n)], "ref": [f"r{i}" for i in range(n)],
                        "base": [f"b{i}" for i in range(n)],
                        "sys": [f"y{i}" if i % 2 else f"b{i}" for i in range(n)]}.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "blind"
    args = [f"--{k}={tmp_path / v}" for k, v in (("src", "src"), ("ref", "ref"), ("base", "base"), ("system", "sys"))]
    assert bp.main(["make", *args, "--sample", "4", "--seed", "3", "--out", str(out)]) == 0
    rows = [r.split("\t") for r in (out / "blind.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    assert len(rows) == 4 and all(int(r[1][1:]) % 2 == 1 for r in rows)          # changed lines only
    assert "system" not in (out / "blind.tsv").read_text(encoding="utf-8")
    key = {r["k"]: r["system"] for r in json.loads((out / "blind_key.json").read_text())["items"]}
    # label the system's output better on every line: whichever position it is in
    (out / "labels.tsv").write_text("".join(f"{k}\t{key[k]}\tok\n" for k in key), encoding="utf-8")
    assert bp.main(["score", "--out", str(out)]) == 0
    s = json.loads((out / "score.json").read_text())
    assert (s["better"], s["worse"], s["wrong_sense_or_form"]) == (4, 0, 0.0)
    (out / "labels.tsv").write_text("1\tmaybe\n", encoding="utf-8")
    assert bp.main(["score", "--out", str(out)]) == 2
    assert bp.main(["make", *args, "--sample", "4", "--out", str(out)]) == 2   # labels exist: no new sample
