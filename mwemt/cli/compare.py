"""`mwemt compare`: a report of where systems differ on MWEs (HTML page, Markdown, JSON)."""

from __future__ import annotations

import argparse
import logging
import sys

from mwemt.cli.argtypes import float_range, int_range, non_negative_int, seed
from mwemt.errors import MwemtError

DESCRIPTION = """\
Compare two or more systems on the same test set, the first (or --baseline) being the baseline.
Writes OUTPUT/index.html (one self-contained page: open it offline, attach it to a paper),
OUTPUT/report.md and OUTPUT/report.json, all at once or not at all:

- aggregate scores (BLEU, chrF, the MWE score with --testset, TESLA variants whose data is given),
  each tested against the baseline with a paired bootstrap;
- MWE hit rates by bucket with 95% intervals and paired tests: training frequency (--train-src),
  contiguous vs gapped, category, compositionality tertile (--mwe-compositionality or the test
  set's own values), covered by the augmentation dictionary (--dictionary);
- a sortable per-MWE table, and example sentences where a system wins or loses an MWE against the
  baseline, the MWE marked in source, reference and every hypothesis;
- word accuracy by frequency bucket as compare-mt reports it (frequencies from --train-tgt, else
  from the references).

An MWE occurrence is a hit when its MWE score (Zaninello & Birch 2020) is at least --hit-threshold;
at the default 1, every word of the MWE's reference translation occurs in the hypothesis."""

EPILOG = """\
examples:
  mwemt compare --testset test.jsonl --hyp base=base.it --hyp iob=iob.it --lang it -o report
  mwemt compare --ref test.it --testset test.jsonl --src test.en --lang it \\
      --hyp baseline=runs/demo/baseline.it --hyp dictionary=runs/demo/dictionary.it \\
      --train-src train.en --train-tgt train.it --dictionary dictionary.en-it.tsv \\
      --mwe-compositionality comp.en.tsv -o runs/demo/report
  mwemt compare --ref test.it --hyp a.it --hyp b.it --hyp c.it --baseline b.it --lang it   # no MWE sections

`mwemt run` and `mwemt demo` write this report for every test set of a grid (RUN/report/TEST/).
Open OUTPUT/index.html in any browser. --hyp takes PATH or NAME=PATH; every hypothesis file has
one line per reference line. --ref defaults to the test set's references; a test set must be the
test set of --ref (and of --src), sentence by sentence."""


def configure(p: argparse.ArgumentParser) -> None:
    from mwemt.evaluate.bootstrap import (
        DEFAULT_SAMPLES,
        DEFAULT_SEED,
        MAX_SAMPLES,
        MIN_SAMPLES,
        RESAMPLES_WHY,
    )
    from mwemt.evaluate.compare import CompareSettings

    d = CompareSettings()
    p.description = DESCRIPTION
    p.epilog = EPILOG
    g = p.add_argument_group("systems and references")
    g.add_argument("--hyp", action="append", required=True, metavar="[NAME=]PATH",
                   help="a system's translations; two or more (the first is the baseline unless --baseline)")
    g.add_argument("--baseline", metavar="NAME", help="the system every other one is compared with (default: the first)")
    g.add_argument("--ref", help="reference translations (default: the test set's references)")
    g.add_argument("--testset", help="MWE test set (JSONL): enables every MWE section")
    g.add_argument("--src", help="source sentences (shown in the examples; checked against the test set)")
    g.add_argument("--lang", default="en", help="target language (default: %(default)s)")
    g.add_argument("--src-lang", default="en", help="source language, for MWE counts and the dictionary "
                                                     "(default: %(default)s)")
    g = p.add_argument_group("what the buckets need")
    g.add_argument("--train-src", metavar="PATH", help="training source text: MWE frequency buckets")
    g.add_argument("--train-tgt", metavar="PATH", help="training target text: word frequency buckets "
                                                       "(default: frequencies in the references)")
    g.add_argument("--mwe-compositionality", metavar="TSV",
                   help="mwe<TAB>score compositionality of the test set's MWEs (as `mwemt compositionality predict` "
                        "writes): tertile buckets; test-set MWEs with their own value keep it")
    g.add_argument("--dictionary", metavar="PATH", help="the augmentation dictionary: covered vs not covered")
    g.add_argument("--dictionary-format", default="auto", choices=("auto", "bilingual", "wn-aligned"),
                   help="format of --dictionary (default: %(default)s)")
    g = p.add_argument_group("metrics")
    g.add_argument("--metrics", help="comma-separated metrics (default: bleu,chrf; mwe with --testset; tesla-comp "
                                     "with --compositionality; tesla-01 with --tesla-lexicon)")
    g.add_argument("--compositionality", metavar="TSV", help="TESLA: target-language MWE compositionality, as "
                                                             "`mwemt score` takes it")
    g.add_argument("--tesla-lexicon", metavar="PATH", help="TESLA: target-language MWE lexicon, as `mwemt score`")
    g.add_argument("--lowercase", action="store_true", help="BLEU/chrF: lowercase (default: case-sensitive)")
    g.add_argument("--no-wordnet", action="store_true", help="TESLA: do not use WordNet even for English")
    from mwemt.cli.score import add_mwe_table_arguments

    add_mwe_table_arguments(p, g, dictionary=False)  # LiTER reads --dictionary above
    g = p.add_argument_group("analysis")
    g.add_argument("--hit-threshold", type=float_range(above=0, maximum=1), default=d.hit_threshold,
                   help="MWE score (0-1] from which an MWE counts as translated (default: %(default)s)")
    g.add_argument("--mwe-freq-buckets", default=",".join(map(str, d.mwe_freq_cutoffs)), metavar="CUTOFFS",
                   help="bucket cutoffs of MWE training frequency (default: %(default)s)")
    g.add_argument("--word-freq-buckets", default=",".join(map(str, d.word_freq_cutoffs)), metavar="CUTOFFS",
                   help="bucket cutoffs of word frequency, compare-mt's (default: %(default)s)")
    g.add_argument("--max-gap", type=non_negative_int(), default=d.max_gap,
                   help="MWE counts in --train-src: most tokens between two components (default: %(default)s)")
    g.add_argument("--examples", type=non_negative_int(), default=d.examples,
                   help="examples per system and direction (default: %(default)s)")
    g.add_argument("--bs-samples", type=int_range(MIN_SAMPLES, MAX_SAMPLES, why=RESAMPLES_WHY), default=DEFAULT_SAMPLES,
                   help=f"bootstrap resamples, at least {MIN_SAMPLES} (default: %(default)s)")
    g.add_argument("--seed", type=seed(), default=DEFAULT_SEED, help="bootstrap seed (default: %(default)s)")
    p.add_argument("--output", "-o", default="report", help="report directory, replaced as a whole (default: %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages")


def ordered_systems(systems: list[tuple[str, str]], baseline: str | None) -> list[tuple[str, str]]:
    """The systems with the baseline first; an unknown baseline name is an error naming the known ones."""
    if baseline is None:
        return systems
    names = [n for n, _ in systems]
    if baseline not in names:
        raise MwemtError(f"--baseline {baseline!r} is not a system; the systems are {', '.join(names)}")
    return [s for s in systems if s[0] == baseline] + [s for s in systems if s[0] != baseline]


def check_report_paths(args: argparse.Namespace, systems: list[tuple[str, str]]) -> None:
    """Before any work: no file of the report directory (--output/index.html, report.md, ...) may be an
    input, since writing the report replaces them all."""
    from pathlib import Path

    from mwemt.evaluate.compare import REPORT_FILES
    from mwemt.fileio import check_output_paths

    inputs = {f"--hyp {name}": path for name, path in systems}
    inputs |= {f"--{dest.replace('_', '-')}": getattr(args, dest) for dest in INPUT_DESTS}
    check_output_paths({f"report file {name} of --output": Path(args.output) / name for name in REPORT_FILES},
                       inputs)


# the options that name input files (the --hyp files aside)
INPUT_DESTS = ("ref", "testset", "src", "train_src", "train_tgt", "mwe_compositionality", "dictionary",
               "compositionality", "tesla_lexicon", "mwe_table", "terms")


def _settings(args: argparse.Namespace):
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.compare import CompareSettings
    from mwemt.evaluate.compare.buckets import parse_cutoffs

    try:
        return CompareSettings(args.hit_threshold, parse_cutoffs(args.mwe_freq_buckets, "--mwe-freq-buckets"),
                               parse_cutoffs(args.word_freq_buckets, "--word-freq-buckets"), args.max_gap,
                               args.examples, BootstrapSettings(args.bs_samples, args.seed), args.src_lang)
    except ValueError as exc:
        raise MwemtError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from mwemt.cli.score import INPUT_OPTIONS, mwe_table_options, parse_systems
    from mwemt.evaluate.compare import compare_systems, load_compare_inputs, write_report
    from mwemt.evaluate.inputs import MissingInputError
    from mwemt.evaluate.registry import MetricOptions, parse_metric_names
    from mwemt.provenance import manifest

    if len(args.hyp) < 2:
        raise MwemtError(f"give two or more --hyp files to compare (got {len(args.hyp)})")
    settings = _settings(args)
    metrics = parse_metric_names(args.metrics) if args.metrics else None
    if not args.verbose:
        logging.getLogger("sacrebleu").setLevel(logging.WARNING)
    systems = ordered_systems(parse_systems(args.hyp), args.baseline)
    check_report_paths(args, systems)
    options = MetricOptions(lang=args.lang, lowercase=args.lowercase, tesla_wordnet=not args.no_wordnet,
                            **mwe_table_options(args, metrics or ()))   # checked before any file is read
    inputs = load_compare_inputs(systems, ref=args.ref, testset=args.testset, src=args.src, train_src=args.train_src,
                                 train_tgt=args.train_tgt, mwe_compositionality=args.mwe_compositionality,
                                 dictionary=args.dictionary, dictionary_format=args.dictionary_format,
                                 tesla_lexicon=args.tesla_lexicon, tesla_compositionality=args.compositionality,
                                 lang=args.lang, src_lang=args.src_lang)
    config = {k: v for k, v in vars(args).items() if not k.startswith("_")}
    try:
        report = compare_systems(inputs, metrics, options, settings, progress=not args.quiet,
                                 provenance=manifest("compare", inputs=inputs.score.sources, config=config,
                                                     seed=args.seed))
    except MissingInputError as exc:
        raise MwemtError(f"{exc}: give {INPUT_OPTIONS.get(exc.needs, exc.needs)}") from None
    paths = write_report(args.output, report)
    print(f"mwemt compare: wrote {paths['index.html']} (open it in a browser), {paths['report.md']}, "
          f"{paths['report.json']}", file=sys.stderr)
    return 0
