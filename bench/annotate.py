"""Annotation throughput, parallel speed-up and memory, measured side by side in one run.

    python bench/annotate.py [--sentences 100000] [--lexicon OEWN.tsv] [--corpus TSV-or-text]

Prints (targets from the foundation issue):
  annotate / tokenize-only throughput   target >= 0.5
  the same with a .cupt lexicon and its learned identification filters (information; same target)
  2 workers / 1 worker                  target >= 1.7
  peak RSS at 10k and at 100k sentences target: flat
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DEFAULT_LEXICON = SHARED / "lexicons/wordnet-mwe/derived/oewn_english_mwe_lemmas.tsv"
DEFAULT_CUPT = SHARED / "mwe-corpora/parseme-1.1/EN/train.cupt"
DEFAULT_CORPORA = [SHARED / "parallel/tatoeba-en-it/eng-ita.anki.tsv",
                   SHARED / "parallel/europarl-en-it/data/pivot/triples.en.gz"]


def load_sentences(n: int, corpora: list[Path]) -> list[str]:
    """English sentences: Europarl first (long, realistic), then Tatoeba, repeated if need be."""
    out: list[str] = []
    for path in reversed(corpora):
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                s = line.split("\t")[0].strip()
                if s:
                    out.append(s)
    if not out:
        sys.exit("no sentences found")
    return list(itertools.islice(itertools.cycle(out), n))


def peak_rss_kib(lexicon: Path, text: Path, workers: int) -> int:
    """Peak RSS of a `mwemt annotate` process streaming ``text`` (children included)."""
    code = (
        "import resource, sys; from mwemt.cli import main; "
        f"main(['annotate','-l',{str(lexicon)!r},'-e','iob','-i',{str(text)!r},'-o',os.devnull,'-q',"
        f"'--workers','{workers}']); "
        "print(max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))"
    )
    r = subprocess.run([sys.executable, "-c", "import os; " + code], capture_output=True, text=True, check=True)
    return int(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=100_000)
    ap.add_argument("--lexicon", type=Path, default=DEFAULT_LEXICON)
    ap.add_argument("--corpus", type=Path, nargs="*", default=DEFAULT_CORPORA)
    ap.add_argument("--rounds", type=int, default=2,
                    help="interleaved timing rounds of tokenize-only and annotate; the fastest of each is kept")
    ap.add_argument("--cupt-lexicon", type=Path, default=DEFAULT_CUPT,
                    help="annotated .cupt whose lexicon and learned filters are also timed ('' to skip)")
    args = ap.parse_args()
    if not args.lexicon.exists():
        sys.exit(f"lexicon not found: {args.lexicon} (needs ../shared/data)")

    from mwemt.nmt.cpu import describe
    from mwemt.preprocess.annotate import (
        AnnotationReport,
        Annotator,
        AnnotatorConfig,
        annotate_stream,
        build_annotator,
    )
    from mwemt.preprocess.tokenize import tokenize

    sents = load_sentences(args.sentences, args.corpus)
    n_tok = sum(len(s.split()) for s in sents)
    print(f"{describe()}; load average {os.getloadavg()[0]:.1f}")
    print(f"corpus: {len(sents)} sentences (~{n_tok} words); lexicon: {args.lexicon.name}")
    t0 = time.perf_counter()
    annotator = build_annotator(AnnotatorConfig(lexicon=(str(args.lexicon),)))
    lexicon = annotator.lexicon
    print(f"lexicon load + normalize: {len(lexicon)} entries in {time.perf_counter() - t0:.1f}s")

    def tokenize_only() -> float:
        t = time.perf_counter()
        for s in sents:
            tokenize(s, "en")
        return time.perf_counter() - t

    def timed(ann: Annotator, workers: int = 1) -> tuple[float, AnnotationReport]:
        rep = AnnotationReport()
        t = time.perf_counter()
        for _ in annotate_stream(ann, sents, "iob", rep, workers=workers):
            pass
        return time.perf_counter() - t, rep

    filtered = None
    if str(args.cupt_lexicon) and args.cupt_lexicon.exists():
        filtered = build_annotator(AnnotatorConfig(lexicon=(str(args.cupt_lexicon),), lexicon_format="cupt"),
                                   log=lambda msg: None)
        model = filtered.filters
    # interleaved rounds, the fastest of each kept: a shared machine's load changes within seconds
    t_tok = t_ann1 = t_filt = float("inf")
    rep = filt_rep = None
    for _ in range(args.rounds):
        t_tok = min(t_tok, tokenize_only())
        t, rep = timed(annotator)
        t_ann1 = min(t_ann1, t)
        if filtered is not None:
            t, filt_rep = timed(filtered)
            t_filt = min(t_filt, t)
    t_ann2, _ = timed(annotator, 2)
    print(f"tokenize only      : {len(sents) / t_tok:9.0f} sent/s")
    print(f"annotate, 1 worker : {len(sents) / t_ann1:9.0f} sent/s   ({rep.mwes} MWEs, "
          f"{rep.sentences_with_mwe} sentences with one)")
    print(f"annotate, 2 workers: {len(sents) / t_ann2:9.0f} sent/s")
    print(f"RATIO annotate/tokenize-only throughput = {t_tok / t_ann1:.2f}   (target >= 0.5)")
    if filtered is not None:
        print(f"annotate, .cupt lexicon + filters ({model.thresholds.describe()}): {len(sents) / t_filt:9.0f} sent/s "
              f"({filt_rep.mwes} MWEs kept, {sum(filt_rep.removed_by_filter.values())} candidates removed)")
        print(f"RATIO annotate with filters/tokenize-only = {t_tok / t_filt:.2f}   (target >= 0.5)")
    print(f"RATIO 2 workers / 1 worker              = {t_ann1 / t_ann2:.2f}   (target >= 1.7; cores: {os.cpu_count()})")

    with tempfile.TemporaryDirectory() as tmp:
        rss = {}
        for n in (10_000, args.sentences):
            p = Path(tmp) / f"{n}.txt"
            p.write_text("\n".join(sents[:n]) + "\n", encoding="utf-8")
            rss[n] = peak_rss_kib(args.lexicon, p, 1)
        a, b = rss[10_000], rss[args.sentences]
        print(f"peak RSS  10k sentences: {a / 1024:.0f} MiB; {args.sentences // 1000}k sentences: {b / 1024:.0f} MiB")
        print(f"RATIO peak RSS {args.sentences // 1000}k / 10k = {b / a:.2f}   (target: flat, ~1.0)")


if __name__ == "__main__":
    main()
