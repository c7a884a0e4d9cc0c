"""Speed of the TESLA-like metric next to sacrebleu's chrF, and of the MWE score, in one run.

    python bench/score_speed.py [--segments 1000] [--repeats 3]

Prints, for real segments from /work/shared/data (targets from the evaluation issue):
  TESLA-like time / chrF time on the same 1,000 segments     target <= 10
  MWE score time on the 1,293 adjudicated TED MWEs           target < 1 s

Segments:
  de  WMT21 TED EN-DE MQM: Facebook-AI then HuaweiTSC outputs vs the human reference ("ref"),
      German target: no WordNet, lemma matching;
  en  the English side of the Zaninello TED test set vs the same lines shuffled (seed 1):
      the WordNet path (synsets, lexical POS);
  en-para  Tatoeba: pairs of different English translations of the same Italian sentence (the
      last 1,000 distinct pairs of eng-ita.anki.tsv, its longest sentences): real paraphrases;
  it  the Zaninello TED FINAL rows: the MT output (mt_it) vs the manual translation (ref_it),
      one row per sentence (669 sentences); without a wordnet, and with MultiWordNet (OMW .tab).
Each TESLA run uses a fresh metric object, so tokenising, lemmatising and WordNet lookups of its
sentences are timed (process-wide caches of the lemmatiser and WordNet persist between rows; the
first row of each language is cold). Loading WordNet and lexicons happens once and is reported
apart. chrF is timed as the best of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import OrderedDict
from pathlib import Path

from mwemt.judgements import collect_texts, read_mqm_ratings
from mwemt.nmt.cpu import describe
from mwemt.testsets.testset import PairRow, read_ted_pairs

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
MQM = SHARED / "judgements/wmt-mqm-en-de/ted/ende/mqm_ted_ende.tsv"
TED = SHARED / "testsets/zaninello-en-it"
TED_EN = TED / "datasets/test/test_ted.en"
PAIRS = TED / "derived/test_ted.mwe_pairs.tsv"
REDDY = SHARED / "compositionality/reddy2011-nc/reddy2011.csv"
TATOEBA = SHARED / "parallel/tatoeba-en-it/eng-ita.anki.tsv"
OMW_IT = SHARED / "lexicons/wordnet-mwe/wns/ita/wn-data-ita.tab"
WN_IT = SHARED / "lexicons/wordnet-mwe/derived/en-ita.multiwordnet.tsv"


def mqm_segments(n: int) -> tuple[list[str], list[str]]:
    targets = collect_texts(read_mqm_ratings(MQM), MQM).targets
    ref = {seg: t for (system, seg), t in targets.items() if system == "ref"}
    hyps, refs = [], []
    for system in ("Facebook-AI", "HuaweiTSC", "Online-W"):
        for (sname, seg), text in targets.items():
            if sname == system and len(hyps) < n:
                hyps.append(text)
                refs.append(ref[seg])
    return hyps, refs


def ted_en_segments(n: int) -> tuple[list[str], list[str]]:
    lines = [x.strip() for x in TED_EN.read_text(encoding="utf-8").splitlines() if x.strip()][:n]
    shuffled = lines[:]
    random.Random(1).shuffle(shuffled)
    return lines, shuffled


def tatoeba_paraphrases(n: int) -> tuple[list[str], list[str]]:
    by_italian: dict[str, list[str]] = {}
    with open(TATOEBA, encoding="utf-8") as fh:
        for line in fh:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 2:
                group = by_italian.setdefault(cols[1], [])
                if cols[0] not in group:
                    group.append(cols[0])
    pairs = list(dict.fromkeys((g[0], g[1]) for g in by_italian.values() if len(g) >= 2))[-n:]
    return [a for a, _ in pairs], [b for _, b in pairs]


def ted_it_segments(rows: list[PairRow]) -> tuple[list[str], list[str]]:
    by_sentence: OrderedDict[int, tuple[str, str]] = OrderedDict()
    for r in rows:
        by_sentence.setdefault(r.snt_id, (r.mt_it, r.ref_it))
    return [h for h, _ in by_sentence.values()], [r for _, r in by_sentence.values()]


def best_time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3, help="chrF timing: best of this many runs")
    args = ap.parse_args()
    if not SHARED.is_dir():
        print(f"shared data not found at {SHARED}", file=sys.stderr)
        return 1

    from sacrebleu.metrics import CHRF

    from mwemt.compositionality.gold import read_gold
    from mwemt.evaluate.similarity import english_wordnet, omw_wordnet
    from mwemt.evaluate.tesla import Tesla
    from mwemt.preprocess.annotate import load_lexicon
    from mwemt.provenance import versions

    t0 = time.perf_counter()
    wn_ok = english_wordnet() is not None
    t_wordnet = time.perf_counter() - t0
    t0 = time.perf_counter()
    lex_it = load_lexicon(WN_IT, "wn-aligned", side="target", lang="it")
    t_lex = time.perf_counter() - t0
    reddy = read_gold(REDDY, "reddy").scores()
    t0 = time.perf_counter()
    omw_wordnet(str(OMW_IT))
    t_omw = time.perf_counter() - t0

    rows = read_ted_pairs(PAIRS, "FINAL")
    data = {
        "de": mqm_segments(args.segments),
        "en": ted_en_segments(args.segments),
        "en-para": tatoeba_paraphrases(args.segments),
        "it": ted_it_segments(rows),
    }
    runs = [
        ("de", "tesla", {}),
        ("en", "tesla", {}),
        ("en", "tesla-comp", {"compositionality": reddy}),
        ("en-para", "tesla", {}),
        ("it", "tesla", {}),
        ("it", "tesla-01", {"lexicon": lex_it}),
        ("it", "tesla", {"wordnet": omw_wordnet(str(OMW_IT))}),
    ]
    print(f"{describe()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"one-off: WordNet load {t_wordnet:.2f} s (available: {wn_ok}); "
          f"EN-IT wn-aligned lexicon (Italian side, {len(lex_it)} MWEs) {t_lex:.2f} s; "
          f"MultiWordNet {t_omw:.2f} s")
    print(f"{'data':7} {'metric':10} {'segs':>5} {'TESLA s':>8} {'chrF s':>7} {'ratio':>6}  score  signature")
    worst = 0.0
    for lang, variant, kw in runs:
        hyps, refs = data[lang]
        chrf = CHRF()
        t_chrf = best_time(lambda h=hyps, r=refs, c=chrf: c.corpus_score(h, [r]), args.repeats)
        metric = Tesla(variant, lang=lang[:2], **kw)
        t0 = time.perf_counter()
        result = metric.corpus_score(hyps, refs, progress=False)
        t_tesla = time.perf_counter() - t0
        ratio = t_tesla / t_chrf
        worst = max(worst, ratio)
        print(f"{lang:7} {variant:10} {len(hyps):5d} {t_tesla:8.2f} {t_chrf:7.3f} {ratio:6.1f}  "
              f"{result.score:5.1f}  {result.signature}")
        print(f"{'':31}solver components: {result.extra['solver']}")
    print(f"TESLA-like / chrF, worst row: {worst:.1f} (target <= 10)")

    try:
        from mwemt.evaluate.mwe_score import MweScore
    except ImportError:
        print("MWE score: mwemt.evaluate.mwe_score is not available; skipped")
    else:
        by_sentence: OrderedDict[int, tuple[str, list[str]]] = OrderedDict()
        for r in rows:
            by_sentence.setdefault(r.snt_id, (r.mt_it, []))[1].append(r.mwe_ref_it)
        hyps = [h for h, _ in by_sentence.values()]
        refs = [m for _, m in by_sentence.values()]
        n_mwes = sum(len(m) for m in refs)
        scorer = MweScore(lang="it", align="none")  # bench/mwe_score_speed.py times the aligned score
        t0 = time.perf_counter()
        result = scorer.corpus_score(hyps, refs)
        t_mwe = time.perf_counter() - t0
        print(f"MWE score: {n_mwes} MWEs in {len(hyps)} sentences: {t_mwe:.3f} s (target < 1 s); "
              f"score {result.score:.1f}  {result.signature}")
        from mwemt.evaluate.bootstrap import BootstrapSettings, paired_bootstrap

        other = scorer.sentence_stats(data["it"][1], refs)  # the manual translations as a second system
        t0 = time.perf_counter()
        paired_bootstrap(scorer, [result.stats, other], BootstrapSettings(1000))
        print(f"paired bootstrap of the MWE score from its statistics: 2 systems x 1000 resamples "
              f"{time.perf_counter() - t0:.3f} s (no matching repeated)")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
