"""Published MWE scores rescore bit for bit: the score stage scores the alignments it publishes, and `mwemt score
--align FILE` reads them back (aligner named, skipped sentences kept), so rescore.sh needs no aligner at all."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mwemt.errors import InputError
from tests.conftest import requires_nmt

DEMO = Path(__file__).resolve().parents[1] / "mwemt" / "data" / "demo"


def _demo_items(n: int = 40):
    from mwemt.formats import read_testset

    return read_testset(DEMO / "test_mwe.jsonl")[:n]


def test_alignment_file_gives_back_the_scores_of_the_aligner(tmp_path):
    """Links written by `write_alignments` and read by `read_alignments` score as the aligner's own: the same
    rows, the same signature (align:lex1+..., not align:given) and the same extra (alignment_skipped), with
    a sentence the aligner skipped (an empty hypothesis) kept as `skipped`, not as a line without links."""
    from mwemt.evaluate.mwe_score import MweAlignSettings, MweScore, read_alignments, write_alignments

    items = _demo_items()
    hyps = [it.reference for it in items]
    hyps[3] = ""                       # an empty side: the aligner skips it, its MWEs are searched in the whole hypothesis
    hyps[5] = hyps[5].split(" ", 2)[-1]   # a damaged one, so not every MWE scores 100
    sources, mwes = [it.source for it in items], [it.mwes for it in items]
    references = [it.reference for it in items]
    metric = MweScore("it", align=MweAlignSettings(cache_dir=None))
    aligned = metric.sentence_stats(hyps, mwes, sources=sources, references=references)
    links, _ = metric.align_hypotheses(sources, [metric.moses_tokens(h) for h in hyps], references)   # the same links
    assert links[3] is None and aligned.info["alignment_skipped"] == 1
    path = tmp_path / "sys.align.gz"
    write_alignments(path, links, metric.align.describe())
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    assert lines[0] == f"# aligner: {metric.align.describe()}" and lines[4] == "skipped" and len(lines) == 41
    first = path.read_bytes()
    write_alignments(path, links, metric.align.describe())
    assert path.read_bytes() == first                                   # no time stamp: the same bytes
    given = read_alignments(path)
    assert given[3] is None and given.origin == metric.align.describe()
    again = metric.sentence_stats(hyps, mwes, alignments=given)
    assert np.array_equal(again.rows, aligned.rows)
    assert str(metric.signature(again)) == str(metric.signature(aligned))
    assert "align:lex1+" in str(metric.signature(again))
    assert metric.extra_from_stats(again) == metric.extra_from_stats(aligned)
    # plain Pharaoh links (no header) stay `align:given`
    plain = tmp_path / "plain.align"
    plain.write_text("\n".join(" ".join(f"{i}-{j}" for i, j in (x or ())) for x in links) + "\n")
    assert "align:given" in str(metric.signature(metric.sentence_stats(hyps, mwes, alignments=read_alignments(plain))))
    # a header that is not a signature value is refused, naming the file and line
    bad = tmp_path / "bad.align"
    bad.write_text("# aligner: two words\n0-0\n")
    with pytest.raises(InputError, match=r"bad.align:1: bad aligner description"):
        read_alignments(bad)


def _config(tmp_path):
    from mwemt.experiments.config import config_from_data

    return config_from_data({
        "name": "aligned", "seed": 1,
        "data": {"train": "package:demo/train", "valid": "package:demo/dev", "train_size": 300, "valid_max": 20},
        "tests": {"mwe": {"testset": "package:demo/test_mwe.jsonl", "max_items": 30, "role": "mwe",
                          "metrics": ["bleu", "chrf", "mwe", "mwe-alts"]}},
        "subword": {"vocab_size": 600},
        "model": {"preset": "tiny"},
        "train": {"max_tokens": 1024, "max_epoch": 0, "max_update": 3, "warmup_updates": 3, "patience": -1,
                  "early_stop": "loss"},
        "translate": {"beam": 2},
        "score": {"bootstrap": 50},
        "systems": {"baseline": {}, "greedy": {"model_of": "baseline", "translate": {"beam": 1}},
                    "baseline-seed2": {"train": {"seed": 2}},
                    "greedy-seed2": {"model_of": "baseline-seed2", "translate": {"beam": 1}}},
    }, base_dir=tmp_path)


@pytest.mark.slow
@requires_nmt
@pytest.mark.nmt
def test_rescore_with_an_empty_alignment_cache_reproduces_every_value(tmp_path):
    from mwemt.experiments.experiment import run_experiment

    out = tmp_path / "published"
    results = run_experiment(_config(tmp_path), tmp_path / "run", progress=False, plot=False, publish=out)
    systems = ["baseline", "greedy", "baseline-seed2", "greedy-seed2"]
    assert sorted(p.name for p in (out / "alignments").iterdir()) == sorted(f"{s}.mwe.align.gz" for s in systems)
    manifest = json.loads((out / "publish.json").read_text())
    assert all(f"alignments/{s}.mwe.align.gz" in manifest["files"] for s in systems)
    argv = manifest["rescore"]["mwe"]
    assert [argv[k + 1] for k, a in enumerate(argv) if a == "--align"] == \
        [f"alignments/{s}.mwe.align.gz" for s in systems]                 # one per --hyp, in order
    # rescore.sh as a reader runs it: a fresh shell, and an alignment cache nobody has filled
    fresh = tmp_path / "fresh-cache"
    env = {**os.environ, "MWEMT_CACHE": str(fresh), "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}"}
    done = subprocess.run(["sh", "rescore.sh"], cwd=out, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert not [p for p in fresh.rglob("*") if p.is_file()]            # nothing was aligned again
    rescored = json.loads((out / "rescored" / "mwe.json").read_text())
    columns = {c["id"]: c for c in results["columns"]}
    assert set(rescored["metrics"]) == {"bleu", "chrf", "mwe", "mwe-alts"}
    for metric, entry in rescored["metrics"].items():
        assert entry["signature"] == columns[f"mwe/{metric}"]["signature"], metric   # align:lex1+..., not given
        for system, row in entry["systems"].items():
            want = results["scores"][system][f"mwe/{metric}"]
            for key, value in row.items():                               # score, bs_mean, bs_ci95, p_value, extra
                assert value == want[key], (metric, system, key)
    assert "align:lex1+" in columns["mwe/mwe"]["signature"]
    assert rescored["metrics"]["mwe"]["systems"]["greedy"]["extra"]["alignment_skipped"] == \
        results["scores"]["greedy"]["mwe/mwe"]["extra"]["alignment_skipped"]
    # the same-seed test (seed section): greedy-seed2 against baseline-seed2, rescored from the same files
    assert results["seed_baselines"] == {"greedy": "baseline", "greedy-seed2": "baseline-seed2"}
    assert set(manifest["rescore_same_seed"]["mwe"]) == {"baseline-seed2"}
    seeded = json.loads((out / "rescored" / "mwe.vs-baseline-seed2.json").read_text())
    for metric, entry in seeded["metrics"].items():
        row, want = entry["systems"]["greedy-seed2"], results["scores"]["greedy-seed2"][f"mwe/{metric}"]
        assert want["seed_baseline"] == "baseline-seed2" and row["p_value"] == want["seed_p_value"], metric
        assert row["score"] == want["score"]
    assert "greedy-seed2 vs baseline-seed2" in (out / "results.md").read_text()
