"""Seeded sampling, written once: which items a seed picks must not depend on who asks.

Corpus subsets (`data.train_size`), the rest kept for back-translation, synthetic dictionary
pairs and sentencepiece's training sample are all drawn here, so the same seed and size give the
same items everywhere and a reader checks one function instead of four.
"""

from __future__ import annotations

import random
from collections.abc import Iterable


def sample_indices(n: int, k: int, seed: int) -> list[int]:
    """``k`` of the indices ``0..n-1`` drawn without replacement with ``seed``, in increasing order.

    ``k >= n`` gives every index.
    """
    if k < 0 or n < 0:
        raise ValueError(f"cannot sample {k} of {n} items")
    if k >= n:
        return list(range(n))
    return sorted(random.Random(seed).sample(range(n), k))


def nested_sample_indices(n: int, k: int, seed: int) -> list[int]:
    """``k`` of the indices ``0..n-1``, in increasing order: the first ``k`` of one seeded permutation.

    Samples of different sizes with the same seed are nested (the 25,000 pairs of a small run are
    among the 100,000 of a larger one), which a data-size ladder needs: each step adds data to the
    last, and a test kept apart from the largest training set is apart from every smaller one.
    ``k >= n`` gives every index.
    """
    if k < 0 or n < 0:
        raise ValueError(f"cannot sample {k} of {n} items")
    if k >= n:
        return list(range(n))
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return sorted(order[:k])


def sample_stream(items: Iterable, k: int, seed: int) -> tuple[list, int]:
    """A seeded uniform sample of ``k`` items of a stream of unknown length, in stream order.

    Reservoir sampling, so memory stays at ``k`` items however long the stream; returns the sample
    and the number of items read. ``k <= 0`` keeps every item.
    """
    if k <= 0:
        out = list(items)
        return out, len(out)
    rng = random.Random(seed)
    reservoir: list[tuple[int, object]] = []
    n = 0
    for n, item in enumerate(items, 1):
        if n <= k:
            reservoir.append((n, item))
        else:
            j = rng.randrange(n)
            if j < k:
                reservoir[j] = (n, item)
    reservoir.sort(key=lambda pair: pair[0])
    return [item for _, item in reservoir], n
