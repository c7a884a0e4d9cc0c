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
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np
from scipy import stats as sps

from mwemt.evaluate.bootstrap import resample_indices
from mwemt.evaluate.meta_eval import percentile_ci
from mwemt.evaluate.mwe_score import MweScore
from mwemt.fileio import write_lines, write_text
from mwemt.preprocess.testset import read_ted_pairs
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
    out = {"point_biserial_r": point_biserial(scores, labels), "auc": auc(scores, labels),
           "mean_score_Y": float(scores[labels == 1].mean()), "mean_score_N": float(scores[labels == 0].mean())}
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path,
                    default=Path("../shared/data/testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv"))
    ap.add_argument("--out", type=Path, default=Path("runs/mwe_score_human"))
    ap.add_argument("--case-sensitive", action="store_true")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args(argv)

    rows, skipped = read_final_rows(args.pairs)
    scorer = MweScore("it", case_sensitive=args.case_sensitive, pretokenized=True)
    scores = np.array([scorer.sentence_score(r["mt_it"], [r["mwe_ref_it"]]) or 0.0 for r in rows])
    labels = np.array([r["label"] for r in rows])
    groups = np.array([r["snt_id"] for r in rows])
    exact = np.where(scores >= 100.0 - 1e-9, 100.0, 0.0)
    results = {
        "mwe_score": agreement(scores, labels, groups, args.bootstrap, args.seed),
        "all_words_exact": agreement(exact, labels, groups, args.bootstrap, args.seed),
    }
    ref_ok = np.array([r["ref_check"].strip().upper() == "Y" for r in rows])
    results["mwe_score_ref_check_Y"] = agreement(scores[ref_ok], labels[ref_ok], groups[ref_ok],
                                                 args.bootstrap, args.seed)
    counts = {"rows": len(rows), "Y": int(labels.sum()), "N": int((labels == 0).sum()),
              "sentences": len(set(groups.tolist())), "skipped": dict(skipped),
              "rows_ref_check_Y": int(ref_ok.sum())}

    args.out.mkdir(parents=True, exist_ok=True)
    write_lines(args.out / "scores.tsv", ["line\tsnt_id\tmt_check\tmwe_score\tmwe_ref_it"] + [
        f"{r['line']}\t{r['snt_id']}\t{'Y' if r['label'] else 'N'}\t{s:.4f}\t{r['mwe_ref_it']}"
        for r, s in zip(rows, scores)])
    lines = [f"MWE score vs human Y/N verdicts: {counts['rows']} FINAL rows ({counts['Y']} Y, {counts['N']} N) "
             f"in {counts['sentences']} sentences; left out: {dict(skipped)}",
             f"signature: {scorer.signature()}",
             f"95% CIs: bootstrap over sentences, {args.bootstrap} resamples, seed {args.seed}", ""]
    for name, res in results.items():
        lo, hi = res["point_biserial_r_ci95"]
        alo, ahi = res["auc_ci95"]
        lines.append(f"{name:24s} r_pb = {res['point_biserial_r']:.3f} [{lo:.3f}, {hi:.3f}]   "
                     f"AUC = {res['auc']:.3f} [{alo:.3f}, {ahi:.3f}]   "
                     f"mean score Y {res['mean_score_Y']:.1f} / N {res['mean_score_N']:.1f}")
    text = "\n".join(lines) + "\n"
    write_text(args.out / "report.txt", text)
    write_json(args.out / "report.json", {
        "results": results, "counts": counts, "signature": str(scorer.signature()),
        "provenance": manifest("mwe-score-human", inputs={"pairs": args.pairs},
                               config={k: str(v) for k, v in vars(args).items()}, seed=args.seed)})
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
