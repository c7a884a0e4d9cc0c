"""How many synthetic pairs an augmentation adds, and which ones.

The ratio is defined as ``synthetic pairs / original training pairs`` (not over the augmented total),
so ``--ratio 0.10`` on 300,000 training pairs asks for 30,000 synthetic pairs: the reading of
Zaninello & Birch (2020), who add dictionary data worth about 10% of the corpus. The ratio is at
most `MAX_RATIO` (synthetic data ten times the corpus), checked before any file is read: a larger
one repeats a small dictionary into a corpus of millions of lines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mwemt.errors import MwemtError
from mwemt.sampling import sample_indices

MAX_RATIO = 10.0  # synthetic pairs / training pairs: the most an augmentation may add


def check_ratio(ratio: float) -> None:
    """Refuse a ratio that is not in (0, `MAX_RATIO`]."""
    if not (ratio > 0 and math.isfinite(ratio)):
        raise MwemtError(f"the ratio must be a positive number, not {ratio}")
    if ratio > MAX_RATIO:
        raise MwemtError(f"the ratio {ratio:g} is more than {MAX_RATIO:g} (synthetic pairs / training pairs); "
                         f"expected a ratio in (0, {MAX_RATIO:g}]")


def requested_pairs(ratio: float, n_train: int) -> int:
    """``ratio * n_train`` rounded half up: the number of synthetic pairs to add."""
    check_ratio(ratio)
    if n_train <= 0:
        raise MwemtError("the training corpus is empty")
    n = math.floor(ratio * n_train + 0.5)
    if n == 0:
        raise MwemtError(f"ratio {ratio} of {n_train} training pairs rounds to 0 synthetic pairs")
    return n


def achieved_ratio(n_synthetic: int, n_train: int) -> float:
    return n_synthetic / n_train


@dataclass(frozen=True)
class Choice:
    """Which candidates (0-based indices into the candidate list) become synthetic pairs, and how.

    ``mode`` is ``sample`` (a seeded sample without replacement; ``all`` when it takes every
    candidate) or ``repeat`` (every candidate ``repeats`` times plus a seeded sample of
    ``remainder`` more, when there are fewer candidates than requested).
    """

    indices: list[int]
    mode: str
    repeats: int = 1
    remainder: int = 0


def choose(n_candidates: int, n_requested: int, seed: int) -> Choice:
    if n_candidates <= 0:
        raise MwemtError("no candidate pairs are left after filtering; nothing to add")
    if n_candidates >= n_requested:
        idx = sample_indices(n_candidates, n_requested, seed)
        return Choice(idx, "all" if n_candidates == n_requested else "sample")
    repeats, remainder = divmod(n_requested, n_candidates)
    idx = list(range(n_candidates)) * repeats + sample_indices(n_candidates, remainder, seed)
    return Choice(idx, "repeat", repeats, remainder)
