"""The MWE score on one part of a test: ``mwe-idiomatic`` and ``mwe-literal``.

A test built by `mwemt testset build` puts each MWE in the idiomatic part (low predicted
compositionality, or identification confident that the occurrence is idiomatic) or the literal part
(the look-alikes a model can get right word by word; see `mwemt.testsets.select`). The
MWE-aware methods are meant for the first, so a researcher needs the score there on its own, with
its own paired bootstrap. These metrics are the MWE score with every other MWE left out, so they
share its matching, its statistics and its signature (with the part added).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from mwemt.evaluate.base import SentenceStats
from mwemt.evaluate.mwe_score import MweScore
from mwemt.evaluate.registry import register_metric
from mwemt.evaluate.signature import Signature
from mwemt.records import TestMwe


class _MwePartScore(MweScore):
    part = ""

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe | str]], *args,
                       **kwargs) -> SentenceStats:
        """The MWE score's statistics over the MWEs of this part only (a sentence without any counts
        as a sentence without MWEs)."""
        only = [[m for m in sentence if not isinstance(m, str) and m.part == self.part] for sentence in refs]
        return super().sentence_stats(hyps, only, *args, **kwargs)

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        base = super().signature(stats)   # named after the metric (self.name): MWE-idiomatic, MWE-literal
        return replace(base, settings=(*base.settings, ("part", self.part)))


@register_metric("mwe-idiomatic")
class MweIdiomaticScore(_MwePartScore):
    """The MWE score on the test's idiomatic part."""

    key = "mwe-idiomatic"
    name = "MWE-idiomatic"      # the table label, so that the parts are not three columns called MWE
    part = "idiomatic"


@register_metric("mwe-literal")
class MweLiteralScore(_MwePartScore):
    """The MWE score on the test's literal-looking part."""

    key = "mwe-literal"
    name = "MWE-literal"
    part = "literal"
