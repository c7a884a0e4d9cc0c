"""The seed section tests each seed against the baseline trained with the SAME seed (not the seed-1 baseline), and
reads chrF and LiTER beside BLEU and the MWE scores; the score stage computes those same-seed p-values only for
grids with seed groups, and the key of every other score stage stays what it was."""

from __future__ import annotations

from pathlib import Path

from mwemt.experiments.config import config_from_data
from mwemt.experiments.results import SetScores, build_results, format_markdown, seed_summary

DEMO = Path(__file__).resolve().parents[1] / "mwemt" / "data" / "demo"


def test_each_seed_is_paired_with_the_baseline_of_its_seed():
    cfg = config_from_data({
        "name": "g", "seed": 1, "data": {"train": "package:demo/train", "valid": "package:demo/dev",
                                         "lexicon": "package:demo/lexicon.en.txt"},
        "tests": {"t": {"source": "package:demo/test.en", "reference": "package:demo/test.it"}},
        "systems": {"baseline": {}, "baseline-seed2": {"train": {"seed": 2}},
                    "iob": {"encoding": "iob"}, "iob-seed2": {"encoding": "iob", "train": {"seed": 2}},
                    "iob-seed3": {"encoding": "iob", "train": {"seed": 3}},        # no baseline of seed 3
                    "greedy": {"model_of": "iob", "translate": {"beam": 1}},
                    "greedy-seed2": {"model_of": "iob-seed2", "translate": {"beam": 1}}}}, base_dir=".")
    names = list(cfg.systems)
    assert cfg.training_seed("greedy-seed2") == 2 and cfg.training_seed("greedy") == 1
    assert cfg.seed_baselines(names) == {"iob": "baseline", "iob-seed2": "baseline-seed2", "iob-seed3": None,
                                         "greedy": "baseline", "greedy-seed2": "baseline-seed2"}
    assert cfg.seed_baselines(["iob", "iob-seed2"]) == {}                # no baseline group: nothing to pair


def _results(rows: dict[str, dict], seed_baselines: dict | None) -> dict:
    cols = [{"id": f"t/{m}", "test": "t", "role": "mwe", "metric": m, "label": f"t {m}", "signature": "x",
             "n_sentences": 3} for m in ("bleu", "chrf", "liter")]
    out = {"name": "unit", "baseline": "baseline", "systems": list(rows), "columns": cols,
           "scores": {s: {c["id"]: dict(r) for c in cols} for s, r in rows.items()},
           "paired_bootstrap": None, "compositionality_breakdown": {}, "reports": {},
           "seed_groups": {"baseline": ["baseline", "baseline-seed2"], "x": ["x", "x-seed2"]}, "meta": {}}
    if seed_baselines is not None:
        out["seed_baselines"] = seed_baselines
    return out


def test_verdict_reads_the_same_seed_p_value():
    # seed 2 of x beats the seed-1 baseline (p 0.01) but not the seed-2 baseline it trained beside (p 0.30)
    rows = {"baseline": {"score": 40.0}, "baseline-seed2": {"score": 41.0, "p_value": 0.4},
            "x": {"score": 45.0, "p_value": 0.01},
            "x-seed2": {"score": 42.5, "p_value": 0.01, "seed_baseline": "baseline-seed2", "seed_p_value": 0.30}}
    pairs = {"x": "baseline", "x-seed2": "baseline-seed2"}
    s = seed_summary(_results(rows, pairs))
    assert s["columns"] == ["t/bleu", "t/chrf", "t/liter"]               # chrF and LiTER beside BLEU
    v = s["verdicts"]["x"]["t/chrf"]
    assert abs(v["diff"] - 3.25) < 1e-9 and v["beyond_spread"]           # 43.75 - 40.5 > spread 2.5
    assert v["baselines"] == ["baseline", "baseline-seed2"] and v["p_values"] == [0.01, 0.30]
    assert v["seed_diffs"] == [5.0, 1.5]
    assert not v["significant_every_seed"] and not v["real"]
    md = format_markdown(_results(rows, pairs))
    assert "- **x** vs baseline (x vs baseline, x-seed2 vs baseline-seed2): no real difference" in md
    assert "t liter (lower is better) +3.2 (not significant on every seed)" in md
    # significant against its own seed's baseline too: real
    rows["x-seed2"]["seed_p_value"] = 0.02
    assert seed_summary(_results(rows, pairs))["verdicts"]["x"]["t/bleu"]["real"]
    # a same-seed p-value the score stage did not write (an older run): never significant, and said so
    del rows["x-seed2"]["seed_p_value"]
    s = seed_summary(_results(rows, pairs))
    assert s["verdicts"]["x"]["t/bleu"]["p_values"] == [0.01, None] and not s["verdicts"]["x"]["t/bleu"]["real"]
    assert "(no same-seed p-value)" in format_markdown(_results(rows, pairs))
    # a seed the baseline's group lacks: no comparison for it
    s = seed_summary(_results(rows, {"x": "baseline", "x-seed2": None}))
    assert s["verdicts"]["x"]["t/bleu"]["baselines"] == ["baseline", None]
    assert "x-seed2 vs no baseline of its seed" in format_markdown(_results(rows, {"x": "baseline", "x-seed2": None}))


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_score_stage_same_seed_p_values_are_what_mwemt_score_gives(tmp_path):
    """A real small score: the same-seed test of the score stage equals `mwemt score --paired-bs` with the
    same-seed baseline first (what rescore.sh runs), and build_results + the seed section read it."""
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.inputs import load_score_inputs
    from mwemt.evaluate.registry import MetricOptions
    from mwemt.evaluate.report import score_run_dict
    from mwemt.evaluate.scoring import score_systems
    from mwemt.experiments.stages import _same_seed_tests

    refs = (DEMO / "test.it").read_text(encoding="utf-8").splitlines()[:60]
    ref = _write(tmp_path / "ref.it", refs)

    def system(name: str, drop_every: int, offset: int) -> tuple[str, Path]:
        hyps = [" ".join(r.split()[:-2]) if (k + offset) % drop_every == 0 else r for k, r in enumerate(refs)]
        return name, _write(tmp_path / f"{name}.it", hyps)

    hyps = [system("baseline", 3, 0), system("x", 4, 1), system("baseline-seed2", 2, 1), system("x-seed2", 5, 2)]
    bootstrap = BootstrapSettings(200, 12345)
    options = MetricOptions(lang="it")
    run = score_systems(load_score_inputs(hyps, ref=ref, lang="it"), ["bleu", "chrf"], options, bootstrap=bootstrap)
    scores = score_run_dict(run)
    _same_seed_tests(run, scores, (("x-seed2", "baseline-seed2"),), bootstrap)
    alone = score_run_dict(score_systems(load_score_inputs([hyps[2], hyps[3]], ref=ref, lang="it"), ["bleu", "chrf"],
                                         options, bootstrap=bootstrap))
    for metric in ("bleu", "chrf"):
        row = scores["metrics"][metric]["systems"]["x-seed2"]
        assert row["seed_baseline"] == "baseline-seed2"
        assert row["seed_p_value"] == alone["metrics"][metric]["systems"]["x-seed2"]["p_value"]
        assert row["seed_p_value"] != row["p_value"]                       # not the test against the seed-1 baseline
        assert "seed_p_value" not in scores["metrics"][metric]["systems"]["x"]
    results = build_results([SetScores("t", "general", scores)], name="r", baseline="baseline",
                            seed_groups={"baseline": ["baseline", "baseline-seed2"], "x": ["x", "x-seed2"]},
                            seed_baselines={"x": "baseline", "x-seed2": "baseline-seed2"})
    v = seed_summary(results)["verdicts"]["x"]["t/chrf"]
    assert v["p_values"] == [scores["metrics"]["chrf"]["systems"]["x"]["p_value"],
                             scores["metrics"]["chrf"]["systems"]["x-seed2"]["seed_p_value"]]


def test_same_seed_tests_leave_other_score_stage_keys_alone():
    from dataclasses import replace

    from mwemt.experiments.cache import stage_key
    from mwemt.experiments.stages import DictionaryScoreSection, ScoreSection
    from mwemt.schema import to_plain

    fields = (("bleu", "mwe"), ("baseline", "x"), "it", False, 1000, 12345, "sentence", "auto")
    plain = ScoreSection(*fields)
    before = {"metrics": ["bleu", "mwe"], "systems": ["baseline", "x"], "lang": "it", "lowercase": False,
              "bootstrap": 1000, "bootstrap_seed": 12345, "mwe_average": "sentence", "target_lexicon_format": "auto"}
    assert to_plain(plain) == before                                      # the key of a grid without seed groups
    assert to_plain(DictionaryScoreSection(*fields, dictionary_format="auto")) == {**before,
                                                                                   "dictionary_format": "auto"}
    seeded = replace(plain, seed_baselines=(("x", "baseline-seed2"),))
    assert to_plain(seeded)["seed_baselines"] == [["x", "baseline-seed2"]]
    assert stage_key("score", to_plain(seeded), {}) != stage_key("score", before, {})
