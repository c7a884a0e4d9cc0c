"""Reports that show what a gain is made of: BLEU's brevity penalty and precisions in the score JSON and in
results.json / results.md, the note on differences that are mostly brevity penalty, the seed section judged
against the baseline's own seed spread, the marker of a test the baseline cannot translate, degenerate-output
counts in results.md, and results rewritten from a published directory alone (numbers worked by hand)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from mwemt.errors import MwemtError
from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.degenerate import count_test
from mwemt.evaluate.inputs import ScoreInputs, SystemOutput
from mwemt.evaluate.registry import MetricOptions
from mwemt.evaluate.report import score_run_dict
from mwemt.evaluate.sacrebleu_metrics import BleuParts, bleu_difference, brevity_penalty
from mwemt.evaluate.scoring import score_systems
from mwemt.experiments.results import (
    SetScores,
    build_results,
    findings,
    format_markdown,
    seed_summary,
    untranslatable_tests,
)
from mwemt.fileio import sha256_file

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "rewrite_results.py"

REFS = ["si prende cura del giardino .", "vive in una torre d'avorio .", "ogni tanto legge un libro .",
        "il gatto dorme sul divano ."]
SRCS = ["he takes care of the garden .", "he lives in an ivory tower .", "once in a while he reads a book .",
        "the cat sleeps on the sofa ."]
BASE = ["guarda il giardino .", "vive in una torre bianca .", "a volte legge un libro .", "il gatto dorme ."]
LONG = ["si prende cura del giardino . giardino giardino giardino .", "vive in una torre d'avorio .",
        "ogni tanto legge un libro .", "il gatto dorme sul divano ."]


# ---------------------------------------------------------------- BLEU's parts in the score JSON

def test_bleu_parts_in_the_score_json(tmp_path):
    from mwemt.cli import main

    run = score_systems(ScoreInputs([SystemOutput("a", BASE), SystemOutput("b", LONG)], REFS), ["bleu"],
                        MetricOptions(lang="it"))
    rows = score_run_dict(run)["metrics"]["bleu"]["systems"]
    for row in rows.values():
        e = row["extra"]
        assert set(e) >= {"sacrebleu", "bp", "precisions", "sys_len", "ref_len", "ratio"}
        assert len(e["precisions"]) == 4 and e["ratio"] == e["sys_len"] / e["ref_len"]
        assert e["bp"] == pytest.approx(brevity_penalty(e["sys_len"], e["ref_len"]))
        geo = math.exp(sum(math.log(p / 100) for p in e["precisions"]) / 4)
        assert row["score"] == pytest.approx(100 * e["bp"] * geo)              # BLEU = BP x geometric mean
    assert rows["a"]["extra"]["bp"] < 1.0 and rows["b"]["extra"]["bp"] == 1.0
    # the same through `mwemt score --json`
    ref, hyp = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(BASE) + "\n", encoding="utf-8")
    assert main(["score", "--metrics", "bleu", "--ref", str(ref), "--hyp", f"a={hyp}", "--json",
                 "-o", str(tmp_path / "s.json")]) == 0
    e = json.loads((tmp_path / "s.json").read_text())["metrics"]["bleu"]["systems"]["a"]["extra"]
    assert e["bp"] == pytest.approx(rows["a"]["extra"]["bp"]) and e["sys_len"] == rows["a"]["extra"]["sys_len"]


def test_parts_read_back_from_an_older_summary_line():
    extra = {"sacrebleu": "BLEU = 2.71 37.8/8.2/2.3/0.8 (BP = 0.560 ratio = 0.633 hyp_len = 18189 ref_len = 28729)"}
    p = BleuParts.from_extra(2.7086, extra)
    assert not p.exact and p.precisions == (37.8, 8.2, 2.3, 0.8) and (p.sys_len, p.ref_len) == (18189, 28729)
    assert p.bp == pytest.approx(math.exp(1 - 28729 / 18189))                # exact, from the lengths
    assert BleuParts.from_extra(None, extra) is None and BleuParts.from_extra(3.0, {}) is None


# ---------------------------------------------------------------- hand-made results

def _parts(sys_len: int, precisions: tuple[float, ...], ref_len: int = 1000) -> dict:
    bp = brevity_penalty(sys_len, ref_len)
    score = 100 * bp * math.exp(sum(math.log(p / 100) for p in precisions) / len(precisions))
    return {"score": score, "p_value": 0.01,
            "extra": {"bp": bp, "precisions": list(precisions), "sys_len": sys_len, "ref_len": ref_len,
                      "ratio": sys_len / ref_len}}


def _results(tests: dict[str, dict[str, dict[str, dict]]], seed_groups=None, seed_baselines=None) -> dict:
    """tests: test -> metric -> system -> row; the first system is the baseline."""
    columns, scores = [], {}
    for test, metrics in tests.items():
        for metric, rows in metrics.items():
            cid = f"{test}/{metric}"
            columns.append({"id": cid, "test": test, "role": "general", "metric": metric,
                            "label": f"{test} {metric}", "signature": "x", "n_sentences": 10})
            for s, row in rows.items():
                scores.setdefault(s, {})[cid] = row
    systems = list(scores)
    out = {"name": "unit", "baseline": systems[0], "systems": systems, "columns": columns, "scores": scores,
           "paired_bootstrap": None, "compositionality_breakdown": {}, "reports": {},
           "seed_groups": seed_groups or {}, "meta": {}}
    if seed_baselines is not None:
        out["seed_baselines"] = seed_baselines
    return out


def test_a_bleu_gain_of_longer_outputs_is_mostly_brevity_penalty():
    precisions = (70.0, 45.0, 30.0, 20.0)
    base = _parts(600, precisions)                                           # BP exp(1 - 1000/600) = 0.513
    longer = _parts(900, tuple(p * 0.9 for p in precisions))                 # BP 0.895, every precision -10%
    better = _parts(600, tuple(p * 1.2 for p in precisions))                 # same length, precisions +20%
    results = _results({"t": {"bleu": {"baseline": base, "longer": longer, "better": better}}})
    d = bleu_difference(BleuParts.from_extra(longer["score"], longer["extra"]),
                        BleuParts.from_extra(base["score"], base["extra"]))
    bp_part = (1 - 1000 / 900) - (1 - 1000 / 600)                            # 0.5556
    assert d["bp_part"] == pytest.approx(bp_part)
    assert d["precision_part"] == pytest.approx(math.log(0.9))               # -0.1054
    assert d["log_ratio"] == pytest.approx(bp_part + math.log(0.9))
    assert d["bp_share"] == pytest.approx(bp_part / (bp_part + math.log(0.9)))   # 123%: more than all of it
    assert d["mostly_brevity"] and d["precisions_fall"] and not d["precisions_rise"]
    d2 = bleu_difference(BleuParts.from_extra(better["score"], better["extra"]),
                         BleuParts.from_extra(base["score"], base["extra"]))
    assert d2["bp_part"] == 0.0 and not d2["mostly_brevity"] and d2["precisions_rise"]
    md = format_markdown(results)
    assert "## BLEU: brevity penalty and n-gram precisions" in md
    note = next(line for line in md.splitlines() if line.startswith("**Note (t):**"))
    assert "mostly brevity penalty for longer (+" in note and "BP part 123% of the log difference" in note
    assert "every n-gram precision falls" in note and "better" not in note.split("Such a difference")[0]
    assert "| longer | " in md and "| 0.895 | 0.900 | 63.0 | 40.5 | 27.0 | 18.0 |" in md
    assert set(build_results_json(results)["bleu_differences"]["t"]) == {"longer", "better"}
    # a gain in the precisions alone: the note says none is mostly brevity penalty
    only_better = _results({"t": {"bleu": {"baseline": base, "better": better}}})
    assert "**Note (t):** no BLEU difference from the baseline is mostly brevity penalty." in format_markdown(only_better)


def build_results_json(results: dict) -> dict:
    from mwemt.experiments.results import add_analysis

    return json.loads(json.dumps(add_analysis(dict(results))))


# ---------------------------------------------------------------- the seed section

def _seeded(rows: dict[str, tuple[float, float | None]]) -> dict:
    """One MWE column ``t/mwe-p``; rows: system -> (score, p-value against its same-seed baseline)."""
    results = _results({"t": {"mwe-p": {s: {"score": v} for s, (v, _) in rows.items()}}},
                       seed_groups={g: [g, f"{g}-seed2", f"{g}-seed3"] for g in ("baseline", "m", "low", "noisy")},
                       seed_baselines={f"{g}{k}": f"baseline{k}" for g in ("m", "low", "noisy")
                                       for k in ("", "-seed2", "-seed3")})
    for s, (_, p) in rows.items():
        row = results["scores"][s]["t/mwe-p"]
        if s.endswith("-seed2") or s.endswith("-seed3"):
            row.update({"seed_baseline": "baseline" + s[s.rindex("-"):], "seed_p_value": p})
        else:
            row["p_value"] = p
    return results


SEEDS = {"baseline": (9.7, None), "baseline-seed2": (9.5, 0.5), "baseline-seed3": (9.4, 0.5),
         # cpu-science-3's TED MWE-P: the method's seeds spread 1.7, the baseline's 0.3
         "m": (11.9, 0.001), "m-seed2": (11.1, 0.001), "m-seed3": (10.2, 0.01),
         "low": (9.1, 0.2), "low-seed2": (9.0, 0.3), "low-seed3": (9.2, 0.2),          # below, not significant
         "noisy": (11.0, 0.001), "noisy-seed2": (10.0, 0.2), "noisy-seed3": (9.6, 0.04)}   # one seed not significant


def test_seed_section_judges_against_the_baselines_spread():
    s = seed_summary(_seeded(SEEDS))
    assert s["spread"]["t/mwe-p"] == pytest.approx(0.3)                      # 9.7 - 9.4: the baseline's own
    assert s["largest_spread"]["t/mwe-p"] == pytest.approx(1.7)              # the method's 11.9 - 10.2
    m, low, noisy = (s["verdicts"][g]["t/mwe-p"] for g in ("m", "low", "noisy"))
    assert m["diff"] == pytest.approx(11.0667 - 9.5333, abs=1e-3)            # +1.53: beyond 0.3 (not beyond 1.7)
    assert m["beyond_spread"] and m["significant_every_seed"] and m["real"] and m["separated"] == "above"
    assert low["separated"] == "below" and not low["real"] and not low["significant_every_seed"]
    assert noisy["beyond_spread"] and not noisy["significant_every_seed"] and not noisy["real"]
    assert noisy["separated"] is None                                        # 9.6 is not above 9.7
    md = format_markdown(_seeded(SEEDS))
    assert "| **baseline seed spread** (baseline) | | 0.3 |" in md
    assert "- **m** vs baseline (m vs baseline, m-seed2 vs baseline-seed2, m-seed3 vs baseline-seed3): real " \
           "differences: t mwe-p +1.5; every seed above every baseline seed: t mwe-p" in md
    assert "- **low** vs baseline" in md and "every seed below every baseline seed: t mwe-p" in md
    assert "t mwe-p +0.7 (not significant on every seed)" in md                  # noisy: 10.2 - 9.53


# ---------------------------------------------------------------- a test the baseline cannot translate

def _two_tests(ted_base_bleu: dict) -> dict:
    good = _parts(1000, (70.0, 45.0, 30.0, 20.0))
    return _results({"tatoeba": {"bleu": {"baseline": good, "x": good},
                                 "mwe": {"baseline": {"score": 50.0}, "x": {"score": 55.0, "p_value": 0.001}}},
                     "ted": {"bleu": {"baseline": ted_base_bleu, "x": ted_base_bleu},
                             "mwe": {"baseline": {"score": 22.6}, "x": {"score": 26.4, "p_value": 0.001}}}})


def test_a_test_the_baseline_cannot_translate_is_marked_and_not_evidence():
    low_bleu = _parts(633, (37.8, 8.2, 2.3, 0.8))                           # cpu-science-3's TED: BLEU ~2.7
    results = _two_tests(low_bleu)
    bad = untranslatable_tests(results)
    assert list(bad) == ["ted"] and bad["ted"]["reasons"] == [f"BLEU {low_bleu['score']:.1f} < 5"]
    md = format_markdown(results)
    assert "| system | tatoeba bleu | tatoeba mwe | ted bleu \u2020 | ted mwe \u2020 |" in md
    assert "## \u2020 Tests the baseline cannot translate" in md and "**not evidence**" in md
    assert "MWE columns not counted as evidence: ted mwe." in md
    (line,) = findings(results)
    assert "tatoeba mwe 55.0 vs 50.0" in line and "ted mwe" not in line    # left out of the evidence summary
    assert "- Not evidence, left out (\u2020, the baseline cannot translate them): the MWE columns of ted." in md
    # outputs under 60% of the reference length mark a test whatever its BLEU
    short = _parts(550, (95.0, 90.0, 85.0, 80.0))
    assert short["score"] >= 5
    assert untranslatable_tests(_two_tests(short))["ted"]["reasons"] == ["outputs 55% of the reference length < 60%"]
    # at the bounds (BLEU 5 or more, length 60% or more): not marked
    ok = _parts(600, (20.0, 12.0, 8.0, 5.0))
    assert ok["score"] >= 5 and untranslatable_tests(_two_tests(ok)) == {}
    assert "\u2020" not in format_markdown(_two_tests(ok))


def test_an_untranslatable_tests_mwe_gain_is_never_real_in_the_seed_section():
    low = _parts(633, (37.8, 8.2, 2.3, 0.8))
    rows = {"baseline": 22.6, "baseline-seed2": 22.7, "m": 26.4, "m-seed2": 27.5}
    results = _results({"ted": {"bleu": {s: dict(low) for s in rows},
                                "mwe": {s: {"score": v, "p_value": 0.001} for s, v in rows.items()}}},
                       seed_groups={"baseline": ["baseline", "baseline-seed2"], "m": ["m", "m-seed2"]},
                       seed_baselines={"m": "baseline", "m-seed2": "baseline-seed2"})
    results["scores"]["m-seed2"]["ted/mwe"].update({"seed_baseline": "baseline-seed2", "seed_p_value": 0.001})
    v = seed_summary(results)["verdicts"]["m"]["ted/mwe"]
    assert v["beyond_spread"] and v["significant_every_seed"] and not v["evidence"] and not v["real"]
    md = format_markdown(results)
    assert "- **m** vs baseline (m vs baseline, m-seed2 vs baseline-seed2): no real difference" in md
    assert ("ted mwe \u2020 +4.3 (\u2020 not evidence, the baseline cannot translate this test; beyond the "
            "baseline's spread, significant on every seed, every seed above every baseline seed)") in md


# ---------------------------------------------------------------- from real scores, and a published directory

def _real_results(hyps: dict[str, list[str]]) -> dict:
    systems = [SystemOutput(n, h) for n, h in hyps.items()]
    run = score_systems(ScoreInputs(systems, REFS), ["bleu", "chrf"], MetricOptions(lang="it"),
                        bootstrap=BootstrapSettings(50, 1))
    return build_results([SetScores("t", "general", score_run_dict(run))], name="unit", baseline="baseline",
                         degenerate={"t": count_test(SRCS, REFS, hyps)})


def test_results_json_and_md_from_real_scores():
    results = _real_results({"baseline": BASE, "longer": LONG})
    extra = results["scores"]["longer"]["t/bleu"]["extra"]
    assert extra["bp"] == 1.0 and extra["sys_len"] > extra["ref_len"]
    assert results["degenerate"]["t"]["systems"]["longer"]["loop"] == 1
    assert results["degenerate"]["t"]["systems"]["baseline"]["any"] == 0
    assert "longer" in results["bleu_differences"]["t"] and "untranslatable" in results
    md = format_markdown(results)
    assert "## Degenerate outputs: loops, over-long outputs, appended fragments" in md
    assert "| longer | 1 (25.0%) | 0 (0.0%) | 1 (25.0%) | 1 (25.0%) | +1 |" in md


def _publish(tmp_path: Path, hyps: dict[str, list[str]]) -> Path:
    """A directory as `mwemt run --publish` writes it (the files this test needs), with results.json written
    by an mwemt that kept only sacrebleu's summary line of BLEU."""
    out = tmp_path / "published"
    (out / "hyps").mkdir(parents=True)
    (out / "refs").mkdir()
    for name, lines in hyps.items():
        (out / "hyps" / f"{name}.t.txt.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    (out / "refs" / "t.txt.gz").write_bytes(gzip.compress(("\n".join(REFS) + "\n").encode()))
    results = _real_results(hyps)
    for s in results["systems"]:
        extra = results["scores"][s]["t/bleu"]["extra"]
        results["scores"][s]["t/bleu"]["extra"] = {"sacrebleu": extra["sacrebleu"]}
    for key in ("degenerate", "bleu_differences", "untranslatable"):
        del results[key]
    (out / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (out / "results.md").write_text("old\n", encoding="utf-8")
    (out / "publish.json").write_text(json.dumps({"files": {"results.md": sha256_file(out / "results.md"),
                                                            "results.json": "old"}}), encoding="utf-8")
    return out


def test_rewrite_a_published_directory_from_its_files(tmp_path):
    from mwemt.experiments.republish import rewrite_published

    out = _publish(tmp_path, {"baseline": BASE, "longer": LONG})
    src = tmp_path / "source.txt"
    src.write_text("\n".join(SRCS) + "\n", encoding="utf-8")
    rewrite_published(out, sources={"t": src}, plot=False)
    results = json.loads((out / "results.json").read_text())
    fresh = _real_results({"baseline": BASE, "longer": LONG})
    for s in ("baseline", "longer"):
        assert results["scores"][s]["t/bleu"]["extra"] == fresh["scores"][s]["t/bleu"]["extra"]   # exact parts
        assert results["scores"][s]["t/bleu"]["score"] == fresh["scores"][s]["t/bleu"]["score"]
    assert results["degenerate"] == fresh["degenerate"]
    md = (out / "results.md").read_text()
    assert "## BLEU: brevity penalty and n-gram precisions" in md and "## Degenerate outputs" in md
    manifest = json.loads((out / "publish.json").read_text())
    assert manifest["files"]["results.md"] == sha256_file(out / "results.md")
    assert manifest["files"]["results.json"] == sha256_file(out / "results.json")
    assert gzip.decompress((out / "refs" / "t.src.txt.gz").read_bytes()).decode().splitlines() == SRCS
    assert manifest["files"]["refs/t.src.txt.gz"] == sha256_file(out / "refs" / "t.src.txt.gz")
    # again, now reading the published source: the same files
    before = (out / "results.json").read_bytes()
    rewrite_published(out, plot=False)
    assert (out / "results.json").read_bytes() == before


def test_rewrite_refuses_hypotheses_that_do_not_give_the_published_bleu(tmp_path):
    from mwemt.experiments.republish import rewrite_published

    out = _publish(tmp_path, {"baseline": BASE, "longer": LONG})
    changed = list(LONG)
    changed[0] = "qualcosa di diverso ."
    (out / "hyps" / "longer.t.txt.gz").write_bytes(gzip.compress(("\n".join(changed) + "\n").encode()))
    before = (out / "results.json").read_bytes()
    with pytest.raises(MwemtError, match="BLEU recomputed from the published files"):
        rewrite_published(out, plot=False)
    assert (out / "results.json").read_bytes() == before and (out / "results.md").read_text() == "old\n"


def test_rewrite_script(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("rewrite_results", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["rewrite_results"] = mod
    spec.loader.exec_module(mod)
    out = _publish(tmp_path, {"baseline": BASE, "longer": LONG})
    assert mod.main([str(out), "--no-plot"]) == 0                            # no source: loops only
    results = json.loads((out / "results.json").read_text())
    assert results["degenerate"]["t"]["with_source"] is False
    assert results["degenerate"]["t"]["systems"]["longer"]["appended"] is None
    assert mod.main([str(out), "--source", f"nope={tmp_path}", "--no-plot"]) == 2
    assert "results.json has the tests t" in capsys.readouterr().err
