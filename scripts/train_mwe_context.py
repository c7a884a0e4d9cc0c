#!/usr/bin/env python
"""Train the MWE-in-context classifier for a lexicon without annotated data (default: OEWN) and
save it with its provenance (`mwemt.preprocess.mwe_context`; docs/identification.md).

Training data: every look-up match of the lexicon in the sentences of annotated English corpora,
positive when it is exactly an annotated MWE:

- DiMSUM 2016 train (MWEs of every kind), all of it;
- PARSEME 1.1 EN train.cupt (verbal MWEs only, so only matches of verbal entries are examples):
  sentence k (0-based) is held out when k % 5 == 0 (never read here; scored by
  studies/identification/identify_context_eval.py), used for training otherwise.

Development data is out of fold: the sentences are split into ``--folds`` seeded folds; for each,
a model trained on the others (entry counts from the others, and for its own training rows from
neither their fold nor the held-out one) gives probabilities to the held-out fold's DiMSUM
sentences. Feature set (with / without the sentence encoder, which must gain >= 1 point of recall
to be taken), L2 strength and threshold are chosen on these out-of-fold probabilities: the most
recall at exact precision >= ``--target-precision``, the threshold the lowest reaching it. PARSEME
sentences train but do not choose: their annotation covers verbal MWEs only, and sparsely, so
their "precision" would count unannotated genuine MWEs as errors. The saved model is trained on
every sentence (out-of-fold entry counts for its rows) and keeps the counts of all of them plus
the raw-corpus statistics (``--max-lines`` lines of ``--raw-corpus``). DiMSUM test is not read.

    python scripts/train_mwe_context.py --work runs/mwe_context          # rebuilds mwemt/data/identification/...
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path

import numpy as np

from mwemt.fileio import sha256_file
from mwemt.formats import read_cupt, read_lexicon_entries
from mwemt.preprocess.identify import find_candidates
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.preprocess.mwe_context import (
    BUNDLED,
    FEATURES,
    ContextThresholds,
    Evidence,
    Example,
    MweContextModel,
    choose_threshold,
    count_evidence,
    fit,
    label_matches,
    read_dimsum,
)
from mwemt.provenance import versions

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
DIMSUM_TRAIN = SHARED / "mwe-corpora" / "dimsum16" / "dimsum16.train"
PARSEME_TRAIN = SHARED / "mwe-corpora" / "parseme-1.1" / "EN" / "train.cupt"
OEWN = SHARED / "lexicons" / "wordnet-mwe" / "derived" / "oewn_english_mwe_lemmas.tsv"
WIKI = SHARED / "monolingual" / "enwiki-2015-sample" / "enwiki-2015.en.txt.gz"
L2_GRID = (1.0, 10.0, 100.0)
ENCODER_WEIGHTS = (0.05, 0.15, 0.5)


def rel(p: str | Path) -> str:
    """A path relative to the repository (or to its parent, for ../shared), never absolute."""
    p = Path(p).resolve()
    for base, prefix in ((ROOT, ""), (ROOT.parent, "../")):
        try:
            return prefix + str(p.relative_to(base))
        except ValueError:
            continue
    return p.name


def parseme_sentences(path) -> list[tuple[list[str], list]]:
    return [([w.form for w in cs.words], cs.mwes()) for cs in read_cupt(path)]


def parseme_split(k: int) -> str:
    """The split of PARSEME sentence ``k`` (0-based): every fifth is held out for evaluation."""
    return "heldout" if k % 5 == 0 else "train"


def load_lexicon(path, fmt: str, surface: bool = True) -> Lexicon:
    entries = read_lexicon_entries(path, fmt, lang="en")
    return Lexicon(entries, get_lemmatizer("simplemma", "en"), lang="en", name=Path(path).name,
                   surface_agreement=surface)


def sentence_candidates(forms, lexicon: Lexicon, max_gap: int, verbal_only: bool):
    """(lemmas, candidates) of one sentence; ``verbal_only``: matches of verbal entries only."""
    lemmas = lexicon.lemmatizer.lemmatize(forms)
    cands = find_candidates(lemmas, lexicon, max_gap, forms=forms)
    if verbal_only:
        cands = [m for m in cands if m.category.startswith("verb.")]
    return lemmas, cands


def function_words_of(corpus, lines: int, top: int) -> list[str]:
    """The ``top`` most frequent lemmas of the first ``lines`` lines of ``corpus``."""
    import itertools
    from collections import Counter

    from mwemt.fileio import iter_lines
    from mwemt.preprocess.tokenize import tokenize

    lem = get_lemmatizer("simplemma", "en")
    freq: Counter = Counter()
    for line in itertools.islice(iter_lines(corpus, allow_empty=True), lines):
        freq.update(w for w in lem.lemmatize(tokenize(line, "en")) if any(c.isalpha() for c in w))
    return [w for w, _ in freq.most_common(top)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lexicon", default=str(OEWN))
    ap.add_argument("--lexicon-format", default="oewn")
    ap.add_argument("--dimsum-train", default=str(DIMSUM_TRAIN))
    ap.add_argument("--parseme-train", default=str(PARSEME_TRAIN))
    ap.add_argument("--raw-corpus", default=str(WIKI))
    ap.add_argument("--max-lines", type=int, default=200000, help="raw-corpus lines counted (default: %(default)s)")
    ap.add_argument("--function-words", type=int, default=100, help="most frequent corpus lemmas taken as "
                                                                    "function words (default: %(default)s)")
    ap.add_argument("--max-gap", type=int, default=0, help="look-up gap (default: %(default)s, as testset build)")
    ap.add_argument("--folds", type=int, default=5, help="cross-validation folds (default: %(default)s)")
    ap.add_argument("--target-precision", type=float, default=0.75)
    ap.add_argument("--encoder", choices=("auto", "yes", "no"), default="no",
                    help="use the sentence encoder (needs mwemt[contextual]): auto = if it gains >= 1 point of "
                         "out-of-fold recall (default: %(default)s: the bundled model must work without optional "
                         "dependencies, and the encoder gained 1.3 points of recall for 0.8 of precision)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="runs/mwe_context", help="cache for encodings and corpus statistics")
    ap.add_argument("--out", default=str(BUNDLED))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    say = lambda msg: print(f"[{time.perf_counter() - t0:6.1f}s] {msg}", file=sys.stderr)  # noqa: E731

    lexicon = load_lexicon(args.lexicon, args.lexicon_format)
    rng = random.Random(args.seed)
    dimsum = read_dimsum(args.dimsum_train)
    parseme = parseme_sentences(args.parseme_train)
    # (corpus, forms, gold, verbal_only); every sentence is in one of --folds seeded folds
    sentences = [("dimsum", f, g, False) for f, g in dimsum]
    sentences += [("parseme", f, g, True) for k, (f, g) in enumerate(parseme) if parseme_split(k) == "train"]
    fold_of = [rng.randrange(args.folds) for _ in sentences]
    say(f"{len(sentences)} sentences ({len(dimsum)} DiMSUM train, {len(sentences) - len(dimsum)} PARSEME EN "
        f"train, {len(parseme) - (len(sentences) - len(dimsum))} PARSEME held out); lexicon {len(lexicon)} entries")

    # candidates and labels
    data = []  # (corpus, forms, lemmas, gold, candidates, labels)
    for corpus, forms, gold, verbal in sentences:
        lemmas, cands = sentence_candidates(forms, lexicon, args.max_gap, verbal)
        data.append((corpus, forms, lemmas, gold, cands, label_matches(cands, gold)))
    examples = [(i, Example(i, m, y)) for i, d in enumerate(data) for m, y in zip(d[4], d[5])]
    say(f"{len(examples)} look-up matches, {sum(e.label for _, e in examples)} of them annotated MWEs")

    # raw-corpus statistics and function words
    corpus_file = work / f"corpus.{args.max_lines}.gap{args.max_gap}.json"
    from mwemt.preprocess.corpus_filters import CorpusFilterModel, CorpusThresholds, estimate_from_corpus

    if corpus_file.is_file():
        corpus_model = CorpusFilterModel.load(corpus_file)
    else:
        corpus_model = estimate_from_corpus(lexicon, args.raw_corpus, max_lines=args.max_lines,
                                            thresholds=CorpusThresholds(max_gap=args.max_gap))
        corpus_model.save(corpus_file)
    fw_file = work / f"function_words.{args.function_words}.txt"
    if not fw_file.is_file():
        fw_file.write_text("\n".join(function_words_of(args.raw_corpus, 20000, args.function_words)) + "\n")
    function_words = frozenset(fw_file.read_text().split())
    say(f"raw corpus: {corpus_model.meta['source']['sentences']} lines; {len(function_words)} function words")

    # evidence: annotated / matched counts from the sentences outside some folds, + corpus statistics
    memo: dict[frozenset, dict] = {}

    def counts_without(folds: set[int]) -> dict:
        key = frozenset(folds)
        if key not in memo:
            memo[key] = count_evidence(e for i, e in examples if fold_of[i] not in key)
        return memo[key]

    prior = sum(e.label for _, e in examples) / max(1, len(examples))

    def evidence_of(key: str, table: dict) -> Evidence:
        c = table.get(key, [0, 0])
        st = corpus_model.entries.get(key)
        if st is None or not (st.fixed or st.gapped):
            return Evidence(c[0], c[1])
        return Evidence(c[0], c[1], st.association, st.variability, st.fixed + st.gapped)

    # encodings (cached)
    need = [i for i, d in enumerate(data) if d[4]]
    h = hashlib.sha256(repr([(data[i][1], [m.indices for m in data[i][4]]) for i in need]).encode()).hexdigest()[:12]
    enc_file = work / f"encodings.{h}.npy"
    encoded: dict[int, np.ndarray] = {}
    if args.encoder != "no":
        if enc_file.is_file():
            flat = np.load(enc_file)
        else:
            import torch

            torch.set_num_threads(2)
            from mwemt.preprocess.context import OccurrenceEncoder

            say(f"encoding {len(need)} sentences")
            enc = OccurrenceEncoder()
            rows = enc.encode([data[i][1] for i in need], [[m.indices for m in data[i][4]] for i in need])
            flat = np.vstack(rows)
            np.save(enc_file, flat)
        at = 0
        for i in need:
            encoded[i] = flat[at:at + len(data[i][4])]
            at += len(data[i][4])
        say("encodings ready")

    def design(i: int, left_out: set[int], use_encoder: bool) -> np.ndarray:
        """Features of sentence i's matches, entry counts taken without the folds ``left_out``."""
        from mwemt.preprocess.mwe_context import occurrence_features

        _, forms, lemmas, _, cands, _ = data[i]
        table = counts_without(left_out)
        override = [evidence_of(m.lemma, table) for m in cands]
        x = occurrence_features(cands, forms, lemmas, {}, function_words, prior, override)
        return np.hstack([x, encoded[i]]) if use_encoder else x

    def labels(ids) -> np.ndarray:
        return np.concatenate([np.asarray(data[i][5], dtype=np.float64) for i in ids])

    # cross-validation: out-of-fold probabilities for every DiMSUM train sentence, per setting
    dimsum_ids = [i for i, d in enumerate(data) if d[0] == "dimsum"]
    variants = [False, True] if args.encoder == "auto" else [args.encoder == "yes"]
    results = []
    for use_encoder in variants:
        settings = [(l2, ew) for l2 in L2_GRID for ew in (ENCODER_WEIGHTS if use_encoder else (1.0,))]
        scored: dict[tuple, list] = {st: [] for st in settings}
        for f in range(args.folds):
            train = [i for i in need if fold_of[i] != f]
            # training rows: entry counts from neither the held-out fold nor the row's own fold
            x = np.vstack([design(i, {f, fold_of[i]}, use_encoder) for i in train])
            y = labels(train)
            held = [i for i in dimsum_ids if fold_of[i] == f]
            xh = {i: design(i, {f}, use_encoder) for i in held if data[i][4]}
            for st in settings:
                mean, scale, w, b = fit(x, y, *st)
                for i in held:
                    probs = list(1 / (1 + np.exp(-(((xh[i] - mean) / scale) @ w + b)))) if i in xh else []
                    scored[st].append((data[i][3], data[i][4], probs))
        for (l2, ew), sc in scored.items():
            t, prf = choose_threshold(sc, args.target_precision)
            say(f"encoder {use_encoder!s:5} (weight {ew:g}) l2 {l2:6g}: CV threshold {t:.2f}  {prf.row()}")
            results.append((prf.precision >= args.target_precision, prf.recall, prf.precision, use_encoder, l2, t,
                            prf, sc, ew))
    # the encoder costs a forward pass per sentence: take it only if it gains >= 1 point of recall
    best = max(results, key=lambda r: r[:3])
    plain = [r for r in results if not r[3]]
    if best[3] and plain:
        best_plain = max(plain, key=lambda r: r[:3])
        if best_plain[0] >= best[0] and best[1] < best_plain[1] + 0.01:
            best = best_plain
    _, _, _, use_encoder, l2, threshold, prf, sc, ew = best
    say(f"chosen: encoder {use_encoder} (weight {ew:g}), l2 {l2:g}, threshold {threshold:.2f}: CV {prf.row()}")
    curve = {}
    for t in (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        _, at = choose_threshold(sc, 2.0, [t])
        curve[str(t)] = at.to_json()
        say(f"  DiMSUM train, out of fold, threshold {t:.2f}: {at.row()}")

    # the model: every sentence, out-of-fold entry counts for the training rows, all counts kept
    x = np.vstack([design(i, {fold_of[i]}, use_encoder) for i in need])
    mean, scale, w, b = fit(x, labels(need), l2, ew)
    counts = counts_without(set())
    keys = set(counts) | {k for k, st in corpus_model.entries.items() if st.fixed or st.gapped}
    entries = {k: evidence_of(k, counts) for k in sorted(keys)}
    train_ids = need

    inputs = {name: {"path": rel(p), "sha256": sha256_file(p)}
              for name, p in (("lexicon", args.lexicon), ("dimsum_train", args.dimsum_train),
                              ("parseme_train", args.parseme_train), ("raw_corpus", args.raw_corpus))}
    meta = {"source": {"inputs": inputs, "seed": args.seed, "max_lines": args.max_lines,
                       "lexicon": f"{lexicon.name}@{lexicon.fingerprint()}", "lemmatizer": "simplemma:en",
                       "splits": {"folds": f"{args.folds} folds, each sentence's drawn with seed {args.seed}",
                                  "dimsum_train": "all sentences: training, and out-of-fold development",
                                  "parseme_train": "sentence k (0-based): k % 5 == 0 held out (not used), "
                                                   "else training; matches of verbal entries only"},
                       "script": "scripts/train_mwe_context.py"},
            "development": {"selection": f"recall at exact precision >= {args.target_precision:g}, out-of-fold "
                                         "on DiMSUM train",
                            "l2": l2, "encoder": use_encoder, "encoder_weight": ew, "scores": prf.to_json(),
                            "grid": [{"encoder": r[3], "encoder_weight": r[8], "l2": r[4], "threshold": r[5],
                                      **r[6].to_json()}
                                     for r in results]},
            "development_curve": {"dimsum_train_out_of_fold": curve},
            "training": {"examples": int(sum(len(data[i][4]) for i in train_ids)),
                         "positives": int(sum(sum(data[i][5]) for i in train_ids)), "features": list(FEATURES)},
            "versions": versions()}
    model = MweContextModel(entries, ContextThresholds(args.max_gap, threshold), prior=prior,
                            function_words=function_words, mean=mean, scale=scale, weights=w, bias=b,
                            use_encoder=use_encoder, meta=meta)
    model.save(args.out)
    say(f"wrote {args.out} ({Path(args.out).stat().st_size:,} bytes; {len(entries)} entries); signature "
        f"{model.signature}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
