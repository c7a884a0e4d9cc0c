"""PARSEME-style scores for MWE identification (shared task 1.1, Ramisch et al. 2018).

Two views of the same predictions, per sentence:

- MWE-based: a predicted MWE is correct when its token set equals a gold MWE's token set
  (each gold MWE can be claimed once);
- token-based: partial credit. Gold and predicted MWEs of a sentence form a bipartite graph
  whose edge weights are the numbers of shared tokens; a maximum-weight matching pairs each gold
  MWE with at most one predicted MWE, and the matched weights are the correct tokens. Precision
  divides by the tokens of all predicted MWEs, recall by the tokens of all gold MWEs. The
  matching keeps a system that merges two gold MWEs into one from getting credit for both.

Scores are also given on partitions of the MWEs: per category, continuous/discontinuous, and
seen/unseen in a training file (seen = the MWE's multiset of lemmas is annotated in train).
Each partition filters gold and predicted MWEs by the same predicate, then scores as above.
The scoring functions are pure and take one list of `Mwe` per sentence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from mwemt.evaluate.base import format_signature
from mwemt.records import Mwe

Sentences = Sequence[Sequence[Mwe]]


@dataclass(frozen=True)
class Prf:
    """Counts behind precision/recall/F1.

    The ratios are 0 when their denominator is 0, so that sums and tuning can compare them; a
    report shows such a ratio as undefined instead (`undefined`): precision without any
    prediction, recall without any gold MWE, F1 without either (with one of them, F1 is 0 whatever
    the undefined ratio would be).
    """

    correct_pred: int
    n_pred: int
    correct_gold: int
    n_gold: int

    @property
    def precision(self) -> float:
        return self.correct_pred / self.n_pred if self.n_pred else 0.0

    @property
    def recall(self) -> float:
        return self.correct_gold / self.n_gold if self.n_gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def undefined(self) -> frozenset[str]:
        """The ratios ("P", "R", "F") that have no value: 0 / 0."""
        return frozenset(k for k, empty in (("P", not self.n_pred), ("R", not self.n_gold),
                                            ("F", not self.n_pred and not self.n_gold)) if empty)

    def reported(self) -> dict[str, float | None]:
        """P, R and F, None where undefined."""
        values = {"P": self.precision, "R": self.recall, "F": self.f1}
        return {k: None if k in self.undefined else v for k, v in values.items()}

    def __add__(self, other: Prf) -> Prf:
        return Prf(self.correct_pred + other.correct_pred, self.n_pred + other.n_pred,
                   self.correct_gold + other.correct_gold, self.n_gold + other.n_gold)

    def to_dict(self) -> dict:
        return {**self.reported(), "correct": self.correct_pred, "n_pred": self.n_pred, "n_gold": self.n_gold}


ZERO = Prf(0, 0, 0, 0)


def mwe_prf(gold: Sequence[Mwe], pred: Sequence[Mwe]) -> Prf:
    """Exact-match counts for one sentence (token sets compared; categories ignored)."""
    common = Counter(m.indices for m in gold) & Counter(m.indices for m in pred)
    n = sum(common.values())
    return Prf(n, len(pred), n, len(gold))


def matched_tokens(gold: Sequence[Mwe], pred: Sequence[Mwe]) -> int:
    """Total weight of a maximum-weight bipartite matching, weight = shared tokens."""
    if not gold or not pred:
        return 0
    weights = np.array([[len(set(g.indices).intersection(p.indices)) for p in pred] for g in gold])
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return int(weights[rows, cols].sum())


def token_prf(gold: Sequence[Mwe], pred: Sequence[Mwe]) -> Prf:
    """Token-based counts for one sentence: matched tokens over predicted / gold MWE tokens."""
    n = matched_tokens(gold, pred)
    return Prf(n, sum(m.length for m in pred), n, sum(m.length for m in gold))


def _check_lengths(gold: Sentences, pred: Sentences) -> None:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")


def mwe_based(gold: Sentences, pred: Sentences) -> Prf:
    _check_lengths(gold, pred)
    return sum((mwe_prf(g, p) for g, p in zip(gold, pred)), ZERO)


def token_based(gold: Sentences, pred: Sentences) -> Prf:
    _check_lengths(gold, pred)
    return sum((token_prf(g, p) for g, p in zip(gold, pred)), ZERO)


def lemma_key(m: Mwe) -> tuple[str, ...]:
    """The multiset of an MWE's lemmas, as PARSEME uses to decide 'seen in train'."""
    return tuple(sorted(m.lemma.split()))


@dataclass
class PartitionScore:
    name: str
    n_gold: int
    n_pred: int
    mwe: Prf
    token: Prf

    def to_dict(self) -> dict:
        return {"n_gold": self.n_gold, "n_pred": self.n_pred, "mwe_based": self.mwe.to_dict(),
                "token_based": self.token.to_dict()}


@dataclass
class IdentificationScores:
    """Global and per-partition scores, in display order, with the signature of the settings."""

    partitions: list[PartitionScore] = field(default_factory=list)
    signature: str = ""
    n_sentences: int = 0

    def __getitem__(self, name: str) -> PartitionScore:
        for p in self.partitions:
            if p.name == name:
                return p
        raise KeyError(name)

    def __contains__(self, name: str) -> bool:
        return any(p.name == name for p in self.partitions)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.partitions]

    def to_dict(self) -> dict:
        return {"signature": self.signature, "sentences": self.n_sentences,
                "scores": {p.name: p.to_dict() for p in self.partitions}}

    def table(self, digits: int = 2) -> str:
        """A plain-text table; P/R/F on a 0-100 scale, n/a where undefined (`Prf.undefined`)."""
        head = f"{'partition':<22} {'#gold':>6} {'#pred':>6}   {'MWE-P':>6} {'MWE-R':>6} {'MWE-F':>6}   " \
               f"{'Tok-P':>6} {'Tok-R':>6} {'Tok-F':>6}"
        lines = [head, "-" * len(head)]
        w = 6

        def f(prf: Prf) -> str:
            return " ".join(f"{'n/a':>{w}}" if x is None else f"{100 * x:{w}.{digits}f}" for x in prf.reported().values())

        for p in self.partitions:
            lines.append(f"{p.name:<22} {p.n_gold:>6} {p.n_pred:>6}   {f(p.mwe)}   {f(p.token)}")
        lines.append(f"(P/R/F x 100; {self.n_sentences} sentences) {self.signature}")
        if any(p.mwe.undefined or p.token.undefined for p in self.partitions):
            lines.append("n/a: undefined: P with no predicted MWE, R with no gold MWE, F with neither (a partition "
                         "no MWE falls in says nothing about the system)")
        return "\n".join(lines)


def partition_score(name: str, gold: Sentences, pred: Sentences, keep: Callable[[Mwe], bool]) -> PartitionScore:
    g = [[m for m in s if keep(m)] for s in gold]
    p = [[m for m in s if keep(m)] for s in pred]
    return PartitionScore(name, sum(map(len, g)), sum(map(len, p)), mwe_based(g, p), token_based(g, p))


def score_identification(gold: Sentences, pred: Sentences, train_keys: Iterable[tuple[str, ...]] | None = None,
                         *, categories: bool = True) -> IdentificationScores:
    """All PARSEME partitions. ``train_keys`` (from `lemma_key`) enables seen/unseen."""
    _check_lengths(gold, pred)
    parts = [partition_score("global", gold, pred, lambda m: True)]
    if categories:
        cats = sorted({m.category for s in list(gold) + list(pred) for m in s})
        for c in cats:
            parts.append(partition_score(f"category:{c or '(none)'}", gold, pred,
                                         lambda m, c=c: m.category == c))
    parts.append(partition_score("continuous", gold, pred, lambda m: m.contiguous))
    parts.append(partition_score("discontinuous", gold, pred, lambda m: not m.contiguous))
    seen = None
    if train_keys is not None:
        seen = set(train_keys)
        parts.append(partition_score("seen-in-train", gold, pred, lambda m: lemma_key(m) in seen))
        parts.append(partition_score("unseen-in-train", gold, pred, lambda m: lemma_key(m) not in seen))
    sig = format_signature("parseme-id", {"mwe": "exact-token-set", "tok": "max-weight-bipartite",
                                          "seen": "lemma-multiset" if seen is not None else "no-train"})
    return IdentificationScores(parts, sig, len(gold))


def check_aligned(gold: Sequence, pred: Sequence) -> None:
    """Gold and predicted .cupt sentences must be the same sentences with the same words.

    Raises `InputError` naming the first sentence that differs (file and line of both sides).
    """
    from mwemt.errors import InputError

    if len(gold) != len(pred):
        where = pred[len(gold)] if len(pred) > len(gold) else gold[len(pred)]
        raise InputError(f"gold has {len(gold)} sentences but pred has {len(pred)}; the first unpaired one "
                         f"is {where.describe()}", expected="the same sentences in gold and pred")
    for k, (g, p) in enumerate(zip(gold, pred), 1):
        gw, pw = [w.form for w in g.words], [w.form for w in p.words]
        if gw != pw:
            if len(gw) != len(pw):
                detail = f"{len(gw)} words in gold but {len(pw)} in pred"
            else:
                i = next(i for i, (a, b) in enumerate(zip(gw, pw)) if a != b)
                detail = f"word {i + 1} is {gw[i]!r} in gold but {pw[i]!r} in pred"
            raise InputError(f"sentence {k} differs: {detail} (gold {g.describe()})", p.source or None,
                             p.start_line, expected="the same tokens as the gold sentence")


def evaluate_cupt(gold: Sequence, pred: Sequence, train: Iterable | None = None, *,
                  categories: bool = True) -> IdentificationScores:
    """Score predicted against gold `CuptSentence`s (optionally with training sentences for seen/unseen)."""
    gold, pred = list(gold), list(pred)
    check_aligned(gold, pred)
    keys = None if train is None else {lemma_key(m) for s in train for m in s.mwes()}
    return score_identification([s.mwes() for s in gold], [s.mwes() for s in pred], keys,
                                categories=categories)
