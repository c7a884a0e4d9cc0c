"""The report of an MWE test set: what it contains, so a reader can judge what passing it means.

A test's score means little without knowing whether its MWEs are varied, idiomatic and new to the
system. `describe_testset` computes, from the built items alone (plus training counts when known):
types and occurrences, the share of the ten most frequent types, categories, contiguous vs gapped
MWEs, predicted-compositionality tertiles, the idiomatic/literal parts, how often each MWE was seen
in training, and a seeded sample of items; `render_markdown` writes them as the test's README.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

from mwemt.records import TestItem, TestMwe
from mwemt.testsets.select import mwe_type

FREQUENCY_BANDS = (("never", 0, 0), ("rarely (1-9)", 1, 9), ("often (10+)", 10, None))
# Coarse categories: OEWN lexicographer files (verb.motion, adv.all, ...) by their part of speech,
# PARSEME's verbal categories (VID, LVC.full, VPC.semi, IRV, MVC, IAV) as verbal.
COARSE = {"verb": "verbal", "noun": "nominal", "adv": "adverbial", "adj": "adjectival"}
PARSEME_VERBAL = ("VID", "LVC", "VPC", "IRV", "MVC", "IAV")


def coarse_category(category: str) -> str:
    """verbal, nominal, adverbial, adjectival, other or unknown (no category)."""
    if not category:
        return "unknown"
    head = category.split(".")[0]
    if head in COARSE:
        return COARSE[head]
    return "verbal" if head.upper() in PARSEME_VERBAL else "other"


def _contiguous(m: TestMwe) -> bool:
    return m.indices[-1] - m.indices[0] + 1 == len(m.indices)


def _tertiles(values: Sequence[float]) -> tuple[float, float] | None:
    ordered = sorted(values)
    if len(ordered) < 3:
        return None
    return ordered[len(ordered) // 3], ordered[(2 * len(ordered)) // 3]


def describe_testset(items: Sequence[TestItem], training_counts: Mapping[str, int] | None = None, *,
                  sample: int = 20, seed: int = 1) -> dict:
    """Counts that describe the test (see the module docstring); ``training_counts`` maps an MWE
    type (`mwe_type`) to its occurrences in the training data."""
    mwes = [(it, m) for it in items for m in it.mwes]
    types = Counter(mwe_type(m) for _, m in mwes)
    n = len(mwes)
    top10 = types.most_common(10)
    comps = [m.compositionality for _, m in mwes if m.compositionality is not None]
    cuts = _tertiles(comps)
    tertiles = Counter()
    for _, m in mwes:
        if m.compositionality is None or cuts is None:
            tertiles["unknown"] += 1
        else:
            tertiles["low" if m.compositionality < cuts[0] else "middle" if m.compositionality < cuts[1] else "high"] += 1
    stats = {
        "sentences": len(items), "mwes": n, "types": len(types),
        "max_per_type": max(types.values(), default=0),
        "top10_share": round(sum(c for _, c in top10) / n, 4) if n else 0.0,
        "top10": [{"name": t, "count": c} for t, c in top10],
        "coarse_categories": dict(Counter(coarse_category(m.category) for _, m in mwes).most_common()),
        "categories": dict(Counter(m.category or "(none)" for _, m in mwes).most_common()),
        "shape": {"contiguous": sum(_contiguous(m) for _, m in mwes),
                  "gapped": sum(not _contiguous(m) for _, m in mwes)},
        "compositionality_tertiles": {"cuts": list(cuts) if cuts else None,
                                      **{k: tertiles.get(k, 0) for k in ("low", "middle", "high", "unknown")}},
        "parts": {k or "unknown": v for k, v in Counter(m.part for _, m in mwes).most_common()},
        "with_confidence": sum(m.confidence is not None for _, m in mwes),
        "with_alternatives": sum(bool(m.alternatives) for _, m in mwes),
        "alternatives": sum(len(m.alternatives) for _, m in mwes),
    }
    if training_counts is not None:
        bands = Counter()
        for _, m in mwes:
            c = training_counts.get(mwe_type(m), 0)
            bands[next(name for name, lo, hi in FREQUENCY_BANDS if c >= lo and (hi is None or c <= hi))] += 1
        stats["training_frequency"] = {name: bands.get(name, 0) for name, _, _ in FREQUENCY_BANDS}
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(n), min(sample, n))) if n else []
    stats["sample"] = [_sample_row(*mwes[k]) for k in picked]
    return stats


def _sample_row(item: TestItem, m: TestMwe) -> dict:
    written = m.surface if m.surface and m.surface.casefold() != m.display_name.casefold() else ""
    return {"id": item.id, "mwe": m.display_name + (f" ({written})" if written else ""), "surface": m.surface, "mwe_reference": m.reference,
            "part": m.part, "source": item.meta.get("raw_source") or item.source,
            "reference": item.meta.get("raw_reference") or item.reference}


def _pct(k: int, n: int) -> str:
    return f"{k:,} ({100 * k / n:.1f}%)" if n else f"{k:,}"


def render_markdown(stats: dict, title: str, notes: Sequence[str] = ()) -> str:
    """The test's README: the numbers of `describe_testset` as short tables."""
    n = stats["mwes"]
    lines = [f"# {title}", "", *notes, *([""] if notes else []),
             f"{stats['mwes']:,} MWE occurrences of {stats['types']:,} types in {stats['sentences']:,} sentences; "
             f"at most {stats['max_per_type']} occurrences per type; the ten most frequent types make "
             f"{100 * stats['top10_share']:.1f}% of the MWEs.", "",
             "| top-10 type | occurrences |", "|---|---|",
             *(f"| {r['name']} | {r['count']} |" for r in stats["top10"]), "",
             "| category | MWEs |", "|---|---|",
             *(f"| {c} | {_pct(k, n)} |" for c, k in stats["coarse_categories"].items()), "",
             "| shape | MWEs |", "|---|---|",
             *(f"| {s} | {_pct(k, n)} |" for s, k in stats["shape"].items()), ""]
    t = stats["compositionality_tertiles"]
    cuts = (f" (cuts {t['cuts'][0]:.3f} and {t['cuts'][1]:.3f})" if t["cuts"] else "")
    lines += [f"| predicted compositionality{cuts} | MWEs |", "|---|---|",
              *(f"| {k} | {_pct(t[k], n)} |" for k in ("low", "middle", "high", "unknown")), "",
              "| part | MWEs |", "|---|---|",
              *(f"| {k} | {_pct(v, n)} |" for k, v in stats["parts"].items()), ""]
    if stats.get("with_alternatives"):
        lines += [f"{_pct(stats['with_alternatives'], n)} MWEs carry alternative translations "
                  f"({stats['alternatives']:,} in all, from the MWE translation table).", ""]
    if "training_frequency" in stats:
        lines += ["| seen in training | MWEs |", "|---|---|",
                  *(f"| {k} | {_pct(v, n)} |" for k, v in stats["training_frequency"].items()), ""]
    lines += [f"## {len(stats['sample'])} random MWEs", "",
              "| id | MWE | its reference translation | part | source | reference |", "|---|---|---|---|---|---|",
              *(f"| {r['id']} | {_cell(r['mwe'])} | {_cell(r['mwe_reference'])} | {r['part']} | {_cell(r['source'])} "
                f"| {_cell(r['reference'])} |" for r in stats["sample"]), ""]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
