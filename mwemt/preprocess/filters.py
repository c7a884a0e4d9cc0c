"""Filters learned from annotated training data: idiomatic MWE occurrences, not literal ones.

A lexicon look-up finds every co-occurrence of an entry's lemmas. In an annotated corpus (.cupt)
many of these co-occurrences are not annotated: literal readings (*they got out of the car*),
accidental co-occurrences across a gap (*get a job at*), or types the annotators marked only in
some contexts (*let me know*). Seen2Seen (Pasquer et al., PARSEME shared task 1.2) showed that
seen-MWE identification gets both precise and simple when a look-up is followed by filters learned
from the training corpus. This module learns such filters, per lexicon entry, from a .cupt file:

- ``order`` and ``gap``: the configurations seen. An entry is its lemmas in word order, and each
  order annotated is an entry of its own. With the ``order`` filter the look-up keeps to those
  orders; without it, it also tries the others (*alleare si* for the annotated *si alleare*) and
  judges them by the annotated order's statistics. A candidate may hold at most ``gap_slack``
  more gap tokens than the most gapped annotated occurrence of its entry;
- ``inflection``: each nominal component (NOUN/PROPN in the annotation) must show an ending seen
  on it in an annotated occurrence (the characters after the longest common prefix of form and
  lemma: *steps* / *step* -> ``s``), so a plural never annotated is not taken;
- ``syntax`` (only where a parse is available, i.e. .cupt HEAD): the components, joined by their
  paths in the dependency tree, may use at most ``tree_slack`` more outside nodes than the
  annotated occurrences of the entry used;
- ``context`` (opt-in, ``context=True``): a classifier on the packaged sentence encoder decides
  idiomatic vs literal per occurrence (`mwemt.preprocess.context`);
- ``rate``: the idiomaticity rate of the entry, (annotated + 1) / (candidates + 2), counted on
  the training file over the candidates that pass the filters above; candidates of entries below
  ``min_rate`` are dropped. The rate is also every occurrence's **confidence**, and overlapping
  candidates can be resolved by it (``overlap: confident``) instead of longest-first.

The thresholds (and the look-up's ``max_gap``) are chosen by repeated k-fold cross-validation on
the training file alone: entries and statistics from k-1 parts, candidates of the held-out part
scored against its annotation, the objective the MWE-based F on MWEs seen in the other parts.
Grids list the neutral value first, so a filter that does not help stays off. The learned model
is a JSON file (`FilterModel.save`), so `mwemt translate` annotates exactly as training did.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.records import Mwe

FILTERS = ("order", "gap", "inflection", "syntax", "rate", "context")
NOMINAL = frozenset({"NOUN", "PROPN"})
MODEL_KIND = "mwemt-identification-filters"
MODEL_VERSION = 1
DEFAULT_GRID = {
    "max_gap": (0, 1, 2, 3, 4),
    "order": (False, True),
    "overlap": ("longest", "confident"),
    "gap_slack": (None, 0, 1, 2),
    "tree_slack": (None, 0, 1),
    "inflection": (False, True),
    "min_rate": (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5),
}


# ---------------------------------------------------------------- what a sentence offers the filters


@dataclass(frozen=True)
class ParsedSentence:
    """Forms, lowercased lemmas and, when known, UPOS, heads and annotated MWEs of one sentence.

    ``heads`` are 0-based word indices, -1 for the root; None when the input has no parse.
    """

    forms: tuple[str, ...]
    lemmas: tuple[str, ...]
    upos: tuple[str, ...] | None = None
    heads: tuple[int, ...] | None = None
    mwes: tuple[Mwe, ...] = ()


def cupt_heads(words) -> tuple[int, ...] | None:
    """0-based heads of .cupt words (root = -1), or None if any HEAD is missing or out of range."""
    heads = []
    n = len(words)
    for w in words:
        if not w.head.isdigit() or int(w.head) > n:
            return None
        heads.append(int(w.head) - 1)
    return tuple(heads)


def parsed_from_cupt(cs) -> ParsedSentence:
    """A `CuptSentence` as the filters see it: LEMMA column (FORM where ``_``), lowercased."""
    words = cs.words
    upos = tuple(w.upos for w in words)
    return ParsedSentence(tuple(w.form for w in words),
                          tuple((w.lemma if w.lemma != "_" else w.form).lower() for w in words),
                          None if any(u in ("_", "") for u in upos) else upos,
                          cupt_heads(words), tuple(cs.mwes()))


def ending(form: str, lemma: str) -> str:
    """What sets a form apart from its lemma: the characters after their longest common prefix."""
    f, lem = form.lower(), lemma.lower()
    k, n = 0, min(len(f), len(lem))
    while k < n and f[k] == lem[k]:
        k += 1
    return f[k:]


def gap_size(indices: Sequence[int]) -> int:
    """Tokens inside an occurrence's span that are not its components."""
    return indices[-1] - indices[0] + 1 - len(indices)


def tree_extra_nodes(indices: Sequence[int], heads: Sequence[int]) -> int | None:
    """How many non-component words the dependency paths joining the components pass through.

    0 when the components form a connected subtree; None when they are not in one tree (a
    malformed parse). The paths joining a set of nodes in a tree are their paths up to their
    lowest common ancestor.
    """
    n = len(heads)
    chains = []
    for i in indices:
        chain, node, steps = [i], i, 0
        while heads[node] >= 0:
            node = heads[node]
            steps += 1
            if steps > n or node >= n:
                return None  # a cycle or a head out of range
            chain.append(node)
        chains.append(chain)
    roots = {c[-1] for c in chains}
    if len(roots) != 1:
        return None
    common = set(chains[0]).intersection(*chains[1:])
    # the lowest common ancestor is the common node nearest to the first component
    lca = next(x for x in chains[0] if x in common)
    nodes: set[int] = set()
    for c in chains:
        nodes.update(c[:c.index(lca) + 1])
    return len(nodes) - len(indices)


# ---------------------------------------------------------------- the learned model


@dataclass(frozen=True)
class Thresholds:
    """The learned settings; a filter whose setting is None / False / 0.0 is off."""

    max_gap: int = 0
    order: bool = False
    overlap: str = "longest"
    gap_slack: int | None = None
    tree_slack: int | None = None
    inflection: bool = False
    min_rate: float = 0.0
    min_context: float = 0.0

    def __post_init__(self) -> None:
        if self.overlap not in ("longest", "confident"):
            raise ValueError(f"overlap must be longest or confident, not {self.overlap!r}")
        if self.max_gap < 0:
            raise ValueError("max_gap must be 0 or more")

    def off(self, names: Iterable[str]) -> Thresholds:
        """The same thresholds with the named filters turned off."""
        names = set(names)
        unknown = names - set(FILTERS)
        if unknown:
            raise MwemtError(f"unknown filter(s) {', '.join(sorted(unknown))}; known: {', '.join(FILTERS)}")
        return replace(self, order=False if "order" in names else self.order,
                       gap_slack=None if "gap" in names else self.gap_slack,
                       tree_slack=None if "syntax" in names else self.tree_slack,
                       inflection=False if "inflection" in names else self.inflection,
                       min_rate=0.0 if "rate" in names else self.min_rate,
                       min_context=0.0 if "context" in names else self.min_context)

    @property
    def active(self) -> tuple[str, ...]:
        on = {"order": self.order, "gap": self.gap_slack is not None, "inflection": self.inflection,
              "syntax": self.tree_slack is not None, "rate": self.min_rate > 0, "context": self.min_context > 0}
        return tuple(f for f in FILTERS if on[f])

    def describe(self) -> str:
        parts = [f"max_gap={self.max_gap}", "orders seen" if self.order else "any order",
                 f"overlaps: {self.overlap} first"]
        if self.gap_slack is not None:
            parts.append(f"gap<=seen+{self.gap_slack}")
        if self.inflection:
            parts.append("nominal endings seen")
        if self.tree_slack is not None:
            parts.append(f"tree<=seen+{self.tree_slack}")
        if self.min_rate > 0:
            parts.append(f"rate>={self.min_rate:g}")
        if self.min_context > 0:
            parts.append(f"P(idiomatic in context)>={self.min_context:g}")
        return ", ".join(parts)


@dataclass
class EntryStats:
    """What the training file says about one lexicon entry (key = lemmas in word order)."""

    occurrences: int = 0        # annotated occurrences in the training file
    annotated: int = 0          # look-up candidates that are annotated occurrences
    literal: int = 0            # candidates passing the configuration filters but not annotated
    max_gap: int = 0            # most gap tokens in an annotated occurrence
    max_tree: int | None = None  # most outside tree nodes on an annotated occurrence's paths
    endings: dict[str, set[str]] = field(default_factory=dict)  # nominal component lemma -> endings seen

    @property
    def rate(self) -> float:
        """Idiomaticity rate, add-one smoothed: (annotated + 1) / (annotated + literal + 2)."""
        return (self.annotated + 1) / (self.annotated + self.literal + 2)

    def to_json(self) -> dict:
        d: dict = {"occurrences": self.occurrences, "annotated": self.annotated, "literal": self.literal,
                   "max_gap": self.max_gap}
        if self.max_tree is not None:
            d["max_tree"] = self.max_tree
        if self.endings:
            d["endings"] = {k: sorted(v) for k, v in sorted(self.endings.items())}
        return d

    @classmethod
    def from_json(cls, d: dict) -> EntryStats:
        return cls(int(d["occurrences"]), int(d["annotated"]), int(d["literal"]), int(d["max_gap"]), d.get("max_tree"),
                   {str(k): set(v) for k, v in d.get("endings", {}).items()})

    def endings_ok(self, indices: Sequence[int], forms: Sequence[str], lemmas: Sequence[str]) -> bool:
        """Does every nominal component show an ending seen on it in an annotated occurrence?"""
        for i in indices:
            ends = self.endings.get(lemmas[i])
            if ends is not None and ending(forms[i], lemmas[i]) not in ends:
                return False
        return True


def configuration_stats(sentences: Iterable[ParsedSentence]) -> dict[str, EntryStats]:
    """Gap sizes, tree paths and nominal endings of every annotated MWE (of 2+ words), by entry."""
    stats: dict[str, EntryStats] = {}
    for s in sentences:
        for m in s.mwes:
            if m.length < 2:
                continue
            st = stats.setdefault(m.lemma, EntryStats())
            st.occurrences += 1
            st.max_gap = max(st.max_gap, gap_size(m.indices))
            if s.heads is not None:
                extra = tree_extra_nodes(m.indices, s.heads)
                if extra is not None:
                    st.max_tree = extra if st.max_tree is None else max(st.max_tree, extra)
            if s.upos is not None:
                for i in m.indices:
                    if s.upos[i] in NOMINAL:
                        st.endings.setdefault(s.lemmas[i], set()).add(ending(s.forms[i], s.lemmas[i]))
    return stats




def lemma_multiset(lemma: str) -> tuple[str, ...]:
    """An MWE's lemmas as a multiset (sorted), as PARSEME decides 'seen'."""
    return tuple(sorted(lemma.split()))


def sibling_index(stats: dict[str, EntryStats]) -> dict[tuple[str, ...], str]:
    """Lemma multiset -> the entry (word order) annotated most often, for orders never annotated."""
    best: dict[tuple[str, ...], str] = {}
    for key in sorted(stats):
        ms = lemma_multiset(key)
        if ms not in best or stats[key].occurrences > stats[best[ms]].occurrences:
            best[ms] = key
    return best


def configuration_verdict(t: Thresholds, st: EntryStats, order_seen: bool, gap: int, endings_ok: bool,
                          tree: int | None, parsed: bool) -> str | None:
    """The first configuration filter a candidate fails (None: it passes them all)."""
    if t.order and not order_seen:
        return "order"
    if t.gap_slack is not None and gap > st.max_gap + t.gap_slack:
        return "gap"
    if t.inflection and not endings_ok:
        return "inflection"
    if t.tree_slack is not None and parsed and st.max_tree is not None \
            and (tree is None or tree > st.max_tree + t.tree_slack):
        return "syntax"
    return None


def smoothed_rate(annotated: int, literal: int) -> float:
    return (annotated + 1) / (annotated + literal + 2)


class JudgingModel:
    """What every filter model shares: judge candidates one by one (``judge``, defined by each
    model), keep them with their confidence, resolve overlaps, save and fingerprint the JSON."""

    KIND = ""
    VERSION = 1
    SIGNATURE = "filters"
    # what a kept MWE's confidence estimates: "idiomatic" (an idiomatic, non-literal reading, which
    # test sets may use for their idiomatic part) or "mwe-reading" (an MWE at all, idiomatic or not)
    CONFIDENCE = "idiomatic"
    entries: dict
    thresholds: object
    meta: dict

    def judge(self, m: Mwe, forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None) -> tuple[str | None, float | None]:
        raise NotImplementedError

    def apply(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None) -> tuple[list[Mwe], list[tuple[Mwe, str]]]:
        """Candidates kept (each with its confidence) and candidates removed (with the filter's name)."""
        kept: list[Mwe] = []
        rejected: list[tuple[Mwe, str]] = []
        for m in candidates:
            reason, confidence = self.judge(m, forms, lemmas, heads)
            if reason is None:
                kept.append(m if confidence is None else replace(m, confidence=round(confidence, 4)))
            else:
                rejected.append((m, reason))
        return kept, rejected

    def resolve(self, kept: Sequence[Mwe]) -> list[Mwe]:
        """Overlapping candidates resolved as the model was tuned to (longest or most confident first)."""
        from mwemt.preprocess.identify import resolve_overlaps

        return resolve_overlaps(kept, by_confidence=getattr(self.thresholds, "overlap", "longest") == "confident")

    def content(self) -> dict:
        """What changes annotation: thresholds and statistics (not the metadata)."""
        return {"thresholds": asdict(self.thresholds),
                "entries": {k: v.to_json() for k, v in sorted(self.entries.items())}}

    def to_json(self) -> dict:
        c = self.content()
        return {"kind": self.KIND, "version": self.VERSION, "thresholds": c.pop("thresholds"), **self.meta,
                "entries": c.pop("entries"), **{k: v for k, v in c.items() if v is not None}}

    def save(self, path: str | Path) -> None:
        from mwemt.provenance import write_json

        write_json(path, self.to_json())

    def fingerprint(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.content(), sort_keys=True).encode("utf-8")).hexdigest()[:12]

    @property
    def signature(self) -> str:
        return f"{self.SIGNATURE}:{'+'.join(self.thresholds.active) or 'none'}@{self.fingerprint()}"

    @classmethod
    def read_json(cls, path: str | Path, what: str) -> dict:
        """The saved model's JSON, checked for kind and version; errors name the file."""
        p = Path(path)
        if not p.is_file():
            raise InputError(f"{what} not found", p,
                             expected="a JSON file written by `mwemt lexicon filters` or `mwemt annotate --save-filters`")
        try:
            obj = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", p, exc.lineno) from None
        if not isinstance(obj, dict) or obj.get("kind") != cls.KIND:
            raise InputError(f"not {'an' if what[0] in 'aeiou' else 'a'} {what}", p, expected=f'"kind": "{cls.KIND}"')
        if obj.get("version") != cls.VERSION:
            raise InputError(f"{what} version {obj.get('version')!r}", p, expected=f"version {cls.VERSION}")
        return obj


class FilterModel(JudgingModel):
    """Entry statistics and thresholds; judges look-up candidates one by one."""

    KIND = MODEL_KIND
    VERSION = MODEL_VERSION

    def __init__(self, entries: dict[str, EntryStats], thresholds: Thresholds, meta: dict | None = None,
                 context=None):
        self.entries = entries
        self.thresholds = thresholds
        self.meta = meta or {}
        self.siblings = sibling_index(entries)
        self.context = context  # a `ContextClassifier`, or None
        self._encoder = None
        if thresholds.min_context > 0 and context is None:
            raise MwemtError("a context threshold needs the contextual classifier's weights")

    def without(self, names: Iterable[str]) -> FilterModel:
        """The same model with the named filters turned off."""
        return FilterModel(self.entries, self.thresholds.off(names), self.meta, self.context)

    @property
    def encoder(self):
        """The occurrence encoder of the contextual filter, loaded on first use."""
        if self._encoder is None:
            from mwemt.preprocess.context import OccurrenceEncoder

            self._encoder = OccurrenceEncoder()
        return self._encoder

    @property
    def any_order(self) -> bool:
        """Should the look-up try every word order? Only when unseen orders may be kept."""
        return not self.thresholds.order

    def stats_for(self, lemma: str) -> tuple[EntryStats | None, bool]:
        """The statistics that judge a candidate, and whether its word order was annotated."""
        st = self.entries.get(lemma)
        if st is not None:
            return st, True
        key = self.siblings.get(lemma_multiset(lemma))
        return (self.entries[key], False) if key is not None else (None, True)

    def judge(self, m: Mwe, forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None) -> tuple[str | None, float | None]:
        """(the filter that removes the candidate or None, its confidence or None if unknown)."""
        st, order_seen = self.stats_for(m.lemma)
        if st is None:
            return None, None  # not in the training file: nothing to judge by
        t = self.thresholds
        tree = tree_extra_nodes(m.indices, heads) if t.tree_slack is not None and heads is not None else None
        reason = configuration_verdict(t, st, order_seen, gap_size(m.indices),
                                       not t.inflection or st.endings_ok(m.indices, forms, lemmas),
                                       tree, heads is not None)
        if reason is not None:
            return reason, 0.0
        rate = st.rate
        return ("rate" if rate < t.min_rate else None), rate

    def apply(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None) -> tuple[list[Mwe], list[tuple[Mwe, str]]]:
        kept, rejected = super().apply(candidates, forms, lemmas, heads)
        if kept and self.thresholds.min_context > 0:
            kept, out = self._in_context(kept, forms)
            rejected.extend(out)
        return kept, rejected

    def _in_context(self, kept: list[Mwe], forms: Sequence[str]) -> tuple[list[Mwe], list[tuple[Mwe, str]]]:
        """The contextual filter: P(idiomatic) of each judged candidate becomes its confidence."""
        judged = [m for m in kept if m.confidence is not None]
        if not judged:
            return kept, []
        probs = self.context.probabilities(self.encoder.encode([forms], [[m.indices for m in judged]])[0])
        p_of = {id(m): float(p) for m, p in zip(judged, probs)}
        out_kept, rejected = [], []
        for m in kept:
            p = p_of.get(id(m))
            if p is None:
                out_kept.append(m)
            elif p < self.thresholds.min_context:
                rejected.append((m, "context"))
            else:
                out_kept.append(replace(m, confidence=round(p, 4)))
        return out_kept, rejected

    # ------------------------------------------------------------ the saved artifact
    def content(self) -> dict:
        d = super().content()
        if self.context is not None:
            from mwemt.preprocess.sentence_encoder import encoder_signature

            d["context"] = {"encoder": encoder_signature(), **self.context.to_json()}
        return d

    @classmethod
    def load(cls, path: str | Path) -> FilterModel:
        obj = cls.read_json(path, "identification filter model")
        try:
            thresholds = Thresholds(**obj["thresholds"])
            entries = {str(k): EntryStats.from_json(v) for k, v in obj["entries"].items()}
            context = None
            if "context" in obj:
                from mwemt.preprocess.context import ContextClassifier

                context = ContextClassifier.from_json(obj["context"])
            meta = {k: v for k, v in obj.items() if k not in ("kind", "version", "thresholds", "entries", "context")}
            return cls(entries, thresholds, meta, context)
        except (KeyError, TypeError, ValueError, AttributeError, MwemtError) as exc:
            raise InputError(f"malformed filter model ({type(exc).__name__}: {exc})", path,
                             expected="thresholds and entries as written by mwemt") from None

    def describe(self) -> dict:
        """For reports: what the model does, where it comes from, what cross-validation measured."""
        return {"signature": self.signature, "settings": self.thresholds.describe(),
                "active": list(self.thresholds.active), "entries": len(self.entries),
                **{k: v for k, v in self.meta.items() if k in ("source", "turned_off", "cross_validation")}}


# ---------------------------------------------------------------- learning


@dataclass
class Candidate:
    """A look-up match in a training sentence, with everything the filters ask of it."""

    mwe: Mwe
    key: str | None       # the entry whose statistics judge it (None: not in the statistics)
    order_seen: bool
    label: str            # idiomatic (annotated exactly), literal, or shadowed (inside a longer annotated MWE)
    gap: int
    endings_ok: bool
    tree: int | None
    parsed: bool


def _label(m: Mwe, gold: Sequence[Mwe]) -> str:
    members = set(m.indices)
    shadowed = False
    for g in gold:
        if g.indices == m.indices:
            return "idiomatic"
        shadowed = shadowed or members < set(g.indices)
    return "shadowed" if shadowed else "literal"


def candidates_of(sentences: Sequence[ParsedSentence], lexicon, max_gap: int,
                  stats: dict[str, EntryStats]) -> list[list[Candidate]]:
    """Every look-up match (any word order) in each sentence, before overlap resolution, labelled
    against the annotation and measured for the filters."""
    from mwemt.preprocess.identify import find_candidates

    siblings = sibling_index(stats)
    out = []
    for s in sentences:
        cands = []
        for m in find_candidates(s.lemmas, lexicon, max_gap, any_order=True, forms=s.forms):
            key, order_seen = (m.lemma, True) if m.lemma in stats else (siblings.get(lemma_multiset(m.lemma)), False)
            ok = stats[key].endings_ok(m.indices, s.forms, s.lemmas) if key is not None else True
            tree = tree_extra_nodes(m.indices, s.heads) if s.heads is not None else None
            cands.append(Candidate(m, key, order_seen, _label(m, s.mwes), gap_size(m.indices), ok, tree,
                                   s.heads is not None))
        out.append(cands)
    return out


def _configuration_ok(c: Candidate, stats: dict[str, EntryStats], t: Thresholds) -> bool:
    if c.key is None:
        return True
    return configuration_verdict(t, stats[c.key], c.order_seen, c.gap, c.endings_ok, c.tree, c.parsed) is None


def count_rates(stats: dict[str, EntryStats], candidates: Iterable[list[Candidate]],
                t: Thresholds) -> dict[str, tuple[int, int]]:
    """(annotated, literal) per entry over the candidates that pass the configuration filters."""
    counts: dict[str, list[int]] = {}
    for cands in candidates:
        for c in cands:
            if c.key is None or c.label == "shadowed" or not _configuration_ok(c, stats, t):
                continue
            pair = counts.setdefault(c.key, [0, 0])
            pair[0 if c.label == "idiomatic" else 1] += 1
    return {k: (a, b) for k, (a, b) in counts.items()}


@dataclass(frozen=True)
class Counts:
    """MWE-based exact-match counts on MWEs seen in training (all predictions are seen)."""

    correct: int
    n_pred: int
    n_gold: int

    def __add__(self, o: Counts) -> Counts:
        return Counts(self.correct + o.correct, self.n_pred + o.n_pred, self.n_gold + o.n_gold)

    @property
    def precision(self) -> float:
        return self.correct / self.n_pred if self.n_pred else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.n_gold if self.n_gold else 0.0

    @property
    def f1(self) -> float:
        d = self.n_pred + self.n_gold
        return 2 * self.correct / d if d else 0.0

    def to_json(self) -> dict:
        return {"P": round(self.precision, 4), "R": round(self.recall, 4), "F": round(self.f1, 4),
                "correct": self.correct, "n_pred": self.n_pred, "n_gold": self.n_gold}


@dataclass
class _Fold:
    """One cross-validation fold: statistics from the other parts, candidates of this part."""

    stats: dict[str, EntryStats]
    seen_gold: list[Counter]                    # per held-out sentence: token sets of gold MWEs seen in the rest
    own: dict[int, list[list[Candidate]]]      # max_gap -> candidates in the statistics parts
    held: dict[int, list[list[Candidate]]]     # max_gap -> candidates in the held-out part


def _configured(fold: _Fold, t: Thresholds) -> list[tuple[list[Mwe], Counter, int]]:
    """Held-out sentences with a candidate passing the configuration filters: those candidates
    (confidence = the rate counted on the other parts; None when unknown), the seen gold, and the
    sentence's position in the held-out part."""
    rates = count_rates(fold.stats, fold.own[t.max_gap], t)
    out = []
    for pos, (cands, seen_gold) in enumerate(zip(fold.held[t.max_gap], fold.seen_gold)):
        kept = [c.mwe if c.key is None else replace(c.mwe, confidence=smoothed_rate(*rates.get(c.key, (0, 0))))
                for c in cands if _configuration_ok(c, fold.stats, t)]
        if kept:
            out.append((kept, seen_gold, pos))
    return out


def _score(configured: list[tuple[list[Mwe], Counter, int]], t: Thresholds, in_context=None) -> tuple[int, int]:
    """(correct, predicted) after the rate filter (and ``in_context(pos, mwe)``) and overlap resolution."""
    from mwemt.preprocess.identify import resolve_overlaps

    correct = n_pred = 0
    by_confidence = t.overlap == "confident"
    for cands, seen_gold, pos in configured:
        kept = [m for m in cands if m.confidence is None or m.confidence >= t.min_rate]
        if in_context is not None:
            kept = [m for m in kept if m.confidence is None or in_context(pos, m)]
        if len(kept) > 1:
            kept = resolve_overlaps(kept, by_confidence=by_confidence)
        n_pred += len(kept)
        if seen_gold and kept:
            correct += sum((Counter(m.indices for m in kept) & seen_gold).values())
    return correct, n_pred


def _grid(off: set[str], max_gap: int | None, has_parse: bool, has_upos: bool, grid: dict | None) -> dict[str, tuple]:
    g = dict(DEFAULT_GRID if grid is None else {**DEFAULT_GRID, **grid})
    if max_gap is not None:
        g["max_gap"] = (max_gap,)
    neutral = {"order": ("order", False), "gap": ("gap_slack", None), "syntax": ("tree_slack", None),
               "inflection": ("inflection", False), "rate": ("min_rate", 0.0)}
    for name, (key, value) in neutral.items():
        if name in off or (name == "syntax" and not has_parse) or (name == "inflection" and not has_upos):
            g[key] = (value,)
    return g


def _lexicon_of(sentences: Sequence[ParsedSentence]):
    """The look-up lexicon of annotated sentences: MWE lemmas in word order, matched as they are."""
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.preprocess.lexicon import Lexicon
    from mwemt.records import LexiconEntry

    counts: Counter = Counter(m.lemma for s in sentences for m in s.mwes if m.length >= 2)
    entries = [LexiconEntry(tuple(k.split()), count=n) for k, n in counts.items()]
    return Lexicon(entries, get_lemmatizer("none"), name="train", tokenize_entries=False)


def _make_fold(rest: Sequence[ParsedSentence], held: Sequence[ParsedSentence], max_gaps) -> _Fold:
    lexicon = _lexicon_of(rest)
    stats = configuration_stats(rest)
    seen = {lemma_multiset(m.lemma) for s in rest for m in s.mwes}
    seen_gold = [Counter(m.indices for m in s.mwes if lemma_multiset(m.lemma) in seen) for s in held]
    return _Fold(stats, seen_gold, {g: candidates_of(rest, lexicon, g, stats) for g in max_gaps},
                 {g: candidates_of(held, lexicon, g, stats) for g in max_gaps})


def _combinations(g: dict[str, tuple]) -> Iterator[Thresholds]:
    import itertools

    keys = ("max_gap", "order", "gap_slack", "tree_slack", "inflection", "overlap", "min_rate")
    for values in itertools.product(*(g[k] for k in keys)):
        yield Thresholds(**dict(zip(keys, values)))


def partitions(n: int, folds: int, repeats: int, seed: int = 1) -> list[list[list[int]]]:
    """``repeats`` partitions of range(n) into ``folds`` parts: the first by position (sentence
    k, k + folds, ...), the others after a seeded shuffle."""
    import random

    out = []
    for r in range(repeats):
        order = list(range(n))
        if r:
            random.Random(seed + r).shuffle(order)
        out.append([sorted(order[k::folds]) for k in range(folds)])
    return out


def cross_validate(sentences: Sequence[ParsedSentence], *, folds: int = 5, repeats: int = 3,
                   off: Iterable[str] = (), max_gap: int | None = None, grid: dict | None = None,
                   seed: int = 1, progress: bool = False) -> tuple[Thresholds, dict]:
    """The thresholds with the best repeated k-fold MWE-based F on seen MWEs, and what was measured.

    The first partition takes sentences k, k + folds, ... (by position, so every part mixes the
    file's documents), the other ``repeats - 1`` are seeded shuffles; counts are summed over all
    folds of all partitions, which steadies the choice on small files. Ties go to the
    combination met first; every grid lists its neutral value first, so a filter that does not
    help stays off.
    """
    from tqdm import tqdm

    if folds < 2:
        raise MwemtError("cross-validation needs at least 2 folds")
    sentences = list(sentences)
    if len(sentences) < folds:
        raise MwemtError(f"{len(sentences)} training sentences cannot be split into {folds} folds")
    g = _grid(set(off), max_gap, any(s.heads is not None for s in sentences),
              any(s.upos is not None for s in sentences), grid)
    splits = [(part, [i for j, other in enumerate(parts) if j != k for i in other])
              for parts in partitions(len(sentences), folds, repeats, seed) for k, part in enumerate(parts)]
    made = [_make_fold([sentences[i] for i in rest], [sentences[i] for i in held], g["max_gap"])
            for held, rest in tqdm(splits, desc="filters: folds", unit=" fold", disable=not progress)]
    n_gold = sum(sum(c.values()) for fold in made for c in fold.seen_gold)
    configured: dict = {}
    table: dict[Thresholds, Counts] = {}
    best: Thresholds | None = None
    for t in tqdm(list(_combinations(g)), desc="filters: grid", unit=" setting", disable=not progress):
        config = replace(t, min_rate=0.0, overlap="longest")
        if config not in configured:
            configured = {config: [_configured(fold, t) for fold in made]}  # combinations come grouped
        correct = n_pred = 0
        for fold_configured in configured[config]:
            c, n = _score(fold_configured, t)
            correct, n_pred = correct + c, n_pred + n
        table[t] = Counts(correct, n_pred, n_gold)
        if best is None or table[t].f1 > table[best].f1 + 1e-12:
            best = t
    assert best is not None
    report = {"folds": folds, "repeats": repeats, "seed": seed,
              "objective": "MWE-based F on MWEs seen in the other folds",
              "grid": {k: list(v) for k, v in g.items()}, "chosen": table[best].to_json(),
              "no_filters_by_max_gap": {str(mg): table[Thresholds(mg)].to_json() for mg in g["max_gap"]
                                        if Thresholds(mg) in table},
              "ablation": {f"without {name}": table[best.off([name])].to_json() for name in best.active
                           if best.off([name]) in table}}
    return best, report


CONTEXT_GRID = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def _examples(candidates: list[list[Candidate]], stats: dict[str, EntryStats], t: Thresholds,
              index: Sequence[int]) -> list[tuple[int, Candidate]]:
    """(sentence number in ``index``, candidate) of the candidates a contextual classifier learns from."""
    return [(index[pos], c) for pos, cands in enumerate(candidates) for c in cands
            if c.key is not None and c.label != "shadowed" and _configuration_ok(c, stats, t)]


def _learn_context(sentences: list[ParsedSentence], t: Thresholds, folds: int, seed: int, encoder,
                   progress: bool) -> tuple[object, float, dict]:
    """The contextual classifier (trained on every candidate of the file) and its threshold, chosen
    by k-fold cross-validation with the other thresholds fixed at ``t``."""
    from tqdm import tqdm

    from mwemt.preprocess.context import fit_classifier

    stats = configuration_stats(sentences)
    everything = candidates_of(sentences, _lexicon_of(sentences), t.max_gap, stats)
    asked = {si: sorted({c.mwe.indices for c in cands}) for si, cands in enumerate(everything) if cands}
    order = sorted(asked)
    vectors: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}
    batch = 64
    for b in tqdm(range(0, len(order), batch), desc="filters: encoding", unit=" batch", disable=not progress):
        chunk = order[b:b + batch]
        rows = encoder.encode([sentences[si].forms for si in chunk], [asked[si] for si in chunk])
        for si, mat in zip(chunk, rows):
            for indices, vec in zip(asked[si], mat):
                vectors[(si, indices)] = vec

    def design(examples: list[tuple[int, Candidate]]) -> tuple[np.ndarray, np.ndarray]:
        x = np.array([vectors[(si, c.mwe.indices)] for si, c in examples])
        return x, np.array([1 if c.label == "idiomatic" else 0 for _, c in examples])

    totals = {tau: [0, 0] for tau in CONTEXT_GRID}
    n_gold = 0
    for held in partitions(len(sentences), folds, 1, seed)[0]:
        held_set = set(held)
        rest = [i for i in range(len(sentences)) if i not in held_set]
        fold = _make_fold([sentences[i] for i in rest], [sentences[i] for i in held], [t.max_gap])
        clf = fit_classifier(*design(_examples(fold.own[t.max_gap], fold.stats, t, rest)))
        configured = _configured(fold, t)
        keys = [(held[pos], m.indices) for cands, _, pos in configured for m in cands if m.confidence is not None]
        probs = dict(zip(keys, clf.probabilities(np.array([vectors[k] for k in keys])) if keys else []))
        n_gold += sum(sum(c.values()) for c in fold.seen_gold)
        for tau in CONTEXT_GRID:
            c, n = _score(configured, t, lambda pos, m, tau=tau, probs=probs, held=held: probs[(held[pos], m.indices)] >= tau)
            totals[tau][0] += c
            totals[tau][1] += n
    table = {tau: Counts(c, n, n_gold) for tau, (c, n) in totals.items()}
    best = max(CONTEXT_GRID, key=lambda tau: (round(table[tau].f1, 12), -tau))
    clf = fit_classifier(*design(_examples(everything, stats, t, range(len(sentences)))))
    report = {"folds": folds, "partition": "by position", "encoder_inputs": len(order),
              "by_threshold": {str(tau): c.to_json() for tau, c in table.items()}}
    return clf, best, report


def learn_filters(sentences: Sequence[ParsedSentence], *, folds: int = 5, repeats: int = 3, off: Iterable[str] = (),
                  max_gap: int | None = None, grid: dict | None = None, source: dict | None = None,
                  seed: int = 1, context: bool = False, encoder=None, progress: bool = False) -> FilterModel:
    """Thresholds by cross-validation, then entry statistics from all of ``sentences``.

    ``context``: also learn the contextual classifier (opt-in; ``encoder`` an `OccurrenceEncoder`,
    loaded if None) and its threshold, chosen with the other thresholds fixed.
    """
    t0 = time.perf_counter()
    sentences = list(sentences)
    off = set(off)
    folds = min(folds, len(sentences))  # a tiny file: leave-one-out at most
    if folds >= 2:
        thresholds, cv = cross_validate(sentences, folds=folds, repeats=repeats, off=off, max_gap=max_gap,
                                        grid=grid, seed=seed, progress=progress)
    else:
        thresholds = Thresholds(max_gap or 0)
        cv = {"skipped": f"{len(sentences)} sentence(s): too few to cross-validate, every filter stays off"}
    stats = configuration_stats(sentences)
    candidates = candidates_of(sentences, _lexicon_of(sentences), thresholds.max_gap, stats)
    for key, (a, b) in count_rates(stats, candidates, thresholds).items():
        stats[key].annotated, stats[key].literal = a, b
    classifier = None
    if context and "context" not in off and folds >= 2:
        from mwemt.preprocess.context import OccurrenceEncoder

        classifier, min_context, cv["context"] = _learn_context(
            sentences, thresholds, folds, seed, encoder if encoder is not None else OccurrenceEncoder(), progress)
        thresholds = replace(thresholds, min_context=min_context)
    meta = {"source": {**(source or {}), "sentences": len(sentences),
                       "mwes": sum(1 for s in sentences for m in s.mwes if m.length >= 2)},
            "turned_off": sorted(off), "cross_validation": cv, "seconds": round(time.perf_counter() - t0, 1),
            "versions": _versions()}
    return FilterModel(stats, thresholds, meta, classifier)


def _versions() -> dict:
    from mwemt.provenance import versions

    return versions()


def learn_filters_from_cupt(path: str | Path, **kwargs) -> FilterModel:
    """`learn_filters` on an annotated .cupt file (its sha256 is recorded in the model)."""
    from mwemt.fileio import sha256_file
    from mwemt.formats import read_cupt

    sentences = [parsed_from_cupt(cs) for cs in read_cupt(path)]
    return learn_filters(sentences, source={"path": str(path), "sha256": sha256_file(path)}, **kwargs)
