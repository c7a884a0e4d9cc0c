"""What the per-line checks and factor projection of `mwemt subword` cost over bare sentencepiece.

    python bench/subword.py [--sentences 20000] [--vocab-size 8000] [--corpus TSV-or-text]

Trains one BPE model on the English side of the corpus (Tatoeba EN-IT by default; the test fixture
when ../shared/data is absent), then times, side by side on the same lines:
  bare sentencepiece encode (one string per line, out_type=str)
  SubwordModel.encode_tokens (escaping + word-start count check)
  SubwordModel.encode_factored, bio mode (3 factors: surface|lowercase|O-or-B)
  bare sentencepiece decode_pieces vs SubwordModel.decode
Prints RATIO lines (mwemt time / bare time); target <= 2.0 for the checked plain encoding.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "parallel/tatoeba-en-it/eng-ita.anki.tsv"
FIXTURE = ROOT / "tests/fixtures/subword/train.en"


def load(path: Path, n: int) -> list[list[str]]:
    lines = [ln.split("\t")[0].split() for ln in path.read_text(encoding="utf-8").splitlines()]
    lines = [t for t in lines if t]
    step = max(1, len(lines) // n)   # spread over the file (Tatoeba is sorted by length)
    out = lines[::step][:n]
    while len(out) < n:
        out += out[: n - len(out)]
    return out


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=20_000)
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = ap.parse_args()
    corpus = args.corpus if args.corpus.exists() else FIXTURE
    from mwemt.nmt.cpu import describe
    from mwemt.preprocess.subword import SubwordModel

    print(describe(), flush=True)
    sents = load(corpus, args.sentences)
    n_words = sum(map(len, sents))
    print(f"corpus: {corpus.name}, {len(sents)} lines, {n_words} words")
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.txt"
        train.write_text("".join(" ".join(t) + "\n" for t in sents), encoding="utf-8")
        t0 = time.perf_counter()
        model = SubwordModel.train([train], vocab_size=args.vocab_size)
        model.save(Path(tmp) / "spm")
        print(f"train: {model.vocab_size} pieces in {time.perf_counter() - t0:.2f}s")
    sp = model._sp   # the bare sentencepiece processor, for the baseline
    joined = [" ".join(t) for t in sents]
    factored = [[[w, w.lower(), "B" if k == 1 else "O"] for k, w in enumerate(t)] for t in sents]
    pieces = [model.encode_tokens(t) for t in sents]
    n_pieces = sum(map(len, pieces))

    t_sp = best_of(lambda: [sp.encode(s, out_type=str) for s in joined])
    t_tok = best_of(lambda: [model.encode_tokens(t) for t in sents])
    t_fac = best_of(lambda: [model.encode_factored(r, iob="bio") for r in factored])
    t_spd = best_of(lambda: [sp.decode_pieces(p) for p in pieces])
    t_dec = best_of(lambda: [model.decode(p) for p in pieces])
    assert all(model.decode(p) == t for p, t in zip(pieces, sents))
    n = len(sents)
    print(f"pieces/word: {n_pieces / n_words:.3f}")
    print(f"bare sentencepiece encode : {n / t_sp:9.0f} lines/s")
    print(f"encode_tokens (checked)   : {n / t_tok:9.0f} lines/s")
    print(f"encode_factored, bio      : {n / t_fac:9.0f} lines/s")
    print(f"bare decode_pieces        : {n / t_spd:9.0f} lines/s")
    print(f"SubwordModel.decode       : {n / t_dec:9.0f} lines/s")
    print(f"RATIO encode_tokens / bare encode   = {t_tok / t_sp:.2f}   (target <= 2.0)")
    print(f"RATIO encode_factored / bare encode = {t_fac / t_sp:.2f}   (no target: builds a factor list per piece)")
    print(f"RATIO decode / bare decode_pieces   = {t_dec / t_spd:.2f}")


if __name__ == "__main__":
    sys.exit(main())
