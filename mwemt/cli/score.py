"""`mwemt score`: several systems, several metrics, one table (or JSON) with signatures."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from mwemt.errors import InputError, MwemtError

EPILOG = """\
metrics (--metrics, comma-separated):
  bleu, chrf, chrf++   sacrebleu on detokenised text, case-sensitive (sacrebleu signatures)
  mwe                  MWE score (Zaninello & Birch 2020): needs --testset with MWE reference translations
  tesla                TESLA-like n-gram matching (lemmas; synonyms and POS with WordNet for English)
  tesla-comp           ... unmatched reference MWEs weighted by their compositionality (--compositionality)
  tesla-01             ... unmatched reference MWEs earn nothing (MWEs from --compositionality or --tesla-lexicon)

The first --hyp is the baseline of the paired bootstrap (--paired-bs). Scores are on a 0-100 scale.
Hypotheses and references are plain text, one sentence per line; an empty hypothesis line is allowed
(it scores 0). --hyp takes PATH or NAME=PATH.

examples:
  mwemt score --hyp base.it --hyp mwe.it --ref test.it --testset test.jsonl --metrics bleu,chrf,mwe --lang it
  mwemt score --hyp base=base.en --hyp comp=comp.en --ref ref.en --metrics bleu,tesla,tesla-comp \\
      --compositionality comp.tsv --paired-bs --json -o scores.json
  mwemt score --hyp sys.it --testset test.jsonl --metrics mwe --lang it --align sys.align \\
      --sentence-scores seg/      # writes seg/mwe.seg.tsv: system, seg_id, score (input of meta-eval)"""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.add_argument("--hyp", action="append", required=True, metavar="[NAME=]PATH",
                   help="hypothesis file, repeat for several systems (the first is the baseline)")
    p.add_argument("--ref", help="reference file (default: the test set's references)")
    p.add_argument("--testset", help="MWE-annotated test set (JSONL), needed by the mwe metric")
    p.add_argument("--metrics", default="bleu,chrf", help="comma-separated metrics (default: %(default)s)")
    p.add_argument("--lang", default="en", help="target language for tokenisation and lemmas (default: %(default)s)")
    p.add_argument("--lowercase", action="store_true", help="BLEU/chrF: lowercase (default: case-sensitive)")
    p.add_argument("--mwe-case-sensitive", action="store_true",
                   help="MWE score: compare words case-sensitively (default: case-insensitive)")
    p.add_argument("--mwe-average", choices=("sentence", "mwe"), default="sentence",
                   help="MWE score: mean over sentences with MWEs, or over all MWEs as the published scorer "
                        "(default: %(default)s)")
    p.add_argument("--hyp-tokenized", action="store_true",
                   help="MWE score: hypotheses are already tokenised (split on spaces, no Moses)")
    p.add_argument("--align", action="append", metavar="PATH",
                   help="MWE score: Pharaoh i-j alignments source->hypothesis, one file per --hyp in order; "
                        "restricts the search to the aligned hypothesis words")
    p.add_argument("--compositionality", help="TESLA: mwe<TAB>score TSV of target-language MWE compositionality")
    p.add_argument("--tesla-lexicon", help="TESLA: target-language MWE lexicon (any `mwemt annotate` format)")
    p.add_argument("--no-wordnet", action="store_true", help="TESLA: do not use WordNet even for English")
    p.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling against the first system")
    p.add_argument("--bs-samples", type=int, default=1000, help="bootstrap resamples (default: %(default)s)")
    p.add_argument("--seed", type=int, default=12345, help="bootstrap seed (default: %(default)s, as sacrebleu)")
    p.add_argument("--json", action="store_true", help="write JSON (scores, signatures, provenance)")
    p.add_argument("--sentence-scores", metavar="DIR",
                   help="also write DIR/<metric>.seg.tsv with system<TAB>seg_id<TAB>score lines "
                        "(and add sentence scores to --json output)")
    p.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")
    p.add_argument("--width", type=int, default=1, help="decimals in the table (default: %(default)s)")


def _systems(specs: list[str]) -> list[tuple[str, str]]:
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or Path(spec).exists():
            name, path = spec, spec
        out.append((name, path))
    if len({Path(p).name for _, p in out}) == len(out):
        out = [(Path(p).name if n == p else n, p) for n, p in out]
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise MwemtError(f"two systems share a name: {', '.join(names)}; use NAME=PATH")
    return out


def run(args: argparse.Namespace) -> int:
    from mwemt.evaluate.mwe_score import AlignmentError, read_alignments
    from mwemt.evaluate.report import format_score_table, score_run_dict
    from mwemt.evaluate.scoring import MetricOptions, parse_metric_names, score_systems
    from mwemt.fileio import atomic_write, read_lines, write_lines
    from mwemt.formats import read_testset
    from mwemt.provenance import manifest, write_json

    metrics = parse_metric_names(args.metrics)
    if not args.verbose:
        logging.getLogger("sacrebleu").setLevel(logging.WARNING)  # its paired test logs every step
    systems = _systems(args.hyp)
    if args.bs_samples < 1:
        raise MwemtError("--bs-samples must be at least 1")
    items = read_testset(args.testset) if args.testset else None
    if args.ref:
        refs = read_lines(args.ref)
        ref_source = args.ref
    elif items is not None:
        refs = [it.reference for it in items]
        ref_source = args.testset
    else:
        refs = None
        ref_source = None
    n = len(items) if items is not None else len(refs) if refs is not None else None
    if refs is not None and items is not None and len(refs) != len(items):
        raise InputError(f"{len(refs)} reference lines but the test set has {len(items)} sentences", args.ref,
                         expected="one reference line per test-set sentence")
    if n == 0:
        raise InputError("no sentences", ref_source, expected="one reference sentence per line")
    hyps = []
    for name, path in systems:
        lines = read_lines(path)
        if n is not None and len(lines) != n:
            raise InputError(f"{len(lines)} lines but {ref_source} has {n} sentences", path,
                             expected="one hypothesis line per reference sentence")
        if not lines:
            raise InputError("no sentences", path, expected="one hypothesis per line")
        n = len(lines)
        hyps.append((name, lines))
    alignments = None
    if args.align:
        if "mwe" not in metrics:
            raise MwemtError("--align only affects the mwe metric; add it to --metrics")
        if len(args.align) != len(systems):
            raise MwemtError(f"{len(args.align)} --align files for {len(systems)} --hyp files; give one per system")
        alignments = []
        for path, (_, lines) in zip(args.align, hyps):
            a = read_alignments(path)
            if len(a) != len(lines):
                raise InputError(f"{len(a)} alignment lines but {len(lines)} hypotheses", path,
                                 expected="one alignment line per hypothesis")
            alignments.append(a)
    lexicon = None
    if args.tesla_lexicon:
        from mwemt.preprocess.annotate import load_lexicon

        lexicon = load_lexicon(args.tesla_lexicon, lang=args.lang)
    opts = MetricOptions(lang=args.lang, lowercase=args.lowercase, mwe_case_sensitive=args.mwe_case_sensitive,
                         mwe_average=args.mwe_average, mwe_pretokenized=args.hyp_tokenized,
                         compositionality=args.compositionality, tesla_lexicon=lexicon,
                         tesla_wordnet=not args.no_wordnet)
    try:
        result = score_systems(hyps, metrics, opts, refs=refs, mwes=[it.mwes for it in items] if items else None,
                               alignments=alignments, sentence_level=bool(args.sentence_scores),
                               paired_bs=args.paired_bs, n_samples=args.bs_samples, seed=args.seed)
    except AlignmentError as exc:
        path = args.align[exc.system] if args.align and exc.system is not None else None
        raise InputError(exc.message, path, exc.sentence,
                         expected="hypothesis indices below the number of Moses tokens of the hypothesis") from None

    if args.sentence_scores:
        ids = [it.id for it in items] if items is not None else [str(i) for i in range(1, (n or 0) + 1)]
        for r in result.metrics:
            rows = ["system\tseg_id\tscore"]
            for name, score in zip(result.systems, r.scores):
                for seg, s in zip(ids, score.sentence_scores or []):
                    rows.append(f"{name}\t{seg}\t{'None' if s is None else f'{s:.6f}'}")
            write_lines(Path(args.sentence_scores) / f"{r.key}.seg.tsv", rows)

    if args.json:
        inputs = {f"hyp:{name}": path for name, path in systems}
        if args.ref:
            inputs["ref"] = args.ref
        if args.testset:
            inputs["testset"] = args.testset
        for k, path in enumerate(args.align or []):
            inputs[f"align:{systems[k][0]}"] = path
        if args.compositionality:
            inputs["compositionality"] = args.compositionality
        config = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "output"}
        obj = score_run_dict(result)
        obj["provenance"] = manifest("score", inputs=inputs, config=config, seed=args.seed)
        write_json(args.output, obj)
    else:
        with atomic_write(args.output) as fh:
            fh.write(format_score_table(result, args.width))
    return 0
