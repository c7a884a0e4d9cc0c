#!/usr/bin/env python
"""Alignment-derived MWE translations against the human ones: the 1,293 adjudicated TED EN-IT MWEs.

`mwemt testset build` takes each MWE's reference translation from a word alignment. Here we check
that rule on the TED annotation of Monti et al., where people wrote every MWE's translation
(``mwe_ref_it``) by hand. For each adjudicated (``FINAL``) MWE located in its source sentence (the
locator of `mwemt testset from-ted`), we align the whole TED test set (source and reference, as
tokenized in the data) with `mwemt.testsets.align`, plus extra parallel text, derive the MWE's
translation with `mwemt.testsets.aligned` (same filters as the builder) and compare it
with the human translation.

Comparison: both sides are Moses-tokenized (Italian; TED's "all' inizio" read as "all'inizio"),
split after elision apostrophes, lowercased, and punctuation and ``...`` gap marks are dropped (the
words of `mwemt.evaluate.mwe_score`).
*Exact* = the same word sequence; *token F1* = F1 of the two word multisets. MWEs without a human
translation (empty or "-") are left out. "F1 kept" is over the MWEs the filters keep (what a built
test set contains); "F1 all" counts filtered MWEs as 0.

Categories are not annotated in TED, so we assign a coarse one by rule from the source MWE alone:
*verbal* if its last content word is most often a verb in WordNet (SemCor counts), or its first
one is and is inflected, or followed by a function word, or the MWE does not end in a noun ("took
... for granted", "set up", but not "love story"; a last word after an adjective or noun counts as
a noun when it can be one: "specific issue"); else *adverbial* if it starts with a preposition
or ends in an adverb; else *nominal* / *adjectival* by its last content word; *functional* when
every word is on the English function-word list. Rows also
split by shape (contiguous or gapped in the source, length) and by the human check ``ref_check``
(N = the annotators judged the reference sentence's translation of the MWE wrong or missing).

eflomal samples with a seed of its own, so the whole alignment is repeated ``--runs`` times and
the spread of the overall numbers reported. The span rules of issue 29 (`SpanRules`: negation,
clitics, articles, known translations; the ``function_only`` filter) are compared with the rule
before them on the same links ("Span rules" table); ``--dictionary`` and ``--table`` give the
known translations; ``--cache`` reuses an alignment (the runs are then not independent).

    python studies/mwe-test-and-score/testset_ted_validation.py --out runs/ted_validation
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mwemt.evaluate.function_words import stop_list  # noqa: E402
from mwemt.evaluate.mwe_score import word_pieces  # noqa: E402
from mwemt.fileio import read_lines, write_lines, write_text  # noqa: E402
from mwemt.preprocess.tokenize import tokenize  # noqa: E402
from mwemt.provenance import manifest, write_json  # noqa: E402
from mwemt.testsets.align import SYMMETRIZATIONS, AlignConfig, align_directional, read_extra  # noqa: E402
from mwemt.testsets.aligned import (  # noqa: E402
    ReferenceFilters,
    SpanRules,
    aligned_reference,
    filter_reason,
)
from mwemt.testsets.mwe_table import MweTranslationTable, mwe_key, read_dictionary  # noqa: E402
from mwemt.testsets.testset import build_ted_testset, read_ted_pairs  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
TED = SHARED / "testsets" / "zaninello-en-it"
EUROPARL = SHARED / "parallel" / "europarl-en-it" / "data" / "pivot"
TATOEBA = SHARED / "parallel" / "tatoeba-en-it" / "eng-ita.anki.tsv"
PREPOSITIONS = frozenset("of in on at by for with without from to into onto upon about above below over under "
                         "between among through during before after since until against across along around "
                         "behind beyond near off out up down within toward towards via per than as like".split())


# ---------------------------------------------------------------- categories (by rule; see docstring)

def _pos_of(word: str) -> str | None:
    """The WordNet POS (n, v, a, r) with the most SemCor-tagged senses for ``word``; None if unknown."""
    from nltk.corpus import wordnet as wn

    counts: Counter = Counter()
    for pos in ("n", "v", "a", "r"):
        base = wn.morphy(word, pos)
        if base is None:
            continue
        for lemma in wn.lemmas(base, pos):
            p = "a" if lemma.synset().pos() == "s" else lemma.synset().pos()
            counts[p] += lemma.count() + 0.01  # untagged senses still count a little
    return counts.most_common(1)[0][0] if counts else None


def mwe_category(words: list[str]) -> str:
    stops = stop_list("en")
    content = [(k, w) for k, w in enumerate(words) if w not in stops and any(c.isalpha() for c in w)]
    if not content:
        return "functional"
    tags = [_pos_of(w) for _, w in content]
    first_k, first = content[0]
    last = next((t for t in reversed(tags) if t), "n")
    from nltk.corpus import wordnet as wn

    if last == "v" and len(tags) > 1 and tags[-2] in ("a", "n") and wn.morphy(content[-1][1], "n"):
        last = "n"  # "specific issue", "broad backing": a modifier makes the last word a noun

    inflected = (wn.morphy(first, "v") or first) != first
    function_after = any(w in stops for w in words[first_k + 1:])
    if last == "v" or (tags[0] == "v" and (inflected or last != "n" or function_after)):
        return "verbal"
    if words[0] in PREPOSITIONS or last == "r":
        return "adverbial"
    return {"n": "nominal", "a": "adjectival"}[last]


# ---------------------------------------------------------------- comparison

_SPACED_ELISION = re.compile(r"(\w)' (?=\w)")


def words_of(text: str) -> list[str]:
    """Moses words as the MWE score sees them; "all' inizio" (TED's tokenization) = "all'inizio"."""
    return word_pieces(tokenize(_SPACED_ELISION.sub(r"\1'", text), "it"), case_sensitive=False)[0]


def token_f1(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return 0.0
    common = sum((Counter(pred) & Counter(gold)).values())
    if not common:
        return 0.0
    p, r = common / len(pred), common / len(gold)
    return 2 * p * r / (p + r)


def _check_value(value: str) -> str:
    v = value.strip().upper()
    return v if v in ("Y", "N") else "other"


def load_mwes(pairs: Path, src_path: Path, ref_path: Path) -> tuple[list[dict], dict]:
    """The located FINAL MWEs with a human translation, as dicts; and counts of those left out."""
    rows = read_ted_pairs(pairs, "FINAL")
    sources, refs = read_lines(src_path), read_lines(ref_path)
    items, report = build_ted_testset(rows, ted_sources=sources, ted_references=refs, pairs_name=str(pairs))
    out, left_out = [], Counter(unlocated=len(report.unlocated))
    for item in items:
        sid = int(item.id)
        checks = item.meta["mwe_checks"]
        for m, check in zip(item.mwes, checks):
            gold = words_of(m.reference)
            if not gold:
                left_out["no human translation"] += 1
                continue
            src_words = [w.lower() for w in m.surface.split()]
            out.append({"sent": sid - 1, "indices": m.indices, "surface": m.surface, "human": m.reference,
                        "key": mwe_key(m),
                        "gold": gold, "category": mwe_category(src_words),
                        "shape": ("gapped" if m.indices[-1] - m.indices[0] + 1 > len(m.indices) else "contiguous"),
                        "length": len(m.indices), "ref_check": _check_value(check["ref_check"])})
    return out, dict(left_out, rows=len(rows), evaluated=len(out))


def evaluate(mwes: list[dict], links, tgt_tokens, filters: ReferenceFilters, rules: SpanRules | None = None,
             src_tokens=None, table: MweTranslationTable | None = None) -> list[dict]:
    """Derive every MWE's translation (``rules``; candidates from ``table``) and compare it."""
    rows = []
    for m in mwes:
        src = src_tokens[m["sent"]] if src_tokens is not None else None
        cands = [e.translation for e in table.translations(m["key"], min_count=2)] if table is not None else ()
        ref = aligned_reference(m["indices"], links[m["sent"]], tgt_tokens[m["sent"]], src_tokens=src,
                                rules=rules, candidates=cands)
        reason = filter_reason(ref, m["length"], filters,
                               src_tokens=[src[i] for i in m["indices"]] if src is not None else None)
        pred = words_of(ref.text) if ref is not None else []
        f1 = token_f1(pred, m["gold"])
        rows.append({**m, "derived": ref.text if ref is not None else "", "filtered": reason or "",
                     "exact": pred == m["gold"], "f1": f1})
    return rows


def summarize(rows: list[dict]) -> dict:
    kept = [r for r in rows if not r["filtered"]]
    n = len(rows)
    return {"n": n, "kept": len(kept),
            "exact": sum(r["exact"] for r in kept) / len(kept) if kept else 0.0,
            "f1_kept": sum(r["f1"] for r in kept) / len(kept) if kept else 0.0,
            "f1_all": sum(r["f1"] for r in kept) / n if n else 0.0}


def groups(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        out["all"].append(r)
        out[f"category: {r['category']}"].append(r)
        out[f"shape: {r['shape']}"].append(r)
        out[f"length: {min(r['length'], 4)}{'+' if r['length'] >= 4 else ''}"].append(r)
        out[f"ref_check: {r['ref_check']}"].append(r)
    return out


def table(rows: list[dict]) -> str:
    lines = ["| MWEs | n | kept | exact (kept) | token F1 (kept) | token F1 (all, filtered = 0) |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    order = sorted(groups(rows).items(), key=lambda kv: (kv[0] != "all", kv[0].split(":")[0], -len(kv[1])))
    for name, rs in order:
        s = summarize(rs)
        lines.append(f"| {name} | {s['n']} | {s['kept'] / s['n']:.1%} | {s['exact']:.3f} | {s['f1_kept']:.3f} "
                     f"| {s['f1_all']:.3f} |")
    return "\n".join(lines) + "\n"


def filter_table(rows: list[dict]) -> str:
    """What the filters drop: how many MWEs, and the F1 their derived translation would have had."""
    by: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        by[r["filtered"] or "kept"].append(r["f1"])
    lines = ["| filter | MWEs | token F1 of their derived translation |", "| --- | ---: | ---: |"]
    lines += [f"| {k} | {len(v)} | {sum(v) / len(v):.3f} |" for k, v in sorted(by.items(), key=lambda kv: -len(kv[1]))]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=TED, help="the zaninello-en-it folder")
    ap.add_argument("--europarl", type=int, default=59524, help="extra Europarl EN-IT pairs (0 = none)")
    ap.add_argument("--tatoeba", type=int, default=0, help="extra Tatoeba EN-IT pairs (0 = none)")
    ap.add_argument("--runs", type=int, default=3, help="independent eflomal runs of the main setting")
    ap.add_argument("--samplers", type=int, default=AlignConfig.samplers)
    ap.add_argument("--sample", type=int, default=60, help="disagreements written out for reading")
    ap.add_argument("--seed", type=int, default=11, help="seed of the disagreement sample")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cache", type=Path, help="alignment cache directory (default: none, so runs are independent)")
    ap.add_argument("--dictionary", type=Path,
                    default=SHARED / "lexicons" / "wordnet-mwe" / "derived" / "en-ita.multiwordnet.tsv",
                    help="bilingual dictionary whose MWE translations are span candidates ('' = none)")
    ap.add_argument("--table", type=Path, help="an MWE translation table (`mwemt testset table`) whose translations "
                                               "are span candidates too (row spans+table)")
    args = ap.parse_args()

    d = args.data
    src_path, ref_path = d / "datasets/test/test_ted.en", d / "datasets/test/test_ted.txt"
    mwes, counts = load_mwes(d / "derived/test_ted.mwe_pairs.tsv", src_path, ref_path)
    src = [line.split() for line in read_lines(src_path)]
    tgt = [line.split() for line in read_lines(ref_path)]
    extra_src: list[list[str]] = []
    extra_tgt: list[list[str]] = []
    inputs = {"pairs": d / "derived/test_ted.mwe_pairs.tsv", "ted_source": src_path, "ted_reference": ref_path}
    if args.europarl:
        es, et = read_extra(EUROPARL / "triples.en.gz", EUROPARL / "triples.it.gz", "en", "it", limit=args.europarl)
        extra_src += es
        extra_tgt += et
        inputs.update(europarl_en=EUROPARL / "triples.en.gz", europarl_it=EUROPARL / "triples.it.gz")
    if args.tatoeba:
        from mwemt.augment.corpus import iter_tsv_pairs

        pairs = [(s.lower(), t.lower()) for _, s, t in iter_tsv_pairs(TATOEBA)][: args.tatoeba]
        extra_src += [tokenize(s, "en") for s, _ in pairs]
        extra_tgt += [tokenize(t, "it") for _, t in pairs]
        inputs["tatoeba"] = TATOEBA
    extra = (extra_src, extra_tgt) if extra_src else None
    filters = ReferenceFilters()
    # the rule before issue 29 (aligned words only, three filters), the new span rules, and the new
    # rules with the dictionary's translations as candidates
    dict_table = None
    if str(args.dictionary) not in ("", "."):
        dict_table = MweTranslationTable()
        dict_table.add_dictionary(read_dictionary(args.dictionary, min_words=2), lang="it",
                             keys={m["key"] for m in mwes})
        inputs["dictionary"] = args.dictionary
    setups = {"before": (SpanRules.none(), ReferenceFilters(function_only=False), None),
              "spans": (SpanRules(candidates=False), filters, None),
              "spans+dictionary": (SpanRules(), filters, dict_table)}
    # the first round of issue 29's span rules, without the second round's switches (docs/testset.md)
    first_round = SpanRules(candidates=False, contractions=False, clusters=False, cognates=False, tense=False,
                            gaps=False, edges=False)
    setups["spans, first round"] = (first_round, filters, None)
    if args.table:
        setups["spans+table"] = (SpanRules(), filters, MweTranslationTable.read(args.table))
        setups["spans+table, first round"] = (replace(first_round, candidates=True), filters, setups["spans+table"][2])
        inputs["table"] = args.table
    config = AlignConfig(samplers=args.samplers)
    print(f"{counts['evaluated']} MWEs to compare ({counts}); {len(src)} TED pairs + {len(extra_src)} extra",
          file=sys.stderr)

    runs = []
    for run in range(args.runs):
        t0 = time.perf_counter()
        # no cache (the default): independent runs
        directional = align_directional(src, tgt, extra=extra, config=config, cache_dir=args.cache)
        seconds = time.perf_counter() - t0
        by_sym = {}
        for sym in SYMMETRIZATIONS:
            links = directional.symmetrized(src, tgt, sym)
            rules, setup_filters, setup_table = setups["spans+dictionary" if dict_table is not None else "spans"]
            rows = evaluate(mwes, links, tgt, setup_filters, rules, src, setup_table)
            by_sym[sym] = {"summary": summarize(rows), "rows": rows}
            if sym == "grow-diag-final-and":
                by_setup = {}
                for name, (r, f, t) in setups.items():
                    by_setup[name] = summarize(evaluate(mwes, links, tgt, f, r, src, t))
                    by_setup[name]["filtered"] = dict(Counter(x["filtered"] for x in evaluate(
                        mwes, links, tgt, f, r, src, t) if x["filtered"]))
        runs.append({"seconds": seconds, "by_sym": by_sym, "by_setup": by_setup})
        for name, s in by_setup.items():
            print(f"run {run + 1}: {seconds:.1f} s; gdfa {name}: kept {s['kept']}/{s['n']} exact {s['exact']:.3f} "
                  f"F1 kept {s['f1_kept']:.3f} F1 all {s['f1_all']:.3f} dropped {s['filtered']}", file=sys.stderr)

    main_rows = runs[0]["by_sym"]["grow-diag-final-and"]["rows"]
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    text = [f"# Alignment-derived vs human MWE translations (TED EN-IT, {counts['evaluated']} MWEs)\n",
            f"extra parallel text: {len(extra_src)} pairs (Europarl {args.europarl}, Tatoeba {args.tatoeba}); "
            f"eflomal samplers {args.samplers}; filters {filters}\n",
            "## grow-diag-final-and, run 1\n", table(main_rows), "\n" + filter_table(main_rows),
            "\n## Span rules (grow-diag-final-and, run 1)\n",
            "| rules | kept | exact (kept) | token F1 (kept) | token F1 (all) | dropped |", "| --- | ---: | ---: | ---: | ---: | --- |",
            *[f"| {name} | {s['kept'] / s['n']:.1%} | {s['exact']:.3f} | {s['f1_kept']:.3f} | {s['f1_all']:.3f} | "
              f"{s['filtered']} |" for name, s in runs[0]["by_setup"].items()],
            f"\n## Overall, {args.runs} independent eflomal runs\n",
            "| symmetrization | kept | exact (kept) | token F1 (kept) | token F1 (all) |",
            "| --- | ---: | ---: | ---: | ---: |"]
    for sym in SYMMETRIZATIONS:
        ss = [r["by_sym"][sym]["summary"] for r in runs]

        def span(key, ss=ss):
            vals = [s[key] for s in ss]
            return f"{sum(vals) / len(vals):.3f} [{min(vals):.3f}, {max(vals):.3f}]"
        kept = [s["kept"] / s["n"] for s in ss]
        text.append(f"| {sym} | {sum(kept) / len(kept):.1%} | {span('exact')} | {span('f1_kept')} | {span('f1_all')} |")
    write_text(out / "table.md", "\n".join(text) + "\n")

    # disagreements to read: kept MWEs whose derived translation is not the human one
    wrong = [r for r in main_rows if not r["filtered"] and not r["exact"]]
    sample = random.Random(args.seed).sample(wrong, min(args.sample, len(wrong)))
    header = "snt_id\tmwe_en\thuman\tderived\tf1\tcategory\tref_check\tsource\treference"
    write_lines(out / "disagreements.tsv", [header] + [
        f"{r['sent'] + 1}\t{r['surface']}\t{r['human']}\t{r['derived']}\t{r['f1']:.2f}\t{r['category']}\t"
        f"{r['ref_check']}\t{' '.join(src[r['sent']])}\t{' '.join(tgt[r['sent']])}" for r in sample])
    write_json(out / "results.json", manifest(
        "testset-ted-validation", inputs=inputs, config={**{k: str(v) for k, v in vars(args).items()}, "filters": str(filters)}, seed=args.seed,
        counts=counts, runs=[{"seconds": r["seconds"], "span_rules": r["by_setup"], **{s: v["summary"] for s, v in r["by_sym"].items()}}
                             for r in runs],
        rows=[{k: v for k, v in r.items() if k != "gold"} for r in main_rows]))
    print((out / "table.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
