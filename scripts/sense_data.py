#!/usr/bin/env python
"""Build a run's MWE translation table as the mwe_table stage does, with its sense contexts and target
forms (issue 42, items 1 and 2): annotate the training sources with the lexicon, align the pairs (eflomal,
its cache), count each MWE's aligned translations, keep the source context of every counted occurrence
(`mwemt.testsets.senses`), add the dictionary; then index the training target's forms by lemma sequence
(`mwemt.testsets.forms`).

Only the training pairs and the dictionary are read; never a test set.

    python scripts/sense_data.py --train-src runs/R/stages/corpus/shared/*/train.en \\
        --train-tgt runs/R/stages/corpus/shared/*/train.it --out runs/issue42
writes OUT/table.jsonl, OUT/senses.jsonl.gz, OUT/forms.jsonl.gz and OUT/sense_data.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
OEWN = SHARED / "lexicons" / "wordnet-mwe" / "derived" / "oewn_english_mwe_lemmas.tsv"
MULTIWORDNET = SHARED / "lexicons" / "wordnet-mwe" / "derived" / "en-ita.multiwordnet.tsv"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train-src", required=True)
    ap.add_argument("--train-tgt", required=True)
    ap.add_argument("--lexicon", default=str(OEWN))
    ap.add_argument("--lexicon-format", default="oewn")
    ap.add_argument("--dictionary", default=str(MULTIWORDNET))
    ap.add_argument("--src-lang", default="en")
    ap.add_argument("--tgt-lang", default="it")
    ap.add_argument("--samplers", type=int, default=3, help="eflomal samplers (the mwe_table stage's: 3)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)

    from mwemt.fileio import iter_parallel
    from mwemt.preprocess.annotate import AnnotatorConfig, PreprocessConfig, build_annotator
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.provenance import file_record, write_json
    from mwemt.testsets.align import AlignConfig, align, default_cache_dir, tokenize_side
    from mwemt.testsets.forms import FormIndex
    from mwemt.testsets.mwe_table import MweTranslationTable, read_dictionary
    from mwemt.testsets.senses import DictionarySenses, SenseContextBuilder

    t0 = time.perf_counter()
    say = lambda msg: print(f"[{time.perf_counter() - t0:6.1f}s] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pre = PreprocessConfig()
    annotator = build_annotator(AnnotatorConfig.of(pre, lang=args.src_lang, lexicon=(args.lexicon,),
                                                   lexicon_format=args.lexicon_format))
    pairs = [(s, t) for s, t in iter_parallel(args.train_src, args.train_tgt, allow_empty=True)
             if s.strip() and t.strip()]
    sentences = [annotator.annotate_text(s) for s, _ in pairs]
    tgt = tokenize_side([t for _, t in pairs], args.tgt_lang, pre.pretokenized)
    say(f"{len(pairs):,} pairs annotated and tokenized")
    links = align([s.tokens for s in sentences], tgt, config=AlignConfig(samplers=args.samplers),
                  cache_dir=default_cache_dir())
    say("aligned")
    builder = SenseContextBuilder([s.lemmas for s in sentences])
    table, counts = MweTranslationTable.build_from_alignment(
        sentences, tgt, links, observe=builder.observe,
        provenance={"built_by": "scripts/sense_data.py (as the mwe_table stage)", "annotator": annotator.signature,
                    "pairs": len(pairs)})
    n_dict = table.add_dictionary(read_dictionary(args.dictionary, "wn-aligned"), lang=args.tgt_lang)
    table.write(out / "table.jsonl")
    say(f"table {table.signature()}")
    lem_t = get_lemmatizer("simplemma", args.tgt_lang)
    tgt_lemmas = [[x.casefold() for x in lem_t.lemmatize([w.casefold() for w in t])] for t in tgt]
    senses = DictionarySenses.read(args.dictionary, lang=args.tgt_lang, keys=table.keys())
    contexts = builder.build(tgt_lemmas, senses, target_lemmatizer=lem_t,
                             provenance={"table": table.signature(), "pairs": len(pairs),
                                         "train_src": file_record(args.train_src),
                                         "train_tgt": file_record(args.train_tgt),
                                         "dictionary": file_record(args.dictionary)})
    contexts.write(out / "senses.jsonl.gz")
    say(f"sense contexts {contexts.signature()}")
    forms = FormIndex.build(table, tgt, tgt_lemmas, lemmatizer=lem_t,
                            provenance={"table": table.signature(), "train_tgt": file_record(args.train_tgt)})
    forms.write(out / "forms.jsonl.gz")
    say(f"forms {forms.signature()}")
    write_json(out / "sense_data.json", {"table": table.signature(), "alignment": counts, "dictionary_entries": n_dict,
                                         "senses": contexts.signature(), "tuning": contexts.provenance.get("tuning"),
                                         "dictionary_tuning": contexts.provenance.get("dictionary_tuning"),
                                         "forms": forms.signature()})
    return 0


def _main() -> int:
    from mwemt.errors import MwemtError

    try:
        return main()
    except MwemtError as exc:   # bad input: the file, line and expectation, exit 2, no traceback
        print(f"sense_data: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_main())
