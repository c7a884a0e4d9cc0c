"""How MWE occurrences and words are put into buckets: frequency ranges, compositionality
tertiles, contiguous vs gapped. Pure functions, so every rule can be checked by hand.

Frequency buckets follow compare-mt (Neubig et al. 2019): a list of increasing cutoffs
``c1 < c2 < ...`` makes the buckets ``[0, c1)``, ``[c1, c2)``, ..., ``[ck, inf)``; a bucket that
holds one value is labeled by it (``3``), the others by their range (``5-9``) and the last by
``>=ck``. compare-mt's word-frequency default is 1,2,3,4,5,10,100,1000. MWEs are rarer than words,
so their default is 1,2,5,10,100: never seen, once, 2-4, 5-9, 10-99 and 100 or more times.

Compositionality tertiles are cut over MWE *types* (each type once, so a frequent type does not
move the cut points): with the n known values sorted, the low tertile holds values up to the
ceil(n/3)-th, the high one values above the ceil(2n/3)-th, the middle one the rest. Equal values
always share a bucket.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

WORD_FREQ_CUTOFFS = (1, 2, 3, 4, 5, 10, 100, 1000)   # compare-mt's default
MWE_FREQ_CUTOFFS = (1, 2, 5, 10, 100)
UNKNOWN = "unknown"
CONTIGUOUS, GAPPED = "contiguous", "gapped"


def check_cutoffs(cutoffs: Sequence[int], what: str = "frequency cutoffs") -> tuple[int, ...]:
    """Cutoffs as a tuple of strictly increasing positive integers (ValueError otherwise)."""
    out = tuple(int(c) for c in cutoffs)
    if not out:
        raise ValueError(f"{what}: give at least one cutoff")
    if out[0] < 1 or any(b <= a for a, b in zip(out, out[1:])):
        raise ValueError(f"{what} must be increasing whole numbers of at least 1, not {list(cutoffs)}")
    return out


def parse_cutoffs(text: str, what: str = "frequency cutoffs") -> tuple[int, ...]:
    """``"1,2,5"`` -> (1, 2, 5), checked."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{what} {text!r} are not comma-separated whole numbers") from None
    return check_cutoffs(values, what)


def frequency_labels(cutoffs: Sequence[int]) -> list[str]:
    """One label per bucket of ``cutoffs`` (one more than cutoffs)."""
    cutoffs = check_cutoffs(cutoffs)
    labels = []
    lo = 0
    for hi in cutoffs:
        labels.append(str(lo) if hi - lo == 1 else f"{lo}-{hi - 1}")
        lo = hi
    labels.append(f">={lo}")
    return labels


def frequency_bucket(counts: Sequence[int] | np.ndarray, cutoffs: Sequence[int]) -> np.ndarray:
    """The bucket index of every count (0 = below the first cutoff)."""
    return np.searchsorted(np.asarray(check_cutoffs(cutoffs)), np.asarray(counts), side="right").astype(np.int64)


def tertile_cuts(values: Sequence[float]) -> tuple[float, float] | None:
    """The two cut points of the type-level tertiles (module docstring); None without values."""
    known = sorted(v for v in values if v is not None and not math.isnan(v))
    if not known:
        return None
    n = len(known)
    return known[math.ceil(n / 3) - 1], known[math.ceil(2 * n / 3) - 1]


def tertile_labels(cuts: tuple[float, float]) -> list[str]:
    q1, q2 = cuts
    return [f"low (<={q1:.2f})", f"middle ({q1:.2f}-{q2:.2f}]", f"high (>{q2:.2f})"]


def tertile(value: float | None, cuts: tuple[float, float]) -> int:
    """0 (low), 1 (middle), 2 (high), or -1 for an unknown value."""
    if value is None or math.isnan(value):
        return -1
    q1, q2 = cuts
    return 0 if value <= q1 else 1 if value <= q2 else 2


def is_gapped(indices: Sequence[int]) -> bool:
    """True when the MWE's tokens are not consecutive (another token stands between two of them)."""
    return any(b - a > 1 for a, b in zip(indices, indices[1:]))


def contiguity(indices: Sequence[int]) -> str:
    return GAPPED if is_gapped(indices) else CONTIGUOUS
