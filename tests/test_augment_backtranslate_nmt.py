"""Back-translation with a real reverse model trained by mwemt's trainer (slow: trains a tiny IT->EN model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import requires_nmt

pytestmark = [pytest.mark.slow, pytest.mark.nmt, requires_nmt]


@pytest.fixture(scope="module")
def reverse_model(tmp_path_factory) -> Path:
    from mwemt.experiments.config import config_from_data
    from mwemt.experiments.experiment import train_system

    nmt = Path(__file__).resolve().parent / "fixtures" / "nmt"
    config = config_from_data({
        "name": "reverse-tiny", "seed": 1, "src_lang": "it", "tgt_lang": "en",
        "data": {"train": str(nmt / "train"), "valid": str(nmt / "valid")},
        "subword": {"vocab_size": 400},
        "train": {"max_epoch": 0, "max_update": 200, "early_stop": "loss", "patience": -1, "threads": 1,
                  "log_interval": 50},
        "systems": {"it-en": {}}})
    return train_system(config, "it-en", tmp_path_factory.mktemp("reverse"), progress=False)


def _lines(path) -> list[str]:
    return Path(path).read_text(encoding="utf-8").splitlines()


def _run(aug, model_dir, out, **decoding):
    from mwemt.augment.backtranslate import (
        BacktranslationConfig,
        NmtReverseModel,
        augment_with_backtranslation,
    )

    translator = NmtReverseModel(model_dir, **decoding)
    cfg = BacktranslationConfig(ratio=0.25, seed=2, tag="<BT>", max_tokens=25, max_gap=1, max_length_ratio=3.0)
    return translator, augment_with_backtranslation(aug / "mono.it", aug / "it_mwe.txt", aug / "train", out,
                                                    translator, cfg, progress=False)


def test_backtranslation_with_a_trained_reverse_model(fixtures, reverse_model, tmp_path):
    aug = fixtures / "augment"
    translator, m = _run(aug, reverse_model, tmp_path / "bt", beam=2)
    assert m["ratio"]["requested_pairs"] == 3
    tr = m["counts"]["translation"]
    assert tr["translated"] == tr["kept"] + sum(tr["rejected"].values()) + tr["unused"]
    assert m["counts"]["synthetic_pairs"] == tr["kept"] >= 1
    assert m["reverse_model"]["checkpoint"]["sha256"]
    mono = _lines(aug / "mono.it")
    en, it = _lines(tmp_path / "bt.en"), _lines(tmp_path / "bt.it")
    for out_line, mono_line, _mwes in m["synthetic"]["pairs"]:
        assert it[out_line - 1] == mono[mono_line - 1]
        # the synthetic source is the model's own translation of that monolingual line, tagged
        assert en[out_line - 1] == "<BT> " + " ".join(translator.translate([mono[mono_line - 1]])[0].split())


def test_sampled_backtranslation_is_reproducible_from_the_seed(fixtures, reverse_model, tmp_path):
    aug = fixtures / "augment"
    _run(aug, reverse_model, tmp_path / "a", sampling=True, topk=5, seed=3)
    _run(aug, reverse_model, tmp_path / "b", sampling=True, topk=5, seed=3)
    for lang in ("en", "it"):
        assert (tmp_path / f"a.{lang}").read_bytes() == (tmp_path / f"b.{lang}").read_bytes()


def test_backtranslate_cli_with_reverse_model(fixtures, reverse_model, tmp_path):
    from mwemt.cli import main

    aug = fixtures / "augment"
    code = main(["augment", "backtranslate", "--mono", str(aug / "mono.it"), "--target-lexicon",
                 str(aug / "it_mwe.txt"), "--reverse-model", str(reverse_model), "--beam", "2", "--max-gap", "1",
                 "--max-length-ratio", "3", "--train", str(aug / "train"), "--ratio", "0.25", "--out",
                 str(tmp_path / "bt"), "--quiet"])
    assert code == 0
    assert len(_lines(tmp_path / "bt.en")) == len(_lines(tmp_path / "bt.it")) > 12
