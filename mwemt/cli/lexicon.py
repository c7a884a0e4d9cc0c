"""`mwemt lexicon`: extract an MWE lexicon from annotated .cupt files, convert lexicons, show stats."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from mwemt.formats import LEXICON_FORMATS, LEXICON_SIDES

EPILOG = """\
subcommands:
  extract   MWE types annotated in .cupt files -> list lexicon with counts
  convert   any supported lexicon format -> list lexicon
  stats     entry counts by length and category

examples:
  mwemt lexicon extract --cupt train.cupt --out train.lex.tsv
  mwemt lexicon extract --cupt a.cupt b.cupt --min-count 2 --out lex.tsv
  mwemt lexicon convert oewn_mwe.tsv --format oewn --out oewn.lex.tsv
  mwemt lexicon convert lidioms/de/german.ttl --out de-idioms.lex.tsv     # format from the extension
  mwemt lexicon stats epie-idioms/                                         # EPIE lists + instance counts
  mwemt lexicon stats train.lex.tsv

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
    e.add_argument("--min-count", type=int, default=1,
                   help="keep MWE types seen at least this often (default: %(default)s)")
    e.add_argument("--min-words", type=int, default=2,
                   help="leave out MWE types with fewer lemmas, e.g. PARSEME's single-token MWEs; the list "
                        "format needs at least 2 (default: %(default)s)")
    e.add_argument("--sort", choices=("first", "count", "alpha"), default="count",
                   help="entry order: first occurrence, descending count, or alphabetical "
                        "(default: %(default)s)")

    c = sub.add_parser("convert", help="any lexicon format -> list lexicon", formatter_class=fmt,
                       description="Read a lexicon in any supported format and write the list format.",
                       epilog="example:\n  mwemt lexicon convert oewn_mwe.tsv --format oewn --out oewn.lex.tsv")
    c.add_argument("lexicon", help="input lexicon")
    c.add_argument("--format", "-f", default="auto", choices=LEXICON_FORMATS,
                   help="input format (default: %(default)s: by extension and header)")
    c.add_argument("--side", default="source", choices=LEXICON_SIDES,
                   help="language side of wn-aligned files (default: %(default)s)")
    c.add_argument("--lang", help="language of the idioms to take from a lidioms file holding several")
    c.add_argument("--out", "-o", default="-", help="output list lexicon (default: stdout)")

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
    return {"extract": _extract, "convert": _convert, "stats": _stats}[args.action](args)


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
