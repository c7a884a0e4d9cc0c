"""Metric names -> classes: the built-in names, unknown names, and a new metric registered by a
decorator working end to end (statistics, corpus score, bootstrap) without touching mwemt."""

from __future__ import annotations

import numpy as np
import pytest

from mwemt.cli import main
from mwemt.errors import MwemtError
from mwemt.evaluate import registry
from mwemt.evaluate.base import RatioMetric, SentenceStats, Signature
from mwemt.evaluate.bootstrap import BootstrapSettings
from mwemt.evaluate.inputs import ScoreInputs, SystemOutput
from mwemt.evaluate.mwe_score import MweScore
from mwemt.evaluate.registry import (
    MetricOptions,
    UnknownMetricError,
    build_metric,
    metric_class,
    metric_names,
    parse_metric_names,
    register_metric,
)
from mwemt.evaluate.sacrebleu_metrics import Bleu, Chrf
from mwemt.evaluate.scoring import score_systems
from mwemt.evaluate.tesla import Tesla


def test_builtin_names_map_to_their_classes():
    assert metric_names() == ("bleu", "chrf", "chrf++", "mwe", "mwe-p", "mwe-idiomatic", "mwe-literal", "tesla",
                              "tesla-comp", "tesla-01", "liter", "term-use", "mwe-alts", "mwe-verdict")
    assert [metric_class(n) for n in ("bleu", "chrf", "chrf++", "mwe", "tesla-01")] == [Bleu, Chrf, Chrf, MweScore, Tesla]
    chrfpp = build_metric("chrf++", MetricOptions(lowercase=True))
    assert (chrfpp.key, chrfpp.name, chrfpp.word_order, chrfpp.lowercase) == ("chrf++", "chrF++", 2, True)
    mwe = build_metric("mwe", MetricOptions(lang="it", mwe_average="mwe"))
    assert (mwe.lang, mwe.average) == ("it", "mwe")
    assert build_metric("tesla", MetricOptions(lang="de")).key == "tesla"


def test_unknown_metric_names_the_known_ones():
    with pytest.raises(UnknownMetricError) as err:
        build_metric("chrff")
    message = str(err.value)
    assert "unknown metric 'chrff'" in message and "did you mean 'chrf'" in message
    assert "bleu, chrf, chrf++, mwe, mwe-p, mwe-idiomatic, mwe-literal, tesla, tesla-comp, tesla-01" in message and "TESLA" not in message
    assert parse_metric_names("BLEU, chrf,mwe") == ["bleu", "chrf", "mwe"]
    for bad in ("bleu,meteor", "bleu,bleu", " , "):
        with pytest.raises(MwemtError):
            parse_metric_names(bad)
    # the experiment runner's score stage builds metrics from config names the same way
    with pytest.raises(UnknownMetricError, match="unknown metric 'chrff'"):
        score_systems(ScoreInputs([SystemOutput("a", ["x"])], refs=["x"]), ["bleu", "chrff"])


def test_cli_reports_an_unknown_metric(fixtures, capsys):
    ev = fixtures / "eval"
    assert main(["score", "--hyp", str(ev / "hyp_a.it"), "--ref", str(ev / "ref.it"), "--metrics", "chrff"]) == 2
    err = capsys.readouterr().err
    assert "unknown metric 'chrff'" in err and "known metrics: bleu" in err


class LengthRatio(RatioMetric):
    """Hypothesis words / reference words: a toy metric, registered from outside mwemt."""

    key = name = "length-ratio"

    @classmethod
    def from_options(cls, key, options, inputs=None):
        return cls()

    def sentence_stats(self, hyps, refs, **kwargs):
        rows = np.array([[len(h.split()), len(r.split())] for h, r in zip(hyps, refs)], dtype=np.float64)
        return SentenceStats(rows.reshape(-1, 2), ("hyp_words", "ref_words"))

    def signature(self, stats=None):
        return Signature.of(self.name, {"tok": "space"})


def test_a_registered_metric_works_end_to_end(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_metric("length-ratio")(LengthRatio)
    assert "length-ratio" in metric_names()
    inputs = ScoreInputs([SystemOutput("a", ["a b", "c d e f"]), SystemOutput("b", ["a b c", "d"])],
                         refs=["a b", "c d"])
    run = score_systems(inputs, ["bleu", "length-ratio"], bootstrap=BootstrapSettings(50, 1))
    ratio = run.metrics[1]
    assert [s.score for s in ratio.scores] == [150.0, 100.0]
    assert ratio.signature.startswith("length-ratio|bs:50|seed:1|tok:space|version:")
    assert ratio.bootstrap[1].p_value is not None
    with pytest.raises(ValueError, match="already registered"):
        register_metric("bleu")(LengthRatio)
    with pytest.raises(ValueError, match="lower case"):
        register_metric("Length")(LengthRatio)
