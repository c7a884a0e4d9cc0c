"""`mwemt prepare`: binarize segmented text and its factor streams for fairseq."""

from __future__ import annotations

import argparse

from mwemt.cli.argtypes import int_range, language_code, non_negative_int, positive_int

EPILOG = """\
examples:
  # IOB-factored source (piece|lemma|tag, from `mwemt subword apply --factors 3`), joined dictionary
  mwemt prepare --src en --tgt it --trainpref text/train.sp --validpref text/valid.sp \\
      --destdir data-bin --joined-dictionary
  # plain (one-factor) source, separate dictionaries, reuse them for a test split later
  mwemt prepare --src en --tgt it --trainpref train.sp --validpref valid.sp --destdir data-bin
  mwemt prepare --src en --tgt it --testpref test.sp --destdir data-bin-test \\
      --src-dict data-bin/dict.en.txt --tgt-dict data-bin/dict.it.txt

Files are PREFIX.SRC and PREFIX.TGT. The number of source factors is read from the first
line (tokens 'a|b|c' have 3) unless --factors is given; every token of every line must have
it, and source and target must have the same number of lines (errors name file and line).
Output: dict.SRC.txt, dict.SRC.factorK.txt, dict.TGT.txt, SPLIT.SRC-TGT.* streams,
factors.json and manifest.json. Train on it with the plugin:
  fairseq-train data-bin --user-dir $(python -c 'import mwemt.nmt,os;print(os.path.dirname(mwemt.nmt.__file__))')/fairseq_plugin \\
      --task factored_translation --arch factored_transformer_tiny ..."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--src", "-s", required=True, type=language_code, help="source language code (file suffix)")
    p.add_argument("--tgt", "-t", required=True, type=language_code, help="target language code (file suffix)")
    p.add_argument("--trainpref", help="train files prefix (builds the dictionaries)")
    p.add_argument("--validpref", help="validation files prefix")
    p.add_argument("--testpref", help="test files prefix")
    p.add_argument("--destdir", "-o", required=True, help="output data directory")
    p.add_argument("--joined-dictionary", action="store_true",
                   help="one dictionary for source words and target (for --share-all-embeddings)")
    p.add_argument("--factors", type=positive_int(100, why="factors per token"), default=None, help="source factors per token (default: from line 1)")
    p.add_argument("--factor-names", default=None,
                   help="comma-separated names for messages (default: word,lemma,tag for 3 factors)")
    p.add_argument("--threshold", type=non_negative_int(), default=0,
                   help="map words seen fewer times to <unk> (default: %(default)s)")
    p.add_argument("--nwords", type=int_range(1, special={-1: "all"}), default=-1, help="keep the N most frequent words (default: all)")
    p.add_argument("--src-dict", help="reuse this source dictionary (factor dictionaries are taken from beside it)")
    p.add_argument("--tgt-dict", help="reuse this target dictionary")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an earlier prepare output in --destdir (only the files its manifest.json lists; "
                        "a --destdir holding inputs or other files is refused)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    from mwemt.errors import MwemtError
    from mwemt.nmt.prepare import DestinationNotEmpty, prepare

    splits = {}
    for name, pref in (("train", args.trainpref), ("valid", args.validpref), ("test", args.testpref)):
        if pref:
            splits[name] = (f"{pref}.{args.src}", f"{pref}.{args.tgt}")
    if not splits:
        raise MwemtError("give at least one of --trainpref, --validpref, --testpref")
    names = args.factor_names.split(",") if args.factor_names else None
    try:
        m = prepare(splits, args.destdir, src_lang=args.src, tgt_lang=args.tgt, joined=args.joined_dictionary,
                    factors=args.factors, factor_names=names, threshold=args.threshold, nwords=args.nwords,
                    src_dict=args.src_dict, tgt_dict=args.tgt_dict, overwrite=args.overwrite,
                    progress=not args.quiet)
    except DestinationNotEmpty as exc:
        raise MwemtError(f"--destdir {exc.destdir} holds an earlier `mwemt prepare` output; give --overwrite to "
                         "replace it (only the files prepare wrote there are replaced), or choose a new "
                         "directory") from None
    dicts = ", ".join(f"{k} {v}" for k, v in m["dictionaries"].items())
    print(f"prepared {args.destdir}: {m['config']['factors']} source factor(s); dictionaries: {dicts}")
    for split, s in m["splits"].items():
        unk = sum(s["unknown_source"].values())
        print(f"  {split}: {s['sentences']} sentences, {s['source_tokens']} source / {s['target_tokens']} "
              f"target tokens, {unk} source / {s['unknown_target']} target <unk>")
    return 0
