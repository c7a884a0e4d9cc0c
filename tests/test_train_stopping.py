"""A quieter grid (issue 36, item 4): early stopping that a plateau or a tie does not end
(`train.patience_updates`, `train.min_improvement`, the plugin's `PlateauStop`), checkpoint averaging
(`train.average_last`), settings that leave the keys of configs without them unchanged, and three
seeds of one system in one seed group."""

from __future__ import annotations

import json

import pytest

from mwemt.nmt.config import ModelConfig, TrainConfig, consistency_problems, with_preset
from mwemt.nmt.fairseq_plugin.stopping import PlateauStop
from mwemt.schema import to_plain
from tests.conftest import requires_nmt

NEW_TRAIN_SETTINGS = ("patience_updates", "min_improvement", "average_last")


# ---------------------------------------------------------------- the rule

def test_a_plateau_of_small_gains_stops_with_a_threshold_and_not_without():
    losses = [5.0, 4.98, 4.97, 4.96, 4.955]                   # every validation a little better
    stock = PlateauStop(maximize=False, patience=2)            # fairseq's rule: any strict gain resets patience
    assert not any(stock.step(v, 100 * (k + 1)) for k, v in enumerate(losses))
    margin = PlateauStop(maximize=False, min_improvement=0.05, patience=2)
    stops = [margin.step(v, 100 * (k + 1)) for k, v in enumerate(losses)]
    assert stops == [False, False, True, True, True]     # 2 validations without a gain of more than 0.05
    assert margin.best == 5.0 and margin.best_updates == 100          # the gains under 0.05 never counted
    assert margin.reason.startswith("early stop since") and "by more than 0.05" in margin.reason
    counted = PlateauStop(maximize=False, min_improvement=0.05, patience=2)   # the margin is from the counted best
    assert [counted.step(v, u) for v, u in [(5.0, 1), (4.97, 2), (4.94, 3), (4.93, 4)]] == [False] * 4
    assert counted.best == 4.94 and counted.waited == 1


def test_patience_in_updates_counts_updates_not_validations():
    rule = PlateauStop(maximize=True, patience=1, patience_updates=500)   # BLEU; `patience` is not read
    # uneven validations (interval and epoch ends): 10.0 at 100, then ties and worse
    assert [rule.step(v, u) for v, u in [(10.0, 100), (10.0, 150), (9.0, 400)]] == [False, False, False]
    assert rule.step(10.0, 600)                                  # a tie 500 updates after the best: stop
    assert "500 updates" in rule.reason and "best 10.0000 at update 100" in rule.reason
    again = PlateauStop(maximize=True, patience_updates=500)
    assert not again.step(10.0, 100) and not again.step(10.5, 550) and not again.step(10.5, 1000)
    assert again.step(10.4, 1050)                                # counted from the last gain, at update 550


def test_no_validation_and_nan():
    rule = PlateauStop(maximize=False, min_improvement=0.1, patience=2)
    assert not rule.step(None, 10) and rule.best is None and not rule.waited   # no validation: nothing counts
    assert not rule.step(float("nan"), 20) and rule.best is None and rule.waited == 1   # a NaN is never a best
    assert not rule.step(3.0, 30) and not rule.step(float("nan"), 40) and rule.step(float("nan"), 50)


# ---------------------------------------------------------------- settings, command line, keys

def _job(**train):
    from mwemt.nmt.train import FairseqJob

    return FairseqJob(*with_preset(ModelConfig(), TrainConfig(**train)), "en", "it", factors=1, seed=1)


def test_the_command_line_changes_only_with_the_settings(tmp_path):
    from mwemt.nmt.train import fairseq_train_args

    plain = fairseq_train_args(_job(), tmp_path, tmp_path / "ck")
    assert "--no-epoch-checkpoints" in plain and "--keep-last-epochs" not in plain
    assert not any(a.startswith("--stop-") for a in plain)
    args = fairseq_train_args(_job(patience_updates=2000, min_improvement=0.01, average_last=5,
                                   validate_interval_updates=500), tmp_path, tmp_path / "ck")
    assert args[args.index("--stop-patience-updates") + 1] == "2000"
    assert args[args.index("--stop-min-improvement") + 1] == "0.01"
    assert "--no-epoch-checkpoints" not in args and args[args.index("--keep-last-epochs") + 1] == "5"
    assert args[args.index("--keep-interval-updates") + 1] == "5"


def test_new_settings_leave_the_keys_of_configs_without_them_unchanged():
    """`mwemt.schema.to_plain` (the cache key's form) leaves the new settings out at their defaults."""
    plain = to_plain(TrainConfig())
    assert not set(NEW_TRAIN_SETTINGS) & set(plain)
    assert to_plain(TrainConfig(average_last=3))["average_last"] == 3
    assert to_plain(TrainConfig(min_improvement=0.01, patience_updates=10)).keys() >= {"min_improvement",
                                                                                       "patience_updates"}


def test_contradictions_are_refused():
    def problems(**train):
        return dict(consistency_problems(*_sections(**train), joint_subword=True, n_factors=1))

    def _sections(**train):
        from mwemt.nmt.config import PrepareConfig

        return PrepareConfig(), ModelConfig(), TrainConfig(**train)

    assert "train.average_last" in problems(average_last=1)
    assert "train.min_improvement" in problems(min_improvement=0.1, patience=-1)
    assert not problems(min_improvement=0.1, patience=-1, patience_updates=100)
    assert not problems(average_last=2)


def test_three_seeds_of_a_system_form_one_seed_group():
    """`ExperimentConfig.seed_groups`: a system and two seed twins are one group of three (each twin is
    then compared with the baseline of its own seed by the results' seed section)."""
    from mwemt.experiments.config import config_from_data
    from tests.test_nmt_train import NMT

    systems = {"baseline": {}, "baseline-seed2": {"train": {"seed": 2}}, "baseline-seed3": {"train": {"seed": 3}},
               "iob": {"encoding": "iob"}, "iob-seed2": {"encoding": "iob", "train": {"seed": 2}},
               "iob-seed3": {"encoding": "iob", "train": {"seed": 3}},
               "iob-avg": {"encoding": "iob", "train": {"average_last": 3}}}
    cfg = config_from_data({"name": "seeds", "seed": 1, "src_lang": "en", "tgt_lang": "it",
                            "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"),
                                     "lexicon": str(NMT / "lexicon.txt"), "lexicon_format": "list"},
                            "systems": systems})
    assert cfg.seed_groups(systems) == {"baseline": ["baseline", "baseline-seed2", "baseline-seed3"],
                                        "iob": ["iob", "iob-seed2", "iob-seed3"]}


# ---------------------------------------------------------------- a real training

@requires_nmt
@pytest.mark.nmt
def test_training_stops_on_the_update_patience_and_translates_with_the_average(tmp_path):
    """A tiny model validated every 2 updates, with a margin no validation can beat (100 loss units):
    the first validation (update 2) stays the counted best and training stops at the first validation
    4 updates later (update 6), long before max_update; the last 2 checkpoints are averaged into the
    checkpoint that translate loads, and training.json says which."""
    import torch

    from mwemt.nmt.translate import Translator
    from tests.test_nmt_train import train

    model = train("none", tmp_path / "w", max_update=40, validate_interval_updates=2, patience=-1,
                  patience_updates=4, min_improvement=100.0, average_last=2)
    summary = json.loads((model / "manifest.json").read_text())["training"]   # the train stage's training.json
    assert summary["stop_reason"].startswith("early stop since") and summary["converged"]
    assert "4 updates" in summary["stop_reason"] and "at update 2" in summary["stop_reason"]
    assert max(v["updates"] for v in summary["validations"]) == 6
    avg = summary["average"]
    assert avg["last"] == 2 and avg["averaged"] == 2 and avg["updates"][-1] == 6
    assert avg["into"] == "checkpoint_best.pt" and avg["single_best"] == "checkpoint_best_single.pt"
    ck = model / "checkpoints"
    states = [torch.load(ck / name, map_location="cpu") for name in avg["checkpoints"]]
    averaged = torch.load(ck / "checkpoint_best.pt", map_location="cpu")
    assert (ck / "checkpoint_best_single.pt").is_file()
    for name, value in averaged["model"].items():
        if value.is_floating_point():
            want = sum(s["model"][name].double() for s in states) / len(states)
            assert torch.allclose(value.double(), want, atol=1e-6), name
    assert averaged["extra_state"]["mwemt_average"]["checkpoints"] == avg["checkpoints"]
    assert states[0]["model"].keys() == averaged["model"].keys()
    assert any(not torch.equal(states[0]["model"][k], states[1]["model"][k]) for k in averaged["model"])
    tr = Translator.load(model, threads=1)
    assert tr.checkpoint.name == "checkpoint_best.pt"       # the average is what translate loads
    assert len(tr.translate(["the cat"], beam=1, progress=False)) == 1


def test_averaging_orders_epoch_and_interval_checkpoints_and_reruns_to_the_same_file(tmp_path):
    """`last_checkpoints` puts an epoch's interval checkpoints before its end; a second training run in the
    directory first puts fairseq's best back (`restore_single_best`), then averages again: same result."""
    import torch

    from mwemt.nmt.train import SINGLE_BEST, average_checkpoints, last_checkpoints, restore_single_best

    def save(name, updates, value):
        torch.save({"model": {"w": torch.full((2,), float(value)), "step": torch.tensor(updates)},
                    "optimizer_history": [{"num_updates": updates}], "last_optimizer_state": {"big": 1},
                    "extra_state": {}}, tmp_path / name)

    for name, updates, value in [("checkpoint1.pt", 10, 1.0), ("checkpoint_2_15.pt", 15, 2.0),
                                 ("checkpoint_2_18.pt", 18, 4.0), ("checkpoint2.pt", 20, 6.0),
                                 ("checkpoint_best.pt", 15, 2.0), ("checkpoint_last.pt", 20, 6.0)]:
        save(name, updates, value)
    assert [p.name for p in last_checkpoints(tmp_path, 3)] == ["checkpoint_2_15.pt", "checkpoint_2_18.pt",
                                                               "checkpoint2.pt"]
    record = average_checkpoints(tmp_path, 3)
    assert record["updates"] == [15, 18, 20] and record["single_best"] == SINGLE_BEST
    avg = torch.load(tmp_path / "checkpoint_best.pt")
    assert torch.equal(avg["model"]["w"], torch.full((2,), 4.0)) and int(avg["model"]["step"]) == 20
    assert "last_optimizer_state" not in avg
    assert torch.load(tmp_path / SINGLE_BEST)["optimizer_history"][-1]["num_updates"] == 15   # fairseq's best
    first = (tmp_path / "checkpoint_best.pt").read_bytes()
    restore_single_best(tmp_path)
    assert not (tmp_path / SINGLE_BEST).exists()
    assert torch.load(tmp_path / "checkpoint_best.pt")["optimizer_history"][-1]["num_updates"] == 15
    average_checkpoints(tmp_path, 3)
    assert (tmp_path / "checkpoint_best.pt").read_bytes() == first
