"""The MWE score broken down by the predicted compositionality of the source MWEs (tertiles).

Why: an MWE-aware system should help most where a word-by-word translation fails, i.e. on the
least compositional MWEs. Splitting the test sentences by how compositional their MWEs are
predicted to be (a ``mwe<TAB>score`` table, e.g. the ``ted-en.tsv`` that
``results/compositionality/scripts/compositionality_report.py`` writes from corpus vectors) answers that question with the
same statistics the corpus score uses: each group is scored from the subset of its sentences'
statistics, and every system is tested against the baseline by a paired bootstrap on that subset.

A sentence's value is the mean predicted compositionality of those of its MWEs found in the table
(looked up by display name, then surface form, then lemma, each normalized like the table). The
cut points are the 1/3 and 2/3 quantiles of the sentence values, so the groups hold about equal
numbers of sentences; sentences without a value are counted, never scored in a group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from mwemt.evaluate.base import Metric, SentenceStats, format_score
from mwemt.evaluate.bootstrap import BootstrapSettings, paired_bootstrap
from mwemt.formats import normalize_mwe
from mwemt.records import TestMwe

GROUPS = ("low", "mid", "high")   # least compositional (most idiomatic) first


def mwe_compositionality(mwe: TestMwe, values: Mapping[str, float]) -> float | None:
    """The table's value for one test MWE: by display name, surface form, then lemma."""
    for form in (mwe.name, mwe.surface, mwe.lemma):
        if form:
            v = values.get(normalize_mwe(form))
            if v is not None:
                return v
    return None


def sentence_compositionality(mwes: Sequence[Sequence[TestMwe]], values: Mapping[str, float]) -> list[float | None]:
    """Per sentence, the mean value of its MWEs found in ``values`` (None: none found, or no MWE)."""
    out: list[float | None] = []
    for sent in mwes:
        found = [v for v in (mwe_compositionality(m, values) for m in sent) if v is not None]
        out.append(float(np.mean(found)) if found else None)
    return out


def tertile_groups(values: Sequence[float | None]) -> tuple[dict[str, list[int]], tuple[float, float]]:
    """Sentence indices of each tertile (``low`` = least compositional) and the two cut points."""
    known = np.array([v for v in values if v is not None], dtype=np.float64)
    if len(known) < len(GROUPS):
        raise ValueError(f"{len(known)} sentences have a compositionality value; tertiles need at least 3")
    lo, hi = (float(q) for q in np.quantile(known, [1 / 3, 2 / 3]))
    groups: dict[str, list[int]] = {g: [] for g in GROUPS}
    for i, v in enumerate(values):
        if v is None:
            continue
        groups["low" if v <= lo else "mid" if v <= hi else "high"].append(i)
    return groups, (lo, hi)


def compositionality_breakdown(metric: Metric, stats: Sequence[SentenceStats], systems: Sequence[str],
                               mwes: Sequence[Sequence[TestMwe]], values: Mapping[str, float], *,
                               source: str = "", bootstrap: BootstrapSettings | None = None) -> dict:
    """Each system's score on each compositionality tertile of the sentences, as a JSON-able dict.

    ``stats[k]`` are system k's sentence statistics for ``metric`` (the baseline first), ``mwes`` the
    test set's MWEs per sentence and ``values`` the predicted compositionality of source MWEs
    (normalized keys, e.g. `CompositionalityTable.values`). With ``bootstrap``, every system gets a
    p-value against the baseline within each group.
    """
    if len(mwes) != len(stats[0]):
        raise ValueError(f"{len(mwes)} sentences of MWEs for {len(stats[0])} sentences of statistics")
    per_sentence = sentence_compositionality(mwes, values)
    groups, cuts = tertile_groups(per_sentence)
    n_mwes = sum(len(s) for s in mwes)
    found = sum(1 for s in mwes for m in s if mwe_compositionality(m, values) is not None)
    out: dict = {"metric": metric.key, "source": source, "cut_points": [round(c, 4) for c in cuts],
                 "mwes": n_mwes, "mwes_with_value": found,
                 "sentences_without_value": sum(1 for v in per_sentence if v is None), "groups": {}}
    for g, idx in groups.items():
        vals = [per_sentence[i] for i in idx]
        entry: dict = {"sentences": len(idx), "mean_compositionality": round(float(np.mean(vals)), 4) if vals else None,
                       "systems": {}}
        if idx:
            subsets = [s.subset(idx) for s in stats]
            tests = paired_bootstrap(metric, subsets, bootstrap) if bootstrap is not None else None
            for k, (name, sub) in enumerate(zip(systems, subsets)):
                row: dict = {"score": metric.corpus_score_from_stats(sub).score}
                if tests is not None:
                    row.update({"bs_ci95": tests[k].ci, "p_value": tests[k].p_value})
                entry["systems"][name] = row
        out["groups"][g] = entry
    return out


def format_breakdown(test: str, breakdown: dict, baseline: str, width: int = 1) -> list[str]:
    """A markdown table: one row per system, one column per tertile (score, difference to the baseline)."""
    groups = breakdown["groups"]
    lo, hi = breakdown["cut_points"]
    bounds = {"low": f"≤ {lo:.2f}", "mid": f"{lo:.2f}–{hi:.2f}", "high": f"> {hi:.2f}"}
    header = [f"{g} ({bounds[g]}; {groups[g]['sentences']} sent.)" for g in GROUPS]
    lines = [f"### {test}: {breakdown['metric']} by predicted compositionality of the source MWEs", "",
             f"Tertiles of the sentences' mean predicted compositionality ({breakdown['source']}; "
             f"{breakdown['mwes_with_value']} of {breakdown['mwes']} MWEs have a value; sentences without "
             f"any, left out: {breakdown['sentences_without_value']}). Low = least "
             "compositional. Each cell: score (difference to the baseline, * p < 0.05, paired bootstrap "
             "within the group).", "",
             "| system | " + " | ".join(header) + " |", "|---|" + "---:|" * len(GROUPS)]
    systems = list(next(iter(groups.values()))["systems"])
    for s in systems:
        cells = []
        for g in GROUPS:
            row, base = groups[g]["systems"].get(s), groups[g]["systems"].get(baseline)
            if row is None:
                cells.append("n/a")
                continue
            text = format_score(row["score"], width)
            if s != baseline and base is not None and row["score"] is not None and base["score"] is not None:
                text += f" ({row['score'] - base['score']:+.{width}f}"
                p = row.get("p_value")
                text += ("*" if p is not None and p < 0.05 else "") + ")"
            cells.append(text)
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines + [""]


def run_breakdown(run, inputs, path, bootstrap) -> dict:
    """The MWE score ("mwe") of a scored run (`mwemt.evaluate.scoring.score_systems`) by tertiles of its source
    MWEs' predicted compositionality, read from the ``mwe<TAB>score`` table at ``path``: what `mwemt run`'s
    score stage and ``mwemt score --mwe-breakdown`` add to their JSON as ``compositionality_breakdown``."""
    from mwemt.errors import MwemtError
    from mwemt.evaluate.compositionality_table import CompositionalityTable

    mwe = next((r for r in run.metrics if r.key == "mwe"), None)
    if mwe is None or inputs.testset is None:
        raise MwemtError("the compositionality breakdown is of the MWE score: it needs the metric mwe and a --testset")
    table = CompositionalityTable.from_file(path)
    known = sum(v is not None for v in sentence_compositionality(inputs.mwes, table.values))
    if known < len(GROUPS):
        from mwemt.errors import InputError

        raise InputError(f"{known} sentence(s) of the test set have an MWE this table scores; tertiles need at least "
                         f"{len(GROUPS)}", path, expected="an mwe<TAB>score table of the test set's source MWEs "
                                                          "(their lemmas, e.g. `take part in`)")
    return compositionality_breakdown(mwe.metric, mwe.stats, run.systems, inputs.mwes, table.values,
                                      source=table.source, bootstrap=bootstrap)
