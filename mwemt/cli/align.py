"""`mwemt align`: word alignment (eflomal, both directions, symmetrized) as Pharaoh ``i-j`` lines.

The options shared with `mwemt testset build` (extra text, aligner settings, cache) are defined
here once, by `add_aligner_arguments`, and read back by `aligner_settings` and `read_extra_args`.
"""

from __future__ import annotations

import argparse
import sys
import time

from mwemt.cli.argtypes import positive_int
from mwemt.errors import MwemtError

EPILOG = """\
output: one line per sentence pair, "i-j" = source token i is aligned to target token j (0-based),
in the tokenization of the input: Moses tokens (sacremoses, --lang/--tgt-lang) unless the side is
marked --src-tokenized/--tgt-tokenized (split on spaces). With --testset the source tokens are the
test set's (source.split()), so the output is what `mwemt score --align` expects.

examples:
  mwemt align --src test.en --tgt test.it --tgt-lang it --extra train.en train.it -o test.align
  mwemt align --tsv pairs.tsv --tgt-lang it --extra-tsv eng-ita.anki.tsv --extra-max 50000 \\
      --symmetrization intersection -o pairs.align --report pairs.align.json
  mwemt align --testset test.jsonl --tgt system.it --tgt-lang it --extra train.en train.it -o system.align
  mwemt score --hyp system.it --testset test.jsonl --metrics mwe --lang it --align system.align

eflomal samples from a random state it seeds itself, so two uncached runs can differ on some links.
Alignments are cached by the hash of the tokenized text, extra text and settings (--cache, default
$MWEMT_CACHE/align or ~/.cache/mwemt/align): the same inputs give the same alignment, computed once.
A pair of more than 1024 tokens on a side is not aligned (an empty output line); an input line of
more than 16,384 characters is refused, with its file and line, before any work."""


def add_aligner_arguments(p: argparse.ArgumentParser) -> None:
    """Extra parallel text, eflomal settings and the cache: shared by `align` and `testset build`."""
    from mwemt.testsets.align import DEFAULT_SYMMETRIZATION, SYMMETRIZATIONS, AlignConfig

    g = p.add_argument_group("alignment")
    g.add_argument("--extra", nargs=2, metavar=("SRC", "TGT"),
                   help="extra parallel text (two line-aligned raw-text files) for better alignment statistics; "
                        "only the input's links are written")
    g.add_argument("--extra-tsv", metavar="FILE", help="extra parallel text as source<TAB>target lines")
    g.add_argument("--extra-max", type=positive_int(), metavar="N", help="use only the first N extra pairs")
    g.add_argument("--symmetrization", default=DEFAULT_SYMMETRIZATION, choices=SYMMETRIZATIONS,
                   help="how forward and reverse links are combined (default: %(default)s)")
    g.add_argument("--samplers", type=positive_int(64), default=AlignConfig.samplers,
                   help="eflomal's independent samplers: more is steadier, slower (default: %(default)s)")
    cache = g.add_mutually_exclusive_group()   # a cache directory and no cache contradict each other
    cache.add_argument("--cache", metavar="DIR", help="alignment cache directory (default: $MWEMT_CACHE/align "
                                                       "or ~/.cache/mwemt/align)")
    cache.add_argument("--no-cache", action="store_true", help="neither read nor write the alignment cache")


def aligner_settings(args: argparse.Namespace):
    """(AlignConfig, cache directory or None) from the arguments of `add_aligner_arguments`."""
    import logging

    from mwemt.testsets.align import AlignConfig, default_cache_dir

    logging.getLogger("eflomal").setLevel(logging.WARNING)  # it logs every preparation step at INFO
    config = AlignConfig(samplers=args.samplers)
    cache = None if args.no_cache else (args.cache or default_cache_dir())
    return config, cache


def read_extra_args(args: argparse.Namespace, src_lang: str, tgt_lang: str):
    """The extra parallel text as (source token lists, target token lists), or None."""
    from mwemt.testsets.align import read_extra, tokenize_side

    if args.extra and args.extra_tsv:
        raise MwemtError("give --extra SRC TGT or --extra-tsv FILE, not both")
    if args.extra_max is not None and args.extra_max < 1:
        raise MwemtError("--extra-max must be at least 1")
    if args.extra:
        return read_extra(args.extra[0], args.extra[1], src_lang, tgt_lang, limit=args.extra_max)
    if args.extra_tsv:
        from mwemt.augment.corpus import iter_tsv_pairs

        pairs = []
        for _, s, t in iter_tsv_pairs(args.extra_tsv):
            if args.extra_max is not None and len(pairs) >= args.extra_max:
                break
            pairs.append((s, t))
        return tokenize_side([s for s, _ in pairs], src_lang, False), tokenize_side([t for _, t in pairs], tgt_lang, False)
    return None


def extra_inputs(args: argparse.Namespace) -> dict[str, str]:
    """The extra text's files, for the provenance of a report."""
    if args.extra:
        return {"extra_src": args.extra[0], "extra_tgt": args.extra[1]}
    return {"extra_tsv": args.extra_tsv} if args.extra_tsv else {}


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    src = p.add_argument_group("input (one of --src/--tgt, --tsv, --testset/--tgt)")
    src.add_argument("--src", help="source sentences, one per line")
    src.add_argument("--tgt", help="target sentences, one per line (with --testset: hypotheses or references)")
    src.add_argument("--tsv", help="source<TAB>target lines instead of --src/--tgt")
    src.add_argument("--testset", help="MWE test set (JSONL): its tokenized sources are the source side")
    p.add_argument("--lang", default="en", help="source language for Moses tokenization (default: %(default)s)")
    p.add_argument("--tgt-lang", default="it", help="target language for Moses tokenization (default: %(default)s)")
    p.add_argument("--src-tokenized", action="store_true", help="the source is tokenized: split on spaces")
    p.add_argument("--tgt-tokenized", action="store_true", help="the target is tokenized: split on spaces")
    add_aligner_arguments(p)
    p.add_argument("--output", "-o", default="-", help="Pharaoh output, written atomically (default: stdout)")
    p.add_argument("--report", help="write settings, input hashes, signature and counts as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")


def read_input_pairs(args: argparse.Namespace) -> tuple[list[str], list[str], str]:
    """Source and target lines of `mwemt align`, and a name for the source in messages."""
    from mwemt.errors import InputError
    from mwemt.fileio import iter_parallel, read_lines

    given = [name for name, v in (("--tsv", args.tsv), ("--testset", args.testset), ("--src", args.src)) if v]
    if len(given) != 1:
        raise MwemtError("give exactly one of --src (with --tgt), --tsv or --testset (with --tgt)")
    if args.tsv:
        if args.tgt:
            raise MwemtError("--tgt goes with --src or --testset, not --tsv")
        from mwemt.augment.corpus import iter_tsv_pairs

        rows = list(iter_tsv_pairs(args.tsv))
        return [s for _, s, _ in rows], [t for _, _, t in rows], args.tsv
    if not args.tgt:
        raise MwemtError(f"{given[0]} needs --tgt")
    if args.testset:
        from mwemt.formats import read_testset

        sources = [it.source for it in read_testset(args.testset)]
        targets = read_lines(args.tgt)
        if len(targets) != len(sources):
            raise InputError(f"{len(targets)} lines but the test set has {len(sources)} sentences", args.tgt,
                             expected="one line per test-set sentence")
        return sources, targets, args.testset
    pairs = list(iter_parallel(args.src, args.tgt, allow_empty=True))
    return [s for s, _ in pairs], [t for _, t in pairs], args.src


def check_input_lengths(args: argparse.Namespace, src_lines: list[str], tgt_lines: list[str]) -> None:
    """Refuse a line over `MAX_LINE_CHARS` characters before any work: eflomal could not align it anyway
    (at most `MAX_TOKENS` tokens), and tokenizing and aligning it only costs time."""
    from mwemt.fileio import check_line_lengths
    from mwemt.testsets.align import MAX_LINE_CHARS, MAX_TOKENS

    why = f"eflomal aligns sentences of at most {MAX_TOKENS} tokens"
    src_path = args.tsv or args.testset or args.src
    tgt_path = args.tsv or args.tgt
    check_line_lengths(src_lines, MAX_LINE_CHARS, src_path, why=why)
    check_line_lengths(tgt_lines, MAX_LINE_CHARS, tgt_path, why=why)


def run(args: argparse.Namespace) -> int:
    from mwemt.fileio import write_lines
    from mwemt.provenance import manifest, write_json
    from mwemt.testsets.align import align_directional, format_pharaoh, signature, tokenize_side

    src_lines, tgt_lines, _ = read_input_pairs(args)
    check_input_lengths(args, src_lines, tgt_lines)
    src = tokenize_side(src_lines, args.lang, args.src_tokenized or bool(args.testset))
    tgt = tokenize_side(tgt_lines, args.tgt_lang, args.tgt_tokenized)
    extra = read_extra_args(args, args.lang, args.tgt_lang)
    config, cache = aligner_settings(args)
    started = time.perf_counter()
    result = align_directional(src, tgt, extra=extra, config=config, cache_dir=cache)
    links = result.symmetrized(src, tgt, args.symmetrization)
    seconds = time.perf_counter() - started
    write_lines(args.output, (format_pharaoh(a) for a in links))
    sig = signature(config, args.symmetrization, len(extra[0]) if extra else 0)
    if not args.quiet:
        how = "from the cache" if result.cached else f"in {seconds:.1f} s"
        print(f"aligned {len(src)} pairs (+{len(extra[0]) if extra else 0} extra) {how}: "
              f"{sum(len(a) for a in links)} links; {len(result.skipped)} pairs not aligned (empty or "
              f"too long)\n{sig}", file=sys.stderr)
    if args.report:
        inputs = {k: v for k, v in (("src", args.src), ("tgt", args.tgt), ("tsv", args.tsv),
                                    ("testset", args.testset)) if v}
        config_dict = {k: v for k, v in vars(args).items() if not k.startswith("_")}
        write_json(args.report, manifest(
            "align", inputs={**inputs, **extra_inputs(args)}, config=config_dict, signature=sig,
            seed="none: eflomal seeds itself; the cache key makes reruns reproducible", cache_key=result.key,
            cached=result.cached, pairs=len(src), extra_pairs=len(extra[0]) if extra else 0,
            not_aligned_pairs=[k + 1 for k in result.skipped], links=sum(len(a) for a in links),
            seconds=round(seconds, 2)))
    return 0
