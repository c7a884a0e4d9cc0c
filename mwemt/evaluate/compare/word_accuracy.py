"""Word accuracy by frequency bucket, as compare-mt reports it (Neubig et al. 2019).

Each reference and hypothesis word is put in a bucket by how often it occurs in the training
target text (or, without one, in the references, as compare-mt does). In each sentence a word
matches as often as it occurs in both the reference and the hypothesis (min of the two counts);
per bucket, recall = matches / reference words, precision = matches / hypothesis words and the
F-measure 2PR / (P + R) = 2 x matches / (reference + hypothesis words), on a 0-100 scale.

Words are sacrebleu's 13a tokens (the tokenization BLEU uses), case-sensitive, as compare-mt
compares the tokens it is given. The per-sentence counts are the statistics the bootstrap
resamples (`mwemt.evaluate.compare.resample`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mwemt.evaluate.compare import buckets as B

TOKENIZE = "13a"


def word_tokenizer():
    """The tokenizer of every word count here: sacrebleu's 13a."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    return lambda text: tok(text).split()


def corpus_counts(lines: Iterable[str]) -> Counter:
    """Word counts of a text, tokenized as every other count here."""
    tokenize = word_tokenizer()
    counts: Counter = Counter()
    for line in lines:
        counts.update(tokenize(line))
    return counts


@dataclass
class WordCounts:
    """Per-sentence counts of one system, shape (sentences, buckets): reference words, hypothesis
    words and matches."""

    ref: np.ndarray
    hyp: np.ndarray
    matched: np.ndarray


def word_counts(refs: Sequence[Sequence[str]], hyps: Sequence[Sequence[str]], frequency: Mapping[str, int],
                cutoffs: Sequence[int]) -> WordCounts:
    """Bucketed counts of tokenized ``refs`` and ``hyps`` (module docstring)."""
    cutoffs = B.check_cutoffs(cutoffs)
    k = len(cutoffs) + 1
    n = len(refs)
    ref_c, hyp_c, match_c = (np.zeros((n, k), dtype=np.float64) for _ in range(3))
    bucket_of: dict[str, int] = {}

    def bucket(word: str) -> int:
        b = bucket_of.get(word)
        if b is None:
            b = bucket_of[word] = int(B.frequency_bucket([frequency.get(word, 0)], cutoffs)[0])
        return b

    for i, (ref, hyp) in enumerate(zip(refs, hyps)):
        rc, hc = Counter(ref), Counter(hyp)
        for w, c in rc.items():
            b = bucket(w)
            ref_c[i, b] += c
            match_c[i, b] += min(c, hc.get(w, 0))
        for w, c in hc.items():
            hyp_c[i, bucket(w)] += c
    return WordCounts(ref_c, hyp_c, match_c)
