"""`mwemt translate`: raw source text in, detokenized translations out, with a model directory."""

from __future__ import annotations

import argparse
import sys

from mwemt.cli.argtypes import int_range, non_negative_int, positive_int, seed, workers
from mwemt.nmt.config import DEVICES
from mwemt.nmt.translate import CONSTRAINT_ORDERS, DECODE_PRECISIONS, INPUT_FORMATS, SOURCE_MWES

EPILOG = """\
examples:
  echo "She took care of the dog." | mwemt translate --model runs/nmt-tiny/model
  mwemt translate --model runs/nmt-tiny/model -i test.en -o test.hyp.it --beam 5 --batch-size 64
  # bf16 autocast (CPUs with avx512_bf16/amx); bench/decode_speed.py measures speed and BLEU
  mwemt translate --model runs/nmt-tiny/model -i test.en -o test.hyp.it --precision bf16
  # back-translation style sampling, reproducible
  mwemt translate --model runs/it-en/model -i mono.it -o synth.en --sampling --topk 10 --seed 1
  # ablation: the IOB model told that no source word is part of an MWE (every tag O)
  mwemt translate --model runs/tatoeba-iob-tiny/model -i test.en -o test.no-mwes.it --source-mwes none
  # inline hints (a model of encoding hints): each source MWE gets its table translation, never the reference
  mwemt translate --model runs/hints/model -i test.en -o test.hyp.it --hint-table mwe-table.jsonl
  # lexically constrained decoding (any model, e.g. the baseline): each source MWE the table lists must
  # appear in the output as its best translation; bench/constrained_decode.py measures the slowdown
  mwemt translate --model runs/baseline/model -i test.en -o test.hyp.it --constraints mwe-table.jsonl

The source is tokenized, lemmatized and MWE-annotated exactly as the training data was (the
model directory's preprocess.json and lexicon copy), segmented with its sentencepiece model,
decoded with beam search on length-sorted batches, then de-segmented and detokenized.
--input-format annotated takes lines as written by `mwemt annotate` in the model's encoding.
A line longer than 16,384 characters, or than the model's source positions once segmented, is
refused (with its file and line) before any decoding: split it into sentences."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--model", "-m", required=True, help="model directory written by `mwemt train`")
    p.add_argument("--input", "-i", default="-", help="source text, one sentence per line (default: stdin)")
    p.add_argument("--output", "-o", default="-", help="translations (default: stdout)")
    p.add_argument("--checkpoint", default=None, help="checkpoint file name (default: checkpoint_best.pt)")
    p.add_argument("--beam", type=positive_int(), default=5, help="beam size (default: %(default)s)")
    p.add_argument("--batch-size", type=positive_int(), default=128,
                   help="sentences per batch (default: %(default)s; bench/decode_speed.py: 1.22x batch 32, same output)")
    p.add_argument("--sampling", action="store_true", help="sample instead of beam search")
    p.add_argument("--topk", type=int_range(1, special={-1: "all"}), default=-1, help="with --sampling: sample from the k best tokens")
    p.add_argument("--seed", type=seed(), default=None, help="random seed (for --sampling)")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="raw",
                   help="raw text (default), Moses-tokenized text, or lines from `mwemt annotate`")
    p.add_argument("--source-mwes", choices=SOURCE_MWES, default="identified",
                   help="what the model is told about the source's MWEs: what the lexicon identifies (default), "
                        "or none (IOB: every tag O and every lemma factor the word's lemma; wws: nothing joined)")
    p.add_argument("--lexicon", default=None, help="the MWE lexicon, if the model directory lacks its copy")
    p.add_argument("--hint-table", default=None, metavar="TABLE",
                   help="a model of encoding hints/hints-lemma: MWE translation table (JSONL) whose best "
                        "translation of each identified source MWE is written inline as its hint "
                        "(never the reference); without it no word is hinted")
    p.add_argument("--hint-min-count", type=non_negative_int(), default=1, metavar="N",
                   help="least alignment count of a table translation used as a hint; dictionary "
                        "translations always qualify (default: %(default)s)")
    p.add_argument("--hint-sources", nargs="+", default=["aligned", "dictionary"],
                   choices=["aligned", "dictionary"], help="table translations used as hints (default: both)")
    p.add_argument("--constraints", default=None, metavar="TABLE",
                   help="lexically constrained decoding (fairseq's constrained beam search) with this MWE "
                        "translation table (JSONL): the source MWEs the table lists (its multi-word keys, "
                        "lemmatized as the model's training source) must appear in the output as their best "
                        "translation, segmented by the model's target subword model")
    p.add_argument("--constraint-order", choices=CONSTRAINT_ORDERS, default="unordered",
                   help="with --constraints: anywhere in the output (default) or in source order")
    p.add_argument("--constraint-min-count", type=non_negative_int(), default=1, metavar="N",
                   help="least alignment count of a table translation used as a constraint; dictionary "
                        "translations always qualify (default: %(default)s)")
    p.add_argument("--constraint-sources", nargs="+", default=["aligned", "dictionary"],
                   choices=["aligned", "dictionary"], help="table translations used as constraints (default: both)")
    p.add_argument("--threads", type=workers(zero="one per core"), default=1,
                   help="torch CPU threads; 0 = one per core (default: %(default)s, fastest on a shared machine)")
    p.add_argument("--device", choices=DEVICES, default="auto",
                   help="where to decode (default: a GPU if there is one)")
    p.add_argument("--precision", choices=DECODE_PRECISIONS, default="fp32",
                   help="arithmetic for decoding: fp32 (default), bf16 autocast (CPUs with avx512_bf16/amx_bf16) "
                        "or int8 dynamic quantization (CPU); neither was faster than fp32 for the small "
                        "preset, and int8 cost 1.1 BLEU (bench/decode_speed.py)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from mwemt.fileio import read_lines, write_lines
    from mwemt.nmt.translate import Translator, check_source_lengths

    source = "<stdin>" if args.input == "-" else args.input
    lines = read_lines(args.input)
    check_source_lengths(lines, source)  # before the model loads: a line too long to decode is refused now
    translator = Translator.load(args.model, checkpoint=args.checkpoint, threads=args.threads or None,
                                 lexicon=args.lexicon, device=args.device,
                                 precision=args.precision)
    hints = None
    if args.hint_table:
        from mwemt.errors import MwemtError
        from mwemt.preprocess.hints import HintConfig

        if args.hint_min_count < 0:
            raise MwemtError("--hint-min-count must be 0 or more")
        hints = translator.hint_inserter(args.hint_table, HintConfig(min_count=args.hint_min_count,
                                                                     sources=tuple(args.hint_sources)))
    constraints = None
    if args.constraints:
        constraints = translator.table_constraints(lines, args.constraints, min_count=args.constraint_min_count,
                                                   sources=args.constraint_sources, input_format=args.input_format,
                                                   source=source)
    hyps = translator.translate(lines, beam=args.beam, batch_size=args.batch_size, sampling=args.sampling,
                                topk=args.topk, seed=args.seed, input_format=args.input_format,
                                source_mwes=args.source_mwes,
                                progress=not args.quiet and args.output != "-",
                                source=source, hints=hints, constraints=constraints,
                                constraint_order=args.constraint_order)
    if translator.unconstrained_lines:
        lines_ = ", ".join(str(i + 1) for i in translator.unconstrained_lines[:10])
        print(f"mwemt translate: {len(translator.unconstrained_lines)} line(s) could not meet their constraints within "
              f"the length limit and were translated without them: line {lines_}"
              + (" ..." if len(translator.unconstrained_lines) > 10 else ""), file=sys.stderr)
    write_lines(args.output, hyps)
    return 0
