#!/usr/bin/env python
"""Meta-evaluation of BLEU, chrF and the TESLA-like metrics against expert MQM judgements:
WMT21 TED talks, English->German (Freitag et al. 2021, google/wmt-mqm-human-evaluation).

Data: ``ted/ende/mqm_ted_ende.tsv`` holds one row per annotated error (or a ``No-error`` row) with
the source and the system's translation, errors marked with ``<v>...</v>`` (removed here);
``ted/ende/mqm_ted_ende.avg_seg_scores.tsv`` holds the segment scores. The human reference is the
system named ``ref`` (``ref-A`` in the score file); it is the reference of every metric and is
not itself scored. The 13 MT systems are scored on the 529 segments that have text.

Orientation: MQM counts weighted errors (lower is better). The score file stores it negated
(``-MQM``, 0 = no error), which is what we use, so higher is better for humans and metrics alike
and a positive correlation is agreement. The script checks the file against the MQM weights of
Freitag et al. (Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25) recomputed
from the error rows and reports any mismatch.

Metrics are segment-level: sacrebleu sentence BLEU (effective order) and chrF, and the TESLA-like
metrics (`mwemt.evaluate.tesla`; German has no WordNet here, so they match lemmas exactly and
their signatures say ``wn:none``). ``tesla-01`` needs target-language MWEs: we use the German
idioms of LIdioms (``--lidioms``; placeholders like *jdm* / *etwas* dropped). ``tesla-comp`` is not
run: there are no German compositionality ratings in the shared data.

Outputs in --out: ``mqm.seg.tsv`` and ``<metric>.seg.tsv`` (inputs of ``mwemt meta-eval``),
``report.txt`` (the table) and ``report.json`` (results, signatures, provenance).

    python studies/meta-evaluation/meta_eval_wmt.py --data ../shared/data/judgements/wmt-mqm-en-de --out runs/meta_eval_wmt
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from mwemt.errors import InputError
from mwemt.evaluate.human_scores import MqmWeights, mqm_segment_scores
from mwemt.evaluate.meta_eval import (
    build_grid,
    meta_evaluate,
    read_segment_scores,
    system_correlation,
    system_means,
)
from mwemt.evaluate.report import format_meta_table
from mwemt.evaluate.sacrebleu_metrics import Bleu, Chrf
from mwemt.fileio import write_lines, write_text
from mwemt.judgements import collect_texts, read_mqm_ratings, read_wmt_mqm_avg
from mwemt.provenance import manifest, write_json

REF_SYSTEM = "ref"
REF_ALIASES = ("ref", "ref-A", "refA", "ref.A")


def read_avg_scores(path: Path) -> dict[tuple[str, str], float | None]:
    """The released score file (format wmt-mqm-avg, score = -MQM), the reference renamed ``ref``."""
    return {(REF_SYSTEM if s.system in REF_ALIASES else s.system, s.segment): s.oriented()
            for s in read_wmt_mqm_avg(path)}


def lidioms_lexicon(path: Path):
    """The German idioms of LIdioms (placeholders such as jdm/etwas dropped), lemmatised as the text will be."""
    from mwemt.preprocess.annotate import load_lexicon

    return load_lexicon(path, "lidioms", lang="de", lemmatizer="simplemma")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("../shared/data/judgements/wmt-mqm-en-de"))
    ap.add_argument("--out", type=Path, default=Path("runs/meta_eval_wmt"))
    ap.add_argument("--metrics", default="bleu,chrf,tesla,tesla-01")
    ap.add_argument("--lidioms", type=Path, default=Path("../shared/data/lexicons/lidioms/de/german.ttl"))
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args(argv)

    tsv = args.data / "ted" / "ende" / "mqm_ted_ende.tsv"
    avg = args.data / "ted" / "ende" / "mqm_ted_ende.avg_seg_scores.tsv"
    ratings = list(read_mqm_ratings(tsv, "wmt-mqm-errors"))
    texts = collect_texts(ratings, tsv).targets
    recomputed = {s.key: s.oriented() for s in mqm_segment_scores(ratings, MqmWeights.load("freitag2021"))}
    human = read_avg_scores(avg)
    mismatched = sum(1 for k, v in recomputed.items() if human.get(k) is None or abs(human[k] - v) > 1e-4)
    segments = sorted({seg for (_, seg) in texts}, key=int)
    systems = sorted({s for (s, _) in texts if s != REF_SYSTEM})
    missing = [(s, g) for s in systems + [REF_SYSTEM] for g in segments if (s, g) not in texts]
    if missing:
        raise InputError(f"{len(missing)} (system, segment) translations missing, e.g. {missing[0]}", tsv)
    refs = [texts[(REF_SYSTEM, g)] for g in segments]
    print(f"{len(systems)} systems x {len(segments)} segments; reference system {REF_SYSTEM!r}; "
          f"recomputed MQM differs from the score file for {mismatched} items", file=sys.stderr)

    args.out.mkdir(parents=True, exist_ok=True)
    human_rows = ["system\tseg_id\tscore"] + [
        f"{s}\t{g}\t{'None' if human.get((s, g)) is None else human[(s, g)]}" for s in systems for g in segments]
    write_lines(args.out / "mqm.seg.tsv", human_rows)

    signatures: dict[str, str] = {}
    extras: dict[str, dict] = {}
    corpus: dict[str, dict[str, float]] = defaultdict(dict)  # corpus-level BLEU/chrF per system
    names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    for name in names:
        rows = ["system\tseg_id\tscore"]
        if name in ("bleu", "chrf"):
            metric = Bleu() if name == "bleu" else Chrf()
            for s in tqdm(systems, desc=name, unit="system", file=sys.stderr):
                stats = metric.sentence_stats([texts[(s, g)] for g in segments], refs)
                rows += [f"{s}\t{g}\t{v:.6f}" for g, v in zip(segments, metric.sentence_scores(stats))]
                corpus[name][s] = metric.corpus_score_from_stats(stats).score
            signatures[name] = str(metric.sentence_signature())
            signatures[f"{name} (corpus)"] = str(metric.signature())
        else:
            from mwemt.evaluate.tesla import Tesla

            lexicon = lidioms_lexicon(args.lidioms) if name != "tesla" else None
            metric = Tesla(name, lang="de", lexicon=lexicon)
            found = defaultdict(int)
            for s in tqdm(systems, desc=name, unit="system", file=sys.stderr):
                res = metric.corpus_score([texts[(s, g)] for g in segments], refs, sentence_level=True,
                                          progress=False)
                rows += [f"{s}\t{g}\t{v:.6f}" for g, v in zip(segments, res.sentence_scores or [])]
                for k in ("ref_mwes", "ref_mwes_matched"):
                    if k in res.extra:
                        found[k] += res.extra[k]
            signatures[name] = str(metric.signature())
            if found:
                extras[name] = {k: v // len(systems) if k == "ref_mwes" else v for k, v in found.items()}
        write_lines(args.out / f"{name}.seg.tsv", rows)

    human_scores = read_segment_scores(args.out / "mqm.seg.tsv")
    results = []
    for name in names:
        grid = build_grid(human_scores, read_segment_scores(args.out / f"{name}.seg.tsv"))
        results.append(meta_evaluate(grid, name, n_bootstrap=args.bootstrap, seed=args.seed))
    table = format_meta_table(results)
    grid_h = build_grid(human_scores, human_scores)
    mean_human = dict(zip(grid_h.systems, system_means(grid_h)[0].tolist()))
    corpus_level = {name: system_correlation(mean_human, per_sys) for name, per_sys in corpus.items()}
    notes = [
        "Human score: -MQM from mqm_ted_ende.avg_seg_scores.tsv (higher is better); reference = system 'ref'.",
        f"MQM recomputed from the error rows differs from the score file for {mismatched} items.",
        "System level above uses mean sentence scores; with corpus-level scores instead: " + "; ".join(
            f"{n} Pearson {c['pearson']:.3f}, Kendall {c['kendall']:.3f}" for n, c in corpus_level.items()),
        *[f"{n} signature: {sig}" for n, sig in signatures.items()],
        *[f"{n}: {e}" for n, e in extras.items()],
    ]
    write_text(args.out / "report.txt", table + "\n" + "\n".join(notes) + "\n")
    inputs = {"mqm_tsv": tsv, "mqm_scores": avg}
    if any(n != "tesla" and n.startswith("tesla") for n in names):
        inputs["lidioms"] = args.lidioms
    write_json(args.out / "report.json", {
        "results": [r.as_dict() for r in results], "signatures": signatures, "mwe_counts": extras,
        "system_level_corpus_scores": {n: {"correlation": corpus_level[n], "scores": corpus[n]} for n in corpus},
        "system_level_human": mean_human,
        "systems": systems, "n_segments": len(segments), "mqm_mismatches": mismatched,
        "orientation": "human = -MQM (higher is better)",
        "provenance": manifest("meta-eval-wmt21-ted-ende", inputs=inputs, config=vars(args) | {
            "data": str(args.data), "out": str(args.out), "lidioms": str(args.lidioms)}, seed=args.seed)})
    sys.stdout.write(table + "\n" + "\n".join(notes) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
