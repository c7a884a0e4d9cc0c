"""Experiment configs: typed sections, defaults, overrides, package paths, and located errors for bad
configs, all before any stage runs (issue 15, defect 1)."""

from __future__ import annotations

import dataclasses
import filecmp
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mwemt.errors import InputError, MwemtError
from mwemt.experiments.config import PACKAGE_DATA, ExperimentConfig, config_from_data, load_config
from mwemt.schema import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DEMO = PACKAGE_DATA / "demo" / "demo.yaml"
NMT = ROOT / "tests" / "fixtures" / "nmt"

MINIMAL = f"""\
name: t
data:
  train: {NMT}/train
  valid: {NMT}/valid
  lexicon: {NMT}/lexicon.txt
tests:
  general: {{source: {NMT}/valid.en, reference: {NMT}/valid.it}}
systems:
  baseline: {{}}
  iob: {{encoding: iob}}
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "exp.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwemt", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_demo_config_resolves_package_paths_and_systems():
    cfg = load_config(DEMO)
    assert isinstance(cfg, ExperimentConfig)
    assert Path(cfg.data.lexicon).is_file() and Path(cfg.tests["mwe"].testset).is_file()
    assert list(cfg.systems) == ["baseline", "dictionary", "backtranslation", "words-with-spaces", "iob"]
    assert cfg.score.baseline == "baseline"
    assert cfg.systems["iob"].encoding == "iob" and cfg.systems["baseline"].augment_options is None
    assert cfg.systems["dictionary"].augment_options.ratio == 0.10
    assert cfg.systems["backtranslation"].augment_options.beam == 4        # augment.backtranslation
    assert cfg.systems["iob"].model.arch == "factored_transformer_tiny"    # the preset, applied per system
    assert cfg.systems["iob"].train.lr == 1e-3 and cfg.systems["iob"].train.max_epoch == 20
    assert (ROOT / "configs" / "demo.yaml").resolve() == DEMO.resolve()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.systems["iob"].train.max_epoch = 3


def test_overrides_and_system_sections(tmp_path):
    cfg = load_config(write(tmp_path, MINIMAL), ["train.max_epoch=3", "model.args={encoder_layers: 1}",
                                                 "systems.iob.train={max_epoch: 9}",
                                                 "systems.iob.model.preset=lstm"])
    assert cfg.data.lexicon == str(NMT / "lexicon.txt")
    assert cfg.train.max_epoch == 3 and cfg.model.args == {"encoder_layers": 1}
    assert cfg.systems["iob"].train.max_epoch == 9 and cfg.systems["baseline"].train.max_epoch == 3
    assert cfg.systems["iob"].model.args == {"encoder_layers": 1}             # merged key by key
    assert (cfg.systems["iob"].model.arch, cfg.systems["iob"].train.lr) == ("factored_lstm", 1e-3)
    assert cfg.systems["iob"].model.dropout == 0.2 and cfg.systems["baseline"].model.dropout == 0.1
    assert cfg.systems["baseline"].encoding == "none" and cfg.systems["baseline"].augment == "none"


def test_relative_paths_are_relative_to_the_config(tmp_path):
    (tmp_path / "c").mkdir()
    for lang in ("en", "it"):
        (tmp_path / "c" / f"train.{lang}").write_text("a b\n")
    cfg = config_from_data({"data": {"train": "c/train", "valid": "c/train"}, "systems": {"b": {}}},
                           base_dir=tmp_path)
    assert cfg.data.train == str(tmp_path / "c" / "train")


def error_of(tmp_path: Path, text: str, overrides: tuple[str, ...] = ()) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text), list(overrides))
    return err.value


@pytest.mark.parametrize("old, new, line, message", [
    # typos anywhere: top level, systems, nmt sections, data, tests; the nearest valid key is suggested
    ("  iob: {encoding: iob}", "  iob: {encodng: iob}", 10, "systems.iob.encodng: unknown key; did you mean `encoding`?"),
    ("name: t", "nme: t", 1, "nme: unknown key; did you mean `name`?"),
    ("  lexicon:", "  lexicom:", 5, "data.lexicom: unknown key; did you mean `lexicon`?"),
    ("reference:", "referense:", 7, "tests.general.referense: unknown key; did you mean `reference`?"),
    ("  iob: {encoding: iob}", "  iob: {encoding: iob, train: {max_epocs: 3}}", 10,
     "systems.iob.train.max_epocs: unknown key; did you mean `max_epoch`?"),
    # wrong types and values, in nmt sections too
    ("  iob: {encoding: iob}", "  iob: {encoding: bio}", 10, "systems.iob.encoding: 'bio' is not allowed; did you mean `iob`?"),
    ("  iob: {encoding: iob}", "  iob: {encoding: iob, model: {dropout: high}}", 10,
     "systems.iob.model.dropout: expected a number, got a string 'high'"),
    ("name: t", "name: t\ntrain: {max_epoch: ten}", 2, "train.max_epoch: expected an integer, got a string 'ten'"),
    ("name: t", "name: t\nsubword: {vocab_size: 0}", 2, "subword.vocab_size: must be at least 264, got 0"),
    ("name: t", "name: t\ntrain: {max_epoch: 0}", 2, "train.max_epoch: set train.max_epoch or train.max_update"),
    ("name: t", "name: t\nmodel: {factor_embed_dims: [48, 8, 8]}", 2,
     "model.factor_embed_dims: has 3 sizes but the system's encoding gives 1 source factor(s) (for systems.baseline)"),
    ("  iob: {encoding: iob}", "  iob: {encoding: iob, model: {factor_embed_dims: [48, 8, 8]}}", 10,
     "systems.iob.model.factor_embed_dims: [48, 8, 8]: with factor_combine sum every factor has"),
    # missing files and inconsistent settings
    ("  train: ", "  train: /nonexistent", 3, "data.train: corpus file not found: /nonexistent"),
    ("lexicon.txt", "no-such-lexicon.txt", 5, "data.lexicon: not found: "),
    ("  iob: {encoding: iob}", "  d: {augment: dictionary}", 10, "systems.d: uses the dictionary but data.dictionary"),
    ("/valid.it}", "/valid.it, metrics: [bleu, mwe]}", 7, "tests.general.metrics: the MWE score needs"),
    ("systems:", "score: {baseline: nope}\nsystems:", 8, "score.baseline: 'nope' is not a system"),
    ("name: t", "name: [unclosed", 2, "not valid YAML"),
    ("  baseline: {}", "  baseline: {}\n  baseline: {}", 10, "systems.baseline: duplicate key (first at line 9)"),
])
def test_bad_configs_fail_with_file_line_and_key(tmp_path, old, new, line, message):
    if old.startswith("  train: "):
        text = re.sub(r"  train: .*", new, MINIMAL, count=1)
    else:
        assert old in MINIMAL
        text = MINIMAL.replace(old, new, 1)
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_config(path)
    assert str(err.value).startswith(f"{path}:{line}: "), str(err.value)
    assert message in str(err.value)


def test_overrides_are_checked_like_the_file(tmp_path):
    path = write(tmp_path, MINIMAL)
    err = error_of(tmp_path, MINIMAL, ("train.max_epoc=3",))
    assert str(err).startswith("override 'train.max_epoc=3': train.max_epoc: unknown key; did you mean `max_epoch`?")
    assert "did you mean `share`" in str(error_of(tmp_path, MINIMAL, ("systems.iob.model.shar=all",)))
    assert "expected true or false" in str(error_of(tmp_path, MINIMAL, ("lowercase=maybe",)))
    with pytest.raises(MwemtError, match="expected section.key=value"):
        load_config(path, ["train.max_epoch"])


def test_a_misspelled_system_key_fails_the_run_before_any_stage(tmp_path):
    """Issue 15: `iob: {encodng: iob}` trained a second baseline and exited 0."""
    path = write(tmp_path, MINIMAL.replace("iob: {encoding: iob}", "iob: {encodng: iob}"))
    dry = cli("run", str(path), "--dry-run")
    assert dry.returncode == 2 and "did you mean `encoding`?" in dry.stderr and not dry.stdout
    run_dir = tmp_path / "run"
    out = cli("run", str(path), "--run-dir", str(run_dir))
    assert out.returncode == 2
    assert f"{path}:10: systems.iob.encodng: unknown key; did you mean `encoding`?" in out.stderr
    assert not run_dir.exists()                       # no stage ran, not even the corpus


def test_type_errors_in_nmt_sections_fail_before_annotate(tmp_path):
    path = write(tmp_path, MINIMAL.replace("iob: {encoding: iob}", "iob: {encoding: iob, train: {lr: fast}}"))
    work = tmp_path / "work"
    out = cli("train", "--config", str(path), "--system", "iob", "--workdir", str(work))
    assert out.returncode == 2
    assert "systems.iob.train.lr: expected a number, got a string 'fast'" in out.stderr
    assert not work.exists()
    missing = write(tmp_path, MINIMAL.replace(f"{NMT}/valid\n", f"{NMT}/nowhere\n"))
    out = cli("train", "--config", str(missing), "--system", "iob", "--workdir", str(work))
    assert out.returncode == 2 and f"{missing}:4: data.valid: corpus file not found" in out.stderr
    assert not work.exists()


def test_dry_run_prints_the_resolved_typed_config(tmp_path):
    out = cli("run", str(DEMO), "--dry-run", "--set", "train.max_epoch=2", "--set", "systems.iob.train.max_epoch=5")
    assert out.returncode == 0, out.stderr
    import json

    cfg = json.loads(out.stdout)
    assert cfg["train"]["max_epoch"] == 2 and cfg["systems"]["baseline"]["train"]["max_epoch"] == 2
    assert cfg["systems"]["iob"]["train"]["max_epoch"] == 5
    assert cfg["systems"]["iob"]["model"]["arch"] == "factored_transformer_tiny"
    assert cfg["systems"]["baseline"]["subword"]["vocab_size"] == 600


def test_unknown_system_subset_is_refused(tmp_path):
    bad = cli("run", str(DEMO), "--systems", "baseline,nosuch", "--run-dir", str(tmp_path / "r"))
    assert bad.returncode == 2
    assert "nosuch are not in the config" in bad.stderr and not (tmp_path / "r").exists()


def test_every_shipped_config_loads_or_lacks_only_data(shared):
    """The configs in configs/ are valid; the ones whose data is not here fail only for that reason."""
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        try:
            load_config(path)
        except ConfigError as exc:
            assert "not found" in str(exc), f"{path}: {exc}"


def test_train_and_run_share_one_schema(tmp_path):
    """A training config is an experiment config with one system and no tests."""
    cfg = load_config(ROOT / "configs" / "nmt-tiny.yaml")
    assert list(cfg.systems) == ["iob"] and not cfg.tests
    assert cfg.systems["iob"].model.factor_embed_dims == (48, 8, 8)
    out = cli("run", str(ROOT / "configs" / "nmt-tiny.yaml"), "--run-dir", str(tmp_path / "r"))
    assert out.returncode == 2 and "no test sets" in out.stderr


def test_a_workdir_admits_one_command_at_a_time(tmp_path):
    """Issue 15: two concurrent `mwemt train` runs overwrote each other."""
    from mwemt.experiments.runner import Runner

    with Runner(tmp_path / "work"):
        out = cli("train", "--config", str(ROOT / "configs" / "nmt-tiny.yaml"), "--workdir", str(tmp_path / "work"))
    assert out.returncode == 2
    assert "another mwemt command is using" in out.stderr


def test_config_reference_is_generated_from_the_schema():
    """docs/config.md is what the schema says; regenerate it after changing a section."""
    from mwemt.experiments.config import markdown_reference

    current = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert current == markdown_reference(), \
        "docs/config.md is stale: python -m mwemt.experiments.config --markdown > docs/config.md"
    for key in ("systems.NAME.encoding", "train.max_epoch", "data.split.tsv", "augment.backtranslation.beam"):
        assert f"`{key}`" in current


def test_bundled_sample_is_what_the_generator_writes(tmp_path):
    """The committed demo data is reproducible from scripts/make_demo_data.py with its default seed."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_demo_data.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert "test_mwe.jsonl" in names and "mono.it" in names
    _, mismatch, errors = filecmp.cmpfiles(tmp_path, PACKAGE_DATA / "demo", names, shallow=False)
    assert not mismatch and not errors
    total = sum(p.stat().st_size for p in (PACKAGE_DATA / "demo").iterdir())
    assert total < 300_000


def test_train_seed_sets_one_systems_fairseq_seed(tmp_path):
    """`train.seed` retrains a system with another seed on the same data (a measure of training noise):
    the data stages are shared, the train stage is a different one and fairseq gets that seed."""
    from mwemt.experiments.experiment import prepare_system
    from mwemt.nmt.train import fairseq_train_args

    plain = load_config(DEMO, ["train.max_epoch=1"])
    seeded = load_config(DEMO, ["train.max_epoch=1", "systems.baseline.train.seed=7"])
    job, data, model_dir = prepare_system(plain, "baseline", tmp_path, progress=False)
    job7, data7, model_dir7 = prepare_system(seeded, "baseline", tmp_path, progress=False)
    assert (job.seed, job7.seed) == (plain.seed, 7) and plain.seed != 7
    assert data7 == data and model_dir7 != model_dir
    args = fairseq_train_args(job7, data7, model_dir7 / "checkpoints", "cpu")
    assert args[args.index("--seed") + 1] == "7"
