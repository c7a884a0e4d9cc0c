"""The `mwemt` command: a thin layer over the library, one module per subcommand.

Each subcommand module defines ``configure(parser)`` and ``run(args) -> int | None``. Modules are
imported only when their command runs (or its --help is asked for), so `mwemt --help` is fast
and a missing optional dependency (torch, fairseq) only affects the commands that need it.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from mwemt import __version__
from mwemt.errors import MwemtError

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
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    only = next((a for a in argv if a in COMMANDS), None)
    parser = build_parser(only=only or "__none__")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.command:
        parser.print_help()
        return 0
    mod = importlib.import_module(args._module)
    try:
        code = mod.run(args)
    except MwemtError as exc:
        print(f"mwemt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print(f"mwemt {args.command}: interrupted; no partial output was kept", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
