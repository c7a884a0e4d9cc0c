"""`mwemt testset`: build MWE-annotated test sets (JSONL of TestItem records)."""

from __future__ import annotations

import argparse
import sys

EPILOG = """\
example (the TED EN-IT annotation of Monti et al., as flattened in test_ted.mwe_pairs.tsv):
  D=../shared/data/testsets/zaninello-en-it
  mwemt testset from-ted --pairs $D/derived/test_ted.mwe_pairs.tsv --out ted.mwe.jsonl
  mwemt testset from-ted --pairs $D/derived/test_ted.mwe_pairs.tsv \\
      --ted-source $D/datasets/test/test_ted.en --ted-reference $D/datasets/test/test_ted.txt \\
      --all-sentences --out ted.all.jsonl --report ted.report.json

One JSON object per sentence: id, source (tokenized, as in the table), reference, mwes (indices into
source.split(), lemma, reference = the annotated Italian MWE translation, surface), and meta with
snt_id, mt_it and mwe_checks (one per MWE, in order: the human checks ref_check, correct,
mwe_mt_it, mt_check, their Y/N as ref_ok/mt_ok, and how the MWE was found). MWEs that cannot be
found in the source are listed on stderr, in the report and in meta.unlocated."""


def configure(p: argparse.ArgumentParser) -> None:
    from mwemt.preprocess.testset import DEFAULT_MAX_GAP

    p.epilog = EPILOG
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    t = sub.add_parser("from-ted", help="JSONL test set from the TED MWE pairs table",
                       description="Build a JSONL MWE test set from the TED annotation table, locating every "
                                   "annotated MWE in its tokenized source sentence.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--pairs", required=True, help="test_ted.mwe_pairs.tsv (header + 11 TAB columns)")
    t.add_argument("--out", "-o", required=True, help="output JSONL (written atomically)")
    t.add_argument("--annotator", default="FINAL",
                   help="rows of this annotator only (default: %(default)s, the adjudicated list)")
    t.add_argument("--ted-source", help="test_ted.en: checks the table against it; needed by --all-sentences")
    t.add_argument("--ted-reference", help="test_ted.txt (Italian references); needed by --all-sentences")
    t.add_argument("--all-sentences", action="store_true",
                   help="one item per TED sentence (1,529), with empty mwes where none is annotated; "
                        "default: only the sentences with annotated MWEs")
    t.add_argument("--keep-unlocated", action="store_true",
                   help="keep MWEs not found in the source, with empty indices (default: only in meta)")
    t.add_argument("--max-gap", type=int, default=DEFAULT_MAX_GAP,
                   help="most source tokens between two matched MWE tokens (default: %(default)s)")
    t.add_argument("--report", help="write counts, the unlocated MWEs and provenance as JSON")
    t.add_argument("--quiet", "-q", action="store_true", help="no list of unlocated MWEs on stderr")


def run(args: argparse.Namespace) -> int:
    from mwemt.errors import MwemtError
    from mwemt.fileio import read_lines
    from mwemt.formats import write_testset
    from mwemt.preprocess.testset import build_ted_testset, read_ted_pairs
    from mwemt.provenance import manifest, write_json

    if args.all_sentences and not (args.ted_source and args.ted_reference):
        raise MwemtError("--all-sentences needs --ted-source and --ted-reference")
    rows = read_ted_pairs(args.pairs, args.annotator)
    sources = _strip_final_empty(read_lines(args.ted_source)) if args.ted_source else None
    references = _strip_final_empty(read_lines(args.ted_reference)) if args.ted_reference else None
    items, report = build_ted_testset(rows, ted_sources=sources, ted_references=references,
                                      all_sentences=args.all_sentences, keep_unlocated=args.keep_unlocated,
                                      max_gap=args.max_gap, pairs_name=args.pairs)
    n = write_testset(args.out, items)
    print(report.summary().replace("written", f"written to {args.out}"), file=sys.stderr)
    if not args.quiet:
        for u in report.unlocated:
            print(f"  not found: {args.pairs}:{u['line']} sentence {u['snt_id']}: {u['mwe_en']!r}", file=sys.stderr)
    if args.report:
        inputs = {"pairs": args.pairs}
        if args.ted_source:
            inputs["ted_source"] = args.ted_source
        if args.ted_reference:
            inputs["ted_reference"] = args.ted_reference
        config = {k: v for k, v in vars(args).items() if not k.startswith("_")}
        write_json(args.report, manifest("testset-from-ted", inputs=inputs, config=config, items=n,
                                         **report.to_dict()))
    return 0


def _strip_final_empty(lines: list[str]) -> list[str]:
    return lines[:-1] if lines and not lines[-1].strip() else lines
