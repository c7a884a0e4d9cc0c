#!/usr/bin/env python
"""Agreement of the MWE score with human judgements of MWE translations (TED EN->IT, Monti et al.).

Input: ``derived/test_ted.mwe_pairs.tsv`` of the Zaninello & Birch data (one row per sentence,
annotator and source MWE). We use the adjudicated rows (``annotator == FINAL``): ``mwe_ref_it`` is
the reference translation of the MWE, ``mt_it`` the MT output sentence (tokenised, lowercased)
and ``mt_check`` the human verdict on the MWE's translation in it: Y (correct) or N. Rows with any
other verdict (empty, M) or an empty reference MWE are left out and counted.

Each row's MWE score is `MweScore.sentence_score(mt_it, [mwe_ref_it])` (0-100; the hypothesis is
split on spaces since it is already tokenised). Agreement with the binary verdict is the
point-biserial correlation (Pearson r between the score and Y=1/N=0) and the AUC (the probability
that a random Y row scores above a random N row, ties counting half). 95% CIs come from a seeded
bootstrap over *sentences* (rows of one sentence stay together). For comparison, the same
statistics for the all-or-nothing check "every reference word occurs in the hypothesis" (score 100).

    python scripts/mwe_score_human.py --pairs ../shared/data/testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv \
        --out runs/mwe_score_human
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import asdict
from typing import NamedTuple
from pathlib import Path

import numpy as np
from scipy import stats as sps

from mwemt.evaluate.bootstrap import resample_indices
from mwemt.evaluate.meta_eval import percentile_ci
from mwemt.evaluate.mwe_match import MweMatching
from mwemt.evaluate.mwe_score import MweAlignSettings, MweScore
from mwemt.evaluate.similarity import omw_wordnet
from mwemt.fileio import write_lines, write_text
from mwemt.preprocess.align import read_extra
from mwemt.preprocess.testset import build_ted_testset, read_ted_pairs
from mwemt.provenance import manifest, write_json


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


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """Mann-Whitney AUC: P(score of a positive > score of a negative), ties half."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = sps.rankdata(np.concatenate([pos, neg]))
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def point_biserial(scores: np.ndarray, labels: np.ndarray) -> float:
    if np.ptp(scores) == 0 or np.ptp(labels) == 0:
        return float("nan")
    return float(sps.pointbiserialr(labels, scores)[0])


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


class Variant(NamedTuple):
    """One scoring configuration compared in the report."""

    name: str
    what: str
    aligned: bool = False
    matching: MweMatching = MweMatching()
    precision: float = 0.0
    compat: str | None = None
    window: int = 0


def variants(wordnet: bool) -> list[Variant]:
    """Today's score, the published scorer, the aligned score and each matching option on top of it,
    each option also without alignment, and the combinations."""
    lemma, elision = MweMatching(lemma=True), MweMatching(elision=True)
    out = [Variant("today", "MWE score as before (whole hypothesis, characters)"),
           Variant("zaninello2020", "the published scorer's rules (--mwe-compat zaninello2020)", compat="zaninello2020"),
           Variant("aligned", "aligned words only, characters", aligned=True)]
    options = [("lemma0.5", "same lemma charged 0.5", lemma),
               ("lemma0", "same lemma charged 0", MweMatching(lemma=True, lemma_charge=0.0)),
               ("elision", "elided = full form", elision),
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
    return out


def combined(best: list[Variant], wordnet: bool) -> list[Variant]:
    """Combinations of the options that helped on their own (aligned)."""
    picks = {v.name.split("+", 1)[1]: v for v in best}
    fields: dict = {}
    precision, window = 0.0, 0
    for name, v in picks.items():
        window = max(window, v.window)
        m = v.matching
        if m.lemma:
            fields.update(lemma=True, lemma_charge=m.lemma_charge)
        if m.elision:
            fields["elision"] = True
        if m.synonyms and wordnet:
            fields["synonyms"] = True
        if m.function_weight != 1.0:
            fields["function_weight"] = m.function_weight
        for name in ("near_miss", "order"):
            if getattr(m, name):
                fields[name] = getattr(m, name)
        precision = max(precision, v.precision)
    if not fields and not precision and not window:
        return []
    name = "combined:aligned+" + "+".join(sorted(picks))
    return [Variant(name, "aligned, the options that helped alone, together", aligned=True,
                    matching=MweMatching(**fields), precision=precision, window=window)]


def scorer_for(v: Variant, wordnet_path: Path | None) -> MweScore:
    wn = omw_wordnet(str(wordnet_path)) if v.matching.synonyms and wordnet_path else None
    return MweScore("it", pretokenized=True, align=MweAlignSettings("none", window=v.window), matching=v.matching,
                    precision=v.precision, wordnet=wn, compat=v.compat)


DEFAULT_VARIANT = "aligned"  # the variant that matches MweScore's defaults


def disagreements(rows, scores, labels, items, rows_of_mwe, alignments, all_rows, n: int, seed: int) -> list[str]:
    """A seeded sample of the default score's disagreements with the verdicts, to read and classify:
    n/2 Y rows scoring below 50 and n/2 N rows scoring 80 or more, with the annotator's own reading
    of the MT's MWE translation (``mwe_mt_it``) and the hypothesis words aligned to the MWE."""
    rng = np.random.default_rng(seed)
    by_line = {r.line: r for r in all_rows}
    header = "kind\tline\tscore\tmwe_en\tmwe_ref_it\tmwe_mt_it (annotator)\taligned words\tmt_it"
    out = [header]
    for kind, mask in (("Y<50", (labels == 1) & (scores < 50)), ("N>=80", (labels == 0) & (scores >= 80))):
        idx = np.flatnonzero(mask)
        for i in sorted(rng.choice(idx, size=min(n // 2, len(idx)), replace=False)):
            k, m = rows_of_mwe[i]
            mwe, hyp = items[k].mwes[m], items[k].meta["mt_it"].split()
            aligned = sorted({j for a, j in alignments[k] if a in set(mwe.indices)})
            row = by_line[rows[i]["line"]]
            out.append("\t".join([kind, str(row.line), f"{scores[i]:.1f}", row.mwe_en, row.mwe_ref_it,
                                   row.mwe_mt_it, " ".join(hyp[j] for j in aligned), row.mt_it]))
    return out


def sentence_baselines(items, rows_of_mwe) -> dict[str, np.ndarray]:
    """Sentence BLEU and chrF of each row's MT sentence against its reference sentence."""
    import sacrebleu

    bleu = sacrebleu.BLEU(effective_order=True)
    chrf = sacrebleu.CHRF()
    out = {"sentence-chrF": [], "sentence-BLEU": []}
    for item_index, _ in rows_of_mwe:
        it = items[item_index]
        out["sentence-chrF"].append(chrf.sentence_score(it.meta["mt_it"], [it.reference]).score)
        out["sentence-BLEU"].append(bleu.sentence_score(it.meta["mt_it"], [it.reference]).score)
    return {k: np.array(v) for k, v in out.items()}


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
    ap.add_argument("--wordnet", type=Path, help="Italian OMW .tab wordnet for the synonym option")
    ap.add_argument("--align-cache", type=Path, default=Path("runs/align-cache"))
    ap.add_argument("--disagreements", type=int, default=40,
                    help="write this many disagreements of the default score to disagreements.tsv")
    args = ap.parse_args(argv)

    rows, skipped = read_final_rows(args.pairs)
    all_rows = read_ted_pairs(args.pairs, "FINAL")
    items, _ = build_ted_testset(all_rows, keep_unlocated=True)
    # each kept row -> (item, MWE position) through the row's line in the table
    where = {check["line"]: (k, m) for k, it in enumerate(items) for m, check in enumerate(it.meta["mwe_checks"])}
    rows_of_mwe = [where[r["line"]] for r in rows]
    offsets = np.cumsum([0] + [len(it.mwes) for it in items])
    flat = np.array([offsets[k] + m for k, m in rows_of_mwe])
    hyps = [it.meta["mt_it"] for it in items]
    refs = [it.mwes for it in items]
    labels = np.array([r["label"] for r in rows])
    groups = np.array([r["snt_id"] for r in rows])

    extra = None
    if args.extra:
        extra = read_extra(args.extra[0], args.extra[1], "en", "it", limit=args.extra_max)
    aligner = MweScore("it", pretokenized=True, align=MweAlignSettings(
        "eflomal", extra=extra, extra_name=Path(args.extra[0]).name if args.extra else "",
        cache_dir=args.align_cache, symmetrization=args.symmetrization))
    t0 = time.perf_counter()
    alignments, facts = aligner.align_hypotheses([it.source for it in items], [h.split() for h in hyps])
    align_seconds = time.perf_counter() - t0
    align_signature = aligner.align.describe()

    results: dict[str, dict] = {}
    scores_of: dict[str, np.ndarray] = {}
    signatures: dict[str, str] = {}
    whats: dict[str, str] = {}

    def run(v: Variant) -> None:
        scorer = scorer_for(v, args.wordnet)
        stats = scorer.sentence_stats(hyps, refs, alignments if v.aligned else None)
        per_mwe = np.nan_to_num(stats.info["mwe_scores"][flat] * 100.0, nan=0.0)
        scores_of[v.name] = per_mwe
        sig = scorer.signature(stats)
        signatures[v.name] = str(sig).replace("align:given", f"align:{align_signature}")
        whats[v.name] = v.what
        results[v.name] = agreement(per_mwe, labels, groups, args.bootstrap, args.seed)

    singles = variants(args.wordnet is not None)
    for v in singles:
        run(v)
    helped = [v for v in singles if v.aligned and v.name != "aligned" and
              results[v.name]["auc"] > results["aligned"]["auc"] + 0.002]
    # the best setting of each option family that helped
    best_of: dict[str, Variant] = {}
    for v in helped:
        family = v.name.split("+", 1)[1].rstrip("0123456789.")
        if family not in best_of or results[v.name]["auc"] > results[best_of[family].name]["auc"]:
            best_of[family] = v
    for v in combined(list(best_of.values()), args.wordnet is not None):
        run(v)
    exact = np.where(scores_of["today"] >= 100.0 - 1e-9, 100.0, 0.0)
    results["all-words-exact"] = agreement(exact, labels, groups, args.bootstrap, args.seed)
    whats["all-words-exact"] = "every reference word found exactly (0/100), whole hypothesis"
    for name, values in sentence_baselines(items, rows_of_mwe).items():
        results[name] = agreement(values, labels, groups, args.bootstrap, args.seed)
        whats[name] = "sacrebleu sentence score of the MT sentence vs the reference sentence"
        scores_of[name] = values
    ref_ok = np.array([r["ref_check"].strip().upper() == "Y" for r in rows])
    results["today, ref_check=Y"] = agreement(scores_of["today"][ref_ok], labels[ref_ok], groups[ref_ok],
                                              args.bootstrap, args.seed)
    whats["today, ref_check=Y"] = "today's score on rows whose reference MWE was checked correct"

    counts = {"rows": len(rows), "Y": int(labels.sum()), "N": int((labels == 0).sum()),
              "sentences": len(set(groups.tolist())), "skipped": dict(skipped),
              "rows_ref_check_Y": int(ref_ok.sum()),
              "rows_without_source_indices": int(sum(1 for k, m in rows_of_mwe if not items[k].mwes[m].indices))}

    args.out.mkdir(parents=True, exist_ok=True)
    write_lines(args.out / "disagreements.tsv", disagreements(
        rows, scores_of[DEFAULT_VARIANT], labels, items, rows_of_mwe, alignments, all_rows, args.disagreements, args.seed))
    names = list(scores_of)
    write_lines(args.out / "scores.tsv", ["line\tsnt_id\tmt_check\t" + "\t".join(names) + "\tmwe_ref_it"] + [
        f"{r['line']}\t{r['snt_id']}\t{'Y' if r['label'] else 'N'}\t"
        + "\t".join(f"{scores_of[n][i]:.4f}" for n in names) + f"\t{r['mwe_ref_it']}"
        for i, r in enumerate(rows)])
    write_lines(args.out / "alignments.txt", [" ".join(f"{i}-{j}" for i, j in sorted(a)) for a in alignments])
    lines = [f"MWE score vs human Y/N verdicts: {counts['rows']} FINAL rows ({counts['Y']} Y, {counts['N']} N) "
             f"in {counts['sentences']} sentences; left out: {dict(skipped)}; "
             f"{counts['rows_without_source_indices']} rows' MWEs not located in the source",
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
    lines += ["", "signatures:"] + [f"  {n}: {s}" for n, s in signatures.items()]
    text = "\n".join(lines) + "\n"
    write_text(args.out / "report.txt", text)
    write_json(args.out / "report.json", {
        "results": results, "counts": counts, "signatures": signatures, "alignment": align_signature,
        "alignment_seconds": align_seconds, "whats": whats,
        "provenance": manifest("mwe-score-human", inputs={"pairs": args.pairs},
                               config={k: str(v) for k, v in vars(args).items()}, seed=args.seed)})
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
