"""`mwemt translate`: raw source text in, detokenized translations out, with a model directory."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mwemt.cli.argtypes import int_range, non_negative_int, positive_int, seed, workers
from mwemt.nmt.constraints import ACCEPTANCES, CONSTRAINT_MODES, RANKINGS, ConstraintOptions
from mwemt.nmt.translate import DECODE_PRECISIONS, INPUT_FORMATS, SOURCE_MWES
from mwemt.processes import DEVICES

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
  # judged constraints: only MWEs in context the plain output missed, the model picks the candidate, and a
  # constrained output is kept only within the score drop tuned on the VALIDATION split (never a test set)
  mwemt translate --model runs/baseline/model -i valid.en -o /dev/null --constraints mwe-table.jsonl \\
      --constraint-mode judged --constraint-tune valid.en valid.it --constraint-tuning threshold.json
  mwemt translate --model runs/baseline/model -i test.en -o test.hyp.it --constraints mwe-table.jsonl \\
      --constraint-mode judged --constraint-threshold threshold.json

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
                   help="sentences per batch (default: %(default)s; bench/decode_speed.py: 1.22x batch 32); plain beam "
                        "search gives the same output at any batch size, each line ending at its own length "
                        "limit (1.2 x its source pieces + 10, plus its constraints' length when constrained), and so do "
                        "judged constraints (a judged line's variants share a batch with each other only, at most "
                        "32); forced constraints (unordered, ordered) are decoded in batches of several lines, "
                        "whose padding can move an output at another batch size")
    p.add_argument("--sampling", action="store_true",
                   help="sample one output per line instead of beam search; without --seed every run samples "
                        "differently, and even with it the output depends on --batch-size (the batch draws "
                        "its random numbers together)")
    p.add_argument("--topk", type=int_range(1, special={-1: "all"}), default=-1,
                   help="with --sampling: sample from the k most likely tokens (default: %(default)s = all tokens)")
    p.add_argument("--seed", type=seed(), default=None,
                   help="random seed of --sampling, for the same output on every run (default: none: a new "
                        "sample each run); beam search needs none")
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
    p.add_argument("--constraint-mode", "--constraint-order", dest="constraint_mode", choices=CONSTRAINT_MODES,
                   default="unordered",
                   help="with --constraints: force every table MWE's best translation anywhere in the output "
                        "(unordered, default) or in source order (ordered); or judged: only MWEs the MWE-in-context "
                        "classifier reads as MWEs and the plain output lacks (lemma-aware), each decoded with each "
                        "candidate translation (attested, then dictionary by target-side frequency), the model's "
                        "best kept only within --constraint-threshold of the plain output's score (docs/nmt.md)")
    p.add_argument("--constraint-min-count", type=non_negative_int(), default=1, metavar="N",
                   help="least alignment count of a table translation used as a constraint; dictionary "
                        "translations qualify while dictionary is among --constraint-sources (default: %(default)s)")
    p.add_argument("--constraint-sources", nargs="+", default=["aligned", "dictionary"],
                   choices=["aligned", "dictionary"], help="table translations used as constraints (default: both)")
    p.add_argument("--constraint-candidates", type=positive_int(), default=ConstraintOptions.candidates, metavar="N",
                   help="judged: candidate translations per MWE, each decoded once (default: %(default)s)")
    p.add_argument("--constraint-threshold", default=None, metavar="DROP|FILE",
                   help="judged: the largest drop of the length-normalized model score (log-probability per token) "
                        "a constrained output may cost against the plain one: a number, or the tuning record "
                        "--constraint-tuning wrote")
    p.add_argument("--constraint-tune", nargs=2, default=None, metavar=("VALID_SRC", "VALID_REF"),
                   help="judged: first tune the threshold on this VALIDATION pair (the largest threshold at no loss of validation BLEU; never a test set), "
                        "then translate --input with it")
    p.add_argument("--constraint-tuning", default=None, metavar="FILE",
                   help="with --constraint-tune: write the tuning record (threshold, BLEU curve) here")
    p.add_argument("--constraint-mwe-context", default=ConstraintOptions.mwe_context, metavar="bundled|none|in-context",
                   help="judged: the MWE-in-context classifier that decides which table matches are MWEs "
                        "(default: the bundled English OEWN model at its own threshold; none: every match; "
                        "in-context: look-alike rules, then the classifier with the entries' categories at a "
                        "recall-first threshold, docs/nmt.md)")
    p.add_argument("--constraint-acceptance", choices=ACCEPTANCES, default=ConstraintOptions.acceptance,
                   help="judged: plain (default: keep what costs at most the threshold) or guarded (also never an "
                        "output the degenerate-output check flags: a loop, far too long, a fragment appended after "
                        "a sentence end; --constraint-tune takes the median no-loss point of 200 seeded resamples "
                        "of the tuning lines)")
    p.add_argument("--constraint-ranking", choices=RANKINGS, default=ConstraintOptions.ranking,
                   help="judged: rank an MWE's candidates by alignment count (default), or one per sense by fit to "
                        "the line's source context (context: needs --constraint-senses)")
    p.add_argument("--constraint-senses", default=None, metavar="FILE",
                   help="judged, --constraint-ranking context: the sense contexts written with the table "
                        "(scripts/sense_data.py)")
    p.add_argument("--constraint-forms", type=positive_int(), default=ConstraintOptions.forms, metavar="N",
                   help="judged: each candidate with up to N-1 other inflected forms the training target attests, "
                        "each decoded once (default: %(default)s, the table's form only; needs "
                        "--constraint-forms-file)")
    p.add_argument("--constraint-forms-file", default=None, metavar="FILE",
                   help="judged, --constraint-forms N > 1: the target forms written with the table "
                        "(scripts/sense_data.py)")
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
    from mwemt.nmt.modeldir import find_checkpoint, read_preprocess
    from mwemt.nmt.translate import Translator, check_source_lengths
    from mwemt.processes import resolve_device

    source = "<stdin>" if args.input == "-" else args.input
    lines = read_lines(args.input)
    # everything that can be checked without the model is checked before it loads (seconds to minutes)
    check_source_lengths(lines, source)  # a line too long to decode
    options = constraint_options(args)   # inconsistent --constraint* options, a bad threshold or record
    resolve_device(args.device)          # --device cuda on a machine without a GPU
    read_preprocess(args.model)          # a model directory that is none
    find_checkpoint(args.model, args.checkpoint)
    table = validation = None
    if args.constraints:
        from mwemt.nmt.constraints import constraint_table

        table = constraint_table(args.constraints)      # a table that is not one, or has nothing to constrain
        if args.constraint_tune:
            validation = read_validation(args.constraint_tune)
    if not any(line.strip() for line in lines) and validation is None:
        write_lines(args.output, ["" for _ in lines])
        print(f"mwemt translate: note: {source} has no line to translate ({len(lines)} line(s), none with text): "
              "the model was not loaded" + (f"; {args.output} has as many empty lines"
                                            if lines and args.output != "-" else ""), file=sys.stderr)
        return 0
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
    decode = dict(beam=args.beam, batch_size=args.batch_size, sampling=args.sampling, topk=args.topk, seed=args.seed,
                  source_mwes=args.source_mwes, progress=not args.quiet and args.output != "-", hints=hints)
    if args.constraints:
        from mwemt.nmt.constraints import constrained_translate

        if validation is not None:
            options = tune(args, translator, table, options, decode, validation)
        if not any(line.strip() for line in lines):   # tuned only: nothing to translate
            write_lines(args.output, ["" for _ in lines])
            print(f"mwemt translate: note: {source} has no line to translate: only the threshold was tuned",
                  file=sys.stderr)
            return 0
        hyps, report = constrained_translate(translator, lines, table, options,
                                             input_format=args.input_format, source=source, **decode)
        print(f"mwemt translate: {report.summary()}", file=sys.stderr)
        failed = report.lines_decoded_without_constraints
        if failed and options.mode != "judged":
            print(f"mwemt translate: {len(failed)} line(s) could not meet their constraints within the length limit "
                  f"and were translated without them: line {', '.join(str(i) for i in failed[:10])}"
                  + (" ..." if len(failed) > 10 else ""), file=sys.stderr)
    else:
        hyps = translator.translate(lines, input_format=args.input_format, source=source, **decode)
    write_lines(args.output, hyps)
    return 0


def constraint_options(args: argparse.Namespace):
    """The --constraint* options as one checked `ConstraintOptions` (refused before any decoding)."""
    from mwemt.errors import MwemtError
    from mwemt.nmt.constraints import ConstraintOptions, parse_threshold

    judged = args.constraint_mode == "judged"
    if args.constraints and args.sampling:
        raise MwemtError("constrained decoding is a beam search: it cannot be combined with sampling (--sampling)")
    for name, given in (("--constraint-threshold", args.constraint_threshold), ("--constraint-tune", args.constraint_tune),
                        ("--constraint-tuning", args.constraint_tuning)):
        if given is not None and not (judged and args.constraints):
            raise MwemtError(f"{name} judges constraints: it needs --constraints TABLE --constraint-mode judged")
    # the options only judged constraints read: set away from their defaults in another mode, they are refused
    # (as --constraint-threshold is), not ignored
    for name, dest, default in (("--constraint-candidates", "constraint_candidates", ConstraintOptions.candidates),
                                ("--constraint-mwe-context", "constraint_mwe_context", ConstraintOptions.mwe_context),
                                ("--constraint-ranking", "constraint_ranking", ConstraintOptions.ranking),
                                ("--constraint-acceptance", "constraint_acceptance", ConstraintOptions.acceptance),
                                ("--constraint-senses", "constraint_senses", None),
                                ("--constraint-forms", "constraint_forms", ConstraintOptions.forms),
                                ("--constraint-forms-file", "constraint_forms_file", None)):
        if getattr(args, dest) != default and not (judged and args.constraints):
            raise MwemtError(f"{name} judges constraints: it needs --constraints TABLE --constraint-mode judged "
                             f"(forced constraints read neither candidates nor an MWE-in-context model)")
    if judged and args.constraints and (args.constraint_threshold is None) == (args.constraint_tune is None):
        raise MwemtError("--constraint-mode judged needs its threshold: --constraint-tune VALID_SRC VALID_REF (tuned "
                         "on the validation split) or --constraint-threshold DROP|FILE, one of them")
    if args.constraint_tuning is not None and args.constraint_tune is None:
        raise MwemtError("--constraint-tuning writes what --constraint-tune found: give --constraint-tune too")
    if args.constraint_senses is not None and args.constraint_ranking != "context":
        raise MwemtError("--constraint-senses is read only by --constraint-ranking context: add it, or drop "
                         "--constraint-senses")
    if args.constraint_forms_file is not None and args.constraint_forms < 2:
        raise MwemtError("--constraint-forms-file is read only with --constraint-forms N (N > 1 forms per candidate): "
                         "add it, or drop --constraint-forms-file")
    threshold = None
    if args.constraint_threshold is not None:
        threshold = parse_threshold(args.constraint_threshold, "--constraint-threshold")
    for name, given in (("--constraint-senses", args.constraint_senses), ("--constraint-forms-file",
                                                                         args.constraint_forms_file)):
        if given is not None and not Path(given).is_file():   # before the model loads
            from mwemt.errors import InputError

            raise InputError(f"{name}: file not found", given, expected="a file written with the MWE table "
                                                                       "(scripts/sense_data.py)")
    return ConstraintOptions(args.constraint_mode, min_count=args.constraint_min_count,
                             sources=tuple(args.constraint_sources), candidates=args.constraint_candidates,
                             threshold=threshold, mwe_context=args.constraint_mwe_context,
                             ranking=args.constraint_ranking, forms=args.constraint_forms,
                             acceptance=args.constraint_acceptance,
                             senses_file=args.constraint_senses, forms_file=args.constraint_forms_file)


def read_validation(pair) -> tuple[list[str], list[str]]:
    """The --constraint-tune validation pair, read and checked before the model loads: both files readable, one
    reference per source line, and at least one source line with text."""
    from mwemt.errors import InputError
    from mwemt.fileio import read_lines

    src, ref = pair
    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise InputError(f"{len(references)} reference lines for {len(sources)} source lines ({src})", ref,
                         expected="one reference per validation source line")
    if not any(line.strip() for line in sources):
        raise InputError("the validation source has no line with text: there is nothing to tune the threshold on",
                         src, expected="the validation split's source sentences, one per line (--constraint-tune "
                                       "VALID_SRC VALID_REF)")
    return sources, references


def tune(args: argparse.Namespace, translator, table, options, decode: dict, validation):
    """``options`` with the threshold tuned on the --constraint-tune validation pair (and its record written)."""
    from dataclasses import replace

    from mwemt.nmt.constraints import tune_threshold, write_threshold

    src, ref = args.constraint_tune
    sources, references = validation
    record = tune_threshold(translator, sources, references, table, options, source=src,
                            **{k: v for k, v in decode.items() if k != "progress"})
    record["validation"] = {"source": src, "reference": ref}
    if args.constraint_tuning:
        write_threshold(args.constraint_tuning, record)
    print(f"mwemt translate: constraint threshold {record['threshold']:.4g} tuned on {src} "
          f"({record['constrained_lines']} constrained line(s); BLEU {record['bleu_first_pass']:.2f} unconstrained, "
          f"{record['bleu_at_threshold']:.2f} at the threshold, {record['bleu_all_accepted']:.2f} all accepted)",
          file=sys.stderr)
    return replace(options, threshold=record["threshold"])
