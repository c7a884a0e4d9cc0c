"""The published MWE scorer's rules (Zaninello & Birch 2020, azaninello/MWE_NMT ``score_mwe.py``),
re-implemented from its description so that ``mwemt score --mwe-compat zaninello2020`` gives the
paper's figures.

Why a separate mode: mwemt's own MWE score deliberately differs from the published one (Moses
tokens, lowercasing on both sides, per-sentence averaging, 0 for an empty hypothesis). Users who
compare with the paper need the paper's number, computed by exactly its rules:

1. tokenization: every ASCII punctuation character (Python's ``string.punctuation``) becomes a
   space, then the text is split on whitespace; so ``dell'acqua`` gives ``dell`` ``acqua``, a
   hyphenated word falls in two and the ``...`` of a discontinuous reference disappears;
2. the hypothesis is lowercased, the reference MWE is not (an upper-case letter in a reference
   costs an edit);
3. each reference word x is charged ``min(1, min_y d(x, y) / len(x))`` over the hypothesis words y
   (d = character Levenshtein distance), the MWE scores 1 minus the mean charge;
4. a hypothesis without words (empty, or only punctuation) has no minimum: its MWEs are NaN, and
   so is an MWE whose reference has no word; NaN MWEs are left out of the corpus mean;
5. the corpus score is the mean over all (non-NaN) MWEs of the corpus; an empty reference MWE
   (``""``) is skipped.

Scores here are on mwemt's 0-100 scale (the published scorer prints 0-1: divide by 100).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

COMPAT_MODES = ("zaninello2020",)
_ASCII_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]")


def compat_tokens(text: str) -> list[str]:
    """Rule 1: ASCII punctuation to spaces, then whitespace splitting (no lowercasing here)."""
    return _ASCII_PUNCTUATION.sub(" ", text).split()


def compat_mwe_score(hyp_tokens: Sequence[str], reference: str) -> float | None:
    """One MWE's score in [0, 1] by rules 3-4; NaN when there is nothing to take a minimum over;
    None for an empty reference (rule 5: not scored at all). ``hyp_tokens`` are already lowercased."""
    if reference == "":
        return None
    charges = []
    for x in compat_tokens(reference):
        if not hyp_tokens:
            continue  # the published scorer's min() over no words fails and the word is skipped
        best = min(Levenshtein.distance(x, y) for y in hyp_tokens)
        charges.append(min(1.0, best / len(x)))
    if not charges:
        return math.nan
    return 1.0 - sum(charges) / len(charges)


def compat_sentence(hyp: str, references: Sequence[str]) -> list[float | None]:
    """Every MWE of one sentence (rules 1-5): floats, NaN, or None for an empty reference."""
    tokens = compat_tokens(hyp.lower())
    return [compat_mwe_score(tokens, ref) for ref in references]
