"""The IOB ablations of issue 13: the same IOB model decoded with its MWE factors hidden
(`translate.source_mwes: none`, a `model_of` variant that reuses the trained model), and a factored
model whose factors are constant (`encoding: iob-constant`). Tiny models, a few updates."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, has_nmt, requires_nmt

NMT = FIXTURES / "nmt"
LINES = ["My sister takes care of the dog in the ivory tower .", "By the way , the doctor thinks about the books ."]


def grid(tmp_path, systems: dict, **extra):
    from mwemt.experiments.config import config_from_data

    data = {
        "name": "ablation", "seed": 1, "src_lang": "en", "tgt_lang": "it",
        "data": {"train": str(NMT / "train"), "valid": str(NMT / "valid"), "lexicon": str(NMT / "lexicon.txt"),
                 "lexicon_format": "list"},
        "subword": {"vocab_size": 400},
        "model": {"preset": "tiny"},
        "train": {"max_tokens": 1024, "max_epoch": 0, "max_update": 3, "warmup_updates": 3, "lr": 3e-3,
                  "patience": -1, "early_stop": "loss", "log_interval": 1},
        "translate": {"beam": 2},
        "score": {"bootstrap": 20},
        "systems": systems, **extra,
    }
    data.setdefault("tests", {"t": {"source": str(NMT / "test.en"), "reference": str(NMT / "test.it")}})
    return config_from_data(data, base_dir=tmp_path)


# ---------------------------------------------------------------- encodings (no model)

def test_constant_factors_carry_nothing():
    from mwemt.preprocess.annotate import FACTOR_NAMES, Annotator, encode_sentence
    from mwemt.preprocess.lexicon import Lexicon
    from mwemt.records import LexiconEntry

    ann = Annotator(Lexicon([LexiconEntry(("take", "care", "of"))]), lang="en")
    sent = ann.annotate_text("She takes care of the dog.")
    assert sent.mwes, "the lexicon MWE must be found for the test to mean anything"
    iob, _ = encode_sentence(sent, "iob")
    const, _ = encode_sentence(sent, "iob-constant")
    assert {t.split("|")[2] for t in iob.split()} == {"B", "I", "O"}
    assert [t.split("|")[0] for t in const.split()] == [t.split("|")[0] for t in iob.split()]
    assert {tuple(t.split("|")[1:]) for t in const.split()} == {("-", "O")}
    assert FACTOR_NAMES["iob-constant"] == FACTOR_NAMES["iob"]   # the same factor tables and sizes


# ---------------------------------------------------------------- config

def test_variant_config_is_checked(tmp_path):
    from mwemt.schema import ConfigError

    cfg = grid(tmp_path, {"iob": {"encoding": "iob"},
                          "iob-no-mwes": {"model_of": "iob", "translate": {"source_mwes": "none"}}})
    assert cfg.trained_system("iob-no-mwes") == "iob" and cfg.trained_system("iob") == "iob"
    assert cfg.systems["iob-no-mwes"].translate.source_mwes == "none"
    with pytest.raises(ConfigError, match=r"systems\.v\.model_of: 'nope' is not a trained system"):
        grid(tmp_path, {"iob": {"encoding": "iob"}, "v": {"model_of": "nope"}})
    with pytest.raises(ConfigError, match=r"systems\.v\.encoding: a `model_of` variant reuses iob's model"):
        grid(tmp_path, {"iob": {"encoding": "iob"}, "v": {"model_of": "iob", "encoding": "wws"}})
    with pytest.raises(ConfigError, match="is not a trained system"):   # no chains of variants
        grid(tmp_path, {"iob": {"encoding": "iob"}, "v": {"model_of": "iob"}, "w": {"model_of": "v"}})
    with pytest.raises(ConfigError, match=r"tests\.t\.sample: choose `sample`"):
        grid(tmp_path, {"iob": {"encoding": "iob"}}, tests={"t": {"source": str(NMT / "test.en"),
                                                                  "reference": str(NMT / "test.it"),
                                                                  "sample": 5, "max_items": 5}})
    with pytest.raises(ConfigError, match="source_mwes"):
        grid(tmp_path, {"iob": {"encoding": "iob", "translate": {"source_mwes": "hidden"}}})


# ---------------------------------------------------------------- models

@pytest.fixture(scope="module")
def ablation_run(tmp_path_factory):
    """One grid: the IOB model, its no-MWE decoding variant, and the constant-factor model."""
    from mwemt.experiments.experiment import run_experiment

    if not has_nmt():
        pytest.skip("torch and fairseq-fixed are not installed")
    root = tmp_path_factory.mktemp("ablation")
    cfg = grid(root, {"iob": {"encoding": "iob"},
                      "iob-no-mwes": {"model_of": "iob", "translate": {"source_mwes": "none"}},
                      "iob-constant": {"encoding": "iob-constant"}})
    results = run_experiment(cfg, root / "run", progress=False, plot=False)
    return root / "run", results


def _stages(run_dir):
    return json.loads((run_dir / "manifest.json").read_text())["stages"]


@pytest.mark.slow
@requires_nmt
@pytest.mark.nmt
def test_variant_reuses_the_trained_model_and_decodes_without_mwes(ablation_run):
    from mwemt.nmt.translate import Translator

    run_dir, results = ablation_run
    stages = _stages(run_dir)
    trained = [s for s in stages if s["stage"] == "train" and s["status"] == "ran"]
    assert sorted(s["system"] for s in trained) == ["iob", "iob-constant"]   # the variant trains nothing
    assert [s["status"] for s in stages if s["stage"] == "train" and s["system"] == "iob"] == ["ran", "cached"]
    translate = {s["system"]: s for s in stages if s["stage"] == "translate"}
    assert translate["iob-no-mwes.t"]["status"] == "ran"
    # the variant's hypotheses are the IOB model's with the MWEs hidden, line for line
    model = run_dir / next(s["directory"] for s in trained if s["system"] == "iob") / "model"
    tr = Translator.load(model)
    source = (NMT / "test.en").read_text(encoding="utf-8").splitlines()
    hyp = (run_dir / translate["iob-no-mwes.t"]["directory"] / "hyp.txt").read_text(encoding="utf-8").splitlines()
    assert hyp == [" ".join(h.split()) for h in tr.translate(source, beam=2, batch_size=64, source_mwes="none")]
    assert "iob-no-mwes" in json.dumps(results)            # scored beside the others


@requires_nmt
@pytest.mark.nmt
def test_source_mwes_none_hides_every_mwe_factor(ablation_run):
    from mwemt.errors import MwemtError
    from mwemt.nmt.translate import Translator

    run_dir, _ = ablation_run
    model = run_dir / next(s["directory"] for s in _stages(run_dir)
                           if s["stage"] == "train" and s["system"] == "iob" and s["status"] == "ran") / "model"
    tr = Translator.load(model)
    seen = tr.encode(LINES[0]).rows
    hidden = tr.encode(LINES[0], source_mwes="none").rows
    assert {r[2] for r in seen} >= {"B", "I", "O"}        # the lexicon's MWEs are there ...
    assert {r[2] for r in hidden} == {"O"}                 # ... and hidden: every tag O
    assert [r[0] for r in hidden] == [r[0] for r in seen]  # the same pieces
    assert not any("_" in r[1] for r in hidden)            # lemma factors are the words' lemmas, no MWE lemma
    assert any("_" in r[1] for r in seen)
    with pytest.raises(MwemtError, match="source_mwes 'none' re-annotates"):
        tr.translate(["the|the|O"], input_format="annotated", source_mwes="none")


@requires_nmt
@pytest.mark.nmt
def test_constant_factor_model_has_the_iob_architecture_and_translates(ablation_run):
    from mwemt.nmt.translate import Translator

    run_dir, _ = ablation_run
    dirs = {s["system"]: run_dir / s["directory"] / "model" for s in _stages(run_dir)
            if s["stage"] == "train" and s["status"] == "ran"}
    const = dirs["iob-constant"]
    pre = json.loads((const / "preprocess.json").read_text())
    assert pre["encoding"] == "iob-constant" and pre["factors"] == 3
    symbols = [[w for w in (const / f"dict.en.factor{k}.txt").read_text().split()[::2]
                if not w.startswith("madeupword")] for k in (1, 2)]   # fairseq pads dictionaries with these
    assert symbols == [["-"], ["O"]]                       # one symbol per extra factor
    import torch

    shapes = {}
    for name, d in dirs.items():
        state = torch.load(d / "checkpoints" / "checkpoint_last.pt", map_location="cpu", weights_only=False)
        shapes[name] = [tuple(v.shape)[1:] for k, v in sorted(state["model"].items())
                        if k.startswith("encoder.embed_tokens.tables.")]
    assert shapes["iob-constant"] == shapes["iob"]         # the same factor embedding sizes
    tr = Translator.load(const)
    assert {r[1:] == ["-", "O"] for r in tr.encode(LINES[0]).rows} == {True}
    out = tr.translate(LINES, beam=2, max_len_a=0, max_len_b=5)
    assert len(out) == 2 and any(out)   # a model this small may end one sentence at once (an empty line)


@pytest.mark.parametrize("name", ["cpu-science", "paper-small"])
def test_shipped_grids_load_with_in_domain_tests(shared, name):
    from mwemt.experiments.config import load_config
    from mwemt.experiments.experiment import count_stages, ordered_systems

    cfg = load_config(FIXTURES.parents[1] / "configs" / f"{name}.yaml")
    assert cfg.data.split.test_size > 0 and cfg.tests["tatoeba"].source == "split-test"
    assert cfg.tests["tatoeba"].sample == 2000                  # seeded: the Tatoeba TSV is sorted by length
    assert cfg.tests["tatoeba-mwe"].build is not None and cfg.tests["tatoeba-mwe"].build.select >= 1000
    assert cfg.lowercase_test("ted") and cfg.lowercase_test("mwe-dict") and not cfg.lowercase_test("tatoeba")
    assert {"baseline", "dictionary", "backtranslation", "words-with-spaces", "iob"} <= set(cfg.systems)
    assert count_stages(cfg, ordered_systems(cfg)) > 0
    if name == "cpu-science":
        assert cfg.trained_system("iob-no-mwes") == "iob" and cfg.systems["iob-constant"].encoding == "iob-constant"
        assert cfg.systems["iob"].train.max_update == 1900 and cfg.systems["iob"].model.arch == "factored_transformer_small"
