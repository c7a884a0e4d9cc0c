"""``mwe-alts``: the MWE score that credits every attested translation, beside the single-reference ``mwe``.

One reference translation per MWE undercounts: a system that writes another valid translation
scores low (issue 29). `MweScore` has a mode for that (``alternatives``: the test items' own, or
those plus an MWE translation table's); this metric is the MWE score in that mode under a name of
its own, so that one run reports both numbers side by side, each with its own signature and paired
bootstrap: ``mwe`` (always the single reference, comparable with earlier results, whatever
``--mwe-alternatives`` says) and ``mwe-alts`` (``MWE-alts``, with ``alts:`` in its signature).

Its mode is ``--mwe-alternatives`` (`MetricOptions.mwe_alternatives`) where that names one; else
``table`` where an MWE translation table is given (``--mwe-table``, `MetricOptions.mwe_table`: the
items' alternatives plus the table's translations of each MWE type), else ``testset``: the
alternatives the test items carry (`mwemt testset build --table`, or a test built inside `mwemt run`
with the run's table). So ``mwemt score --metrics mwe,mwe-alts --mwe-table T`` gives the single
reference and the table's alternatives in one call. Everything else (matching, alignment,
averaging) is the MWE score's.
"""

from __future__ import annotations

from mwemt.evaluate.mwe_score import MweScore
from mwemt.evaluate.registry import MetricOptions, register_metric


@register_metric("mwe-alts")
class MweAltsScore(MweScore):
    """The MWE score with alternatives (the options' mode; else ``table`` with a table, else ``testset``)."""

    key = "mwe-alts"
    name = "MWE-alts"     # the table label and the signature's name: not a second column called MWE
    reads = MweScore.reads | {"mwe_alternatives", "mwe_table", "mwe_table_min_count"}

    @classmethod
    def alternatives_mode(cls, options: MetricOptions) -> str:
        if options.mwe_alternatives != "none":
            return options.mwe_alternatives
        return "table" if options.mwe_table else "testset"
