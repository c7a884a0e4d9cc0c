"""`mwemt subword train|apply|decode`: sentencepiece on pretokenized text, factors carried onto pieces."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mwemt.cli.argtypes import float_range, int_range, non_negative_int, positive_int, seed, workers
from mwemt.errors import MwemtError
from mwemt.preprocess.subword import IOB_MODES, MODEL_TYPES

EPILOG = """\
examples:
  # one joint model for both sides (-> spm.model, spm.vocab, spm.manifest.json)
  mwemt subword train --input train.en train.it --joint --model-prefix spm --vocab-size 8000
  # separate models: no --joint, one model per input (-> spm.en.model, spm.it.model)
  mwemt subword train --input train.en train.it --model-prefix spm --vocab-size 8000
  # IOB-factored source (surface|lemma|tag): train on the surface factor only
  mwemt subword train --input train.iob.en --factored --model-prefix spm.src --vocab-size 8000
  mwemt subword apply --model spm.model -i train.en -o train.sp.en
  # words-with-spaces: joined MWEs seen 5+ times are single pieces (take_care_of -> ▁take_care_of)
  mwemt subword train --input train.wws.en train.it --joint --model-prefix spm --mwe-pieces-min-count 5
  mwemt subword apply --model spm.src.model -i train.iob.en -o train.sp.iob.en --factors 3 --subword-iob bio
  mwemt subword decode --model spm.model -i hyp.sp.it -o hyp.it

Input is pretokenized text (tokens separated by spaces); '_' is an ordinary character, so
words-with-spaces tokens (walked_off) and the escapes &#124; &#95; &amp; round-trip exactly.
'decode' inverts 'apply' exactly for plain text. Use '-' for stdin/stdout. 'train' refuses, with its
file and line, a line over sentencepiece's limit of 4,192 bytes (which sentencepiece would drop)."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    sub = p.add_subparsers(dest="subword_command", metavar="ACTION", required=True)
    fmt = argparse.RawDescriptionHelpFormatter

    t = sub.add_parser("train", help="train a sentencepiece model (joint or one per input)",
                       description="Train sentencepiece on pretokenized text (identity normalization, "
                                   "byte fallback, factor escapes kept whole).",
                       epilog=EPILOG, formatter_class=fmt)
    t.add_argument("--input", "-i", nargs="+", required=True, help="training files (pretokenized)")
    t.add_argument("--model-prefix", "-m", required=True,
                   help="output prefix: PREFIX.model, PREFIX.vocab, PREFIX.manifest.json")
    t.add_argument("--joint", action="store_true",
                   help="one model on all inputs; without it each input gets PREFIX.<suffix>.model, "
                        "the suffix being the input's extension (train.en -> PREFIX.en.model)")
    t.add_argument("--vocab-size", type=int_range(10), default=8000, help="pieces in the vocabulary (default: %(default)s)")
    t.add_argument("--model-type", default="bpe", choices=MODEL_TYPES, help="(default: %(default)s)")
    t.add_argument("--seed", type=seed(), default=1, help="random seed, used for sampling (default: %(default)s)")
    t.add_argument("--character-coverage", type=float_range(above=0, maximum=1), default=1.0,
                   help="share of characters covered by the vocabulary (default: %(default)s)")
    t.add_argument("--input-sentence-size", type=non_negative_int(), default=0,
                   help="train on this many lines sampled with the seed; 0 = all (default: 0)")
    t.add_argument("--factored", action="store_true",
                   help="inputs are factored (surface|lemma|tag): train on the surface factor")
    t.add_argument("--no-byte-fallback", action="store_true",
                   help="no <0xNN> byte pieces (smaller vocabulary; unseen characters become <unk> in NMT)")
    t.add_argument("--no-split-by-unicode-script", action="store_true",
                   help="let pieces cross letter/punctuation boundaries, so '_' can merge into MWE pieces "
                        "(walked_off -> ▁walked_off); by default '_' is its own piece")
    t.add_argument("--user-defined-symbols", nargs="+", default=[], metavar="SYMBOL",
                   help="strings always kept as one piece, e.g. a back-translation tag <BT> "
                        "(&#124; &#95; &amp; &#9601; always are)")
    t.add_argument("--mwe-pieces-min-count", type=non_negative_int(), default=0, metavar="N",
                   help="joined MWE tokens (take_care_of) seen at least N times in the inputs become single "
                        "pieces (▁take_care_of); 0 = off, sentencepiece splits them at '_' (default: 0)")
    t.add_argument("--mwe-pieces-max", type=positive_int(), default=2000, metavar="K",
                   help="with --mwe-pieces-min-count: at most the K most frequent (default: %(default)s)")
    t.add_argument("--word-pieces", nargs="+", default=[], metavar="TOKEN",
                   help="whole tokens always kept as one word-start piece, e.g. take_care_of")
    t.add_argument("--quiet", "-q", action="store_true", help="no progress bar on stderr")
    t.add_argument("--threads", type=workers(), default=1,
                   help="training threads; unigram results depend on it (default: %(default)s)")

    a = sub.add_parser("apply", help="segment pretokenized (factored) text into pieces",
                       description="Segment pretokenized text; with --factors N every piece gets its "
                                   "word's factors, checked line by line.", epilog=EPILOG, formatter_class=fmt)
    a.add_argument("--model", required=True, help="PREFIX.model from 'mwemt subword train'")
    a.add_argument("--input", "-i", default="-", help="input file (default: stdin)")
    a.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")
    a.add_argument("--factors", type=positive_int(), default=1,
                   help="factors per token, the first being the surface (default: 1 = plain text)")
    a.add_argument("--subword-iob", default="copy", choices=IOB_MODES,
                   help="copy: every piece keeps the word's tag; bio: continuation pieces become I "
                        "(B -> B I I, I -> I I I, O -> O O O) (default: %(default)s)")
    a.add_argument("--tag-index", type=non_negative_int(), default=None,
                   help="0-based factor holding the IOB tag (default: the last factor)")
    a.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary on stderr")

    d = sub.add_parser("decode", help="pieces back to pretokenized text",
                       description="Join pieces back into tokens (exact inverse of apply on plain text).",
                       epilog=EPILOG, formatter_class=fmt)
    d.add_argument("--model", required=True, help="PREFIX.model the pieces came from")
    d.add_argument("--input", "-i", default="-", help="input file of pieces (default: stdin)")
    d.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")
    d.add_argument("--factors", type=positive_int(), default=None, metavar="N",
                   help="pieces are factored (piece|f1|..., N factors in all, as 'apply --factors N' writes): "
                        "decode each word from its pieces and keep the factors of its first piece; 1: plain "
                        "pieces, even where every piece holds a '|' (default: plain, and factored-looking "
                        "lines are refused)")
    d.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary on stderr")


def _separate_prefixes(inputs: list[str], prefix: str) -> list[str]:
    suffixes = [Path(p).suffix.lstrip(".") for p in inputs]
    if all(suffixes) and len(set(suffixes)) == len(suffixes):
        return [f"{prefix}.{s}" for s in suffixes]
    return [f"{prefix}.{i}" for i in range(1, len(inputs) + 1)]


def run(args: argparse.Namespace) -> int:
    from mwemt.preprocess.subword import SubwordModel, apply_file, decode_file, frequent_mwe_tokens

    if args.subword_command == "train":
        if args.threads < 1:
            raise MwemtError("--threads must be at least 1")
        if args.mwe_pieces_min_count < 0 or args.mwe_pieces_max < 1:
            raise MwemtError("--mwe-pieces-min-count must be 0 or more and --mwe-pieces-max at least 1")
        if args.joint or len(args.input) == 1:
            jobs = [(list(args.input), args.model_prefix)]
        else:
            jobs = [([p], pre) for p, pre in zip(args.input, _separate_prefixes(args.input, args.model_prefix))]
        for inputs, prefix in jobs:
            word_pieces = list(dict.fromkeys(args.word_pieces))
            if args.mwe_pieces_min_count:
                frequent = frequent_mwe_tokens(inputs, args.mwe_pieces_min_count, args.mwe_pieces_max,
                                               factored=args.factored)
                word_pieces += [t for t, _ in frequent if t not in word_pieces]
                if not args.quiet:
                    print(f"mwemt subword train: {len(frequent)} joined MWE tokens seen at least "
                          f"{args.mwe_pieces_min_count} times become single pieces", file=sys.stderr)
            model = SubwordModel.train(
                inputs, vocab_size=args.vocab_size, model_type=args.model_type, seed=args.seed,
                character_coverage=args.character_coverage, input_sentence_size=args.input_sentence_size,
                factored=args.factored, byte_fallback=not args.no_byte_fallback, num_threads=args.threads,
                split_by_unicode_script=not args.no_split_by_unicode_script, progress=not args.quiet,
                user_defined_symbols=args.user_defined_symbols, word_pieces=word_pieces)
            model.save(prefix, manifest_fields={"joint": len(inputs) > 1})
            print(f"mwemt subword train: {model.path} ({model.model_type}, {model.vocab_size} pieces, "
                  f"sha256 {model.sha256[:12]}) from {' + '.join(inputs)}", file=sys.stderr)
        return 0

    model = SubwordModel.load(args.model)
    if args.subword_command == "apply":
        stats = apply_file(model, args.input, args.output, factors=args.factors, iob=args.subword_iob,
                           tag_index=args.tag_index, progress=not args.quiet)
    else:
        stats = decode_file(model, args.input, args.output, factors=args.factors, progress=not args.quiet)
    if not args.quiet:
        print(f"mwemt subword {args.subword_command}: {json.dumps(stats.as_dict())}", file=sys.stderr)
    return 0
