"""The one seeded-sampling helper: seeded, ordered, bounded, uniform."""

from __future__ import annotations

import random

from mwemt.sampling import sample_indices, sample_stream


def test_sample_indices_is_what_random_sample_picks_in_order():
    # the draw every caller made before this helper existed: results of older runs stay reproducible
    assert sample_indices(100, 10, seed=3) == sorted(random.Random(3).sample(range(100), 10))
    assert sample_indices(5, 9, seed=1) == [0, 1, 2, 3, 4]
    assert sample_indices(5, 0, seed=1) == []


def test_sample_stream_is_seeded_ordered_and_bounded():
    lines = [f"line {i}" for i in range(1000)]
    a, n = sample_stream(iter(lines), 50, seed=1)
    assert n == 1000 and len(a) == 50 and len(set(a)) == 50
    assert a == sorted(a, key=lines.index)                  # original order kept
    assert sample_stream(iter(lines), 50, seed=1)[0] == a
    assert sample_stream(iter(lines), 50, seed=2)[0] != a
    assert sample_stream(iter(lines), 0, seed=1) == (lines, 1000)
    assert sample_stream(iter(lines[:10]), 50, seed=1) == (lines[:10], 10)
    # uniform: every tenth of the corpus gets a fair share over many draws
    counts = [0] * 10
    for seed in range(200):
        for line in sample_stream(iter(lines), 20, seed)[0]:
            counts[int(line.split()[1]) // 100] += 1
    assert min(counts) > 300 and max(counts) < 500          # expected 400 each
