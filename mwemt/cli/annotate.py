"""`mwemt annotate`: raw or tokenized text (or .cupt) in, MWE-annotated text (or .cupt) out."""

from __future__ import annotations

import argparse
import contextlib
import sys

from mwemt.cli.argtypes import float_range, int_range, non_negative_int, seed, workers
from mwemt.errors import MwemtError
from mwemt.formats import LEXICON_FORMATS
from mwemt.preprocess.annotate import ENCODINGS, IDENTIFICATION_FILTERS
from mwemt.preprocess.lemmatize import BACKENDS

TEXT_OR_CUPT = ("text", "cupt")   # one sentence per line, or PARSEME .cupt

EPILOG = """\
encodings:
  wws   words-with-spaces: contiguous MWEs become one token   ->  She took_care_of it .
  iob   Moses factors surface|lemma|IOB                        ->  took|take_care_of|B care|take_care_of|I
  none  tokenized text only (a baseline with the same tokenization)
  hints, hints-lemma  inline target hints, factor 0/1/2 (plain / hinted MWE / hint; --hint-table):
        She|0 took|1 care|1 of|1 prendersi|2 cura|2 di|2 the|0 dog|0    (hints-lemma: the hint's lemmas)

examples:
  echo "He walked the dog off ." | mwemt annotate --lexicon lex.txt --encoding iob --max-gap 2
  mwemt annotate --lexicon oewn.tsv --encoding wws -i train.en -o train.wws.en --workers 2 --report rep.json
  mwemt annotate --lexicon train.cupt --input-format cupt --output-format cupt -i test.cupt -o pred.cupt
  mwemt annotate --lexicon train.cupt --save-filters train.filters.json -i text.en -o text.iob.en
  mwemt annotate --lexicon train.cupt --no-filter rate --no-filter syntax -i text.en -o out.iob
  # inline hints for training: 10% of the sentences, only hints that match the reference (seeded)
  mwemt annotate --lexicon oewn.tsv --encoding hints --hint-table table.jsonl --reference train.it \
      --hint-rate 0.1 --seed 1 -i train.en -o train.hints.en
  # at test time: hints from the table only
  mwemt annotate --lexicon oewn.tsv --encoding hints --hint-table table.jsonl -i test.en -o test.hints.en

Identification filters (docs/identification.md): with a .cupt lexicon, look-up matches go through
filters learned from that annotated file (word order, gap sizes and nominal inflection seen, tree
connectivity where the input has a parse, the idiomaticity rate of the entry), thresholds set by
cross-validation on the file itself; --filters none turns them all off, --no-filter NAME one of
them. A model saved as LEXICON-STEM.filters.json next to a lexicon is used automatically. Other
lexicons are matched as they are unless --raw-corpus gives text for literal-reading estimates, or
--mwe-context bundled judges each OEWN match in its sentence (P(MWE), listed in the --report).
Matches must agree with the surface forms: "White best" does not match "white goods".

Lexicon formats (--lexicon-format, default auto): list (MWE[TAB category[TAB POS[TAB comp]]]),
bilingual (src TAB tgt1; tgt2), oewn (the OEWN MWE TSV), wn-aligned (synset-aligned EN-xx TSV),
cupt (MWEs extracted from an annotated .cupt file)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.add_argument("--lexicon", "-l", required=True, help="MWE lexicon file")
    p.add_argument("--lexicon-format", default="auto", choices=LEXICON_FORMATS,
                   help="lexicon file format (default: auto: .cupt by extension, oewn/wn-aligned by header, "
                        "else list)")
    p.add_argument("--encoding", "-e", default="iob", choices=ENCODINGS,
                   help="how MWEs are marked in text output (default: %(default)s)")
    p.add_argument("--lang", default="en", help="language code for tokenizer and lemmatizer (default: en)")
    p.add_argument("--lemmatizer", default="simplemma", choices=BACKENDS,
                   help="lemmatizer backend (default: %(default)s; all offline)")
    add_identification_arguments(p)
    p.add_argument("--confidence-buckets", type=int_range(0, 9), default=0, metavar="N",
                   help="with --encoding iob, append each MWE's confidence bucket (0..N-1) to its tags: B2, I2 "
                        "(default: 0 = plain B/I/O)")
    p.add_argument("--save-filters", metavar="PATH",
                   help="write the filter model used (learned or estimated) to PATH, for reuse (default: not saved)")
    p.add_argument("--pretokenized", action="store_true",
                   help="text input is already tokenized (split on spaces, no sacremoses)")
    p.add_argument("--input-format", default="text", choices=TEXT_OR_CUPT,
                   help="text: one sentence per line; cupt: PARSEME .cupt, its tokens and lemmas (default: text)")
    p.add_argument("--output-format", default="text", choices=TEXT_OR_CUPT,
                   help="text: one encoded sentence per line (--encoding); cupt: the PARSEME:MWE column "
                        "filled with the MWEs found (default: text)")
    p.add_argument("--relemmatize", action="store_true",
                   help="with cupt input, lemmatize forms instead of using the LEMMA column")
    p.add_argument("--input", "-i", default="-", help="input file (default: stdin)")
    p.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")
    p.add_argument("--workers", type=workers(), default=1, help="processes for text input (default: 1)")
    p.add_argument("--allow-empty", action="store_true",
                   help="pass empty lines through as empty lines instead of failing")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary on stderr")
    p.add_argument("--report", help="write a JSON report: counts, MWEs by length and entry, coverage")
    p.add_argument("--report-occurrences", type=non_negative_int(), default=None, metavar="N",
                   help="list up to N occurrences in the report, each with its sentence, indices, entry, "
                        "words and P(MWE), kept or removed (default: 100000 with --mwe-context, else 0)")
    h = p.add_argument_group("inline hints (--encoding hints or hints-lemma; docs/nmt.md)")
    h.add_argument("--hint-table", metavar="TABLE", help="MWE translation table (JSONL) the hints come from; "
                                                         "without it every word is |0")
    h.add_argument("--reference", metavar="FILE",
                   help="training mode: the target sentences, line-aligned; a seeded --hint-rate share of the "
                        "sentences gets the hints that match their reference approximately. Without it (test "
                        "mode) every MWE the table knows gets its best translation")
    h.add_argument("--hint-rate", type=float_range(0, 1), default=0.10, help="training mode: share of the sentences hinted "
                                                                 "(default: %(default)s)")
    h.add_argument("--seed", type=seed(), default=1, help="training mode: seed of the hinted sentences (default: 1)")
    h.add_argument("--hint-min-count", type=non_negative_int(), default=1, metavar="N",
                   help="least alignment count of a table translation (dictionary ones always qualify; default: 1)")
    h.add_argument("--hint-sources", nargs="+", default=["aligned", "dictionary"], choices=["aligned", "dictionary"],
                   help="table translations used as hints (default: both)")
    h.add_argument("--tgt-lang", default="it", help="target language: the reference's tokenizer and the lemmas of "
                                                    "hints-lemma (default: %(default)s)")


def add_identification_arguments(p, mwe_context: str = "none") -> None:
    """--max-gap and the identification filter flags, shared by every command that annotates
    (`mwemt annotate`, `mwemt testset build`); `identification_settings` reads them back.
    ``mwe_context``: the default of --mwe-context (``auto`` for test-set building)."""
    p.add_argument("--max-gap", type=non_negative_int(), default=None,
                   help="most tokens allowed between two MWE components; 0 = contiguous only (default: the "
                        "gap the identification filters were tuned with, else 0)")
    p.add_argument("--filters", default="auto", metavar="auto|none|PATH",
                   help="identification filters: auto = a saved model next to the lexicon, else learned from a "
                        ".cupt lexicon, else estimated from --raw-corpus, else none; none; or a saved model "
                        "(default: %(default)s)")
    p.add_argument("--no-filter", action="append", default=[], metavar="NAME", choices=IDENTIFICATION_FILTERS,
                   help="turn one filter off (repeatable): order, gap, inflection, syntax, rate, context (learned); "
                        "association, variability (raw corpus) (default: all on)")
    p.add_argument("--context", action="store_true",
                   help="when learning filters from a .cupt lexicon, also learn the contextual idiomatic/literal "
                        "classifier (needs mwemt[contextual]; about 100 sentences/s per core, so opt-in) "
                        "(default: off)")
    p.add_argument("--raw-corpus", metavar="TEXT",
                   help="plain text (one sentence per line) to estimate literal readings from, for lexicons "
                        "without training data (default: none)")
    p.add_argument("--mwe-context", default=mwe_context, metavar="none|auto|bundled|PATH",
                   help="judge each match in its sentence with the MWE-in-context classifier, which gives it "
                        "P(MWE) and removes matches below its threshold: auto = the bundled model for an OEWN "
                        "(or wn-aligned) English lexicon without other filters; bundled or PATH = that model for "
                        "any lexicon (needs mwemt[contextual]) (default: %(default)s)")
    p.add_argument("--mwe-threshold", type=float_range(0, 1), default=None, metavar="P",
                   help="keep matches with P(MWE) >= P (default: the threshold the model chose on development "
                        "data; 0 keeps every match with its probability)")


def identification_settings(args: argparse.Namespace) -> dict:
    """The `AnnotatorConfig` keys of the flags `add_identification_arguments` adds."""
    return {"max_gap": args.max_gap, "filters": args.filters, "filters_off": tuple(args.no_filter),
            "filters_context": args.context, "raw_corpus": args.raw_corpus, "mwe_context": args.mwe_context,
            "mwe_threshold": args.mwe_threshold}

def run(args: argparse.Namespace) -> int:
    from mwemt.fileio import atomic_write, count_lines, iter_lines
    from mwemt.preprocess.annotate import (
        AnnotationReport,
        AnnotatorConfig,
        annotate_stream,
        build_annotator,
        describe_filters,
    )
    from mwemt.provenance import manifest, write_json

    if args.workers < 1:
        raise MwemtError("--workers must be at least 1")
    if args.confidence_buckets < 0:
        raise MwemtError("--confidence-buckets must be 0 or more")
    cupt_in = args.input_format == "cupt"
    # .cupt input carries its own lemmas: match on them unless asked to lemmatize the forms again
    lemmatizer = "none" if cupt_in and not args.relemmatize else args.lemmatizer
    annotator = build_annotator(AnnotatorConfig(lang=args.lang, lexicon=(args.lexicon,),
                                                lexicon_format=args.lexicon_format, lemmatizer=lemmatizer,
                                                pretokenized=args.pretokenized, **identification_settings(args)),
                                log=(lambda msg: None) if args.quiet else None)
    lexicon, filters = annotator.lexicon, annotator.filters
    if args.save_filters:
        if filters is None:
            raise MwemtError("--save-filters: no filter model is in use (a .cupt lexicon or --raw-corpus makes one)")
        filters.save(args.save_filters)
    from mwemt.preprocess.mwe_context import MweContextModel

    listed = args.report_occurrences
    if listed is None:
        listed = 100000 if isinstance(filters, MweContextModel) else 0
    if listed < 0:
        raise MwemtError("--report-occurrences must be 0 or more")
    report = AnnotationReport(list_occurrences=listed if args.report else 0)
    progress = args.input != "-" and not args.quiet

    if cupt_in or args.output_format == "cupt":
        _run_cupt(args, annotator, report, progress)
    elif args.hint_table or args.reference:
        _run_hints(args, annotator, report)
    else:
        lines = iter_lines(args.input, allow_empty=args.allow_empty, allow_empty_file=False)
        total = count_lines(args.input) if progress else None
        from tqdm import tqdm

        stream = annotate_stream(annotator, lines, args.encoding, report, workers=args.workers,
                                 confidence_buckets=args.confidence_buckets)
        with atomic_write(args.output) as out, contextlib.closing(stream):  # closing reaps the workers
            for line in tqdm(stream, total=total, unit=" sent", disable=not progress, file=sys.stderr):
                out.write(line + "\n")
    if args.report:
        write_json(args.report, manifest(
            "annotate-report", config={k: v for k, v in vars(args).items() if not k.startswith("_")},
            signature=annotator.signature,
            **report.to_dict(lexicon_size=len(lexicon), filters=describe_filters(filters))))
    if progress:
        removed = ", ".join(f"{k} {v}" for k, v in sorted(report.removed_by_filter.items()))
        print(f"annotated {report.sentences} sentences: {report.mwes} MWEs "
              f"({report.discontinuous} discontinuous) in {report.sentences_with_mwe} sentences"
              + (f"; filters removed {sum(report.removed_by_filter.values())} candidates ({removed})"
                 if report.removed_by_filter else ""), file=sys.stderr)
    return 0


def _run_hints(args, annotator, report) -> None:
    """--encoding hints/hints-lemma with --hint-table: test mode (table only) or, with --reference, training
    mode (`mwemt.preprocess.hints.annotate_hint_pairs`)."""
    from mwemt.fileio import read_lines, write_lines
    from mwemt.preprocess.hints import (
        HintConfig,
        annotate_hint_pairs,
        hint_inserter,
        insert_hints,
        is_hint_encoding,
    )

    if not is_hint_encoding(args.encoding):
        raise MwemtError(f"--hint-table and --reference need --encoding hints or hints-lemma, not {args.encoding}")
    if not args.hint_table:
        raise MwemtError("--reference needs --hint-table (the MWE translation table the hints come from)")
    if not 0.0 <= args.hint_rate <= 1.0 or args.hint_min_count < 0:
        raise MwemtError("--hint-rate must be in [0, 1] and --hint-min-count 0 or more")
    config = HintConfig(rate=args.hint_rate, min_count=args.hint_min_count, sources=tuple(args.hint_sources))
    inserter = hint_inserter(args.hint_table, args.encoding, config, tgt_lang=args.tgt_lang,
                             lemmatizer=args.lemmatizer)
    sources = read_lines(args.input, allow_empty=False)
    if args.reference:
        references = read_lines(args.reference, allow_empty=False)
        if len(references) != len(sources):
            raise MwemtError(f"{args.reference} has {len(references)} lines but {args.input} has {len(sources)}")
        done, hint_report = annotate_hint_pairs(annotator, zip(sources, references), args.tgt_lang, inserter,
                                                args.seed)
        if done.dropped_empty:
            raise MwemtError(f"{done.dropped_empty} sentence pair(s) without a token; remove them first")
        report.merge(done.report)
        write_lines(args.output, done.source)
        if not args.quiet:
            r = hint_report
            print(f"hints: {r.hinted_sentences} of {r.sentences} sentences hinted ({r.eligible} with a hint that "
                  f"matches the reference), {r.hinted_mwes} MWEs", file=sys.stderr)
        return
    out = []
    for line in sources:
        sent = annotator.annotate_text(line)
        report.add(sent)
        out.append(" ".join(insert_hints(sent, inserter.test_hints(sent))))
    write_lines(args.output, out)


def _run_cupt(args, annotator, report, progress: bool) -> None:
    from tqdm import tqdm

    from mwemt.fileio import atomic_write, iter_lines
    from mwemt.formats import CuptSentence, CuptToken, read_cupt, write_cupt
    from mwemt.preprocess.annotate import annotate_cupt, encode_sentence

    def sentences():
        if args.input_format == "cupt":
            yield from annotate_cupt(annotator, read_cupt(args.input), relemmatize=args.relemmatize)
        else:
            for line in iter_lines(args.input, allow_empty=args.allow_empty, allow_empty_file=False):
                sent = annotator.annotate_text(line)
                toks = [CuptToken(str(i + 1), f, lem, "_", "_", "_", "_", "_", "_", "_", "*")
                        for i, (f, lem) in enumerate(zip(sent.tokens, sent.lemmas))]
                yield CuptSentence([f"# text = {line}"], toks), sent

    def annotated():
        for cs, sent in tqdm(sentences(), unit=" sent", disable=not progress, file=sys.stderr):
            report.add(sent, encode_sentence(sent, args.encoding)[1] if args.encoding == "wws" else 0)
            yield cs, sent

    if args.output_format == "cupt":
        write_cupt(args.output, (cs.with_mwes(sent.mwes) for cs, sent in annotated()))
    else:
        with atomic_write(args.output) as out:
            for _, sent in annotated():
                out.write(encode_sentence(sent, args.encoding, args.confidence_buckets)[0] + "\n")
