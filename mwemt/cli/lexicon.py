"""`mwemt lexicon`: extract an MWE lexicon from annotated .cupt files, convert lexicons, show stats."""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from mwemt.cli.argtypes import int_range, non_negative_int, positive_int, seed
from mwemt.formats import LEXICON_FORMATS, LEXICON_SIDES

EPILOG = """\
subcommands:
  extract   MWE types annotated in .cupt files -> list lexicon with counts
  convert   any supported lexicon format -> list lexicon
  stats     entry counts by length and category
  filters   learn identification filters from annotated .cupt files (JSON model)

examples:
  mwemt lexicon extract --cupt train.cupt --out train.lex.tsv
  mwemt lexicon extract --cupt a.cupt b.cupt --min-count 2 --out lex.tsv
  mwemt lexicon convert oewn_mwe.tsv --format oewn --out oewn.lex.tsv
  mwemt lexicon convert lidioms/de/german.ttl --out de-idioms.lex.tsv     # format from the extension
  mwemt lexicon convert wordnet --out wordnet-mwes.txt                    # WordNet 3.0's 64k English MWEs
  mwemt lexicon stats epie-idioms/                                         # EPIE lists + instance counts
  mwemt lexicon stats train.lex.tsv
  mwemt lexicon filters --cupt train.cupt --out train.lex.filters.json

formats (--format, default auto: by extension, name and header):
  list        MWE[<TAB>category<TAB>POS pattern<TAB>compositionality<TAB>count]
  bilingual   source<TAB>target1; target2          oewn, wn-aligned   the OEWN / synset-aligned TSVs
  cupt        MWEs annotated in a PARSEME .cupt file
  lidioms     LIdioms OntoLex-Lemon Turtle (.ttl): idiom written forms in one language (--lang)
  epie        EPIE Formal_idioms.txt / Static_idioms.txt or their directory; counts from the instances

The list format written here is one MWE per line, TAB-separated:
  MWE (lemmas joined by spaces) <TAB> category <TAB> POS pattern <TAB> compositionality <TAB> count
Empty trailing columns are left out; lines starting with '#' are comments (extract writes the
source files and their sha256 there). `mwemt annotate --lexicon` reads it back (format list)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    fmt = argparse.RawDescriptionHelpFormatter

    e = sub.add_parser("extract", help="MWE types of annotated .cupt files -> list lexicon with counts",
                       description="Extract the MWE types annotated in .cupt files: lemmas in word order "
                                   "(lowercased), the most frequent category and UPOS pattern, and the "
                                   "number of occurrences.", formatter_class=fmt,
                       epilog="example:\n  mwemt lexicon extract --cupt train.cupt --out train.lex.tsv")
    e.add_argument("--cupt", nargs="+", required=True, metavar="FILE", help="annotated .cupt file(s)")
    e.add_argument("--out", "-o", default="-", help="output list lexicon (default: stdout)")
    e.add_argument("--min-count", type=positive_int(), default=1,
                   help="keep MWE types seen at least this often (default: %(default)s)")
    e.add_argument("--min-words", type=int_range(2), default=2,
                   help="leave out MWE types with fewer lemmas, e.g. PARSEME's single-token MWEs; the list "
                        "format needs at least 2 (default: %(default)s)")
    e.add_argument("--sort", choices=("first", "count", "alpha"), default="count",
                   help="entry order: first occurrence, descending count, or alphabetical "
                        "(default: %(default)s)")

    c = sub.add_parser("convert", help="any lexicon format -> list lexicon", formatter_class=fmt,
                       description="Read a lexicon in any supported format and write the list format.",
                       epilog="example:\n  mwemt lexicon convert oewn_mwe.tsv --format oewn --out oewn.lex.tsv")
    c.add_argument("lexicon", help="input lexicon, or 'wordnet' for WordNet 3.0's English multiword lemmas")
    c.add_argument("--format", "-f", default="auto", choices=LEXICON_FORMATS,
                   help="input format (default: %(default)s: by extension and header)")
    c.add_argument("--side", default="source", choices=LEXICON_SIDES,
                   help="language side of wn-aligned files (default: %(default)s)")
    c.add_argument("--lang", help="language of the idioms to take from a lidioms file holding several")
    c.add_argument("--out", "-o", default="-", help="output list lexicon (default: stdout)")

    f = sub.add_parser("filters", help="learn identification filters from an annotated .cupt file",
                       formatter_class=fmt,
                       description="Learn the identification filters of a .cupt file (configurations seen, "
                                   "syntactic connectivity, idiomaticity rate per entry), thresholds chosen by "
                                   "repeated k-fold cross-validation on the file itself, and save them as JSON. "
                                   "Saved as LEXICON-STEM.filters.json next to a lexicon extracted from the same "
                                   "file, `mwemt annotate` uses it automatically.",
                       epilog="examples:\n"
                              "  mwemt lexicon extract --cupt train.cupt --out en.lex.tsv\n"
                              "  mwemt lexicon filters --cupt train.cupt --out en.lex.filters.json\n"
                              "  mwemt lexicon filters --cupt train.cupt --no-filter rate --max-gap 2 --out f.json")
    f.add_argument("--cupt", required=True, metavar="FILE", help="annotated .cupt file")
    f.add_argument("--out", "-o", required=True, help="output filter model (JSON)")
    f.add_argument("--no-filter", action="append", default=[], metavar="NAME",
                   help="leave a filter out (repeatable): order, gap, inflection, syntax, rate (default: all "
                        "may be chosen)")
    f.add_argument("--max-gap", type=non_negative_int(), default=None,
                   help="fix the look-up's max_gap instead of choosing it (default: chosen among 0-4)")
    f.add_argument("--folds", type=int_range(2), default=5, help="cross-validation folds (default: %(default)s)")
    f.add_argument("--repeats", type=positive_int(100, why="each repeat is one more whole cross-validation"), default=3,
                   help="cross-validation partitions, the first by position, the others shuffled "
                        "(default: %(default)s)")
    f.add_argument("--seed", type=seed(), default=1, help="seed of the shuffled partitions (default: %(default)s)")
    f.add_argument("--context", action="store_true",
                   help="also learn the contextual idiomatic/literal classifier on the packaged sentence encoder "
                        "(needs mwemt[contextual]; slow on CPU, so opt-in) (default: off)")

    s = sub.add_parser("stats", help="entry counts by length and category", formatter_class=fmt,
                       description="Count a lexicon's entries by length (words) and category.",
                       epilog="example:\n  mwemt lexicon stats train.lex.tsv --format list")
    s.add_argument("lexicon", help="lexicon file")
    s.add_argument("--format", "-f", default="auto", choices=LEXICON_FORMATS,
                   help="lexicon format (default: %(default)s)")
    s.add_argument("--side", default="source", choices=LEXICON_SIDES,
                   help="language side of wn-aligned files (default: %(default)s)")
    s.add_argument("--lang", help="language of the idioms to take from a lidioms file holding several")


def run(args: argparse.Namespace) -> int:
    return {"extract": _extract, "convert": _convert, "stats": _stats, "filters": _filters}[args.action](args)


def _extract(args) -> int:
    from mwemt.errors import InputError, MwemtError
    from mwemt.fileio import sha256_file
    from mwemt.formats import extract_cupt_lexicon, write_list_lexicon

    if args.min_count < 1:
        raise MwemtError("--min-count must be at least 1")
    every = extract_cupt_lexicon(args.cupt)
    entries = [e for e in every if e.count >= args.min_count and e.length >= args.min_words]
    single = sum(1 for e in every if e.length < args.min_words)
    if not entries:  # an empty lexicon would silently annotate nothing downstream
        raise InputError(f"no MWE type of {args.min_words}+ words annotated at least {args.min_count} time(s) "
                         f"({len(every)} types in all)", ", ".join(args.cupt), expected="at least one such type")
    if args.sort == "count":
        entries.sort(key=lambda e: -e.count)  # stable: ties stay in order of first occurrence
    elif args.sort == "alpha":
        entries.sort(key=lambda e: e.key)
    header = "mwemt lexicon extract: MWE<TAB>category<TAB>POS pattern<TAB>compositionality<TAB>count\n"
    header += "\n".join(f"source: {p} sha256:{sha256_file(p)}" for p in args.cupt)
    n = write_list_lexicon(args.out, entries, header=header)
    print(f"wrote {n} MWE types ({sum(e.count for e in entries)} occurrences) to {args.out}; left out "
          f"{single} types of fewer than {args.min_words} words", file=sys.stderr)
    return 0


def _convert(args) -> int:
    from mwemt.formats import read_lexicon_entries, write_list_lexicon

    if args.lexicon == "wordnet" and not os.path.exists(args.lexicon):
        from mwemt.wordnet import multiword_entries

        entries = multiword_entries()
    else:
        entries = read_lexicon_entries(args.lexicon, args.format, side=args.side, lang=args.lang)
    n = write_list_lexicon(args.out, entries, header=f"mwemt lexicon convert {args.lexicon} ({args.format})")
    print(f"wrote {n} entries to {args.out}", file=sys.stderr)
    return 0


def _stats(args) -> int:
    from mwemt.formats import detect_lexicon_format, read_lexicon_entries

    fmt = detect_lexicon_format(args.lexicon) if args.format == "auto" else args.format
    entries = read_lexicon_entries(args.lexicon, fmt, side=args.side, lang=args.lang)
    by_len = Counter(e.length for e in entries)
    by_cat = Counter(e.category or "(none)" for e in entries)
    print(f"{args.lexicon} ({fmt}): {len(entries)} entries, {len({e.key for e in entries})} distinct")
    if any(e.count for e in entries):
        print(f"occurrences (count column): {sum(e.count for e in entries)}")
    print("by length:")
    for k in sorted(by_len):
        print(f"  {k:>3} words  {by_len[k]:>7}")
    print("by category:")
    for cat, n in sorted(by_cat.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {cat:<20} {n:>7}")
    return 0


def _filters(args) -> int:
    from mwemt.errors import MwemtError
    from mwemt.preprocess.filters import FILTERS, learn_filters_from_cupt

    unknown = set(args.no_filter) - set(FILTERS)
    if unknown:
        raise MwemtError(f"--no-filter {', '.join(sorted(unknown))}: choose among {', '.join(FILTERS)}")
    if args.folds < 2 or args.repeats < 1:
        raise MwemtError("--folds must be at least 2 and --repeats at least 1")
    model = learn_filters_from_cupt(args.cupt, folds=args.folds, repeats=args.repeats, off=args.no_filter,
                                    max_gap=args.max_gap, seed=args.seed, context=args.context,
                                    progress=sys.stderr.isatty())
    model.save(args.out)
    cv = model.meta["cross_validation"]
    print(f"learned from {args.cupt} ({model.meta['source']['sentences']} sentences, "
          f"{model.meta['source']['mwes']} MWEs) in {model.meta['seconds']}s: {model.thresholds.describe()}",
          file=sys.stderr)
    if "chosen" in cv:
        def fmt(c: dict) -> str:
            return f"P {100 * c['P']:.1f} R {100 * c['R']:.1f} F {100 * c['F']:.1f}"

        plain = cv["no_filters_by_max_gap"].get(str(model.thresholds.max_gap))
        print(f"cross-validation ({cv['folds']} folds x {cv['repeats']}), MWEs seen in the other folds: "
              f"{fmt(cv['chosen'])}" + (f"; without filters: {fmt(plain)}" if plain else ""), file=sys.stderr)
        for name, c in cv["ablation"].items():
            print(f"  {name:<20} {fmt(c)}", file=sys.stderr)
        if "context" in cv:
            chosen = cv["context"]["by_threshold"][str(model.thresholds.min_context)]
            print(f"  contextual filter: threshold {model.thresholds.min_context:g} ({fmt(chosen)}; 0 = off)",
                  file=sys.stderr)
    else:
        print(cv["skipped"], file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0
