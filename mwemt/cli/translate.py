"""`mwemt translate`: raw source text in, detokenized translations out, with a model directory."""

from __future__ import annotations

import argparse

from mwemt.nmt.config import DEVICES
from mwemt.nmt.translate import DECODE_PRECISIONS, INPUT_FORMATS, SOURCE_MWES

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

The source is tokenized, lemmatized and MWE-annotated exactly as the training data was (the
model directory's preprocess.json and lexicon copy), segmented with its sentencepiece model,
decoded with beam search on length-sorted batches, then de-segmented and detokenized.
--input-format annotated takes lines as written by `mwemt annotate` in the model's encoding."""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--model", "-m", required=True, help="model directory written by `mwemt train`")
    p.add_argument("--input", "-i", default="-", help="source text, one sentence per line (default: stdin)")
    p.add_argument("--output", "-o", default="-", help="translations (default: stdout)")
    p.add_argument("--checkpoint", default=None, help="checkpoint file name (default: checkpoint_best.pt)")
    p.add_argument("--beam", type=int, default=5, help="beam size (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=128,
                   help="sentences per batch (default: %(default)s; bench/decode_speed.py: 1.22x batch 32, same output)")
    p.add_argument("--sampling", action="store_true", help="sample instead of beam search")
    p.add_argument("--topk", type=int, default=-1, help="with --sampling: sample from the k best tokens")
    p.add_argument("--seed", type=int, default=None, help="random seed (for --sampling)")
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="raw",
                   help="raw text (default), Moses-tokenized text, or lines from `mwemt annotate`")
    p.add_argument("--source-mwes", choices=SOURCE_MWES, default="identified",
                   help="what the model is told about the source's MWEs: what the lexicon identifies (default), "
                        "or none (IOB: every tag O and every lemma factor the word's lemma; wws: nothing joined)")
    p.add_argument("--lexicon", default=None, help="the MWE lexicon, if the model directory lacks its copy")
    p.add_argument("--threads", type=int, default=1,
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
    from mwemt.nmt.translate import Translator

    translator = Translator.load(args.model, checkpoint=args.checkpoint, threads=args.threads or None,
                                 lexicon=args.lexicon, device=args.device,
                                 precision=args.precision)
    lines = read_lines(args.input)
    hyps = translator.translate(lines, beam=args.beam, batch_size=args.batch_size, sampling=args.sampling,
                                topk=args.topk, seed=args.seed, input_format=args.input_format,
                                source_mwes=args.source_mwes,
                                progress=not args.quiet and args.output != "-",
                                source="<stdin>" if args.input == "-" else args.input)
    write_lines(args.output, hyps)
    return 0
