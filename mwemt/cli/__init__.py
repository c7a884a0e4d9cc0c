"""The `mwemt` command: a thin layer over the library, one module per subcommand.

Each subcommand module defines ``configure(parser)`` and ``run(args) -> int | None``. Modules are
imported only when their command runs (or its --help is asked for), so `mwemt --help` is fast
and a missing optional dependency (torch, fairseq) only affects the commands that need it.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import sys

from mwemt import __version__
from mwemt.cli.argtypes import document_ranges
from mwemt.errors import MwemtError
from mwemt.fileio import WRITE_ERRNOS, check_output_paths, forget_inputs
from mwemt.processes import (
    interrupt_exit_code,
    raise_if_stopped,
    signal_name,
    signals_unwind,
    stopped_while_starting,
)

# name -> (module, one-line help). The order is the pipeline's order.
COMMANDS: dict[str, tuple[str, str]] = {
    "annotate": ("mwemt.cli.annotate", "tokenize, lemmatize and mark lexicon MWEs (words-with-spaces or IOB factors)"),
    "lexicon": ("mwemt.cli.lexicon", "extract, convert and inspect MWE lexicons"),
    "align": ("mwemt.cli.align", "word-align parallel text with eflomal (Pharaoh i-j output, cached)"),
    "testset": ("mwemt.cli.testset", "build MWE-annotated test sets (JSONL): by word alignment, or from the TED annotation"),
    "identify-eval": ("mwemt.cli.identify_eval", "PARSEME-style MWE identification scores for .cupt files"),
    "subword": ("mwemt.cli.subword", "train/apply/decode sentencepiece, carrying factors onto pieces"),
    "augment": ("mwemt.cli.augment", "add MWE dictionary pairs or back-translated MWE sentences to a corpus"),
    "prepare": ("mwemt.cli.prepare", "binarize text and factor streams for fairseq"),
    "train": ("mwemt.cli.train", "train a (factored) fairseq model from a YAML config"),
    "translate": ("mwemt.cli.translate", "translate raw text with a model directory"),
    "score": ("mwemt.cli.score", "BLEU, chrF, MWE score and TESLA-like metrics with signatures"),
    "compare": ("mwemt.cli.compare", "compare systems MWE by MWE: an HTML/Markdown/JSON report with buckets and examples"),
    "meta-eval": ("mwemt.cli.meta_eval", "correlate metric scores with human judgments"),
    "compositionality": ("mwemt.cli.compositionality", "predict MWE compositionality and evaluate it against ratings"),
    "run": ("mwemt.cli.run", "run an experiment grid from a YAML config, with caching and resume"),
    "demo": ("mwemt.cli.demo", "train and score tiny systems on the bundled sample (a few minutes on CPU)"),
}

EPILOG = """\
pipeline:  annotate -> subword -> prepare -> train -> translate -> score
example:   echo "She took care of the ivory tower ." | mwemt annotate --lexicon L.txt --encoding iob
Run 'mwemt COMMAND --help' for the options of each command."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mwemt", description="Machine translation that knows about multiword expressions.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mwemt {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if only is None or only == name:
            mod = importlib.import_module(module)
            mod.configure(p)
            p.set_defaults(_module=module)
    document_ranges(parser)  # every numeric option's range in its --help (mwemt.cli.argtypes)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    only = next((a for a in argv if a in COMMANDS), None)
    with signals_unwind():  # from the first line: Ctrl-C while the command imports exits 130 too
        try:
            parser = build_parser(only=only or "__none__")
            args = parser.parse_args(argv)
            logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                                format="%(levelname)s %(name)s: %(message)s")
            if not args.command:
                parser.print_help()
                return 0
            mod = importlib.import_module(args._module)
        except KeyboardInterrupt as exc:
            return stopped_while_starting(exc, f"mwemt {only}" if only else "mwemt")
        forget_inputs()
        try:
            refuse_undecodable_arguments(args)
            check_output_paths(*_path_arguments(args))
            code = mod.run(args)
            raise_if_stopped()
        except MwemtError as exc:
            print(f"mwemt {args.command}: error: {exc}", file=sys.stderr)
            return 2
        except BrokenPipeError:
            return 0
        except KeyboardInterrupt as exc:
            print(f"mwemt {args.command}: stopped by {signal_name(exc)}; no partial output was kept",
                  file=sys.stderr)
            return interrupt_exit_code(exc)
        except MemoryError:
            print(f"mwemt {args.command}: error: out of memory; nothing was written (expected smaller input, "
                  "or fewer workers)", file=sys.stderr)
            return 1
        except OSError as exc:  # the machine, not the input: a full disk, a lost mount, a killed child
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"mwemt {args.command}: error: {where}{exc.strerror or exc}{_PATH_HINTS.get(exc.errno, '')}",
                  file=sys.stderr)
            return 2 if exc.errno in WRITE_ERRNOS or exc.errno in _PATH_HINTS else 1
        except Exception as exc:  # a bug: say so in one line, the traceback with --verbose
            if args.verbose:
                raise
            print(f"mwemt {args.command}: internal error: {type(exc).__name__}: {exc}\n"
                  "  this is a bug in mwemt; run again with --verbose for the traceback and report it",
                  file=sys.stderr)
            return 1
    return int(code or 0)


# Errors of a path the user gave (exit 2, like bad input), with what to do about them.
_PATH_HINTS = {
    errno.ENOTDIR: " (a part of this path is a file, not a directory; expected a path under directories)",
    errno.EACCES: " (expected a path you may read and write)",
    errno.EPERM: " (expected a path you may read and write)",
    errno.EISDIR: " (expected a file path, not a directory)",
    errno.ENAMETOOLONG: " (expected a shorter path)",
}

# Arguments that name files a command writes. Every other argument naming an existing file is an
# input; `check_output_paths` refuses an output that is an input (or another output) before any
# work, and `mwemt.fileio.atomic_write` refuses it again at write time, however the file was named.
OUTPUT_ARGUMENTS = ("output", "out", "report", "json", "sentence_scores", "destdir", "workdir", "run_dir",
                    "constraint_tuning", "save_filters")


def refuse_undecodable_arguments(args: argparse.Namespace) -> None:
    """Every text argument must be UTF-8: the records (manifests, reports, test sets) name the paths and
    values they were given in UTF-8 JSON, and a name of other bytes cannot be written there."""
    for dest, value in vars(args).items():
        if dest.startswith("_"):
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    shown = os.fsencode(v).decode("utf-8", "backslashreplace")
                    raise MwemtError(f"--{dest.replace('_', '-')} '{shown}' is not UTF-8 (expected file names and "
                                     "values in UTF-8: rename the file)") from None


def _path_arguments(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    """(outputs, inputs) of a parsed command line, by option name, for `check_output_paths`."""
    outputs: dict[str, str] = {}
    inputs: dict[str, str] = {}
    for dest, value in vars(args).items():
        if dest.startswith("_") or dest == "command":
            continue
        name = "--" + dest.replace("_", "-")
        values = value if isinstance(value, list) else [value]
        for k, v in enumerate(x for x in values if isinstance(x, str)):
            label = name if len(values) == 1 else f"{name} #{k + 1}"
            if dest in OUTPUT_ARGUMENTS:
                outputs[label] = v
                continue
            # NAME=PATH (score --hyp) and PATH::COLUMN (compositionality --corpus) name a file too
            for candidate in {v, v.partition("=")[2], v.partition("::")[0]} - {""}:
                inputs[f"{label}" if candidate == v else f"{label} ({candidate})"] = candidate
    return outputs, inputs


if __name__ == "__main__":
    sys.exit(main())
