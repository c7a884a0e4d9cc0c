#!/usr/bin/env python
"""Agreement of MWE score variants with human verdicts on MWE translations (TED EN->IT, Monti et al.).

Input: ``derived/test_ted.mwe_pairs.tsv`` of the Zaninello & Birch data (one row per sentence,
annotator and source MWE). We use the adjudicated rows (``annotator == FINAL``): ``mwe_ref_it`` is
the reference translation of the MWE, ``mt_it`` the MT output sentence (tokenized, lowercased)
and ``mt_check`` the human verdict on the MWE's translation in it: Y (correct) or N. Rows with any
other verdict (empty, M) or an empty reference MWE are left out and counted.

The sentences become a test set (`mwemt.testsets.testset.build_ted_testset`: each MWE located in
the tokenized source), the MT sentences are aligned to their sources once with the project's
aligner (eflomal, cached; ``--extra`` adds parallel text for its statistics), and every variant
scores every MWE from one `MweScore.sentence_stats` pass (``info["mwe_scores"]``), on the same
rows: today's score (whole hypothesis, characters), the published scorer's rules, the aligned
score, each matching option alone (aligned and not), the new default and the default without
each of its parts, sentence chrF and BLEU, and with ``--tesla-*`` the TESLA-like sentence scores.

Agreement with the binary verdict is the point-biserial correlation (Pearson r between the score
and Y=1/N=0) and the AUC (the probability that a random Y row scores above a random N row, ties
counting half). 95% CIs come from a seeded bootstrap over *sentences* (rows of one sentence stay
together); differences (default - today, TESLA variants - tesla) are paired: the same resamples.
The AUCs on odd and even sentence ids show how stable a difference is across halves.
``disagreements.tsv`` samples the default's disagreements with the verdicts, to read and classify.
With ``--table`` (an MWE translation table, `mwemt testset table`), rows are added where every
attested translation counts (``--mwe-alternatives table``, issue 29), each with its paired AUC
difference to the default.

    python studies/mwe-test-and-score/mwe_score_human.py --out runs/mwe_score_human \
        --extra ../shared/data/parallel/europarl-en-it/data/pivot/triples.{en,it}.gz --extra-max 30000 \
        --wordnet ../shared/data/lexicons/wordnet-mwe/wns/ita/wn-data-ita.tab --table ted_table_merged.jsonl
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

from mwemt.evaluate.bootstrap import resample_indices
from mwemt.evaluate.meta_eval import percentile_ci
from mwemt.evaluate.mwe_agreement import auc, point_biserial  # noqa: E402 (one definition of each)
from mwemt.evaluate.mwe_match import MweMatching, format_matching
from mwemt.evaluate.mwe_precision import DEFAULT_WASTE, MwePrecisionScore
from mwemt.evaluate.mwe_score import (
    DEFAULT_ALIGN_CONFIG,
    DEFAULT_MATCHING,
    DEFAULT_PRECISION,
    DEFAULT_WINDOW,
    MweAlignSettings,
    MweScore,
)
from mwemt.evaluate.similarity import omw_wordnet
from mwemt.fileio import write_lines, write_text
from mwemt.provenance import manifest, write_json
from mwemt.testsets.align import AlignConfig, read_extra
from mwemt.testsets.testset import build_ted_testset, read_ted_pairs


def read_final_rows(path: Path) -> tuple[list[dict], Counter]:
    """The adjudicated rows with a Y/N verdict and a reference MWE (as dicts with ``label``), and the
    counts of the rows left out, by reason."""
    kept, skipped = [], Counter()
    for row in read_ted_pairs(path, "FINAL"):
        verdict = row.mt_check.upper()
        if not row.mwe_ref_it:
            skipped["empty reference MWE"] += 1
        elif verdict not in ("Y", "N"):
            skipped[f"verdict {row.mt_check!r}"] += 1
        else:
            kept.append({**asdict(row), "snt_id": str(row.snt_id), "label": 1 if verdict == "Y" else 0})
    return kept, skipped


def agreement(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray, n_boot: int, seed: int) -> dict:
    odd = np.array([int(g) % 2 == 1 for g in groups])
    out = {"point_biserial_r": point_biserial(scores, labels), "auc": auc(scores, labels),
           "mean_score_Y": float(scores[labels == 1].mean()), "mean_score_N": float(scores[labels == 0].mean()),
           "auc_odd_sentences": auc(scores[odd], labels[odd]), "auc_even_sentences": auc(scores[~odd], labels[~odd])}
    uniq, inverse = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inverse == g) for g in range(len(uniq))]
    r_s, a_s = [], []
    for draw in resample_indices(len(uniq), n_boot, seed):
        idx = np.concatenate([members[g] for g in draw])
        r_s.append(point_biserial(scores[idx], labels[idx]))
        a_s.append(auc(scores[idx], labels[idx]))
    out["point_biserial_r_ci95"] = percentile_ci(np.array(r_s))
    out["auc_ci95"] = percentile_ci(np.array(a_s))
    return out


def paired_auc_difference(a: np.ndarray, b: np.ndarray, labels: np.ndarray, groups: np.ndarray,
                          n_boot: int, seed: int) -> dict:
    """AUC(a) - AUC(b) on the same rows, with a 95% CI from the same sentence resamples."""
    uniq, inverse = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(inverse == g) for g in range(len(uniq))]
    diffs = []
    for draw in resample_indices(len(uniq), n_boot, seed):
        idx = np.concatenate([members[g] for g in draw])
        diffs.append(auc(a[idx], labels[idx]) - auc(b[idx], labels[idx]))
    return {"delta_auc": auc(a, labels) - auc(b, labels), "delta_auc_ci95": percentile_ci(np.array(diffs))}


class Variant(NamedTuple):
    """One MWE score configuration compared in the report."""

    name: str
    what: str
    aligned: bool = False
    matching: MweMatching = MweMatching()
    precision: float = 0.0
    compat: str | None = None
    window: int = 0
    table_min_count: int | None = None  # None: single reference; else alternatives from the table
    table_sources: tuple[str, ...] | None = None  # None: every source of the table
    metric: str = "mwe"  # or "mwe-p": one-to-one pairing, wasted words charged (mwemt.evaluate.mwe_precision)
    waste: float = DEFAULT_WASTE  # mwe-p's charge of a wasted word
    references: bool = True  # pass the reference sentences (mwe-p does not charge their words)


DEFAULT_VARIANT = "default"  # MweScore's defaults
PRECISION_VARIANT = "mwe-p"  # MwePrecisionScore's defaults


def precision_variants(default: Variant) -> list[Variant]:
    """``mwe-p`` (the default's candidates and matching, one-to-one pairing, wasted words charged),
    at other waste charges, without the window and without the reference sentences."""
    base = default._replace(name=PRECISION_VARIANT, what=f"mwe-p: the default, one-to-one, waste "
                            f"{DEFAULT_WASTE:g}", metric="mwe-p", precision=0.0)
    out = [base]
    for waste in (1 / 3, 0.75, 1.0, 2.0):
        out.append(base._replace(name=f"mwe-p,waste{waste:.2g}", what=f"mwe-p, waste {waste:.2g}", waste=waste))
    out.append(base._replace(name="mwe-p-window", what="mwe-p without the window", window=0))
    out.append(base._replace(name="mwe-p-references", what="mwe-p charging words of the reference sentence too",
                             references=False))
    return out


def table_variants(default: Variant) -> list[Variant]:
    """The default with every attested translation counting (issue 29): alternatives from the MWE
    translation table at several minimum counts, and from each source alone."""
    out = [default._replace(name=f"default+alts:table,min{k}", what=f"the default, alternatives from the table "
                            f"(aligned translations seen >= {k} times, and the dictionary's)", table_min_count=k)
           for k in (1, 2, 3, 5)]
    out.append(default._replace(name="default+alts:dictionary", what="the default, the dictionary's translations "
                                "as alternatives", table_min_count=1, table_sources=("dictionary",)))
    out.append(default._replace(name="default+alts:aligned,min2", what="the default, aligned translations seen >= 2 "
                                "times as alternatives", table_min_count=2, table_sources=("aligned",)))
    for k in (1, 2):  # a short alternative matches inside a longer wrong rendering: precision charges the rest
        out.append(default._replace(name=f"default+alts:table,min{k}+prec0.25", what=f"the default, table "
                                    f"alternatives (>= {k}), precision weight 0.25", table_min_count=k,
                                    precision=0.25))
    return out


def variants(wordnet: bool) -> list[Variant]:
    """Today's score, the published scorer, the aligned score, each matching option alone (aligned
    and not), the default, the default without each of its parts, and the default plus each option."""
    out = [Variant("today", "MWE score before this change (whole hypothesis, characters)"),
           Variant("zaninello2020", "the published scorer's rules (--mwe-compat zaninello2020)", compat="zaninello2020"),
           Variant("aligned", "aligned words only, characters", aligned=True)]
    options = [("lemma0.5", "same lemma charged 0.5", MweMatching(lemma=True)),
               ("lemma0", "same lemma charged 0", MweMatching(lemma=True, lemma_charge=0.0)),
               ("elision", "elided = full form", MweMatching(elision=True)),
               ("fw0.5", "function words weigh 0.5", MweMatching(function_weight=0.5)),
               ("fw0.2", "function words weigh 0.2", MweMatching(function_weight=0.2)),
               ("near0.5", "an inexact match costs at least 0.5", MweMatching(near_miss=0.5)),
               ("near0.75", "an inexact match costs at least 0.75", MweMatching(near_miss=0.75)),
               ("order0.5", "word-order penalty 0.5", MweMatching(order=0.5)),
               ("order1", "word-order penalty 1", MweMatching(order=1.0))]
    if wordnet:
        options.append(("syn", "MultiWordNet synonyms charged 0", MweMatching(synonyms=True)))
    for name, what, m in options:
        out.append(Variant(f"today+{name}", f"whole hypothesis, {what}", matching=m))
        out.append(Variant(f"aligned+{name}", f"aligned, {what}", aligned=True, matching=m))
    for p in (0.25, 0.5):
        out.append(Variant(f"aligned+prec{p:g}", f"aligned, precision weight {p:g}", aligned=True, precision=p))
    out.append(Variant("aligned+win1", "aligned words and one word each side", aligned=True, window=1))
    default = Variant(DEFAULT_VARIANT, f"the new default: aligned, window {DEFAULT_WINDOW}, "
                      f"{format_matching(DEFAULT_MATCHING)}, precision {DEFAULT_PRECISION:g}", aligned=True,
                      matching=DEFAULT_MATCHING, precision=DEFAULT_PRECISION, window=DEFAULT_WINDOW)
    out += [default,
            default._replace(name="default-alignment", what="the default on the whole hypothesis", aligned=False),
            default._replace(name="default-window", what="the default without the window", window=0),
            default._replace(name="default-near-miss", what="the default without near-miss",
                             matching=replace(DEFAULT_MATCHING, near_miss=0.0)),
            default._replace(name="default-order", what="the default without the order penalty",
                             matching=replace(DEFAULT_MATCHING, order=0.0))]
    extras = [("lemma0.5", MweMatching(lemma=True)), ("elision", MweMatching(elision=True)),
              ("fw0.5", MweMatching(function_weight=0.5))]
    if wordnet:
        extras.append(("syn", MweMatching(synonyms=True)))
    for name, m in extras:
        merged = replace(DEFAULT_MATCHING, lemma=m.lemma, elision=m.elision, synonyms=m.synonyms,
                         function_weight=m.function_weight)
        out.append(default._replace(name=f"default+{name}", what=f"the default plus {name}", matching=merged))
    out.append(default._replace(name="default+prec0.25", what="the default plus precision 0.25", precision=0.25))
    out += precision_variants(default)
    return out


def scorer_for(v: Variant, wordnet_path: Path | None, table=None, table_name: str = "") -> MweScore:
    wn = omw_wordnet(str(wordnet_path)) if v.matching.synonyms and wordnet_path else None
    if v.table_min_count is not None and table is not None and v.table_sources is not None:
        from mwemt.testsets.mwe_table import MweTranslationTable

        table = MweTranslationTable({k: table.translations(k, min_count=0, sources=v.table_sources)
                                     for k in table.keys() if table.translations(k, min_count=0,
                                                                                 sources=v.table_sources)})
        table_name += ":" + "+".join(v.table_sources)
    alts = {} if v.table_min_count is None else {"alternatives": "table", "table": table,
                                                  "table_min_count": v.table_min_count, "table_name": table_name}
    align = MweAlignSettings("none", window=v.window)
    if v.metric == "mwe-p":
        return MwePrecisionScore("it", pretokenized=True, align=align, matching=v.matching, wordnet=wn,
                                 waste=v.waste, **alts)
    return MweScore("it", pretokenized=True, align=align, matching=v.matching,
                    precision=v.precision, wordnet=wn, compat=v.compat, **alts)


def disagreements(rows, scores, labels, items, rows_of_mwe, alignments, all_rows, n: int, seed: int) -> list[str]:
    """A seeded sample of the default score's disagreements with the verdicts, to read and classify:
    n/2 Y rows scoring below 50 and n/2 N rows scoring 80 or more, with the annotator's own reading
    of the MT's MWE translation (``mwe_mt_it``) and the hypothesis words aligned to the MWE."""
    rng = np.random.default_rng(seed)
    by_line = {r.line: r for r in all_rows}
    out = ["kind\tline\tscore\tmwe_en\tmwe_ref_it\tmwe_mt_it (annotator)\taligned words\tmt_it"]
    for kind, mask in (("Y<50", (labels == 1) & (scores < 50)), ("N>=80", (labels == 0) & (scores >= 80))):
        idx = np.flatnonzero(mask)
        for i in sorted(rng.choice(idx, size=min(n // 2, len(idx)), replace=False)):
            k, m = rows_of_mwe[i]
            mwe, hyp = items[k].mwes[m], items[k].meta["mt_it"].split()
            aligned = sorted({j for a, j in (alignments[k] or ()) if a in set(mwe.indices)})
            row = by_line[rows[i]["line"]]
            out.append("\t".join([kind, str(row.line), f"{scores[i]:.1f}", row.mwe_en, row.mwe_ref_it,
                                  row.mwe_mt_it, " ".join(hyp[j] for j in aligned), row.mt_it]))
    return out


def sentence_baselines(items, rows_of_mwe) -> dict[str, np.ndarray]:
    """Sentence BLEU and chrF of each row's MT sentence against its reference sentence."""
    import sacrebleu

    bleu = sacrebleu.BLEU(effective_order=True)
    chrf = sacrebleu.CHRF()
    per_item = {k: (chrf.sentence_score(items[k].meta["mt_it"], [items[k].reference]).score,
                    bleu.sentence_score(items[k].meta["mt_it"], [items[k].reference]).score)
                for k in {k for k, _ in rows_of_mwe}}
    return {"sentence-chrF": np.array([per_item[k][0] for k, _ in rows_of_mwe]),
            "sentence-BLEU": np.array([per_item[k][1] for k, _ in rows_of_mwe])}


def tesla_scores(items, rows_of_mwe, args) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """TESLA-like sentence scores (tesla, tesla-comp, tesla-01) of each row's MT sentence against its
    reference, with the Italian wordnet, MWE lexicon and compositionality table given."""
    from mwemt.evaluate.tesla import VARIANTS, Tesla

    needed = sorted({k for k, _ in rows_of_mwe})
    hyps = [items[k].meta["mt_it"] for k in needed]
    refs = [items[k].reference for k in needed]
    out, signatures = {}, {}
    for variant in VARIANTS:
        metric = Tesla.from_files(variant, "it", compositionality=args.tesla_compositionality,
                                  lexicon=args.tesla_lexicon, wordnet=args.wordnet or False)
        stats = metric.sentence_stats(hyps, refs, progress=False)
        by_item = dict(zip(needed, metric.sentence_scores(stats)))
        out[variant] = np.array([by_item[k] for k, _ in rows_of_mwe], dtype=np.float64)
        signatures[variant] = str(metric.signature(stats))
        extra = metric.extra_from_stats(stats)
        if "ref_mwes" in extra:
            signatures[variant] += (f"  (reference MWEs found: {extra['ref_mwes']}, "
                                    f"matched in the MT: {extra['ref_mwes_matched']})")
    return out, signatures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path,
                    default=Path("../shared/data/testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv"))
    ap.add_argument("--out", type=Path, default=Path("runs/mwe_score_human"))
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--extra", nargs=2, metavar=("SRC", "TGT"),
                    help="extra parallel text for the alignment statistics (raw text, EN and IT)")
    ap.add_argument("--extra-max", type=int, default=None, help="use the first N extra pairs")
    ap.add_argument("--symmetrization", default="grow-diag-final-and")
    ap.add_argument("--samplers", type=int, default=DEFAULT_ALIGN_CONFIG.samplers,
                    help="eflomal samplers (default: the MWE score's, %(default)s)")
    ap.add_argument("--wordnet", type=Path, help="Italian OMW .tab wordnet (synonym option, TESLA)")
    ap.add_argument("--tesla-lexicon", type=Path, help="Italian MWE lexicon: adds the TESLA-like rows")
    ap.add_argument("--tesla-compositionality", type=Path, help="Italian mwe<TAB>score table for tesla-comp")
    ap.add_argument("--align-cache", type=Path, default=Path("runs/align-cache"))
    ap.add_argument("--table", type=Path, help="MWE translation table (`mwemt testset table`): adds the rows "
                                               "that credit every attested translation (--mwe-alternatives table)")
    ap.add_argument("--write-types", type=Path, metavar="FILE",
                    help="write the TED MWE types (table keys of two words or more, one per line: a list lexicon "
                         "for `mwemt testset table`) and stop")
    ap.add_argument("--disagreements", type=int, default=40,
                    help="write this many disagreements of the default score to disagreements.tsv")
    args = ap.parse_args(argv)

    rows, skipped = read_final_rows(args.pairs)
    all_rows = read_ted_pairs(args.pairs, "FINAL")
    items, _ = build_ted_testset(all_rows, keep_unlocated=True)
    if args.write_types:
        from mwemt.testsets.mwe_table import mwe_key

        keys = sorted({mwe_key(m) for it in items for m in it.mwes if len(mwe_key(m).split()) >= 2})
        write_lines(args.write_types, keys)
        print(f"{len(keys)} MWE types written to {args.write_types}")
        return 0
    # each kept row -> (item, MWE position) through the row's line in the table
    where = {check["line"]: (k, m) for k, it in enumerate(items) for m, check in enumerate(it.meta["mwe_checks"])}
    rows_of_mwe = [where[r["line"]] for r in rows]
    offsets = np.cumsum([0] + [len(it.mwes) for it in items])
    flat = np.array([offsets[k] + m for k, m in rows_of_mwe])
    hyps = [it.meta["mt_it"] for it in items]
    refs = [it.mwes for it in items]
    references = [it.reference for it in items]
    labels = np.array([r["label"] for r in rows])
    groups = np.array([r["snt_id"] for r in rows])

    extra = None
    if args.extra:
        extra = read_extra(args.extra[0], args.extra[1], "en", "it", limit=args.extra_max)
    aligner = MweScore("it", pretokenized=True, align=MweAlignSettings(
        "eflomal", extra=extra, extra_name=Path(args.extra[0]).name if args.extra else "",
        cache_dir=args.align_cache, symmetrization=args.symmetrization, config=AlignConfig(samplers=args.samplers)))
    t0 = time.perf_counter()
    alignments, facts = aligner.align_hypotheses([it.source for it in items], [h.split() for h in hyps])
    align_seconds = time.perf_counter() - t0
    align_signature = aligner.align.describe()

    results: dict[str, dict] = {}
    scores_of: dict[str, np.ndarray] = {}
    signatures: dict[str, str] = {}
    whats: dict[str, str] = {}

    def add(name: str, what: str, values: np.ndarray) -> None:
        scores_of[name] = values
        whats[name] = what
        results[name] = agreement(values, labels, groups, args.bootstrap, args.seed)

    table = None
    all_variants = variants(args.wordnet is not None)
    if args.table:
        from mwemt.testsets.mwe_table import MweTranslationTable

        table = MweTranslationTable.read(args.table)
        default = next(v for v in all_variants if v.name == DEFAULT_VARIANT)
        all_variants += table_variants(default)
    for v in all_variants:
        scorer = scorer_for(v, args.wordnet, table, args.table.name if args.table else "")
        stats = scorer.sentence_stats(hyps, refs, alignments if v.aligned else None,
                                      references=references if v.references else None)
        add(v.name, v.what, np.nan_to_num(stats.info["mwe_scores"][flat] * 100.0, nan=0.0))
        signatures[v.name] = str(scorer.signature(stats)).replace("align:given", f"align:{align_signature}")
    add("all-words-exact", "every reference word found exactly (0/100), whole hypothesis",
        np.where(scores_of["today"] >= 100.0 - 1e-9, 100.0, 0.0))
    for name, values in sentence_baselines(items, rows_of_mwe).items():
        add(name, "sacrebleu sentence score of the MT sentence vs the reference sentence", values)
    differences = {"default - today": paired_auc_difference(scores_of[DEFAULT_VARIANT], scores_of["today"], labels,
                                                            groups, args.bootstrap, args.seed),
                   f"{PRECISION_VARIANT} - default": paired_auc_difference(
                       scores_of[PRECISION_VARIANT], scores_of[DEFAULT_VARIANT], labels, groups, args.bootstrap,
                       args.seed)}
    for name in scores_of:
        if name.startswith("default+alts"):
            differences[f"{name} - default"] = paired_auc_difference(scores_of[name], scores_of[DEFAULT_VARIANT],
                                                                     labels, groups, args.bootstrap, args.seed)
    if args.tesla_lexicon:
        tesla, tesla_signatures = tesla_scores(items, rows_of_mwe, args)
        for name, values in tesla.items():
            add(name, "TESLA-like sentence score vs the reference sentence (Italian MWEs of MultiWordNet)", values)
        signatures.update(tesla_signatures)
        for name in tesla:
            if name != "tesla":
                differences[f"{name} - tesla"] = paired_auc_difference(tesla[name], tesla["tesla"], labels, groups,
                                                                       args.bootstrap, args.seed)
    ref_ok = np.array([r["ref_check"].strip().upper() == "Y" for r in rows])
    for name in ("today", DEFAULT_VARIANT, PRECISION_VARIANT):
        results[f"{name}, ref_check=Y"] = agreement(scores_of[name][ref_ok], labels[ref_ok], groups[ref_ok],
                                                    args.bootstrap, args.seed)
        whats[f"{name}, ref_check=Y"] = f"{name} on the rows whose reference MWE was checked correct"

    counts = {"rows": len(rows), "Y": int(labels.sum()), "N": int((labels == 0).sum()),
              "sentences": len(set(groups.tolist())), "skipped": dict(skipped),
              "rows_ref_check_Y": int(ref_ok.sum()),
              "rows_without_source_indices": int(sum(1 for k, m in rows_of_mwe if not items[k].mwes[m].indices)),
              "rows_reference_without_words": int(sum(1 for r in rows if not aligner.ref_words(r["mwe_ref_it"])))}

    args.out.mkdir(parents=True, exist_ok=True)
    write_lines(args.out / "disagreements.tsv", disagreements(
        rows, scores_of[DEFAULT_VARIANT], labels, items, rows_of_mwe, alignments, all_rows, args.disagreements,
        args.seed))
    names = list(scores_of)
    write_lines(args.out / "scores.tsv", ["line\tsnt_id\tmt_check\t" + "\t".join(names) + "\tmwe_ref_it"] + [
        f"{r['line']}\t{r['snt_id']}\t{'Y' if r['label'] else 'N'}\t"
        + "\t".join(f"{scores_of[n][i]:.4f}" for n in names) + f"\t{r['mwe_ref_it']}"
        for i, r in enumerate(rows)])
    write_lines(args.out / "alignments.txt",
                ["" if a is None else " ".join(f"{i}-{j}" for i, j in sorted(a)) for a in alignments])
    lines = [f"MWE score vs human Y/N verdicts: {counts['rows']} FINAL rows ({counts['Y']} Y, {counts['N']} N) "
             f"in {counts['sentences']} sentences; left out: {dict(skipped)}; "
             f"{counts['rows_without_source_indices']} rows' MWEs not located in the source; "
             f"{counts['rows_reference_without_words']} reference MWEs without a word (such as '-')",
             f"alignment: {align_signature} ({align_seconds:.1f} s, cached: {facts['alignment_cached']})",
             f"95% CIs: bootstrap over sentences, {args.bootstrap} resamples, seed {args.seed}", "",
             "| score | what | AUC | point-biserial r | mean Y / N | AUC odd / even sentences |",
             "|---|---|---|---|---|---|"]
    for name, res in results.items():
        lo, hi = res["point_biserial_r_ci95"]
        alo, ahi = res["auc_ci95"]
        lines.append(f"| {name} | {whats[name]} | {res['auc']:.3f} [{alo:.3f}, {ahi:.3f}] | "
                     f"{res['point_biserial_r']:.3f} [{lo:.3f}, {hi:.3f}] | "
                     f"{res['mean_score_Y']:.1f} / {res['mean_score_N']:.1f} | "
                     f"{res['auc_odd_sentences']:.3f} / {res['auc_even_sentences']:.3f} |")
    lines += ["", "paired AUC differences (same resamples):"]
    for name, d in differences.items():
        lo, hi = d["delta_auc_ci95"]
        lines.append(f"  {name}: {d['delta_auc']:+.3f} [{lo:+.3f}, {hi:+.3f}]")
    lines += ["", "signatures:"] + [f"  {n}: {s}" for n, s in signatures.items()]
    text = "\n".join(lines) + "\n"
    write_text(args.out / "report.txt", text)
    write_json(args.out / "report.json", {
        "results": results, "differences": differences, "counts": counts, "signatures": signatures,
        "alignment": align_signature, "alignment_seconds": align_seconds, "whats": whats,
        "provenance": manifest("mwe-score-human", inputs={"pairs": args.pairs,
                                                          **({"table": args.table} if args.table else {})},
                               config={k: str(v) for k, v in vars(args).items()}, seed=args.seed)})
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
