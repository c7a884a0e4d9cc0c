"""`mwemt score`: several systems, several metrics, one table (or JSON) with signatures."""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from mwemt.cli.argtypes import float_range, int_range, non_negative_int, seed
from mwemt.errors import InputError, MwemtError

EPILOG = """\
metrics (--metrics, comma-separated):
  bleu, chrf, chrf++   sacrebleu on detokenized text, case-sensitive (sacrebleu signatures)
  mwe                  MWE score (Zaninello & Birch 2020): needs --testset with MWE reference translations;
                       always the single reference
  mwe-alts             the MWE score crediting every acceptable translation, beside mwe: --mwe-alternatives'
                       mode, else table with --mwe-table, else testset (the items' alternatives)
  tesla                TESLA-like n-gram matching (lemmas; synonyms and POS with WordNet for English)
  tesla-comp           ... unmatched reference MWEs weighted by their compositionality (--compositionality)
  tesla-01             ... unmatched reference MWEs earn nothing (MWEs from --compositionality or --tesla-lexicon)
  mwe-verdict          P(the MWE is translated right) per MWE from a small model over MWE-score, lemma, table,
                       fragment/loop and sentence features (--testset; --mwe-table, --dictionary optional): the
                       mean probability x 100
  liter                LiTER (Baziotis et al. 2023): % of idiomatic MWEs translated word for word (--testset,
                       --dictionary; lower is better)
  term-use             term use (Dinu et al. 2019): % of MWEs whose given translation the output uses (--testset,
                       --terms or --mwe-table; --term-match lemma tolerates inflection)

mwe-alts credits the closest acceptable translation, with --mwe-alternatives table --mwe-table T the
table's too (T from `mwemt testset table`); mwe stays the single-reference score, so --metrics
mwe,mwe-alts gives both side by side. --mwe-alternatives without mwe-alts in --metrics is an error.

A score that is undefined on the test set prints n/a (null in --json), never 0, and has no p-value:
mwe and mwe-alts when no sentence has an MWE (a test set without MWEs), term-use when no MWE has a
given translation, liter when no MWE has a blocklist.

The first --hyp is the baseline of the paired bootstrap (--paired-bs). Scores are on a 0-100 scale.
Hypotheses and references are plain text, one sentence per line; an empty hypothesis line is allowed
(it scores 0). --hyp takes PATH or NAME=PATH.

examples:
  mwemt score --hyp base.it --hyp mwe.it --ref test.it --testset test.jsonl --metrics bleu,chrf,mwe --lang it
  mwemt score --hyp base=base.en --hyp comp=comp.en --ref ref.en --metrics bleu,tesla,tesla-comp \\
      --compositionality comp.tsv --paired-bs --json -o scores.json
  mwemt score --hyp sys.it --testset test.jsonl --metrics mwe --lang it --sentence-scores seg/
      # aligns each line of sys.it to its source alone (a lexical model learned from the test set's
      # sources and references, cached), scores each MWE against the words aligned to it, and writes
      # seg/mwe.seg.tsv: system, seg_id, score (input of meta-eval)
  mwemt score --hyp sys.it --testset test.jsonl --metrics mwe --lang it --extra train.en train.it
      # the same, with extra parallel text for better alignment statistics (--align eflomal: eflomal
      # aligns each system's file as a whole, as before; not line-stable)
  mwemt score --hyp sys.it --testset test.jsonl --metrics mwe --lang it --align sys.align   # given links
  mwemt score --hyp A=hyps/A.t.txt --align alignments/A.t.align.gz --hyp B=hyps/B.t.txt \\
      --align alignments/B.t.align.gz --testset refs/t.jsonl --metrics mwe --lang it
      # a published run's links (rescore.sh): the run's MWE scores and signatures, bit for bit
  mwemt score --hyp sys.it --testset test.jsonl --metrics mwe --lang it --align none        # whole sentence
  mwemt score --hyp sys.it --testset test.jsonl --metrics mwe --mwe-compat zaninello2020 --width 3
      # the published scorer's rules (Zaninello & Birch 2020): compare with the paper's figures x 100
  mwemt score --hyp A=wmt/hyp/A.txt --ref wmt/reference.txt --ids wmt/ids.txt --metrics chrf \\
      --sentence-scores wmt/seg/  # the ids of the MQM file (meta-eval extract), so meta-eval joins them

MWE score matching (--mwe-match SPEC: "char", or comma-separated NAME[=VALUE]; docs/evaluate.md):
  near-miss=C  an inexact match costs at least C      order=W     word-order penalty weight W
  lemma=C      same simplemma lemma costs C           synonyms=C  shared synset of --mwe-wordnet costs C
  elision      dell' = della/dello/dell               fw=W        function words weigh W in an MWE's mean
"--align none --mwe-match char --mwe-window 0" is the score of mwemt before alignment-aware scoring.
Every choice is in the MWE signature."""


def configure(p: argparse.ArgumentParser) -> None:
    from mwemt.cli.align import add_aligner_arguments
    from mwemt.evaluate.bootstrap import (
        DEFAULT_SAMPLES,
        DEFAULT_SEED,
        MAX_SAMPLES,
        MIN_SAMPLES,
        RESAMPLES_WHY,
    )
    from mwemt.evaluate.mwe_compat import COMPAT_MODES
    from mwemt.evaluate.mwe_score import AVERAGES, DEFAULT_ALIGN_CONFIG

    p.epilog = EPILOG
    p.add_argument("--hyp", action="append", required=True, metavar="[NAME=]PATH",
                   help="hypothesis file, repeat for several systems (the first is the baseline)")
    p.add_argument("--ref", help="reference file (default: the test set's references)")
    p.add_argument("--testset", help="MWE-annotated test set (JSONL), needed by the mwe metric")
    p.add_argument("--metrics", default="bleu,chrf", help="comma-separated metrics (default: %(default)s)")
    p.add_argument("--lang", default="en", help="target language for tokenization and lemmas (default: %(default)s)")
    p.add_argument("--lowercase", action="store_true", help="BLEU/chrF: lowercase (default: case-sensitive)")
    p.add_argument("--mwe-case-sensitive", action="store_true",
                   help="MWE score: compare words case-sensitively (default: case-insensitive)")
    p.add_argument("--mwe-average", choices=AVERAGES, default="sentence",
                   help="MWE score: mean over sentences with MWEs, or over all MWEs as the published scorer "
                        "(default: %(default)s)")
    p.add_argument("--hyp-tokenized", action="store_true",
                   help="MWE score: hypotheses are already tokenized (split on spaces, no Moses)")
    g = p.add_argument_group("MWE score")
    g.add_argument("--align", action="append", metavar="lex|eflomal|none|PATH",
                   help="MWE scores: 'lex' (default) aligns each hypothesis line to its source alone, with a "
                        "lexical model learned once per test set from its sources and references (and --extra): "
                        "a line's score depends on that line alone; 'eflomal' aligns each system's file as a "
                        "whole (not seeded: not line-stable); 'none' searches the whole hypothesis; PATH gives Pharaoh "
                        "i-j links source->hypothesis (one file per --hyp, in order; .gz read as the text "
                        "inside; a first line '# aligner: DESC' names the aligner, which the signature then "
                        "says instead of align:given, and a line 'skipped' a sentence it could not align, "
                        "searched in the whole hypothesis: the files `mwemt run --publish` writes)")
    g.add_argument("--src-lang", default="en", help="source language of --extra text (default: %(default)s)")
    g.add_argument("--mwe-match", default=None, metavar="SPEC",
                   help=f"MWE score: word matching, 'char' (characters only) or NAME[=VALUE],... "
                        f"(default: {default_match_text()}; see below)")
    g.add_argument("--mwe-window", type=non_negative_int(), default=None, metavar="N",
                   help="MWE score: with alignment, also the N hypothesis tokens each side of the aligned "
                        "ones (default: 1)")
    g.add_argument("--mwe-precision", type=float_range(0, 1), default=None, metavar="P",
                   help="MWE score: with alignment, weight of precision (extra aligned words cost) (default: 0)")
    g.add_argument("--mwe-wordnet", metavar="TAB", help="MWE score: target-language OMW .tab wordnet for synonyms")
    g.add_argument("--mwe-compat", choices=COMPAT_MODES,
                   help="MWE score: reproduce a published scorer exactly (no alignment, no matching options)")
    add_mwe_table_arguments(p, g)
    add_aligner_arguments(p)
    p.set_defaults(samplers=DEFAULT_ALIGN_CONFIG.samplers)  # the MWE score's own aligner default
    p.add_argument("--compositionality", help="TESLA: mwe<TAB>score TSV of target-language MWE compositionality")
    p.add_argument("--tesla-lexicon", help="TESLA: target-language MWE lexicon (any `mwemt annotate` format; "
                                           "the target side of bilingual ones)")
    p.add_argument("--tesla-default", metavar="WEIGHT|median",
                   help="tesla-comp: weight of reference MWEs without a prediction, in [0, 1] or 'median' of the "
                        "predictions (default: median, measured in docs/tesla.md; 0.5 with a lexicon column only)")
    p.add_argument("--no-wordnet", action="store_true", help="TESLA: do not use WordNet even for English")
    p.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling against the first system")
    p.add_argument("--bs-samples", type=int_range(MIN_SAMPLES, MAX_SAMPLES, why=RESAMPLES_WHY), default=DEFAULT_SAMPLES,
                   help=f"bootstrap resamples, at least {MIN_SAMPLES} (default: %(default)s)")
    p.add_argument("--seed", type=seed(), default=DEFAULT_SEED,
                   help="bootstrap seed (default: %(default)s, as sacrebleu)")
    p.add_argument("--json", action="store_true", help="write JSON (scores, signatures, provenance)")
    p.add_argument("--mwe-breakdown", metavar="TSV",
                   help="with --json: add the MWE score (metric mwe) by tertiles of the source MWEs' predicted "
                        "compositionality, from this mwe<TAB>score table (as `mwemt run` does with "
                        "mwe_compositionality)")
    p.add_argument("--ids", metavar="PATH",
                   help="segment ids, one per line (e.g. ids.txt of 'meta-eval extract'), written with "
                        "--sentence-scores (default: the test set's ids, else line numbers 1..N)")
    p.add_argument("--sentence-scores", metavar="DIR",
                   help="also write DIR/<metric>.seg.tsv with system<TAB>seg_id<TAB>score lines "
                        "(and add sentence scores to --json output)")
    p.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")
    p.add_argument("--width", type=int_range(0, 10), default=1, help="decimals in the table (default: %(default)s)")


# the option that provides each input a metric may miss (`MissingInputError.needs`)
INPUT_OPTIONS = {"ref": "--ref, or --testset with references", "testset": "--testset"}


def parse_systems(specs: list[str]) -> list[tuple[str, str]]:
    """(name, path) per --hyp: NAME=PATH, else the file name (the whole path if two share a name)."""
    out = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or Path(spec).exists():
            name, path = spec, spec
        out.append((name, path))
    if len({Path(p).name for _, p in out}) == len(out):
        out = [(Path(p).name if n == p else n, p) for n, p in out]
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise MwemtError(f"two systems share a name: {', '.join(names)}; use NAME=PATH")
    return out


def default_match_text() -> str:
    from mwemt.evaluate.mwe_match import format_matching
    from mwemt.evaluate.mwe_score import DEFAULT_MATCHING

    return format_matching(DEFAULT_MATCHING)


def align_mode(args: argparse.Namespace) -> str:
    """'lex', 'eflomal', 'none' or 'files' (one Pharaoh file per --hyp)."""
    if not args.align:
        return "lex"
    if len(args.align) == 1 and args.align[0] in ("lex", "eflomal", "none") and not Path(args.align[0]).exists():
        return args.align[0]
    return "files"


def _aligned_metrics(metrics: Sequence[str]) -> list[str]:
    """The metrics of ``metrics`` that read word alignments (the MWE scores)."""
    from mwemt.evaluate.registry import metric_class

    return [m for m in metrics if metric_class(m).uses_alignments]


# a metric setting's option (its argparse dest) -> what it sets (a `Metric.reads` name): an option set away
# from its default that no requested metric reads is refused, not ignored
SETTING_OPTIONS = {"lowercase": "lowercase", "mwe_case_sensitive": "mwe_case_sensitive",
                   "mwe_average": "mwe_average", "align": "mwe_align", "mwe_window": "mwe_align",
                   "extra": "mwe_align", "extra_tsv": "mwe_align", "mwe_match": "mwe_matching",
                   "mwe_precision": "mwe_precision", "mwe_wordnet": "mwe_wordnet", "mwe_compat": "mwe_compat",
                   "mwe_alternatives": "mwe_alternatives", "mwe_table": "mwe_table",
                   "mwe_table_min_count": "mwe_table_min_count", "dictionary": "dictionary",
                   "dictionary_format": "dictionary_format", "terms": "terms", "term_match": "term_match",
                   "compositionality": "compositionality", "tesla_lexicon": "tesla_lexicon",
                   "tesla_default": "tesla_default", "no_wordnet": "tesla_wordnet",
                   "hyp_tokenized": "mwe_pretokenized", "src_lang": "mwe_align", "extra_max": "mwe_align",
                   "symmetrization": "mwe_align", "samplers": "mwe_align", "cache": "mwe_align",
                   "no_cache": "mwe_align"}


def _unread_settings(args: argparse.Namespace, metrics: Sequence[str]) -> None:
    """Refuse an option that sets what none of ``metrics`` reads (`Metric.reads`), naming those that do."""
    from mwemt.evaluate.registry import metric_class, metric_names

    defaults = _defaults()
    read = set().union(*(metric_class(m).reads for m in metrics))
    for dest, setting in SETTING_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None or value is False or value == defaults.get(dest):
            continue
        if setting not in read:
            flag = "--" + dest.replace("_", "-")
            users = [m for m in metric_names() if setting in metric_class(m).reads]
            raise MwemtError(f"{flag} only affects {', '.join(users)}, which --metrics ({','.join(metrics)}) does "
                             f"not include; add one to --metrics or drop {flag}")


@functools.lru_cache(maxsize=1)
def _defaults() -> dict:
    p = argparse.ArgumentParser()
    configure(p)
    return {a.dest: a.default for a in p._actions}


def _check_arguments(args: argparse.Namespace, metrics: list[str]) -> None:
    if args.width < 0:
        raise MwemtError("--width must be 0 or more")
    if args.mwe_breakdown:
        if not args.json or "mwe" not in metrics or not args.testset:
            raise MwemtError("--mwe-breakdown is written into --json output and breaks down the metric mwe of a "
                             "--testset: give --json, --testset and mwe in --metrics")
    mode = align_mode(args)
    if args.mwe_alternatives != "none" and "mwe-alts" not in metrics:   # its own message: mwe is single-reference
        mwe_table_options(args, metrics)
    _unread_settings(args, metrics)
    if args.mwe_wordnet and not getattr(_matching(args), "synonyms", None):   # read only by synonym matching
        raise MwemtError(f"--mwe-wordnet is read only by synonym matching, which --mwe-match "
                         f"({args.mwe_match or default_match_text()}) does not ask for: add synonyms=C to "
                         "--mwe-match, or drop --mwe-wordnet")
    if mode == "files" and len(args.align) != len(args.hyp):
        raise MwemtError(f"{len(args.align)} --align files for {len(args.hyp)} --hyp files; give one per system")
    if args.mwe_compat and (args.align and mode != "none" or args.mwe_match or args.mwe_precision
                            or args.mwe_window is not None):
        raise MwemtError(f"--mwe-compat {args.mwe_compat} reproduces the published scorer: it takes no --align, "
                         "--mwe-match, --mwe-precision or --mwe-window")
    if args.mwe_window is not None and args.mwe_window < 0:
        raise MwemtError("--mwe-window must be 0 or more")
    if (args.extra or args.extra_tsv) and mode not in ("lex", "eflomal"):
        raise MwemtError("--extra/--extra-tsv add statistics to the aligner; they need --align eflomal or lex "
                         "(the default)")
    if args.samplers != _defaults().get("samplers") and mode != "eflomal":
        raise MwemtError("--samplers sets eflomal's samplers; it needs --align eflomal")
    _aligner_settings_read(args, mode)
    mwe_table_options(args, metrics)   # --mwe-alternatives and its table, before any file is read


def _aligner_settings_read(args: argparse.Namespace, mode: str) -> None:
    """Refuse an aligner or table setting that nothing reads with these options, instead of ignoring it."""
    defaults = _defaults()
    if mode not in ("lex", "eflomal") or args.mwe_compat:
        set_ = [flag for flag, on in (("--symmetrization", args.symmetrization != defaults.get("symmetrization")),
                                      ("--cache", args.cache is not None), ("--no-cache", args.no_cache)) if on]
        if set_:
            why = (f"--mwe-compat {args.mwe_compat} aligns nothing" if args.mwe_compat
                   else "--align none searches the whole hypothesis" if mode == "none"
                   else "--align FILE gives the links")
            raise MwemtError(f"{set_[0]} sets the aligner, which does not run here ({why}): drop {set_[0]}, or "
                             "align with --align lex (the default) or eflomal")
    if mode == "none" and args.mwe_window:
        raise MwemtError(f"--mwe-window {args.mwe_window} widens the words aligned to an MWE; --align none aligns "
                         "nothing and searches the whole hypothesis: drop --mwe-window (or give 0), or align")
    if not (args.extra or args.extra_tsv):
        for flag, on in (("--extra-max", args.extra_max is not None),
                         ("--src-lang", args.src_lang != defaults.get("src_lang"))):
            if on:
                raise MwemtError(f"{flag} applies to the extra parallel text of the aligner: give --extra SRC TGT or "
                                 f"--extra-tsv FILE, or drop {flag}")
    if args.mwe_table_min_count != defaults.get("mwe_table_min_count") and not (args.mwe_table or args.terms):
        raise MwemtError("--mwe-table-min-count filters the translations of a table: give --mwe-table (or --terms "
                         "TABLE), or drop --mwe-table-min-count")
    if getattr(args, "dictionary_format", "auto") != defaults.get("dictionary_format") and not args.dictionary:
        raise MwemtError("--dictionary-format says how to read --dictionary: give --dictionary, or drop "
                         "--dictionary-format")


def add_mwe_table_arguments(p: argparse.ArgumentParser, mwe_group, dictionary: bool = True) -> None:
    """--mwe-alternatives/--mwe-table (the MWE score) and --terms/--term-match/--dictionary (term use,
    LiTER): shared by `score` and `compare` (compare has its own --dictionary)."""
    from mwemt.evaluate.mwe_score import ALTERNATIVE_MODES
    from mwemt.evaluate.term_use import TERM_MATCHES

    mwe_group.add_argument("--mwe-alternatives", choices=ALTERNATIVE_MODES, default="none",
                           help="mwe-alts: which acceptable translations it credits besides the reference: testset "
                                "(the test items' alternatives) or table (those and --mwe-table's); default none: "
                                "table with --mwe-table, else testset. The mwe metric is always the single reference")
    mwe_group.add_argument("--mwe-table", metavar="JSONL",
                           help="MWE translation table (`mwemt testset table`): alternatives for --mwe-alternatives "
                                "table, and term use's given translations when --terms is not given")
    mwe_group.add_argument("--mwe-table-min-count", type=non_negative_int(), default=1, metavar="N",
                           help="a table translation counts when alignment attested it N times or more (dictionary "
                                "entries always; default: %(default)s)")
    g = p.add_argument_group("LiTER and term use")
    if dictionary:
        g.add_argument("--dictionary", metavar="PATH",
                       help="LiTER: bilingual dictionary whose word translations make the literal blocklist "
                            "(e.g. en-ita.multiwordnet.tsv)")
        g.add_argument("--dictionary-format", default="auto", choices=("auto", "bilingual", "wn-aligned"),
                       help="format of --dictionary: a source<TAB>target list (bilingual), the WordNet-aligned "
                            "table, or auto (by its columns; default: %(default)s)")
    g.add_argument("--terms", metavar="PATH", help="term use: given MWE translations (an MWE table, or "
                                                   "source<TAB>target lines; default: --mwe-table)")
    g.add_argument("--term-match", choices=TERM_MATCHES, default="exact",
                   help="term use: exact tokens, or lemma (inflection-tolerant; default: %(default)s)")


def _matching(args: argparse.Namespace):
    """The MWE score's MweMatching from --mwe-match (None: the metric's default)."""
    from mwemt.evaluate.mwe_match import parse_matching

    if args.mwe_match is None:
        return None
    try:
        matching = parse_matching(args.mwe_match)
    except ValueError as exc:
        raise MwemtError(f"--mwe-match {args.mwe_match!r}: {exc}") from None
    if matching.synonyms and not args.mwe_wordnet:
        raise MwemtError("--mwe-match synonyms needs --mwe-wordnet (an OMW .tab wordnet of the target language)")
    return matching


def _align_settings(args: argparse.Namespace, metrics: list[str]):
    """The MWE score's MweAlignSettings: mode, extra text, aligner settings and cache."""
    from mwemt.cli.align import aligner_settings, read_extra_args
    from mwemt.evaluate.mwe_score import MweAlignSettings

    mode = align_mode(args)
    window = {} if args.mwe_window is None else {"window": args.mwe_window}
    if mode not in ("lex", "eflomal") or not _aligned_metrics(metrics) or args.mwe_compat:
        return MweAlignSettings("none" if mode == "none" else "lex", **window)
    config, cache = aligner_settings(args)
    extra = read_extra_args(args, args.src_lang, args.lang)
    name = ""
    if extra is not None:
        name = Path(args.extra[1] if args.extra else args.extra_tsv).name
    return MweAlignSettings(mode, extra=extra, extra_name=name, cache_dir=cache, config=config,
                            symmetrization=args.symmetrization, **window)


def _metric_options(args: argparse.Namespace, metrics: list[str] = ()):
    from mwemt.evaluate.registry import MetricOptions

    if args.mwe_precision is not None and not 0.0 <= args.mwe_precision <= 1.0:
        raise MwemtError("--mwe-precision must be in [0, 1]")
    return MetricOptions(lang=args.lang, lowercase=args.lowercase, mwe_case_sensitive=args.mwe_case_sensitive,
                         mwe_average=args.mwe_average, mwe_pretokenized=args.hyp_tokenized,
                         mwe_align=_align_settings(args, list(metrics)), mwe_matching=_matching(args),
                         mwe_precision=args.mwe_precision, mwe_wordnet=args.mwe_wordnet, mwe_compat=args.mwe_compat,
                         tesla_wordnet=not args.no_wordnet, tesla_default=_tesla_default(args.tesla_default),
                         **mwe_table_options(args, metrics))


def mwe_table_options(args: argparse.Namespace, metrics: Sequence[str]) -> dict:
    """The MetricOptions fields of `add_mwe_table_arguments`, checked against the ``metrics`` scored:
    --mwe-alternatives only feeds mwe-alts (mwe is always the single reference)."""
    if args.mwe_alternatives != "none" and "mwe-alts" not in metrics:
        raise MwemtError(f"--mwe-alternatives {args.mwe_alternatives} only affects the mwe-alts metric (mwe is always "
                         "the single-reference score); add mwe-alts to --metrics")
    if args.mwe_alternatives == "table" and not args.mwe_table:
        raise MwemtError("--mwe-alternatives table needs --mwe-table FILE (`mwemt testset table`)")
    return {"mwe_alternatives": args.mwe_alternatives, "mwe_table": args.mwe_table,
            "mwe_table_min_count": args.mwe_table_min_count, "dictionary": args.dictionary,
            "dictionary_format": args.dictionary_format, "terms": args.terms, "term_match": args.term_match}


def _tesla_default(value: str | None) -> float | str | None:
    if value is None or value == "median":
        return value
    try:
        weight = float(value)
    except ValueError:
        raise MwemtError(f"--tesla-default {value!r}: expected a weight in [0, 1] or 'median'") from None
    if not 0.0 <= weight <= 1.0:
        raise MwemtError(f"--tesla-default {value}: expected a weight in [0, 1] or 'median'")
    return weight


def _score(args: argparse.Namespace, inputs, metrics: list[str]):
    from mwemt.evaluate.bootstrap import BootstrapSettings
    from mwemt.evaluate.inputs import MissingInputError
    from mwemt.evaluate.scoring import score_systems

    bootstrap = BootstrapSettings(args.bs_samples, args.seed) if args.paired_bs else None
    try:
        return score_systems(inputs, metrics, _metric_options(args, metrics), sentence_level=bool(args.sentence_scores),
                             bootstrap=bootstrap)
    except MissingInputError as exc:
        raise MwemtError(f"{exc}: give {INPUT_OPTIONS.get(exc.needs, exc.needs)}") from None


def _report_normalized(inputs) -> None:
    """On stderr: each input whose text reading normalized (docs/evaluate.md, "Text normalization")."""
    from mwemt.fileio import NORMALIZATION

    for role, lines in inputs.normalized.items():
        path = inputs.sources.get(role, role)
        shown = ", ".join(map(str, lines[:5])) + (", ..." if len(lines) > 5 else "")
        print(f"mwemt score: warning: {path}: {len(lines)} line(s) normalized (line {shown}): a byte-order mark, "
              "zero-width space or word joiner removed, or characters composed to NFC; the scores are of the "
              f"normalized text and their signatures say norm:{NORMALIZATION} (they are not sacrebleu's numbers "
              "for the raw file)", file=sys.stderr)


def _report_tokenized(inputs, metrics: Sequence[str]) -> None:
    """On stderr, once per system: BLEU of hypotheses that look tokenized (sacrebleu's check, said in one line)."""
    from mwemt.evaluate.sacrebleu_metrics import tokenized_periods

    if "bleu" not in metrics:
        return
    for system in inputs.systems:
        n = tokenized_periods(system.hyps)
        if n >= 100:
            print(f"mwemt score: note: {system.path or system.name}: {n} hypotheses end in a tokenized period "
                  "(' .'): BLEU on tokenized text is not comparable with BLEU on detokenized text", file=sys.stderr)


def _report_two_references(args: argparse.Namespace, inputs, metrics: Sequence[str]) -> None:
    """On stderr: --ref and the --testset's references differ, and the metrics scored read both (text metrics
    --ref, the test set's metrics its own items): say which reads which."""
    from mwemt.evaluate.base import REFERENCE_MWES
    from mwemt.evaluate.registry import metric_class

    if not (args.ref and inputs.testset is not None):
        return
    by_kind = {kind: [m for m in metrics if (metric_class(m).reference_kind == REFERENCE_MWES) == kind]
               for kind in (False, True)}
    if not (by_kind[False] and by_kind[True]):
        return
    def bare(text: str) -> str:   # a tokenized test set's reference is the same sentence as the detokenized one
        return "".join(text.split())

    differ = [k + 1 for k, (a, b) in enumerate(zip(inputs.refs, (it.reference for it in inputs.testset)))
              if bare(a) != bare(b)]
    if differ or len(inputs.refs) != len(inputs.testset):
        where = f"on {len(differ)} line(s) (first: line {differ[0]})" if differ else "in length"
        print(f"mwemt score: note: --ref {args.ref} and the references of --testset {args.testset} differ {where}: "
              f"{', '.join(by_kind[False])} score against --ref, {', '.join(by_kind[True])} against the test set's "
              "items", file=sys.stderr)


def _report_mwe_notes(run) -> None:
    """On stderr: MWEs the compatibility mode left out as NaN, sentences the aligner skipped."""
    import sys

    for result in run.metrics:
        if result.key != "mwe":
            continue
        for system, score in zip(run.systems, result.scores):
            nan = score.extra.get("nan_mwes", 0)
            if nan:
                print(f"MWE score of {system}: {nan} MWE(s) are NaN (no hypothesis word) and left out of the mean, "
                      "as in the published scorer", file=sys.stderr)
            skipped = score.extra.get("alignment_skipped", 0)
            if skipped:
                print(f"MWE score of {system}: {skipped} sentence(s) could not be aligned (an empty side or too "
                      "long); their MWEs were searched in the whole hypothesis (an empty one scores 0)", file=sys.stderr)


def _write_sentence_scores(run, directory: str) -> None:
    from mwemt.evaluate.report import sentence_score_rows
    from mwemt.fileio import write_lines

    for result in run.metrics:
        write_lines(Path(directory) / f"{result.key}.seg.tsv", sentence_score_rows(run, result))


def _write_output(args: argparse.Namespace, run, inputs) -> None:
    from mwemt.evaluate.report import format_score_table, score_run_dict
    from mwemt.fileio import atomic_write
    from mwemt.provenance import manifest, write_json

    if args.json:
        config = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "output"}
        obj = score_run_dict(run)
        if args.mwe_breakdown:
            from mwemt.evaluate.bootstrap import BootstrapSettings
            from mwemt.evaluate.breakdown import run_breakdown

            bootstrap = BootstrapSettings(args.bs_samples, args.seed) if args.paired_bs else None
            obj["compositionality_breakdown"] = run_breakdown(run, inputs, args.mwe_breakdown, bootstrap)
        table_inputs = {k: getattr(args, k) for k in ("mwe_table", "dictionary", "terms") if getattr(args, k, None)}
        obj["provenance"] = manifest("score", inputs={**inputs.sources, **table_inputs}, config=config, seed=args.seed)
        write_json(args.output, obj)
    else:
        with atomic_write(args.output) as fh:
            fh.write(format_score_table(run, args.width))


def run(args: argparse.Namespace) -> int:
    from mwemt.evaluate.inputs import load_score_inputs
    from mwemt.evaluate.registry import parse_metric_names

    metrics = parse_metric_names(args.metrics)
    _check_arguments(args, metrics)
    if not args.verbose:
        logging.getLogger("sacrebleu").setLevel(logging.WARNING)
    if args.mwe_breakdown and not Path(args.mwe_breakdown).is_file():   # before any work
        raise InputError("is a directory, not a file" if Path(args.mwe_breakdown).is_dir() else "not found",
                         args.mwe_breakdown, expected="an mwe<TAB>score compositionality table")
    alignments = args.align if align_mode(args) == "files" else None
    inputs = load_score_inputs(parse_systems(args.hyp), ref=args.ref, testset=args.testset, alignments=alignments,
                               lexicon=args.tesla_lexicon, compositionality=args.compositionality, lang=args.lang,
                               ids=args.ids)
    if args.sentence_scores:
        from mwemt.evaluate.inputs import check_sentence_score_keys

        check_sentence_score_keys(inputs)   # before any work: rows that meta-eval could not read back
    _report_normalized(inputs)
    _report_tokenized(inputs, metrics)
    _report_two_references(args, inputs, metrics)
    result = _score(args, inputs, metrics)
    _report_mwe_notes(result)
    if args.sentence_scores:
        _write_sentence_scores(result, args.sentence_scores)
        if inputs.ids_from == "line numbers":
            print(f"mwemt score: note: segment ids in {args.sentence_scores} are line numbers 1..{inputs.n_sentences}; "
                  "give --ids (or --testset) for the ids of human judgments", file=sys.stderr)
    _write_output(args, result, inputs)
    return 0
