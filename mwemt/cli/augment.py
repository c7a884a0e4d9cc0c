"""`mwemt augment`: build new corpus prefixes with MWE dictionary pairs or back-translated MWE sentences."""

from __future__ import annotations

import argparse
import sys
from textwrap import fill

from mwemt.augment.dictionary import DICT_FORMATS, FORMS, OUTPUT_FORMS
from mwemt.augment.ratio import MAX_RATIO
from mwemt.cli.argtypes import float_range, int_range, language_code, non_negative_int, positive_int, seed
from mwemt.formats import LEXICON_FORMATS, LEXICON_SIDES
from mwemt.preprocess.lemmatize import BACKENDS

DESCRIPTION = """\
Add synthetic MWE training pairs to a parallel corpus (Zaninello & Birch 2020). A corpus PREFIX
means PREFIX.SRC + PREFIX.TGT (--src-lang/--tgt-lang, default en/it). The output is always a new
prefix, OUT.SRC/OUT.TGT = the training pairs followed by the synthetic pairs, with OUT.manifest.json
(input hashes, seed, counts at every filter step, achieved ratio, origin of every synthetic pair).

The ratio is synthetic pairs / original training pairs: --ratio 0.10 on 300,000 pairs adds 30,000."""

EPILOG = """\
examples:
  mwemt augment split --tsv eng-ita.anki.tsv --out data/tatoeba --valid-size 2000 --test-size 2000
  mwemt augment dictionary --dict en-ita.multiwordnet.tsv --mwe-only --train data/tatoeba/train \\
      --ratio 0.10 --seed 1 --out data/tatoeba/train.dict
  mwemt augment backtranslate --mono europarl.it.gz --target-lexicon en-ita.multiwordnet.tsv \\
      --reverse-model models/it-en --train data/tatoeba/train --ratio 0.02 --beam 5 --tag '<BT>' \\
      --out data/tatoeba/train.bt

Run 'mwemt augment ACTION --help' for the options of each action."""


def _corpus_args(p: argparse.ArgumentParser, ratio: float) -> None:
    p.add_argument("--train", required=True, metavar="PREFIX", help="training corpus prefix (PREFIX.SRC, PREFIX.TGT)")
    p.add_argument("--out", required=True, metavar="PREFIX",
                   help="new corpus prefix to write; never one of the inputs")
    p.add_argument("--ratio", type=float_range(above=0, maximum=MAX_RATIO), default=ratio,
                   help="synthetic pairs / original training pairs (default: %(default)s)")
    p.add_argument("--seed", type=seed(), default=1, help="seed for sampling and ordering (default: %(default)s)")
    p.add_argument("--src-lang", default="en", type=language_code, help="source language code (default: %(default)s)")
    p.add_argument("--tgt-lang", default="it", type=language_code, help="target language code (default: %(default)s)")
    p.add_argument("--lemmatizer", default="simplemma", choices=BACKENDS,
                   help="lemmatizer backend (default: %(default)s)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summary on stderr")


def configure(p: argparse.ArgumentParser) -> None:
    p.description = DESCRIPTION
    p.epilog = EPILOG
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    fmt = argparse.RawDescriptionHelpFormatter

    s = sub.add_parser("split", formatter_class=fmt, help="deterministic train/valid/test split of a TSV corpus",
                       description=fill("Split a source<TAB>target file into OUT/{train,valid,test}.{SRC,TGT} "
                                   "and OUT/split.manifest.json. Pairs sharing a (case-folded) source "
                                   "sentence always land in the same split, so test sources never occur "
                                   "in training.", 100),
                       epilog="example:\n  mwemt augment split --tsv eng-ita.anki.tsv --out data/tatoeba")
    s.add_argument("--tsv", required=True, help="source<TAB>target file, one pair per line")
    s.add_argument("--out", required=True, metavar="DIR", help="output directory")
    s.add_argument("--valid-size", type=non_negative_int(), default=2000, help="at least this many pairs (default: %(default)s)")
    s.add_argument("--test-size", type=non_negative_int(), default=2000, help="at least this many pairs (default: %(default)s)")
    s.add_argument("--seed", type=seed(), default=1, help="seed of the group shuffle (default: %(default)s)")
    s.add_argument("--src-lang", default="en", type=language_code, help="language of column 1 (default: %(default)s)")
    s.add_argument("--tgt-lang", default="it", type=language_code, help="language of column 2 (default: %(default)s)")

    d = sub.add_parser(
        "dictionary", formatter_class=fmt, help="add bilingual dictionary entries as pairs",
        description=fill("Add bilingual (MWE) dictionary entries as parallel pairs: one pair per source "
                    "synonym x target synonym, deduplicated (on lemmas, ignoring punctuation) against "
                    "each other and against the training pairs. With fewer unique pairs than the ratio "
                    "asks for, every pair is repeated and a seeded sample fills the rest (manifest: "
                    "ratio.mode = repeat); otherwise a seeded sample is taken (mode = sample).", 100),
        epilog="dictionary formats (--dict-format, default auto):\n"
               "  bilingual   source<TAB>target1; target2   (';' separates synonyms on either side)\n"
               "  wn-aligned  the EN-xx synset-aligned TSV (english_lemmas / xx_lemmas, ' | '-separated);\n"
               "              'GAP!' placeholders are skipped\n\n"
               "example:\n  mwemt augment dictionary --dict en-ita.multiwordnet.tsv --mwe-only \\\n"
               "      --train data/tatoeba/train --ratio 0.10 --seed 1 --out data/tatoeba/train.dict")
    d.add_argument("--dict", required=True, help="dictionary file")
    d.add_argument("--dict-format", default="auto", choices=DICT_FORMATS,
                   help="format of --dict: bilingual = source<TAB>target1; target2 lines; wn-aligned = the "
                        "EN-xx synset-aligned TSV (header pwn30_synset ...); auto = wn-aligned when the header "
                        "says so, else bilingual (default: %(default)s; see the formats below)")
    d.add_argument("--dict-side", default="source", choices=LEXICON_SIDES,
                   help="which dictionary side is the corpus source language: source = first/English "
                        "column (default: %(default)s)")
    d.add_argument("--mwe-only", action="store_true",
                   help="keep only entries whose source side has two or more words")
    d.add_argument("--output-form", default="dictionary", choices=OUTPUT_FORMS,
                   help="write entries as in the dictionary (whitespace/NFC-normalized) or as lemmatized "
                        "lowercase text (default: %(default)s)")
    d.add_argument("--drop-identical", action="store_true",
                   help="drop pairs whose two sides are the same text (Latin taxa such as Barbarea vulgaris)")
    d.add_argument("--sense-filter", action="store_true",
                   help="keep a pair only when --table attests its translation for the MWE by alignment of "
                        "parallel text (approximately: inflection allowed)")
    d.add_argument("--table", metavar="TABLE", default=None,
                   help="MWE translation table (JSONL, mwemt.testsets.mwe_table) for --sense-filter")
    d.add_argument("--sense-min-count", type=non_negative_int(), default=1, metavar="N",
                   help="least alignment count of the attesting translation (default: %(default)s)")
    d.add_argument("--form", default="entries", choices=FORMS,
                   help="add the entries themselves, sentence pairs of --pool that show them in context, or both "
                        "(default: %(default)s)")
    d.add_argument("--pool", metavar="PREFIX", default=None,
                   help="parallel text that is not training data (PREFIX.SRC + PREFIX.TGT), for --form "
                        "sentences/both; pairs sharing a sentence with --train are skipped")
    d.add_argument("--max-sentences-per-pair", type=positive_int(), default=3, metavar="N",
                   help="context sentence pairs per dictionary pair at most (default: %(default)s)")
    d.add_argument("--no-repeat", action="store_true",
                   help="use each candidate once and report the shortfall, instead of repeating candidates "
                        "to reach the ratio")
    _corpus_args(d, 0.10)

    b = sub.add_parser(
        "backtranslate", formatter_class=fmt, help="add back-translated target sentences containing MWEs",
        description=fill("Select monolingual target sentences that contain at least one MWE of a target "
                    "lexicon, translate them with a reverse (TGT->SRC) model trained by 'mwemt train', "
                    "drop empty translations, copies of the input and extreme length ratios, and add "
                    "the pairs (synthetic source, real target). Candidates are translated in a seeded "
                    "random order until the ratio is reached.", 100),
        epilog="example:\n  mwemt augment backtranslate --mono europarl.it.gz \\\n"
               "      --target-lexicon en-ita.multiwordnet.tsv --reverse-model models/it-en \\\n"
               "      --train data/tatoeba/train --ratio 0.02 --tag '<BT>' --out data/tatoeba/train.bt\n\n"
               "A --tag such as <BT> must be a user-defined symbol of the subword model to stay one token.")
    b.add_argument("--mono", required=True, help="monolingual target-language text, one sentence a line (.gz ok)")
    b.add_argument("--target-lexicon", required=True, nargs="+", metavar="FILE",
                   help="MWE lexicon(s) of the target language; several files are used as one (their union)")
    b.add_argument("--lexicon-format", default="auto", choices=LEXICON_FORMATS,
                   help="format of --target-lexicon: list = one MWE per line (TAB columns after it optional); "
                        "bilingual = source<TAB>target lines; oewn = the OEWN MWE TSV; wn-aligned = the EN-xx "
                        "synset-aligned TSV (--lexicon-side picks its column); cupt = the MWEs annotated in a "
                        "PARSEME .cupt file; lidioms = the LIdioms OntoLex Turtle (.ttl); epie = the EPIE lists "
                        "(Formal_idioms.txt, Static_idioms.txt or their directory); "
                        "auto = by extension, name and header, else list (default: %(default)s)")
    b.add_argument("--lexicon-side", default="target", choices=LEXICON_SIDES,
                   help="for wn-aligned lexicons: the column holding the target language "
                        "(default: %(default)s, i.e. the xx_lemmas column)")
    b.add_argument("--max-gap", type=non_negative_int(), default=0, help="gap allowed inside target MWEs (default: 0)")
    how = b.add_mutually_exclusive_group(required=True)
    how.add_argument("--reverse-model", metavar="DIR", help="TGT->SRC model directory written by 'mwemt train'")
    how.add_argument("--translations", metavar="FILE",
                     help="back-translations made elsewhere, line-aligned with --mono (instead of a model)")
    b.add_argument("--beam", type=positive_int(), default=5, help="beam size (default: %(default)s)")
    b.add_argument("--sampling", action="store_true", help="sample from the model instead of beam search")
    b.add_argument("--topk", type=int_range(1, special={-1: "all"}), default=-1, help="with --sampling, sample from the top K (-1: all)")
    b.add_argument("--batch-size", type=positive_int(), default=32, help="sentences per batch (default: %(default)s)")
    b.add_argument("--tag", default="", help="prefix for every synthetic source, e.g. '<BT>' (default: none)")
    b.add_argument("--max-length-ratio", type=float_range(1.0), default=2.0,
                   help="drop pairs whose token counts differ by more than this factor (default: %(default)s)")
    b.add_argument("--max-tokens", type=positive_int(), default=80,
                   help="skip monolingual sentences longer than this (default: %(default)s)")
    _corpus_args(b, 0.02)

    r = sub.add_parser(
        "backtranslate-real", formatter_class=fmt,
        help="the back-translation control: the same selected target sentences with their real sources",
        description=fill("The backtranslation-real control: take the target sentences a back-translation "
                         "run selected (its manifest), in the same order, and pair them with their real "
                         "source sentences from --mono-source, line-aligned with --mono (e.g. both sides of "
                         "the pairs a training sample left out). Only the source side differs from "
                         "back-translation.", 100),
        epilog="example:\n  mwemt augment backtranslate-real --bt-manifest data/train.bt.manifest.json \\\n"
               "      --mono rest.it --mono-source rest.en --train data/train --out data/train.bt-real")
    r.add_argument("--bt-manifest", required=True, help="OUT.manifest.json of 'mwemt augment backtranslate'")
    r.add_argument("--mono", required=True, help="the monolingual target text the back-translation read")
    r.add_argument("--mono-source", required=True, help="its real source sentences, line-aligned with --mono")
    r.add_argument("--train", required=True, metavar="PREFIX", help="the training corpus prefix the back-translation "
                                                                    "augmented")
    r.add_argument("--out", required=True, metavar="PREFIX", help="new corpus prefix to write")
    r.add_argument("--tag", default=None, help="source prefix (default: the back-translation's own --tag)")
    r.add_argument("--src-lang", default="en", type=language_code, help="source language code (default: %(default)s)")
    r.add_argument("--tgt-lang", default="it", type=language_code, help="target language code (default: %(default)s)")
    r.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")


def run(args: argparse.Namespace) -> int:
    from mwemt.errors import MwemtError

    if args.action == "split":
        from mwemt.augment.corpus import split_tsv

        m = split_tsv(args.tsv, args.out, valid_size=args.valid_size, test_size=args.test_size,
                      seed=args.seed, src_lang=args.src_lang, tgt_lang=args.tgt_lang)
        print(f"split {m['counts']['rows']} pairs into train {m['counts']['train']}, valid "
              f"{m['counts']['valid']}, test {m['counts']['test']} under {args.out}", file=sys.stderr)
        return 0
    progress = not args.quiet
    if args.action == "dictionary":
        from mwemt.augment.dictionary import DictionaryConfig, augment_with_dictionary

        config = DictionaryConfig(ratio=args.ratio, seed=args.seed, fmt=args.dict_format,
                                  dict_side=args.dict_side, mwe_only=args.mwe_only,
                                  output_form=args.output_form, lemmatizer=args.lemmatizer,
                                  src_lang=args.src_lang, tgt_lang=args.tgt_lang,
                                  drop_identical=args.drop_identical, sense_filter=args.sense_filter,
                                  sense_min_count=args.sense_min_count, form=args.form,
                                  max_sentences_per_pair=args.max_sentences_per_pair, allow_repeat=not args.no_repeat)
        if args.sense_filter and not args.table:
            raise MwemtError("--sense-filter needs --table (an MWE translation table)")
        if args.form != "entries" and not args.pool:
            raise MwemtError(f"--form {args.form} needs --pool (parallel text that is not training data)")
        table = None
        if args.table:
            from mwemt.testsets.mwe_table import MweTranslationTable

            table = MweTranslationTable.read(args.table)
        m = augment_with_dictionary(args.dict, args.train, args.out, config, progress=progress, table=table,
                                    table_path=args.table, pool_prefix=args.pool)
        r = m["ratio"]
        if r["shortfall"]:
            print(f"warning: only {m['counts']['synthetic_pairs']} of {r['requested_pairs']} requested pairs "
                  f"(--no-repeat)", file=sys.stderr)
        if progress:
            rep = m["report"]
            print(f"{m['counts']['unique_candidates']} unique dictionary pairs -> {r['mode']}; "
                  f"added {m['counts']['synthetic_pairs']} ({rep['sentence_pairs']} sentence pairs, "
                  f"{rep['entry_pairs']} entries, {rep['distinct_entries']} distinct entries) to "
                  f"{r['training_pairs']} training pairs: ratio {r['achieved']:.4f} (requested {r['requested']}); "
                  f"manifest {args.out}.manifest.json", file=sys.stderr)
        return 0
    if args.action == "backtranslate-real":
        from mwemt.augment.backtranslate import augment_with_real_translations

        m = augment_with_real_translations(args.bt_manifest, args.mono_source, args.mono, args.train, args.out,
                                           src_lang=args.src_lang, tgt_lang=args.tgt_lang, tag=args.tag)
        if progress:
            print(f"added the real sources of {m['counts']['synthetic_pairs']} back-translated sentences to "
                  f"{m['ratio']['training_pairs']} training pairs: ratio {m['ratio']['achieved']:.4f}; manifest "
                  f"{args.out}.manifest.json", file=sys.stderr)
        return 0
    if args.action == "backtranslate":
        from mwemt.augment.backtranslate import (
            BacktranslationConfig,
            NmtReverseModel,
            PrecomputedTranslations,
            augment_with_backtranslation,
        )

        if args.beam < 1:
            raise MwemtError("--beam must be at least 1")
        if args.topk != -1 and not args.sampling:
            raise MwemtError("--topk only applies with --sampling")
        config = BacktranslationConfig(ratio=args.ratio, seed=args.seed, tag=args.tag,
                                       max_length_ratio=args.max_length_ratio, max_tokens=args.max_tokens,
                                       lexicon_format=args.lexicon_format, lexicon_side=args.lexicon_side,
                                       lemmatizer=args.lemmatizer, max_gap=args.max_gap,
                                       src_lang=args.src_lang, tgt_lang=args.tgt_lang)
        if args.translations:
            translator = PrecomputedTranslations(args.mono, args.translations)
        else:
            translator = NmtReverseModel(args.reverse_model, beam=args.beam, sampling=args.sampling,
                                         topk=args.topk, seed=args.seed, batch_size=args.batch_size)
        m = augment_with_backtranslation(args.mono, args.target_lexicon, args.train, args.out, translator,
                                         config, progress=progress)
        r = m["ratio"]
        if r["shortfall"]:
            print(f"warning: only {m['counts']['synthetic_pairs']} of {r['requested_pairs']} requested pairs "
                  f"survived selection and filtering", file=sys.stderr)
        if progress:
            sel, tr = m["counts"]["selection"], m["counts"]["translation"]
            print(f"{sel['with_mwe']} of {sel['lines']} monolingual lines contain a target MWE; translated "
                  f"{tr['translated']}, rejected {tr['rejected']}; added {m['counts']['synthetic_pairs']} to "
                  f"{r['training_pairs']} training pairs: ratio {r['achieved']:.4f} (requested "
                  f"{r['requested']}); manifest {args.out}.manifest.json", file=sys.stderr)
        return 0
    raise MwemtError(f"unknown augment action {args.action!r}")
