"""The one seeded-sampling helper: seeded, ordered, bounded, uniform."""

from __future__ import annotations

import random

from mwemt.sampling import nested_sample_indices, sample_indices, sample_stream


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


def test_nested_samples_of_one_seed_contain_each_other():
    small, mid, big = (set(nested_sample_indices(310_000, k, seed=1)) for k in (25_000, 50_000, 100_000))
    assert len(small) == 25_000 and small < mid < big          # sample_indices is not nested at these sizes
    assert not set(sample_indices(310_000, 25_000, 1)) < set(sample_indices(310_000, 100_000, 1))
    assert nested_sample_indices(10, 4, seed=2) == sorted(nested_sample_indices(10, 4, seed=2))
    assert nested_sample_indices(10, 4, seed=2) != nested_sample_indices(10, 4, seed=3)
    assert nested_sample_indices(3, 5, seed=1) == [0, 1, 2]


def test_a_test_sample_keeps_the_file_order():
    from mwemt.experiments.stages import TestDataSection, _sampled

    items = [f"sentence {i}" for i in range(100)]
    picked = _sampled(items, TestDataSection(sample=10, seed=1))
    assert len(picked) == 10 and picked == sorted(picked, key=items.index)
    assert picked == [items[i] for i in sample_indices(100, 10, 1)]
    assert picked != items[:10]                                        # not the first N (a length-sorted file)
    assert _sampled(items, TestDataSection()) == items and _sampled(items[:5], TestDataSection(sample=10)) == items[:5]
