"""`mwemt testset`: build MWE-annotated test sets (JSONL of TestItem records).

``build`` makes one from any parallel text (lexicon MWEs, reference translations by word
alignment); ``from-ted`` converts the human TED EN-IT annotation.
"""

from __future__ import annotations

import argparse
import sys

from mwemt.cli.argtypes import float_range, non_negative_int, positive_int, seed

BUILD_EPILOG = """\
examples:
  mwemt augment split --tsv eng-ita.anki.tsv --out data/tatoeba
  mwemt testset build --src data/tatoeba/test.en --tgt data/tatoeba/test.it \\
      --lexicon oewn_english_mwe_lemmas.tsv --extra data/tatoeba/train.en data/tatoeba/train.it \\
      --extra-max 50000 -o tatoeba.mwe.jsonl --report tatoeba.mwe.report.json
  mwemt testset build --tsv pairs.tsv --lexicon lex.txt --max-gap 2 --extra-tsv big.tsv -o test.jsonl
  mwemt testset build --src pool.en --tgt pool.it --lexicon oewn_english_mwe_lemmas.tsv \\
      --training-source data/tatoeba/train.en --max-per-type 3 --select 1200 --seed 1 \\
      --compositionality oewn.comp.tsv -o tatoeba.mwe.jsonl --readme tatoeba.mwe.README.md
  mwemt score --hyp system.it --testset tatoeba.mwe.jsonl --metrics mwe --lang it

Source MWEs come from the same annotator as `mwemt annotate` (same --lexicon, --lexicon-format,
--lemmatizer, --max-gap, --lang). Each MWE's reference translation is the target words aligned to
its tokens, in target order, with unlinked words inside the span kept and "..." where words
aligned elsewhere interrupt it; a negation before the MWE and a reflexive clitic join it, a leading
article (unless the source MWE has a determiner) and a trailing one leave it, and a --table
translation found where the alignment points completes it. MWEs whose translation looks unusable
are dropped and counted: unaligned (no word linked), span_too_long (first to last word spans more
than --max-span-factor x MWE length + --max-span-slack tokens), scattered (more than --max-gaps
gaps), function_only (only function words for an MWE with a content word).

Each item: id = the input line number, source and reference = Moses tokens joined by spaces
(MWE indices point into source.split(), reference_indices into reference.split()), mwes with
name (lexicon form), lemma, surface, category and reference, and meta with the line, the
alignment (Pharaoh), filtered MWEs and the raw input lines.

Selection (on by default: --max-per-type 3) keeps a test from being a handful of frequent literal
pairs ("go to", "talk to"): sentences are visited in a seeded order, first those that bring a new
MWE type, then a type's second occurrence, and so on up to the cap; MWEs over the cap are dropped
(meta.capped). With --training-source, sentences that are in the training text or differ from a
training sentence only in case and punctuation are never selected. With --compositionality (and
identification confidences, when the lexicon's filters give them) every MWE is put in the
"idiomatic" or "literal" part, which `mwemt score` can report apart."""

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
    from mwemt.testsets.testset import DEFAULT_MAX_GAP

    p.epilog = BUILD_EPILOG + "\n\n" + EPILOG
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _configure_build(sub.add_parser(
        "build", help="JSONL test set from parallel text: lexicon MWEs, translations by word alignment",
        description="Build a JSONL MWE test set from parallel text: annotate the source with an MWE lexicon "
                    "and take each MWE's reference translation from a word alignment (eflomal).",
        epilog=BUILD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter))
    _configure_table(sub.add_parser(
        "table", help="MWE translation table: each MWE type's translations in parallel text (+ a dictionary)",
        description="Build an MWE translation table (mwemt.testsets.mwe_table): annotate the source side "
                    "with an MWE lexicon, align the pairs, count each MWE type's aligned translations, and add "
                    "a bilingual dictionary's translations. The table feeds --mwe-alternatives table in "
                    "`mwemt score`, term use and LiTER.",
        epilog=TABLE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter))
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
    t.add_argument("--max-gap", type=non_negative_int(), default=DEFAULT_MAX_GAP,
                   help="most source tokens between two matched MWE tokens (default: %(default)s)")
    t.add_argument("--report", help="write counts, the unlocated MWEs and provenance as JSON")
    t.add_argument("--quiet", "-q", action="store_true", help="no list of unlocated MWEs on stderr")


TABLE_EPILOG = """\
example:
  S=../shared/data
  mwemt testset table --src data/tatoeba/train.en --tgt data/tatoeba/train.it --max-pairs 100000 \\
      --lexicon $S/lexicons/wordnet-mwe/derived/oewn_english_mwe_lemmas.tsv \\
      --dictionary $S/lexicons/wordnet-mwe/derived/en-ita.multiwordnet.tsv -o mwe-table.jsonl --report table.json

The table (JSONL): a header with the signature and provenance (input hashes, aligner settings,
counts), then one line per MWE type: {"key", "translations": [{"tokens", "count", "sources"}]}."""


def _configure_table(b: argparse.ArgumentParser) -> None:
    from mwemt.cli.align import add_aligner_arguments

    src = b.add_argument_group("parallel text (--src and --tgt, or --tsv)")
    src.add_argument("--src", help="source sentences, one per line (raw text unless --pretokenized)")
    src.add_argument("--tgt", help="target sentences, line-aligned with --src")
    src.add_argument("--tsv", help="source<TAB>target lines instead of --src/--tgt")
    src.add_argument("--max-pairs", type=positive_int(), metavar="N", help="use only the first N pairs")
    b.add_argument("--out", "-o", required=True, help="output table (JSONL, written atomically)")
    b.add_argument("--report", help="write counts, settings and input hashes as JSON")
    _source_mwe_arguments(b, lexicon_help="MWE lexicon file (needed unless only --dictionary is given)")
    d = b.add_argument_group("bilingual dictionary")
    d.add_argument("--dictionary", help="bilingual dictionary: its MWE translations join the table "
                                        "(bilingual TSV or WordNet-aligned TSV such as en-ita.multiwordnet.tsv)")
    d.add_argument("--dictionary-format", default="auto", choices=("auto", "bilingual", "wn-aligned"),
                   help="format of --dictionary: bilingual = source<TAB>target1; target2 lines (';' separates "
                        "synonyms); wn-aligned = the EN-xx synset-aligned TSV (header pwn30_synset ..., every "
                        "English lemma of a synset with every target one); auto = wn-aligned when the header "
                        "says so, else bilingual (default: %(default)s)")
    d.add_argument("--dict-side", default="source", choices=("source", "target"),
                   help="which dictionary column is the source language (default: %(default)s)")
    d.add_argument("--dictionary-all", action="store_true",
                   help="keep every dictionary MWE (default: only the MWE types found in the parallel text)")
    b.add_argument("--merge", action="append", metavar="TABLE", default=[],
                   help="merge this table (from an earlier `mwemt testset table`) into the result: counts add up, "
                        "sources unite (repeatable)")
    b.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")
    add_aligner_arguments(b)


def _run_table(args: argparse.Namespace) -> int:
    import time

    from mwemt.cli.align import aligner_settings, extra_inputs, read_extra_args
    from mwemt.errors import MwemtError
    from mwemt.provenance import file_record, manifest, write_json
    from mwemt.testsets.mwe_table import MweTranslationTable, build_table, read_dictionary

    started = time.perf_counter()
    say = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    has_text = bool(args.src or args.tgt or args.tsv)
    if not has_text and not args.dictionary and not args.merge:
        raise MwemtError("give parallel text (--src/--tgt or --tsv) with --lexicon, --dictionary and/or --merge")
    if has_text and not args.lexicon:
        raise MwemtError("--lexicon is needed to find the MWEs of the parallel text")
    if args.max_pairs is not None and args.max_pairs < 1:
        raise MwemtError("--max-pairs must be at least 1")
    inputs = {k: v for k, v in (("src", args.src), ("tgt", args.tgt), ("tsv", args.tsv), ("lexicon", args.lexicon),
                                ("dictionary", args.dictionary)) if v}
    table = MweTranslationTable()
    counts: dict = {}
    if has_text:
        rows = _read_build_pairs(args)
        if args.max_pairs is not None:
            rows = rows[: args.max_pairs]
        align_config, cache = aligner_settings(args)
        table, counts = build_table(rows, annotator_from_args(args), tgt_lang=args.tgt_lang,
                                    pretokenized=args.pretokenized, align_config=align_config,
                                    symmetrization=args.symmetrization, extra=read_extra_args(args, args.lang,
                                                                                               args.tgt_lang),
                                    cache_dir=cache, progress=say)
    for path in args.merge:
        table = table.merge(MweTranslationTable.read(path))
        inputs[f"merge:{path}"] = path
    if args.dictionary:
        pairs = read_dictionary(args.dictionary, args.dictionary_format, args.dict_side, min_words=2)
        keys = None if args.dictionary_all or not (has_text or args.merge) else table.keys()
        counts["dictionary_entries"] = table.add_dictionary(pairs, lang=args.tgt_lang, keys=keys)
    table.provenance.update({"inputs": {k: file_record(v) for k, v in {**inputs, **extra_inputs(args)}.items()},
                             "max_pairs": args.max_pairs, "command": "mwemt testset table"})
    table.write(args.out)
    if args.report:
        write_json(args.report, manifest("testset-table", inputs={**inputs, **extra_inputs(args)},
                                         config={k: v for k, v in vars(args).items() if not k.startswith("_")},
                                         signature=table.signature(), counts=counts,
                                         seconds=round(time.perf_counter() - started, 2)))
    say(f"{table.signature()}; {counts}; written to {args.out} in {time.perf_counter() - started:.1f} s")
    return 0


def _configure_build(b: argparse.ArgumentParser) -> None:
    from mwemt.cli.align import add_aligner_arguments
    from mwemt.testsets.aligned import ReferenceFilters

    src = b.add_argument_group("input (--src and --tgt, or --tsv)")
    src.add_argument("--src", help="source sentences, one per line (raw text unless --pretokenized)")
    src.add_argument("--tgt", help="target sentences (references), line-aligned with --src")
    src.add_argument("--tsv", help="source<TAB>target lines instead of --src/--tgt")
    b.add_argument("--out", "-o", required=True, help="output JSONL (written atomically)")
    b.add_argument("--report", help="write counts, filtered examples, settings and input hashes as JSON")
    _source_mwe_arguments(b, lexicon_help="MWE lexicon file", required=True, mwe_context="auto")
    filt = b.add_argument_group("filters for unusable alignments")
    defaults = ReferenceFilters()
    filt.add_argument("--max-span-factor", type=float_range(above=0), default=defaults.max_span_factor,
                      help="drop an MWE whose translation spans more than FACTOR x its length + SLACK target "
                           "tokens (default: %(default)s)")
    filt.add_argument("--max-span-slack", type=non_negative_int(), default=defaults.max_span_slack, help="(default: %(default)s)")
    filt.add_argument("--max-gaps", type=non_negative_int(), default=defaults.max_gaps,
                      help="drop an MWE whose translation has more gaps (default: %(default)s)")
    sel = b.add_argument_group("selection: a diverse test, disjoint from training")
    sel.add_argument("--max-per-type", type=non_negative_int(), default=3, metavar="K",
                     help="at most K occurrences of each MWE type (its lexicon form); 0 = no cap (default: %(default)s)")
    sel.add_argument("--select", type=positive_int(), metavar="N",
                     help="stop once N MWEs are selected, sentences chosen in a seeded order that covers new "
                          "MWE types first (default: every sentence the cap allows)")
    sel.add_argument("--training-source", metavar="FILE",
                     help="the training corpus's source side: no selected test sentence is in it, even as a "
                          "near-duplicate (same words, other case or punctuation), and the report counts each "
                          "MWE type's occurrences in it")
    sel.add_argument("--training-target", metavar="FILE",
                     help="target-side training text: a pair whose reference is in it (or a near-duplicate) "
                          "is not selected")
    sel.add_argument("--seed", type=seed(), default=1, help="seeds the selection order and the report's sample "
                                                          "(default: %(default)s)")
    part = b.add_argument_group("idiomatic and literal parts")
    part.add_argument("--compositionality", metavar="TSV",
                      help="predicted compositionality (mwe<TAB>score, `mwemt compositionality predict`): each "
                           "MWE carries its type's score")
    part.add_argument("--idiomatic-below", type=float_range(0, 1), metavar="X",
                      help="an MWE whose predicted compositionality is <= X is idiomatic (default: the lowest "
                           "tertile of the test's own predictions)")
    part.add_argument("--idiomatic-confidence", type=float_range(0, 1, special={-1.0: "ignore confidence"}), default=0.5, metavar="X",
                      help="an occurrence whose identification confidence (from identification filters) is >= X "
                           "is idiomatic; -1 = ignore confidence (default: %(default)s)")
    b.add_argument("--table", metavar="JSONL",
                   help="MWE translation table (`mwemt testset table`): its translations complete partial "
                        "alignments and become each MWE's alternatives (for `mwemt score --mwe-alternatives testset`)")
    b.add_argument("--readme", metavar="FILE",
                   help="write the test's report as Markdown: types, top-10 share, categories, contiguous vs "
                        "gapped, compositionality tertiles, parts, training frequency, 20 random MWEs")
    b.add_argument("--all-sentences", action="store_true",
                   help="one item per input pair, also without MWEs (default: only pairs that keep an MWE); "
                        "needs --max-per-type 0")
    b.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")
    add_aligner_arguments(b)


def annotator_from_args(args: argparse.Namespace):
    """The `Annotator` of `mwemt annotate`, from the same arguments."""
    from mwemt.cli.annotate import identification_settings
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator

    return build_annotator(AnnotatorConfig(lang=args.lang, lexicon=(args.lexicon,), lexicon_format=args.lexicon_format,
                                           lemmatizer=args.lemmatizer, pretokenized=args.pretokenized,
                                           **identification_settings(args)),
                           log=(lambda msg: None) if getattr(args, "quiet", False) else None)


def _read_build_pairs(args: argparse.Namespace) -> list[tuple[int, str, str]]:
    """(line number, source, target) of the non-empty input pairs; and how many were empty."""
    from mwemt.errors import MwemtError
    from mwemt.fileio import iter_parallel

    if bool(args.tsv) == bool(args.src or args.tgt) or (args.src and not args.tgt) or (args.tgt and not args.src):
        raise MwemtError("give --src and --tgt, or --tsv")
    if args.tsv:
        from mwemt.augment.corpus import iter_tsv_pairs

        return list(iter_tsv_pairs(args.tsv))
    return [(k, s, t) for k, (s, t) in enumerate(iter_parallel(args.src, args.tgt, allow_empty=True), 1)]


def _build_config(args: argparse.Namespace):
    """The `TestsetBuildConfig` of the arguments, and the alignment cache directory (or None)."""
    from mwemt.cli.align import aligner_settings
    from mwemt.errors import MwemtError
    from mwemt.testsets.aligned import ReferenceFilters
    from mwemt.testsets.build import TestsetBuildConfig
    from mwemt.testsets.select import SelectionConfig

    if args.max_per_type < 0 or (args.select is not None and args.select < 0):
        raise MwemtError("--max-per-type and --select must be >= 0")
    selecting = args.max_per_type > 0 or args.select is not None or args.training_source or args.training_target
    if selecting and args.all_sentences:
        raise MwemtError("--all-sentences keeps every pair: use it with --max-per-type 0, without --select "
                         "and --training-source")
    align_config, cache = aligner_settings(args)
    selection = SelectionConfig(args.max_per_type, args.select or 0, args.seed) if selecting else None
    return cache, TestsetBuildConfig(
        tgt_lang=args.tgt_lang, pretokenized=args.pretokenized,
        filters=ReferenceFilters(args.max_span_factor, args.max_span_slack, args.max_gaps),
        all_sentences=args.all_sentences, symmetrization=args.symmetrization, align=align_config,
        selection=selection, idiomatic_below=args.idiomatic_below,
        idiomatic_confidence=None if args.idiomatic_confidence < 0 else args.idiomatic_confidence)


def _run_build(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from mwemt.cli.align import extra_inputs, read_extra_args
    from mwemt.fileio import atomic_write, read_lines
    from mwemt.formats import read_compositionality, write_testset
    from mwemt.provenance import manifest, write_json
    from mwemt.testsets.build import build_testset
    from mwemt.testsets.report import render_markdown

    started = time.perf_counter()
    cache, config = _build_config(args)
    annotator = annotator_from_args(args)
    rows = _read_build_pairs(args)
    extra = read_extra_args(args, args.lang, args.tgt_lang)
    comp = read_compositionality(args.compositionality) if args.compositionality else None
    training = [s for s in read_lines(args.training_source) if s.strip()] if args.training_source else None
    training_tgt = [t for t in read_lines(args.training_target) if t.strip()] if args.training_target else ()
    say = (lambda msg: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr))
    table = None
    if args.table:
        from mwemt.testsets.mwe_table import MweTranslationTable

        table = MweTranslationTable.read(args.table)
    built = build_testset(rows, annotator, config, extra=extra, cache_dir=cache, compositionality=comp,
                          training_source=training, training_target=training_tgt, progress=say, table=table)
    write_testset(args.out, built.items)
    seconds = time.perf_counter() - started
    say(built.report.summary() + f"; {built.stats['mwes']:,} MWEs of {built.stats['types']:,} types written to "
        f"{args.out} in {seconds:.1f} s" + (" (alignment from the cache)" if built.alignment_cached else "")
        + f"\n{built.alignment_signature}")
    inputs = {k: v for k, v in (("src", args.src), ("tgt", args.tgt), ("tsv", args.tsv), ("lexicon", args.lexicon),
                                ("compositionality", args.compositionality), ("table", args.table),
                                ("training_source", args.training_source),
                                ("training_target", args.training_target)) if v}
    if args.readme:
        notes = [f"Built by `mwemt testset build` from {', '.join(f'{k}={Path(v).name}' for k, v in inputs.items())}; "
                 f"annotator {annotator.signature}; {built.alignment_signature}."]
        if built.selection is not None:
            notes.append(built.selection.summary() + ".")
        with atomic_write(args.readme) as fh:
            fh.write(render_markdown(built.stats, f"MWE test set {Path(args.out).name}", notes))
    if args.report:
        config_dict = {k: v for k, v in vars(args).items() if not k.startswith("_")}
        write_json(args.report, manifest(
            "testset-build", inputs={**inputs, **extra_inputs(args)}, config=config_dict,
            annotator=annotator.signature, seed=args.seed,
            alignment_seed="none: eflomal seeds itself; the alignment cache makes reruns reproducible",
            seconds=round(seconds, 2), **built.manifest_fields()))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.action == "build":
        return _run_build(args)
    if args.action == "table":
        return _run_table(args)
    return _run_from_ted(args)


def _run_from_ted(args: argparse.Namespace) -> int:
    from mwemt.errors import MwemtError
    from mwemt.fileio import read_lines
    from mwemt.formats import write_testset
    from mwemt.provenance import manifest, write_json
    from mwemt.testsets.testset import build_ted_testset, read_ted_pairs

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


def _source_mwe_arguments(b, *, lexicon_help: str, required: bool = False, mwe_context: str = "none") -> None:
    """The options that find source MWEs, as `mwemt annotate` has them (`table` and `build` share them)."""
    from mwemt.cli.annotate import add_identification_arguments
    from mwemt.formats import LEXICON_FORMATS
    from mwemt.preprocess.lemmatize import BACKENDS

    ann = b.add_argument_group("source MWEs (as `mwemt annotate`)")
    ann.add_argument("--lexicon", "-l", required=required, help=lexicon_help)
    ann.add_argument("--lexicon-format", default="auto", choices=LEXICON_FORMATS,
                     help="lexicon file format (default: auto)")
    ann.add_argument("--lang", default="en", help="source language (default: %(default)s)")
    ann.add_argument("--tgt-lang", default="it", help="target language (default: %(default)s)")
    ann.add_argument("--lemmatizer", default="simplemma", choices=BACKENDS,
                     help="lemmatizer backend (default: %(default)s)")
    add_identification_arguments(ann, mwe_context=mwe_context)
    ann.add_argument("--pretokenized", action="store_true",
                     help="both sides are tokenized: split on spaces, no Moses tokenization")
