"""``mwe-p``: the MWE score that charges every wrong word a hypothesis spends on an MWE.

Why: the MWE score (``mwe``) is recall: each reference word takes its best hypothesis word, and the
other hypothesis words cost nothing. So a system that keeps its own (wrong) translation of an MWE
and adds the reference's words beside it, as lexically constrained decoding does when it appends
the forced words as an extra sentence (*Lui ritornerà. torna.* for *Lui torna.*), gets full credit.
``mwe-p`` is the same score (same candidates, matching, order penalty, averaging, alignment) with
two changes:

1. **one word, one use**: reference and hypothesis words are paired one to one (a matching), so a
   hypothesis word serves one reference word and a repeated word is not counted twice;
2. **waste is charged**: a hypothesis word aligned to the MWE's source tokens that the matching
   leaves unused costs ``waste`` (default 1, a whole reference word), and a used word that matches
   inexactly costs ``waste`` x its charge on top of the charge itself. Words the MWE reaches only
   through the window, or through the reference occurring in the hypothesis, cost nothing unless
   used, and only an aligned word that equals a reference word opens a window (a wrong word linked
   to the MWE does not bring its neighbours in); a word the reference sentence itself has outside the MWE (given the reference sentences:
   `mwemt score` and runs pass them) costs nothing unless used, so a correct sentence whose words
   the aligner attached to the MWE is not charged.

For an MWE with reference words x (weights w_x, from the matching options) and a pairing mu:

    value(mu) = sum over pairs (x, y) of w_x * s(x, y)  -  waste * (sum over pairs of (1 - s(x, y))
                + the number of charged words left unpaired)
    score     = max over pairings of  max(0, value(mu)) / sum of w_x  x  order factor of mu

with s = 1 - charge (`mwemt.evaluate.mwe_match`) and the order factor 1 - ``order`` x the fraction
of reference word pairs whose paired hypothesis words come in the other order (unpaired words are
never out of order). The best pairing is found exactly by a bounded search (MWEs are short).

What this guarantees (tests/test_mwe_precision.py checks it on random hypotheses): adding words to a
hypothesis, anywhere, never raises its ``mwe-p`` unless an added word matches a reference word with
s(x, y) > waste / (1 + waste); with the default near miss (an inexact match keeps at most 0.25)
and waste 1 that means only a word *equal* to a reference word can raise it. Nothing can promise
more: a partial translation plus its missing word is the full translation. Appending the forced
word beside a wrong translation gains nothing for a one-word MWE (the wrong word's waste cancels
it) and at most the forced word minus the waste for a longer one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mwemt.errors import MwemtError
from mwemt.evaluate.mwe_score import Candidates, HypWords, MweScore
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.evaluate.signature import Signature

DEFAULT_WASTE = 0.5


def best_pairing(similarity: np.ndarray, weights: np.ndarray, positions: Sequence[int], charged: Sequence[bool],
                 waste: float, order: float) -> float:
    """The module docstring's score (0-1) of one MWE: reference words are the rows of
    ``similarity`` (s in [0, 1]), candidate hypothesis words its columns at ``positions``, the
    ``charged`` ones costing ``waste`` when left unpaired. Exact: a depth-first search over pairings
    that skips pairs that cannot raise the value and prunes on an upper bound."""
    n_ref, n_hyp = similarity.shape
    total = float(weights.sum())
    pairs_total = n_ref * (n_ref - 1) / 2
    unpaired_cost = float(sum(charged))
    # gain of pairing x with y over leaving both unpaired; pairs that cannot raise the value are left out
    gain = weights[:, None] * similarity - waste * (1.0 - similarity) + waste * np.asarray(charged, float)[None, :]
    options = [sorted(((float(gain[a, b]), b) for b in range(n_hyp) if similarity[a, b] > 0 and gain[a, b] > 0),
                      reverse=True) for a in range(n_ref)]
    rest = np.zeros(n_ref + 1)
    for a in range(n_ref - 1, -1, -1):
        rest[a] = rest[a + 1] + (options[a][0][0] if options[a] else 0.0)
    best = 0.0

    def visit(a: int, matched: float, spent: float, used: tuple[int, ...], chosen: tuple[int, ...],
              discordant: int) -> None:
        nonlocal best
        factor = 1.0 - order * discordant / pairs_total if pairs_total else 1.0
        value = matched - waste * (spent + unpaired_cost)
        if max(0.0, value + rest[a]) * factor <= best:
            return
        if a == n_ref:
            best = max(0.0, value) * factor
            return
        for _, b in options[a]:
            if b in used:
                continue
            s = float(similarity[a, b])
            p = positions[b]
            visit(a + 1, matched + float(weights[a]) * s,
                  spent + (1.0 - s) - (1.0 if charged[b] else 0.0), used + (b,), chosen + (p,),
                  discordant + sum(1 for q in chosen if q > p))
        visit(a + 1, matched, spent, used, chosen, discordant)

    visit(0, 0.0, 0.0, (), (), 0)
    return min(1.0, best / total)


@register_metric("mwe-p")
class MwePrecisionScore(MweScore):
    """The MWE score with one-to-one pairing and a charge for wasted words (module docstring).
    ``--mwe-precision`` (the ``mwe`` score's precision mix) does not apply: the waste is its own."""

    key = "mwe-p"
    name = "MWE-P"     # the table label and the signature's name
    reads_reference_sentence = True
    reads = MweScore.reads - {"mwe_precision"}   # `mwemt score` refuses --mwe-precision with mwe-p alone

    def __init__(self, lang: str = "it", *, waste: float = DEFAULT_WASTE, **kwargs) -> None:
        if kwargs.get("precision"):
            raise MwemtError("mwe-p charges wasted words itself; it takes no precision weight")
        if not 0.0 <= waste:
            raise MwemtError(f"the waste charge of mwe-p must be 0 or more, not {waste}")
        if kwargs.get("compat") is not None:
            raise MwemtError("mwe-p has no compatibility mode; score --metrics mwe with --mwe-compat")
        super().__init__(lang, **kwargs)
        self.waste = waste

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> MwePrecisionScore:
        return super().from_options(key, replace(options, mwe_precision=None), inputs)

    def window_anchors(self, hw: HypWords, linked: set[int], translation: str) -> set[int]:
        """Only linked tokens that hold a reference word open a window: a wrong word the aligner
        links to the MWE does not bring its neighbours in (else adding one could raise the score)."""
        ref = set(self.ref_words(translation))
        return {t for w, t in zip(hw.words, hw.token_index) if t in linked and w in ref}

    def mwe_score(self, ref_words: Sequence[str], candidates: Candidates, other_words: Counter | None) -> float | None:
        if not ref_words:
            return None
        if not candidates.words:
            return 0.0
        similarity = 1.0 - self.matcher.charge_matrix(ref_words, candidates.words)
        charged = [core and not (other_words and other_words[w] > 0)
                   for w, core in zip(candidates.words, candidates.core)]
        return best_pairing(similarity, self.matcher.weights(ref_words), candidates.positions, charged,
                            self.waste, self.matching.order)

    def signature(self, stats=None) -> Signature:
        base = super().signature(stats)
        settings = list(base.settings)
        at = next((k for k, (name, _) in enumerate(settings) if name == "dist"), len(settings))
        settings.insert(at, ("pairing", "one-to-one"))
        settings.insert(at + 1, ("waste", f"{self.waste:g}"))
        return replace(base, settings=tuple(settings))
