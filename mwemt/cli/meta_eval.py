"""`mwemt meta-eval`: segment- and system-level agreement of metric scores with human judgments.

Human judgments are read in the formats the field publishes them (`mwemt.judgements`);
`mwemt meta-eval extract` writes the texts of MQM files as the line-aligned files `mwemt score`
reads, with one segment id per line, so that metric and human scores join on the same ids.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from mwemt.cli.argtypes import int_range, language_code, seed
from mwemt.errors import MwemtError

HUMAN_FORMAT_HELP = """\
human score formats (--human-format; auto-detected from the first line):
  tsv             system<TAB>seg_id<TAB>score, optional header starting with 'system', 'None' = not judged;
                  higher is better unless --human-lower-better (metric files are always this format)
  wmt-mqm-avg     WMT MQM *.avg_seg_scores.tsv (header 'system mqm_avg_score seg_id'): -MQM as published
  wmt-mqm-errors  WMT MQM per-error rows (system doc doc_id seg_id rater source target category severity):
                  MQM recomputed with --mqm-weights and averaged over raters, then negated
  marot-sxs       Marot exports such as the WMT23 side-by-side MQM files (system doc docSegId globalSegId
                  rater ... metadata, a '# Documentation' header column); attention checks (HOTW) skipped
  A .tar.gz holding one such file is read as it is published."""

EPILOG = HUMAN_FORMAT_HELP + """

MQM weights (--mqm-weights): freitag2021 (default; Freitag et al. 2021: Major 5, Minor 1, Minor
Fluency/Punctuation 0.1, Major Non-translation 25), marot (the Marot viewer's defaults, which also
weight source issues and creative reinterpretation 0), or a file of severity<TAB>category<TAB>weight
rules, first match wins, '*' matches any text.

statistics (higher is better; pairs = two systems' translations of the same segment):
  segment level  tau13 (C - D) / (C + D), metric ties excluded;  tau14 (C - D) / (C + D + T), human ties left out
                 acc-eq: pairwise accuracy with ties (Deutsch et al. 2023) per segment, averaged, at the tie
                 threshold eps that maximizes it (tie calibration);  Pearson over all items (no grouping);
                 Pearson/item, Kendall/item: per segment, averaged over segments
  system level   pairwise accuracy (Kocmi et al. 2021), Pearson, Kendall tau-b of per-system mean scores
  [lo, hi]       95% percentile bootstrap interval over resampled segments (seeded)
paired comparisons (two or more metrics): for each pair A, B and each statistic, A - B with a paired
bootstrap CI (the same resampled segments for both) and a permutation p-value (each segment's scores
swapped between A and B at random, z-normalized); significance clusters: rank 1 = the best metric and
every metric not significantly worse than it (p >= 0.05). --compare A,B shows one pair.

segment ids: the human and metric files must score the same (system, seg_id) items. When a metric
file lacks more than 1% of the judged items, meta-eval stops (exit 2) and names counts and example
ids: score with the ids of the judgements (mwemt score --ids ids.txt, or --testset testset.jsonl as
written by extract). --allow-partial correlates the common items anyway.

examples:
  mwemt meta-eval --human mqm_ted_ende.avg_seg_scores.tsv --metric seg/bleu.seg.tsv --exclude-system ref-A
  mwemt meta-eval --human mqm_ted_ende.tsv --mqm-weights marot --metric seg/chrf.seg.tsv
  mwemt meta-eval --human da.tsv --metric COMET=comet.tsv --json -o meta.json
  mwemt meta-eval --human sxs_mqm.tsv.tar.gz --metric seg/tesla.seg.tsv --metric seg/tesla-comp.seg.tsv \\
      --compare tesla-comp,tesla
  mwemt meta-eval extract --human mqm_ted_ende.tsv --out ted/       # texts for `mwemt score`, see extract --help"""

EXTRACT_EPILOG = """\
writes, one line per segment in every file (segments some system lacks are left out):
  ids.txt         the human file's segment ids (seg_id / globalSegId): the ids scores join on
  source.txt      sources;  reference.txt  references (if any);  hyp/SYSTEM.txt  each system's translation
  testset.jsonl   id, source and reference per segment: `mwemt score --testset` writes these ids
  segments.tsv    seg_id, document, position in the document (and line in --source-text)
  manifest.json   inputs, counts, systems and their files
Hypotheses are the texts the raters judged (span marks removed). The reference is a rated system
named like a human reference (ref, ref-A...) unless --reference-system says otherwise, or the lines
of --reference-text: sources are then found in --source-text by their text (whitespace aside;
a source on several lines takes its document's position), as WMT23's segment ids are not line numbers.

examples:
  mwemt meta-eval extract --human mqm_ted_ende.tsv --out ted/
  mwemt meta-eval extract --human sxs_mqm_generalMT2023_zhen.3ratingsPerSegment.tsv.tar.gz \\
      --source-text generaltest2023.zh-en.src.zh --reference-text generaltest2023.zh-en.ref.refA.en --out wmt23/"""


def _human_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--human", required=required, metavar="PATH", help="human judgments (see formats below)")
    p.add_argument("--human-format", default="auto", metavar="FORMAT",
                   choices=("auto", "tsv", "wmt-mqm-avg", "wmt-mqm-errors", "marot-sxs"),
                   help="format of --human (default: %(default)s: from the header)")


def configure(p: argparse.ArgumentParser) -> None:
    from mwemt.evaluate.bootstrap import MAX_SAMPLES, MIN_SAMPLES

    p.epilog = EPILOG
    _human_args(p, required=False)
    p.add_argument("--human-lower-better", action="store_true",
                   help="tsv only: the human score is an error score (e.g. MQM): negate it so higher is better")
    p.add_argument("--mqm-weights", default="freitag2021", metavar="SCHEME|FILE",
                   help="weights of MQM errors: freitag2021, marot or a rules file (default: %(default)s)")
    p.add_argument("--metric", action="append", metavar="[NAME=]PATH",
                   help="metric scores, repeatable (name defaults to the file name without .seg.tsv/.tsv)")
    p.add_argument("--metric-lower-better", action="append", default=[], metavar="NAME",
                   help="negate this metric (an error rate such as TER); repeatable")
    p.add_argument("--exclude-system", action="append", default=[], metavar="SYSTEM",
                   help="leave a system out (e.g. the human reference); repeatable")
    p.add_argument("--bootstrap", type=int_range(MIN_SAMPLES, MAX_SAMPLES, special={0: "no intervals"}), default=1000,
                   help="bootstrap resamples for the 95%% confidence intervals; an interval from fewer "
                        f"than {MIN_SAMPLES} is hardly more than their extremes, and reported intervals want "
                        "1000 or more (default: %(default)s)")
    p.add_argument("--permutations", type=int_range(MIN_SAMPLES, MAX_SAMPLES, special={0: "no p-values"}), default=1000,
                   help="random swaps per paired permutation test; with fewer than "
                        f"{MIN_SAMPLES} no p-value can fall below 0.05 (default: %(default)s)")
    p.add_argument("--compare", metavar="A,B",
                   help="compare only these two metrics (default: every pair of --metric)")
    p.add_argument("--allow-partial", action="store_true",
                   help="correlate the common items even when a metric file lacks many judged items")
    p.add_argument("--seed", type=seed(), default=12345, help="bootstrap and permutation seed (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="write JSON with provenance instead of a table")
    p.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")
    sub = p.add_subparsers(dest="action", metavar="[extract|mwe-test|mwe-verdict-train|mwe-agreement]",
                           required=False)
    e = sub.add_parser("extract", help="write the texts of an MQM file as files for `mwemt score`",
                       description="Write the sources, references and hypotheses an MQM file carries as "
                                   "line-aligned files, with the segment ids in ids.txt.",
                       epilog=EXTRACT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _human_args(e, required=True)
    e.add_argument("--out", "-o", required=True, metavar="DIR", help="output directory")
    e.add_argument("--reference-system", metavar="NAME",
                   help="the rated system whose translations are the references, or 'none' "
                        "(default: the one system named like ref, ref-A...)")
    e.add_argument("--source-text", metavar="PATH", help="source text, one segment per line, to find segments in")
    e.add_argument("--reference-text", metavar="PATH", help="references parallel to --source-text")
    _configure_mwe(sub)


MWE_TEST_EPILOG = """\
Turns an MQM file with error spans (wmt-mqm-errors or marot-sxs) into MWE verdicts: the source MWEs of
--lexicon (the OEWN look-up, judged in context as test-set building does), their target words from the
alignment of each system's line to the source (the MWE score's aligner), verdict N when a rater marked an
Accuracy or Fluency error span over those words (or an omission span over the MWE's source words), Y when
no error span of any kind covers them; rows with no aligned words, or with only other kinds of errors
(Terminology, Style...) over them, are left out and counted. Each MWE's reference translation is taken
from the reference system's aligned line. Writes testset.jsonl, hyp/SYSTEM.txt, verdicts.tsv and
manifest.json (counts of every row left out, by reason).

example:
  mwemt meta-eval mwe-test --mqm mqm_ted_ende.tsv --lexicon oewn_english_mwe_lemmas.tsv --lang de --out ende-mwe/"""

MWE_AGREEMENT_EPILOG = """\
Prints AUC and point-biserial r (95% CIs: bootstrap over sentences) of the MWE verdict, today's mwe and
mwe-p, and sentence chrF against the people's verdicts: the adjudicated TED EN->IT checks (all, and those
whose reference the annotators checked), the verdict cross-validated by sentence with fixed folds; and
with --mqm, an MQM file's MWE verdicts (`mwe-test`), judged by the model fitted on EN->IT alone (--model,
default the bundled one), which never sees those rows. The targets of issue 41 are reported as met or not.

example:
  mwemt meta-eval mwe-agreement --it-checks test_ted.mwe_pairs.tsv --dictionary en-ita.multiwordnet.tsv \\
      --mqm mqm_ted_ende.tsv --lexicon oewn_english_mwe_lemmas.tsv"""

MWE_TRAIN_EPILOG = """\
Fits the MWE verdict's logistic regression on every adjudicated TED EN->IT check (features:
mwemt.evaluate.mwe_verdict.FEATURES; each line aligned as the MWE scores align, the table of the test's own
source/reference alignment, --dictionary for the literal signal) and writes it as JSON with its
cross-validated agreement (fixed folds by sentence id). The bundled model is
mwemt/data/evaluate/mwe-verdict.en-it.json.

example:
  mwemt meta-eval mwe-verdict-train --it-checks test_ted.mwe_pairs.tsv --dictionary en-ita.multiwordnet.tsv \\
      -o mwemt/data/evaluate/mwe-verdict.en-it.json"""


def _configure_mwe(sub) -> None:
    from mwemt.evaluate.bootstrap import MAX_SAMPLES, MIN_SAMPLES

    fmt = argparse.RawDescriptionHelpFormatter
    t = sub.add_parser("mwe-test", help="turn an MQM file into an MWE agreement test (verdicts per MWE)",
                       description="Turn an MQM file with error spans into MWE verdicts (Y/N per source MWE "
                                   "and system line).", epilog=MWE_TEST_EPILOG, formatter_class=fmt)
    _mqm_args(t, required=True)
    t.add_argument("--out", "-o", required=True, metavar="DIR", help="output directory")
    tr = sub.add_parser("mwe-verdict-train", help="fit the MWE verdict model on the TED EN->IT checks",
                        description="Fit the MWE verdict's model on the adjudicated TED EN->IT checks.",
                        epilog=MWE_TRAIN_EPILOG, formatter_class=fmt)
    _it_args(tr, required=True)
    tr.add_argument("--output", "-o", required=True, metavar="FILE", help="the model (JSON), written atomically")
    a = sub.add_parser("mwe-agreement", help="agreement of the MWE verdict, mwe, mwe-p and chrF with people's "
                                             "MWE verdicts (EN->IT checks, MQM spans)",
                       description="Print the agreement of MWE scores with human MWE verdicts.",
                       epilog=MWE_AGREEMENT_EPILOG, formatter_class=fmt)
    _it_args(a, required=True)
    _mqm_args(a, required=False)
    a.add_argument("--model", metavar="FILE", help="the verdict model judging the MQM rows (default: the bundled "
                                                    "one, fitted on the EN->IT checks)")
    a.add_argument("--bootstrap", type=int_range(MIN_SAMPLES, MAX_SAMPLES, special={0: "no intervals"}),
                   default=1000, help="bootstrap resamples of sentences for the 95%% CIs (default: %(default)s)")
    a.add_argument("--seed", type=seed(), default=12345, help="bootstrap seed (default: %(default)s)")
    a.add_argument("--json", action="store_true", help="write JSON with provenance instead of the table")
    a.add_argument("--output", "-o", default="-", help="output file, written atomically (default: stdout)")


def _it_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--it-checks", required=required, metavar="TSV",
                   help="the TED EN->IT MWE checks (test_ted.mwe_pairs.tsv of the Zaninello & Birch data)")
    p.add_argument("--dictionary", metavar="PATH", help="EN->IT bilingual dictionary for the literal signal "
                                                         "(e.g. en-ita.multiwordnet.tsv; default: none)")


def _mqm_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--mqm", required=required, metavar="TSV", help="MQM file with error spans (wmt-mqm-errors or "
                                                                    "marot-sxs)")
    p.add_argument("--lexicon", metavar="PATH", help="source MWE lexicon (e.g. oewn_english_mwe_lemmas.tsv); "
                                                      "required with --mqm")
    p.add_argument("--lang", default="de", type=language_code, help="target language of the MQM file "
                                                                     "(default: %(default)s)")
    p.add_argument("--reference-system", metavar="NAME",
                   help="the rated system whose lines are the references (default: the one named like ref)")


def _metric_name(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if sep and name and not Path(spec).exists():
        return name, path
    base = Path(spec).name
    for suffix in (".seg.tsv", ".tsv"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base, spec


def run(args: argparse.Namespace) -> int:
    if args.action == "extract":
        return _extract(args)
    if args.action == "mwe-test":
        return _mwe_test(args)
    if args.action == "mwe-verdict-train":
        return _mwe_verdict_train(args)
    if args.action == "mwe-agreement":
        return _mwe_agreement(args)
    return _meta_eval(args)


def _mqm_test(args: argparse.Namespace):
    from mwemt.evaluate.mqm_mwe import MqmMweRules, mqm_judgements, source_annotator

    if not args.lexicon:
        raise MwemtError("--mqm needs --lexicon: the source MWE lexicon (e.g. oewn_english_mwe_lemmas.tsv)")
    say = lambda msg: print(f"mwemt meta-eval: {msg}", file=sys.stderr)  # noqa: E731
    return mqm_judgements(args.mqm, source_annotator(args.lexicon), tgt_lang=args.lang,
                          rules=MqmMweRules(reference_system=args.reference_system), progress=say)


def _mwe_test(args: argparse.Namespace) -> int:
    from mwemt.evaluate.mqm_mwe import write_judgements
    from mwemt.fileio import check_output_paths
    from mwemt.provenance import manifest, write_json

    out = Path(args.out)   # an input inside --out named like an output: refused before any work
    check_output_paths({f"--out ({name})": out / name for name in ("testset.jsonl", "verdicts.tsv", "manifest.json")},
                       {"--mqm": args.mqm, "--lexicon": args.lexicon})
    judgements = _mqm_test(args)
    paths = write_judgements(args.out, judgements)
    write_json(Path(args.out) / "manifest.json", manifest(
        "meta-eval-mwe-test", inputs={"mqm": args.mqm, "lexicon": args.lexicon},
        config={k: v for k, v in vars(args).items() if not k.startswith("_")},
        counts=judgements.counts, alignment=judgements.alignment, files={k: str(v) for k, v in paths.items()}))
    print(f"{judgements.summary()}; wrote {args.out}", file=sys.stderr)
    return 0


def _it_features(args: argparse.Namespace):
    from mwemt.evaluate.mwe_agreement import prepare_it_checks, verdict_features, verdict_scorer

    dictionary, name = _dictionary(args.dictionary)
    it = prepare_it_checks(args.it_checks)
    return it, verdict_features(it, verdict_scorer(it, dictionary=dictionary, dictionary_name=name)), name


def _dictionary(path: str | None):
    if not path:
        return None, ""
    from mwemt.evaluate.liter import word_dictionary
    from mwemt.testsets.mwe_table import read_dictionary

    return word_dictionary(read_dictionary(path, min_words=1)), Path(path).name


def _mwe_verdict_train(args: argparse.Namespace) -> int:
    from mwemt.evaluate.mwe_agreement import train_verdict

    it, X, dictionary = _it_features(args)
    model, _ = train_verdict(it, X, extra_meta={"dictionary": dictionary or "none",
                                                "table": "the test's own source/reference alignment"})
    model.write(args.output)
    cv = model.meta["cross_validation"]
    print(f"{it.summary()}; cross-validated AUC {cv['auc']:.3f}, r {cv['point_biserial_r']:.3f}; "
          f"model {model.name}@{model.fingerprint()} written to {args.output}", file=sys.stderr)
    return 0


def _mwe_agreement(args: argparse.Namespace) -> int:
    from mwemt.evaluate.mwe_agreement import (
        agreement_report,
        format_report,
        verdict_features,
        verdict_scorer,
    )
    from mwemt.evaluate.mwe_verdict import VerdictModel, bundled_model, cross_validated_probabilities
    from mwemt.fileio import atomic_write
    from mwemt.provenance import manifest, write_json

    if not args.mqm:   # the MQM options judge the MQM rows only: refused without them, not ignored
        given = [flag for flag, on in (("--lexicon", args.lexicon), ("--reference-system", args.reference_system),
                                       ("--model", args.model), ("--lang", args.lang != "de")) if on]
        if given:
            raise MwemtError(f"{given[0]} is read only with --mqm (the EN->IT checks are judged by a model "
                             f"cross-validated on them): give --mqm TSV --lexicon PATH, or drop {given[0]}")
    model = VerdictModel.read(args.model) if args.model else bundled_model()
    it, X_it, _ = _it_features(args)
    p_it = cross_validated_probabilities(X_it, it.labels(), it.groups())
    de = X_de = None
    if args.mqm:
        de = _mqm_test(args)
        X_de = verdict_features(de, verdict_scorer(de, model=model))
    report = agreement_report(it, X_it, p_it, de, X_de, model, n_boot=args.bootstrap, seed=args.seed)
    if args.json:
        inputs = {"it_checks": args.it_checks, **({"mqm": args.mqm, "lexicon": args.lexicon} if args.mqm else {}),
                  **({"dictionary": args.dictionary} if args.dictionary else {}),
                  **({"model": args.model} if args.model else {})}
        write_json(args.output, {**report.as_dict(), "provenance": manifest(
            "meta-eval-mwe-agreement", inputs=inputs, seed=args.seed,
            config={k: v for k, v in vars(args).items() if not k.startswith("_") and k != "output"})})
    else:
        with atomic_write(args.output) as fh:
            fh.write(format_report(report))
    return 0


def _meta_eval(args: argparse.Namespace) -> int:
    from mwemt.evaluate.human_scores import MqmWeights, load_human_scores
    from mwemt.evaluate.meta_compare import compare_metrics
    from mwemt.evaluate.meta_eval import build_grid, read_segment_scores
    from mwemt.evaluate.report import format_clusters, format_meta_table, format_paired_table
    from mwemt.fileio import atomic_write
    from mwemt.provenance import manifest, write_json

    if not args.human or not args.metric:
        raise MwemtError("give --human and at least one --metric (or the extract action); see --help")
    metrics = [_metric_name(s) for s in args.metric]
    names = [n for n, _ in metrics]
    if len(set(names)) != len(names):
        raise MwemtError(f"two metrics share a name ({', '.join(names)}); use NAME=PATH")
    unknown = set(args.metric_lower_better) - set(names)
    if unknown:
        raise MwemtError(f"--metric-lower-better names unknown metric(s): {', '.join(sorted(unknown))}")
    focus = _compare_pair(args.compare, names)
    human = load_human_scores(args.human, args.human_format, lower_better=args.human_lower_better,
                              weights=MqmWeights.load(args.mqm_weights))
    for w in human.warnings:
        flag = "drop --human-lower-better" if args.human_lower_better else "pass --human-lower-better"
        print(f"mwemt meta-eval: warning: {w} ({flag})", file=sys.stderr)
    human_scores = human.oriented()
    known = sorted({s for s, _ in human_scores})
    unknown_systems = [s for s in dict.fromkeys(args.exclude_system) if s not in known]
    if unknown_systems:
        raise MwemtError(f"--exclude-system {', '.join(unknown_systems)}: no such system in {args.human} "
                         f"(its systems: {', '.join(known)})")
    grids = {}
    for name, path in metrics:
        scores = read_segment_scores(path, negate=name in args.metric_lower_better)
        _check_coverage(human_scores, scores, path, args)
        grid = build_grid(human_scores, scores, exclude_systems=args.exclude_system)
        if not grid.valid.any():
            raise MwemtError(f"{path}: no (system, seg_id) pair in common with {args.human}")
        if focus is None or name in focus:
            grids[name] = grid
    if focus is not None:  # A - B in the order asked for, whatever the order of --metric
        grids = {n: grids[n] for n in focus}
    comparison = compare_metrics(grids, n_bootstrap=args.bootstrap, n_permutations=args.permutations,
                                 seed=args.seed, pairs=[focus] if focus is not None else None,
                                 progress=sys.stderr.isatty())
    if args.json:
        config = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "output"}
        inputs = {"human": args.human, **{f"metric:{n}": p for n, p in metrics}}
        if human.weights and human.weights.startswith("file:"):
            inputs["mqm_weights"] = args.mqm_weights
        write_json(args.output, {**comparison.as_dict(),
                                 "human": {"format": human.format, "orientation": human.orientation,
                                           "mqm_weights": human.weights, "warnings": human.warnings,
                                           "checks": human.checks},
                                 "orientation": "higher is better for every score (error scores negated)",
                                 "provenance": manifest("meta-eval", inputs=inputs, config=config, seed=args.seed)})
    else:
        parts = [human.describe(), format_meta_table(comparison.results) + _undefined_note(comparison.results)]
        if comparison.pairs:
            parts.append(format_paired_table(comparison))
        if comparison.clusters and len(grids) > 2:
            parts.append(format_clusters(comparison))
        with atomic_write(args.output) as fh:
            fh.write("\n".join(parts))
    return 0


def _undefined_note(results) -> str:
    """Lines explaining every statistic shown as nan: undefined on these scores, and why."""
    from mwemt.evaluate.report import SHORT_LABELS

    lines = []
    for r in results:
        for key, why in r.undefined.items():
            lines.append(f"  {r.metric} {SHORT_LABELS.get(key, key)}: {why}")
    if not lines:
        return ""
    return "nan: the statistic is undefined on these scores, because\n" + "\n".join(lines) + "\n"


def _compare_pair(spec: str | None, names: list[str]) -> tuple[str, str] | None:
    if spec is None:
        return None
    pair = tuple(x.strip() for x in spec.split(","))
    if len(pair) != 2 or pair[0] == pair[1]:
        raise MwemtError(f"--compare {spec!r}: expected two different metric names, A,B")
    unknown = [x for x in pair if x not in names]
    if unknown:
        raise MwemtError(f"--compare names {', '.join(unknown)}, not a --metric (have: {', '.join(names)})")
    return pair  # type: ignore[return-value]


def _check_coverage(human_scores, scores, path: str, args: argparse.Namespace) -> None:
    """Stop when a metric file lacks many judged items (segment ids that do not line up), warn for a few."""
    from mwemt.evaluate.meta_eval import coverage

    cov = coverage(human_scores, scores, args.exclude_system)
    if not cov.missing:
        return
    message = cov.describe(path, args.human)
    if cov.noticeable and not args.allow_partial:
        hint = ("; pass --exclude-system for systems that are not scored (e.g. the reference)"
                if cov.missing_systems else "")
        raise MwemtError(f"{message}. The segment ids probably do not line up: score with the ids of the "
                         f"judgements (mwemt score --ids ids.txt, or --testset testset.jsonl from meta-eval "
                         f"extract){hint}, or pass --allow-partial to correlate the common items only")
    print(f"mwemt meta-eval: warning: {message}; correlating the common items", file=sys.stderr)


def _extract(args: argparse.Namespace) -> int:
    from mwemt.fileio import read_lines
    from mwemt.judgements import (
        build_extract,
        check_human_format,
        collect_texts,
        guess_reference_system,
        match_source_lines,
        read_mqm_ratings,
        write_extract,
    )
    from mwemt.provenance import manifest, write_json

    if args.reference_text and not args.source_text:
        raise MwemtError("--reference-text needs --source-text: segments are matched to its lines by source text")
    fmt = check_human_format(args.human, args.human_format)
    texts = collect_texts(read_mqm_ratings(args.human, fmt), args.human)
    if args.reference_text and args.reference_system not in (None, "none"):
        raise MwemtError("give --reference-system or --reference-text, not both")
    if args.reference_text or args.reference_system == "none":
        ref_system = None
    else:
        ref_system = args.reference_system or guess_reference_system(texts.systems)
    line_match = None
    if args.source_text:
        line_match = match_source_lines(texts, read_lines(args.source_text), args.source_text)
    extract = build_extract(texts, reference_system=ref_system, line_match=line_match,
                            reference_lines=read_lines(args.reference_text) if args.reference_text else None)
    paths = write_extract(args.out, extract)
    inputs = {"human": args.human}
    for key in ("source_text", "reference_text"):
        if getattr(args, key):
            inputs[key] = getattr(args, key)
    counts = {"segments": len(extract.ids), "systems": len(extract.hypotheses), "format": fmt,
              "segments_left_out": len(extract.left_out), "reference": extract.reference_from,
              "whitespace_variants": texts.whitespace_variants}
    if line_match is not None:
        counts.update(source_lines_exact=line_match.exact, source_lines_whitespace=line_match.whitespace,
                      source_lines_by_document=line_match.by_document)
    write_json(Path(args.out) / "manifest.json", manifest(
        "meta-eval-extract", inputs=inputs, config={k: v for k, v in vars(args).items() if not k.startswith("_")},
        counts=counts, files={k: str(v) for k, v in paths.items()}, left_out=extract.left_out))
    _report_extract(args, extract, texts, line_match, paths)
    return 0


def _report_extract(args, extract, texts, line_match, paths) -> None:
    from mwemt.judgements import REFERENCE_SYSTEM

    say = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
    say(f"{args.human}: {len(texts.ids)} segments, {len(texts.systems)} systems; wrote {len(extract.ids)} "
        f"segments x {len(extract.hypotheses)} systems to {args.out} (references: {extract.reference_from})")
    if extract.left_out:
        say(f"left out {len(extract.left_out)} segments that not every system has, e.g. "
            f"{next(iter(extract.left_out))} (see manifest.json)")
    if texts.whitespace_variants:
        say(f"{texts.whitespace_variants} items were shown to raters with whitespace-only differences; "
            "the most frequent text is kept")
    if line_match is not None:
        say(f"sources found in {args.source_text}: {line_match.exact} exactly, {line_match.whitespace} ignoring "
            f"whitespace, {line_match.by_document} of them on several lines placed by their document")
    if extract.references is None:
        named = [s for s in texts.systems if REFERENCE_SYSTEM.match(s)]
        say("no references written: " + (f"several systems are named like one ({', '.join(named)}); "
            if named else "") + "name one with --reference-system, or give --source-text and --reference-text")
    if "testset" in paths:
        hyps = " ".join(f"--hyp {shlex.quote(s + '=' + str(paths['hyp:' + s]))}" for s in extract.hypotheses)
        print(f"mwemt score --testset {shlex.quote(str(paths['testset']))} {hyps} "
              f"--metrics bleu,chrf --sentence-scores {shlex.quote(str(Path(args.out) / 'seg'))}")
