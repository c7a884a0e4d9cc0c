"""`mwemt run --publish DIR`: the published hypotheses and references rescore to results.json's numbers."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from mwemt.errors import InputError
from tests.conftest import requires_nmt

pytestmark = [requires_nmt, pytest.mark.nmt]


def _config(tmp_path):
    from mwemt.experiments.config import config_from_data

    return config_from_data({
        "name": "publish", "seed": 1,
        "data": {"train": "package:demo/train", "valid": "package:demo/dev", "train_size": 300, "valid_max": 20},
        "tests": {
            "general": {"source": "package:demo/test.en", "reference": "package:demo/test.it", "max_items": 30,
                        "lowercase": True, "metrics": ["bleu", "chrf"]},
            "mwe": {"testset": "package:demo/test_mwe.jsonl", "max_items": 30, "role": "mwe",
                    "metrics": ["bleu", "chrf", "mwe"]},
        },
        "subword": {"vocab_size": 600},
        "model": {"preset": "tiny"},
        "train": {"max_tokens": 1024, "max_epoch": 0, "max_update": 3, "warmup_updates": 3, "patience": -1,
                  "early_stop": "loss"},
        "translate": {"beam": 2},
        "score": {"bootstrap": 50},
        "systems": {"baseline": {}, "greedy": {"model_of": "baseline", "translate": {"beam": 1}}},
    }, base_dir=tmp_path)


def test_published_files_rescore_to_the_results(tmp_path, monkeypatch):
    from mwemt.cli import main
    from mwemt.experiments.experiment import run_experiment

    out = tmp_path / "published"
    results = run_experiment(_config(tmp_path), tmp_path / "run", progress=False, plot=False, publish=out)
    names = sorted(p.name for p in (out / "hyps").iterdir())
    assert names == ["baseline.general.txt.gz", "baseline.mwe.txt.gz", "greedy.general.txt.gz", "greedy.mwe.txt.gz"]
    assert sorted(p.name for p in (out / "refs").iterdir()) == ["general.src.txt.gz", "general.txt.gz", "mwe.jsonl.gz",
                                                                "mwe.src.txt.gz", "mwe.txt.gz"]   # sources: degenerate counts
    hyp = next(p for p in (tmp_path / "run" / "stages" / "translate" / "baseline.mwe").iterdir() if p.is_dir())
    assert gzip.decompress((out / "hyps" / "baseline.mwe.txt.gz").read_bytes()) == (hyp / "hyp.txt").read_bytes()
    assert (out / "report" / "mwe" / "report.json").is_file()          # the run's comparison reports, as written
    assert (out / "report" / "mwe" / "index.html").read_bytes() == \
        (tmp_path / "run" / "report" / "mwe" / "index.html").read_bytes()
    assert json.loads((out / "results.json").read_text()) == json.loads((tmp_path / "run" / "results.json").read_text())
    manifest = json.loads((out / "publish.json").read_text())
    assert "--lowercase" in manifest["rescore"]["general"] and "--lowercase" not in manifest["rescore"]["mwe"]
    assert (out / "rescore.sh").read_text().count("mwemt score") == 2
    monkeypatch.chdir(out)
    (out / "rescored").mkdir()
    for test, argv in manifest["rescore"].items():
        assert argv[:2] == ["mwemt", "score"]
        assert main(argv[1:]) == 0
        rescored = json.loads((out / "rescored" / f"{test}.json").read_text())
        for metric, entry in rescored["metrics"].items():
            for system, row in entry["systems"].items():
                want = results["scores"][system][f"{test}/{metric}"]
                for key in ("score", "bs_mean", "bs_ci95", "p_value"):
                    assert row.get(key) == pytest.approx(want.get(key), abs=1e-9), (test, metric, system, key)
            assert entry["signature"] == next(c["signature"] for c in results["columns"]
                                              if c["id"] == f"{test}/{metric}")
    # a second publish replaces the first one's files: what an earlier publish recorded (publish.json) and this one
    # no longer writes is removed (here: the hypotheses of a system since dropped from the config), and files no
    # publish wrote (a hand check beside the references, the rescored scores) are left alone
    os.chdir(tmp_path)
    (out / "refs" / "mwe.handcheck.tsv").write_text("id\tgenuine\n")
    (out / "hyps" / "dropped.mwe.txt.gz").write_text("x\n")
    record = json.loads((out / "publish.json").read_text())
    record["files"]["hyps/dropped.mwe.txt.gz"] = "0" * 64
    (out / "publish.json").write_text(json.dumps(record))
    run_experiment(_config(tmp_path), tmp_path / "run", progress=False, plot=False, publish=out)
    assert sorted(p.name for p in (out / "hyps").iterdir()) == names
    assert (out / "refs" / "mwe.handcheck.tsv").read_text() == "id\tgenuine\n"
    assert (out / "rescored" / "mwe.json").is_file()
    assert set(json.loads((out / "publish.json").read_text())["files"]) == \
        {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} - {
            "refs/mwe.handcheck.tsv", "rescored/mwe.json", "rescored/general.json", "publish.json", "rescore.sh"}
    (out / "publish.json").write_text("{not json")
    with pytest.raises(InputError, match="publish.json: not a publish record"):
        run_experiment(_config(tmp_path), tmp_path / "run", progress=False, plot=False, publish=out)
