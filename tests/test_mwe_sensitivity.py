"""studies/mwe-test-and-score/mwe_sensitivity.py (issue 29, item 6): checkpoints in training order, the verdict on whether
the MWE score rises with BLEU, real scoring of hand-made translations per checkpoint, and (with
fairseq) a tiny model that keeps interval checkpoints, translated with each and cached."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from mwemt.errors import MwemtError
from tests.conftest import FIXTURES, requires_nmt

SCRIPT = Path(__file__).resolve().parents[1] / "studies" / "mwe-test-and-score" / "mwe_sensitivity.py"


def _load():
    spec = importlib.util.spec_from_file_location("mwe_sensitivity", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod   # dataclasses look their module up while the script is loaded
    spec.loader.exec_module(mod)
    return mod


sens = _load()


# ---------------------------------------------------------------- the verdict, worked by hand


def test_verdict_yes_when_every_pair_is_concordant_and_the_rise_is_significant():
    v = sens.rise_verdict([10.0, 20.0, 30.0], [40.0, 45.0, 50.0], (1.0, 9.0))
    assert v["verdict"] == "yes" and v["kendall_tau"] == pytest.approx(1.0) and v["spearman_rho"] == pytest.approx(1.0)
    assert v["rise"] == pytest.approx(10.0) and v["rise_significant"]


def test_verdict_partly_when_one_pair_is_discordant():
    # pairs (BLEU order): (1,2) + (1,3) + (1,4) + (2,3) - (2,4) + (3,4) +: 5 concordant, 1 discordant
    v = sens.rise_verdict([10.0, 20.0, 30.0, 40.0], [40.0, 46.0, 45.0, 50.0], (1.0, 9.0))
    assert v["kendall_tau"] == pytest.approx((5 - 1) / 6)
    assert v["verdict"] == "partly"


def test_verdict_no_when_the_rise_is_not_significant():
    assert sens.rise_verdict([10.0, 20.0, 30.0], [40.0, 45.0, 50.0], (-0.5, 9.0))["verdict"] == "no"


def test_verdict_no_when_the_mwe_score_moves_against_bleu():
    # a significant rise of the MWE score does not count when BLEU orders the checkpoints the other way
    v = sens.rise_verdict([30.0, 20.0, 10.0], [40.0, 45.0, 50.0], (1.0, 9.0))
    assert v["kendall_tau"] == pytest.approx(-1.0) and v["verdict"] == "no"


def test_verdict_no_when_the_mwe_score_is_flat():
    v = sens.rise_verdict([10.0, 20.0, 30.0], [44.0, 44.0, 44.0], (0.0, 0.0))
    assert math.isnan(v["kendall_tau"]) and v["verdict"] == "no"


# ---------------------------------------------------------------- checkpoints


def test_interval_checkpoints_sort_by_updates_not_by_name(tmp_path):
    ck = tmp_path / "model" / "checkpoints"
    ck.mkdir(parents=True)
    for name in ("checkpoint_1_950.pt", "checkpoint_1_1900.pt", "checkpoint_1_475.pt", "checkpoint_1_1425.pt",
                 "checkpoint_best.pt"):
        (ck / name).write_bytes(b"")   # only the names are read while there is no checkpoint_last.pt
    found = sens.find_checkpoints(tmp_path / "model")
    assert [c.updates for c in found] == [475, 950, 1425, 1900]
    assert [c.name for c in found][0] == "checkpoint_1_475.pt"


def test_one_checkpoint_is_refused(tmp_path):
    ck = tmp_path / "model" / "checkpoints"
    ck.mkdir(parents=True)
    (ck / "checkpoint_1_475.pt").write_bytes(b"")
    with pytest.raises(MwemtError, match="needs two"):
        sens.find_checkpoints(tmp_path / "model")


# ---------------------------------------------------------------- real scores of hand-made translations

ITEMS = [  # source, reference, MWE token indices, lemma, the MWE's reference translation
    ("Come on !", "Forza !", [0, 1], "come on", "Forza"),
    ("Shut up , please .", "Stai zitto , per favore .", [0, 1], "shut up", "Stai zitto"),
    ("He gave up the fight .", "Ha rinunciato alla lotta .", [1, 2], "give up", "rinunciato"),
    ("Take care of the dog .", "Prenditi cura del cane .", [0, 1, 2], "take care of", "Prenditi cura"),
    ("They ran into an old friend .", "Si sono imbattuti in un vecchio amico .", [1, 2], "run into", "imbattuti"),
    ("We looked after the children .", "Ci siamo occupati dei bambini .", [1, 2], "look after", "occupati"),
    ("I made up my mind .", "Ho deciso .", [1, 2, 3, 4], "make up one's mind", "deciso"),
    ("Hold on a minute .", "Aspetta un minuto .", [0, 1], "hold on", "Aspetta"),
]


@pytest.fixture
def handmade(tmp_path):
    """The test set, its reference and four translations of it: garbage, half right, all right, and
    two that split the work: the MWEs only (low BLEU, high MWE score) and everything but the MWEs."""
    test = tmp_path / "test.jsonl"
    test.write_text("".join(json.dumps({"id": str(k), "source": s, "reference": r,
                                        "mwes": [{"indices": idx, "lemma": lem, "reference": mref}]}) + "\n"
                            for k, (s, r, idx, lem, mref) in enumerate(ITEMS, 1)), encoding="utf-8")
    ref = tmp_path / "ref.txt"
    ref.write_text("".join(r + "\n" for _, r, *_ in ITEMS), encoding="utf-8")
    refs = [r for _, r, *_ in ITEMS]
    hyps = {
        "garbage": ["casa ." for _ in ITEMS],
        "half": [r if k % 2 == 0 else "casa ." for k, r in enumerate(refs)],
        "all": refs,
        "mwe-only": [m for *_, m in ITEMS],
        "no-mwe": [r.replace(m, "xq") for (*_, m), r in zip(ITEMS, refs)],
    }
    paths = {}
    for name, lines in hyps.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("".join(h + "\n" for h in lines), encoding="utf-8")
    return {"test": test, "ref": ref, "hyps": paths, "dir": tmp_path}


def _run(handmade, order, out, capsys):
    argv = ["--model", "unused", "--testset", str(handmade["test"]), "--ref", str(handmade["ref"]),
            "--out", str(out), "--mwe-align", "none", "--bootstrap", "200"]
    for k, name in enumerate(order, 1):
        argv += ["--hyp", f"{name}:{100 * k}={handmade['hyps'][name]}"]
    assert sens.main(argv) == 0
    printed = capsys.readouterr().out
    return json.loads((out / "report.json").read_text()), printed


def test_scores_rise_together(handmade, capsys):
    rep, printed = _run(handmade, ["garbage", "half", "all"], handmade["dir"] / "rise", capsys)
    bleu = [r["bleu"] for r in rep["rows"]]
    mwe = [r["mwe"] for r in rep["rows"]]
    assert bleu[0] < bleu[1] < bleu[2] == pytest.approx(100.0)
    assert mwe[0] < mwe[1] < mwe[2] == pytest.approx(100.0)
    v = rep["verdicts"]["mwe"]
    assert v["verdict"] == "yes" and v["rise_ci95"][0] > 0
    assert rep["differences"]["mwe"]["p_value"] < 0.05
    steps = rep["steps"]   # garbage -> half -> all: both stretches raise both scores
    assert [s["updates"] for s in steps] == [[100, 200], [200, 300]]
    assert all(s[k]["difference"] > 0 and s[k]["ci95"][0] >= 0 for s in steps for k in ("bleu", "mwe"))
    assert sum(s["mwe"]["difference"] for s in steps) == pytest.approx(rep["differences"]["mwe"]["difference"])
    assert [r["share"] for r in rep["rows"]] == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert "| garbage | 100 | 33% |" in printed and "**yes**" in printed
    assert "MWE|bs:200|seed:12345" in printed and "BLEU|nrefs:1|bs:200" in printed   # signatures
    assert "mwe-alts" not in rep["signatures"]   # no table, no alternatives in the items


def test_mwe_score_against_bleu_is_no(handmade, capsys):
    # BLEU rises while the MWE score falls, and the other way round: no either way
    rep, _ = _run(handmade, ["mwe-only", "no-mwe"], handmade["dir"] / "against", capsys)
    (a, b) = rep["rows"]
    assert a["bleu"] < b["bleu"] and a["mwe"] > b["mwe"]
    assert rep["verdicts"]["mwe"]["verdict"] == "no"
    rep, _ = _run(handmade, ["no-mwe", "mwe-only"], handmade["dir"] / "against2", capsys)
    v = rep["verdicts"]["mwe"]
    assert v["rise_ci95"][0] > 0 and v["kendall_tau"] == pytest.approx(-1.0)   # a significant rise, against BLEU
    assert v["verdict"] == "no"


def test_alternatives_column_from_the_testset(handmade, capsys, tmp_path):
    # an item's alternative is credited: "Dai" for "come on" (reference "Forza")
    lines = handmade["test"].read_text().splitlines()
    first = json.loads(lines[0])
    first["mwes"][0]["alternatives"] = ["Dai"]
    handmade["test"].write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    dai = handmade["hyps"]["all"].read_text().replace("Forza !", "Dai !", 1)
    handmade["hyps"]["dai"] = tmp_path / "dai.txt"
    handmade["hyps"]["dai"].write_text(dai)
    rep, printed = _run(handmade, ["garbage", "dai"], handmade["dir"] / "alt", capsys)
    last = rep["rows"][-1]
    assert last["mwe"] < 100.0 and last["mwe-alts"] == pytest.approx(100.0)
    assert "alts:testset" in rep["signatures"]["mwe-alts"] and "MWE score (alternatives)" in printed


def test_hyps_out_of_training_order_are_refused(handmade, capsys):
    argv = ["--model", "unused", "--testset", str(handmade["test"]), "--out", str(handmade["dir"] / "x"),
            "--hyp", f"a:200={handmade['hyps']['all']}", "--hyp", f"b:100={handmade['hyps']['garbage']}"]
    assert sens.main(argv) == 2
    assert "training order" in capsys.readouterr().err


# ---------------------------------------------------------------- a tiny model with interval checkpoints

NMT = FIXTURES / "nmt"


@requires_nmt
@pytest.mark.nmt
def test_tiny_model_interval_checkpoints_translated_and_cached(tmp_path, capsys):
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import train_system

    config = config_from_data({
        "name": "sens", "seed": 1, "src_lang": "en", "tgt_lang": "it",
        "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid")},
        "subword": {"vocab_size": 400}, "model": {"preset": "tiny"},
        "train": {"max_tokens": 1024, "max_epoch": 0, "max_update": 4, "warmup_updates": 4, "lr": 3e-3,
                  "patience": -1, "early_stop": "loss", "log_interval": 1,
                  "extra_args": ["--save-interval-updates", 2, "--keep-interval-updates", -1]},
        "systems": {"baseline": {}}})
    model = train_system(config, "baseline", tmp_path / "work", progress=False)
    names = sorted(p.name for p in (model / "checkpoints").iterdir())
    assert "checkpoint_1_2.pt" in names or any(n.endswith("_2.pt") for n in names), names
    src = (NMT / "test.en").read_text().splitlines()
    ref = (NMT / "test.it").read_text().splitlines()
    items = [{"id": str(k), "source": s, "reference": r,
              "mwes": [{"indices": [0, 1, 2], "lemma": "by the way", "reference": "A proposito"}]}
             for k, (s, r) in enumerate(zip(src, ref)) if s.startswith("By the way")]
    assert len(items) >= 2
    test = tmp_path / "test.jsonl"
    test.write_text("".join(json.dumps(it) + "\n" for it in items))
    out = tmp_path / "out"
    argv = ["--model", str(model), "--testset", str(test), "--out", str(out), "--mwe-align", "none",
            "--bootstrap", "20", "--beam", "1"]
    assert sens.main(argv) == 0
    rep = json.loads((out / "report.json").read_text())
    assert [r["updates"] for r in rep["rows"]] == [2, 4]
    assert rep["verdicts"]["mwe"]["verdict"] in ("yes", "partly", "no")
    hyp_files = sorted((out / "hyps").glob("*.txt"))
    assert len(hyp_files) == 2 and all(len(p.read_text().splitlines()) == len(items) for p in hyp_files)
    capsys.readouterr()
    assert sens.main(argv) == 0                       # a rerun reuses every checkpoint's translations
    err = capsys.readouterr().err
    assert err.count("cached") == 2 and "translating" not in err
