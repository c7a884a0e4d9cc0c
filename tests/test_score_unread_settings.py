"""`mwemt score` refuses a setting that none of the metrics it computes reads (`Metric.reads`), instead of
ignoring it: `--metrics bleu --mwe-window 2` printed BLEU as if the window had mattered. A setting left at
its default is fine, so the published rescore.sh files (which pass `--mwe-average sentence` to every
command) all pass the check."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import pytest

from mwemt.cli import main
from mwemt.cli import score as score_cli
from mwemt.evaluate.registry import metric_class, metric_names, parse_metric_names
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
EVAL = FIXTURES / "eval"


def score(*args: str) -> int:
    return main(["score", "--hyp", str(EVAL / "hyp_a.it"), "--ref", str(EVAL / "ref.it"), *args])


@pytest.mark.parametrize("args, names", [
    (["--metrics", "bleu", "--mwe-window", "2"], "mwe, mwe-p"),
    (["--metrics", "bleu,chrf", "--align", "none"], "mwe, mwe-p"),
    (["--metrics", "chrf", "--dictionary", "x.tsv"], "liter"),
    (["--metrics", "bleu", "--term-match", "lemma"], "term-use"),
    (["--metrics", "bleu", "--tesla-default", "0.3"], "tesla"),
    (["--metrics", "bleu", "--no-wordnet"], "tesla"),
    (["--metrics", "bleu", "--mwe-average", "mwe"], "mwe"),
])
def test_unread_setting_is_refused(args, names, capsys):
    assert score(*args) == 2
    err = capsys.readouterr().err
    flag = next(a for a in args[2:] if a.startswith("--"))
    assert f"{flag} only affects" in err and names.split(",")[0] in err and "add one to --metrics" in err, err


def test_lowercase_with_only_mwe_metrics_is_refused(capsys):
    code = main(["score", "--hyp", str(EVAL / "hyp_a.it"), "--testset", str(EVAL / "testset.jsonl"),
                 "--metrics", "mwe", "--lowercase", "--align", "none", "--lang", "it"])
    assert code == 2
    assert "--lowercase only affects bleu, chrf" in capsys.readouterr().err


def test_default_values_and_read_settings_pass(capsys):
    assert score("--metrics", "bleu,chrf", "--mwe-average", "sentence", "--lowercase") == 0
    assert "BLEU" in capsys.readouterr().out


def test_every_setting_is_read_by_some_metric():
    read = set().union(*(metric_class(m).reads for m in metric_names()))
    assert set(score_cli.SETTING_OPTIONS.values()) <= read


def test_published_rescore_commands_pass_the_check():
    lines = [line for f in sorted(ROOT.glob("results/**/rescore.sh")) for line in f.read_text().splitlines()
             if line.startswith("mwemt score")]
    assert len(lines) >= 20
    for line in lines:
        p = argparse.ArgumentParser()
        score_cli.configure(p)
        args = p.parse_args(shlex.split(line)[2:])
        score_cli._check_arguments(args, parse_metric_names(args.metrics))


@pytest.mark.parametrize("command", ["align", "score"])
def test_cache_and_no_cache_contradict(command, tmp_path, capsys):
    """`--cache DIR --no-cache` used the cache nowhere and said nothing; now argparse refuses it (exit 2)."""
    with pytest.raises(SystemExit) as exc:
        main([command, "--cache", str(tmp_path / "c"), "--no-cache"])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
