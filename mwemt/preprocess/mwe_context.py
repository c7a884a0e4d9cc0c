"""P(MWE reading) of each lexicon match in its sentence, for lexicons without annotated data (OEWN).

A look-up in a lexicon such as OEWN finds every co-occurrence of an entry's words: "rip my head
**off**" (*head off*), "**made way** too many errors" (*make way*), "in the living room **playing
cards**". `mwemt.preprocess.filters` learns per-entry statistics from annotated text in the
lexicon's own format (.cupt); OEWN has none. This module learns one classifier for *any* entry of
such a lexicon from annotated English corpora (PARSEME EN, DiMSUM): every look-up match in their
sentences is a training example, positive when it is exactly an annotated MWE, negative otherwise.

Features of one occurrence (`FEATURES`, then optionally the encoder's):

- the entry's **MWE rate in the annotated data**, smoothed towards the overall rate (computed
  out-of-fold for the training examples), and how often it was matched there;
- the entry's **association in a raw corpus** (`mwemt.preprocess.corpus_filters`: the share of
  its contiguous / gapped corpus occurrences beyond chance) and its corpus frequency;
- the entry's **part of speech** and its WordNet lexicographer file (`LEXFILES`, from its category);
- **function-word content**: the share of its words among the raw corpus's most frequent words,
  and whether the words around the match are such words;
- the match's **surface**: number of words, gap, inflected or as the lexicon writes it,
  capitalisation, sentence-initial, overlaps with other matches;
- optionally the **packaged sentence encoder** (`mwemt.preprocess.context.OccurrenceEncoder`:
  the mean of the components' word-piece states with the sentence mean).

A logistic regression (`mwemt.preprocess.context.fit_classifier`) gives P(MWE); matches below the
threshold chosen on development data are removed (filter ``mwe-context``), the others keep P as
their confidence and overlaps are resolved most probable first. The model is one JSON file with
its provenance (training files and their sha256, seed, splits, development scores);
``scripts/train_mwe_context.py`` rebuilds the bundled one (`BUNDLED`).
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines
from mwemt.preprocess.filters import JudgingModel
from mwemt.records import Mwe

KIND = "mwemt-mwe-context"
VERSION = 1
FILTER = "mwe-context"
BUNDLED = Path(__file__).resolve().parents[1] / "data" / "identification" / "oewn-en.mwe-context.json.gz"
FEATURES = ("rate", "log_train_matches", "train_seen", "association", "variability", "log_corpus", "corpus_seen",
            "pos_n", "pos_v", "pos_a", "pos_r", "length", "gap", "function_share", "first_function",
            "last_function", "prev_function", "next_function", "prev_content", "next_content", "as_written",
            "capitalized_all", "capitalized_inside", "capitalized_neighbour", "sentence_initial", "overlaps",
            "inside_longer", "holds_shorter")
# the 45 WordNet lexicographer files (OEWN puts an entry's in its category): finer than the part of
# speech (in the bundled model, verb.motion and noun.group entries get lower P, noun.cognition and
# verb.body higher)
LEXFILES = ("adj.all", "adj.pert", "adj.ppl", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
            "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling",
            "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object", "noun.person",
            "noun.phenomenon", "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
            "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body", "verb.change",
            "verb.cognition", "verb.communication", "verb.competition", "verb.consumption", "verb.contact",
            "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession", "verb.social",
            "verb.stative", "verb.weather")
_LEXFILE_INDEX = {name: k for k, name in enumerate(LEXFILES)}
FEATURES = FEATURES + tuple(f"lexfile={name}" for name in LEXFILES)
_POS = {"noun": 0, "verb": 1, "adj": 2, "adv": 3}


@dataclass(frozen=True)
class ContextThresholds:
    """The look-up's gap and the probability threshold (0 = keep every match, with its P)."""

    max_gap: int = 0
    min_probability: float = 0.5
    overlap: str = "confident"

    def __post_init__(self) -> None:
        if self.max_gap < 0 or not 0.0 <= self.min_probability <= 1.0:
            raise MwemtError("the MWE-in-context model needs max_gap >= 0 and a threshold in [0, 1]")

    def off(self, names: Iterable[str]) -> ContextThresholds:
        names = set(names)
        unknown = names - {FILTER}
        if unknown:
            raise MwemtError(f"unknown filter(s) {', '.join(sorted(unknown))} for the MWE-in-context model; "
                             f"known: {FILTER}")
        return replace(self, min_probability=0.0) if FILTER in names else self

    @property
    def active(self) -> tuple[str, ...]:
        return (FILTER,) if self.min_probability > 0 else ()

    def describe(self) -> str:
        return f"max_gap={self.max_gap}, P(MWE in context)>={self.min_probability:g}"


@dataclass(frozen=True)
class Evidence:
    """What is known of one entry: annotated / matched in the training data, raw-corpus statistics."""

    annotated: int = 0
    matches: int = 0
    association: float | None = None
    variability: float | None = None
    corpus: int = 0

    def to_json(self) -> list:
        return [self.annotated, self.matches, None if self.association is None else round(self.association, 4),
                None if self.variability is None else round(self.variability, 4), self.corpus]

    @classmethod
    def from_json(cls, v: list) -> Evidence:
        return cls(int(v[0]), int(v[1]), None if v[2] is None else float(v[2]),
                   None if v[3] is None else float(v[3]), int(v[4]))


def smoothed(annotated: int, matches: int, prior: float, strength: float = 2.0) -> float:
    """The entry's MWE rate, pulled towards ``prior`` when it was matched only a few times."""
    return (annotated + strength * prior) / (matches + strength)


def _pos_of(category: str) -> int | None:
    return _POS.get(category.split(".", 1)[0]) if "." in category else None


def occurrence_features(candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
                        evidence: dict[str, Evidence], function_words: frozenset[str], prior: float,
                        override: Sequence[Evidence | None] | None = None) -> np.ndarray:
    """One row of `FEATURES` per candidate of one sentence (``override``: per-candidate evidence
    to use instead of ``evidence``, for out-of-fold training rates)."""
    rows = np.zeros((len(candidates), len(FEATURES)))
    n = len(forms)
    for k, m in enumerate(candidates):
        ev = override[k] if override is not None and override[k] is not None else evidence.get(m.lemma, Evidence())
        idx = m.indices
        words = [lemmas[i] for i in idx]
        fun = [w in function_words for w in words]
        surface = [forms[i] for i in idx]
        pos = _pos_of(m.category)
        others = [o for o in candidates if o is not m and not set(o.indices).isdisjoint(idx)]
        row = [smoothed(ev.annotated, ev.matches, prior), math.log1p(ev.matches), float(ev.matches > 0),
               ev.association or 0.0, ev.variability or 0.0, math.log1p(ev.corpus), float(ev.corpus > 0),
               float(pos == 0), float(pos == 1), float(pos == 2), float(pos == 3),
               float(len(idx)), float(idx[-1] - idx[0] + 1 - len(idx)), sum(fun) / len(fun), float(fun[0]),
               float(fun[-1]),
               float(idx[0] > 0 and lemmas[idx[0] - 1] in function_words),
               float(idx[-1] + 1 < n and lemmas[idx[-1] + 1] in function_words),
               float(idx[0] > 0 and _content(lemmas[idx[0] - 1], function_words)),
               float(idx[-1] + 1 < n and _content(lemmas[idx[-1] + 1], function_words)),
               float(" ".join(w.lower() for w in surface) == m.lemma.lower()),
               float(all(w[:1].isupper() for w in surface)),
               float(any(w[:1].isupper() for i, w in zip(idx, surface) if i > 0)),
               float((idx[0] > 1 and forms[idx[0] - 1][:1].isupper())
                     or (idx[-1] + 1 < n and forms[idx[-1] + 1][:1].isupper())),
               float(idx[0] == 0), float(len(others)),
               float(any(set(idx) < set(o.indices) for o in others)),
               float(any(set(o.indices) < set(idx) for o in others))]
        lexfile = [0.0] * len(LEXFILES)
        if m.category in _LEXFILE_INDEX:
            lexfile[_LEXFILE_INDEX[m.category]] = 1.0
        rows[k] = row + lexfile
    return rows


def _digits(v: float) -> float:
    """``v`` to 7 significant digits (a tiny standard deviation must not round to 0)."""
    return float(f"{float(v):.7g}")


def _content(lemma: str, function_words: frozenset[str]) -> bool:
    """A word that is not a function word and has a letter (a possible part of a longer compound)."""
    return lemma not in function_words and any(c.isalpha() for c in lemma)


class MweContextModel(JudgingModel):
    """Evidence per entry, standardisation, logistic-regression weights and the threshold."""

    KIND = KIND
    VERSION = VERSION
    SIGNATURE = "mwe-context"
    CONFIDENCE = "mwe-reading"   # P(MWE reading): says nothing of idiomaticity, so test parts ignore it
    any_order = False

    def __init__(self, entries: dict[str, Evidence], thresholds: ContextThresholds, *, prior: float,
                 function_words: Iterable[str], mean: np.ndarray, scale: np.ndarray, weights: np.ndarray,
                 bias: float, use_encoder: bool, meta: dict | None = None):
        self.entries = entries
        self.thresholds = thresholds
        self.prior = float(prior)
        self.function_words = frozenset(function_words)
        self.mean, self.scale, self.weights, self.bias = mean, scale, weights, float(bias)
        self.use_encoder = use_encoder
        self.meta = meta or {}
        self._encoder = None
        width = len(FEATURES) + (len(weights) - len(FEATURES) if use_encoder else 0)
        if not (len(mean) == len(scale) == len(weights) == width) or (use_encoder and len(weights) <= len(FEATURES)):
            raise MwemtError(f"MWE-in-context model: {len(weights)} weights for {width} features")
        if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise MwemtError("MWE-in-context model: every feature scale must be positive")

    # ------------------------------------------------------------ judging
    @property
    def encoder(self):
        if self._encoder is None:
            from mwemt.preprocess.context import OccurrenceEncoder

            self._encoder = OccurrenceEncoder()
        return self._encoder

    def design(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
               override=None, encoded: np.ndarray | None = None) -> np.ndarray:
        """The standardised feature rows of one sentence's candidates."""
        x = occurrence_features(candidates, forms, lemmas, self.entries, self.function_words, self.prior, override)
        if self.use_encoder:
            if encoded is None:
                encoded = self.encoder.encode([list(forms)], [[m.indices for m in candidates]])[0]
            x = np.hstack([x, encoded])
        return (x - self.mean) / self.scale

    def probabilities(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
                      encoded: np.ndarray | None = None) -> np.ndarray:
        if not candidates:
            return np.zeros(0)
        z = self.design(candidates, forms, lemmas, encoded=encoded) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-z))

    def judge(self, m: Mwe, forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None) -> tuple[str | None, float | None]:
        p = float(self.probabilities([m], forms, lemmas)[0])
        return (FILTER if p < self.thresholds.min_probability else None), p

    def apply(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None, encoded: np.ndarray | None = None
              ) -> tuple[list[Mwe], list[tuple[Mwe, str]]]:
        """Every candidate of the sentence judged together (one encoder pass); each, kept or
        removed, carries its P(MWE) as confidence."""
        probs = self.probabilities(candidates, forms, lemmas, encoded)
        kept: list[Mwe] = []
        rejected: list[tuple[Mwe, str]] = []
        for m, p in zip(candidates, probs):
            m = replace(m, confidence=round(float(p), 4))
            if p < self.thresholds.min_probability:
                rejected.append((m, FILTER))
            else:
                kept.append(m)
        return kept, rejected

    def without(self, names: Iterable[str]) -> MweContextModel:
        return self.with_threshold(None, self.thresholds.off(names))

    def with_threshold(self, threshold: float | None, thresholds: ContextThresholds | None = None) -> MweContextModel:
        t = thresholds or self.thresholds
        if threshold is not None:
            t = replace(t, min_probability=threshold)
        out = MweContextModel(self.entries, t, prior=self.prior, function_words=self.function_words,
                              mean=self.mean, scale=self.scale, weights=self.weights, bias=self.bias,
                              use_encoder=self.use_encoder, meta=self.meta)
        out._encoder = self._encoder
        return out

    # ------------------------------------------------------------ the saved artifact
    def content(self) -> dict:
        d = super().content()
        d["classifier"] = {"prior": round(self.prior, 6), "function_words": sorted(self.function_words),
                           "features": list(FEATURES), "encoder": self.encoder_name(),
                           "mean": [_digits(v) for v in self.mean], "scale": [_digits(v) for v in self.scale],
                           "weights": [_digits(v) for v in self.weights], "bias": _digits(self.bias)}
        return d

    def encoder_name(self) -> str | None:
        if not self.use_encoder:
            return None
        from mwemt.preprocess.sentence_encoder import ENCODER

        return ENCODER

    def save(self, path: str | Path) -> None:
        """JSON, gzip-compressed when ``path`` ends in .gz; written atomically."""
        from mwemt.fileio import atomic_write

        text = json.dumps(self.to_json(), ensure_ascii=False, sort_keys=False)
        if str(path).endswith(".gz"):
            with atomic_write(path, "wb") as fh:
                fh.write(gzip.compress(text.encode("utf-8"), mtime=0))
        else:
            with atomic_write(path) as fh:
                fh.write(text + "\n")

    @classmethod
    def read_json(cls, path: str | Path, what: str) -> dict:
        p = Path(path)
        if not str(p).endswith(".gz"):
            return super().read_json(path, what)
        if not p.is_file():
            raise InputError(f"{what} not found", p, expected="a model written by scripts/train_mwe_context.py")
        try:
            obj = json.loads(gzip.decompress(p.read_bytes()).decode("utf-8"))
        except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"not a gzip-compressed JSON model: {exc}", p) from None
        if not isinstance(obj, dict) or obj.get("kind") != cls.KIND or obj.get("version") != cls.VERSION:
            raise InputError(f"not {what} version {cls.VERSION}", p, expected=f'"kind": "{cls.KIND}"')
        return obj

    @classmethod
    def load(cls, path: str | Path) -> MweContextModel:
        obj = cls.read_json(path, "an MWE-in-context model")
        try:
            c = obj["classifier"]
            if list(c["features"]) != list(FEATURES):
                raise ValueError(f"features {c['features']} are not this version's {list(FEATURES)}")
            thresholds = ContextThresholds(**obj["thresholds"])
            entries = {str(k): Evidence.from_json(v) for k, v in obj["entries"].items()}
            meta = {k: v for k, v in obj.items() if k not in ("kind", "version", "thresholds", "entries", "classifier")}
            return cls(entries, thresholds, prior=c["prior"], function_words=c["function_words"],
                       mean=np.asarray(c["mean"], dtype=np.float64), scale=np.asarray(c["scale"], dtype=np.float64),
                       weights=np.asarray(c["weights"], dtype=np.float64), bias=c["bias"],
                       use_encoder=c["encoder"] is not None, meta=meta)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, MwemtError) as exc:
            raise InputError(f"malformed MWE-in-context model ({type(exc).__name__}: {exc})", path) from None

    def describe(self) -> dict:
        return {"signature": self.signature, "settings": self.thresholds.describe(),
                "active": list(self.thresholds.active), "entries": len(self.entries),
                "encoder": self.encoder_name(),
                **{k: v for k, v in self.meta.items() if k in ("source", "development")}}


# ---------------------------------------------------------------- learning


@dataclass
class Example:
    """One look-up match in an annotated sentence and its label (1 = exactly an annotated MWE)."""

    sentence: int
    mwe: Mwe
    label: int


def label_matches(candidates: Sequence[Mwe], gold: Sequence[Mwe]) -> list[int]:
    """1 where a candidate's tokens are exactly an annotated MWE's, else 0."""
    spans = {g.indices for g in gold}
    return [int(m.indices in spans) for m in candidates]


def count_evidence(examples: Iterable[Example]) -> dict[str, list[int]]:
    """Per entry: [annotated, matched] over ``examples``."""
    counts: dict[str, list[int]] = {}
    for e in examples:
        c = counts.setdefault(e.mwe.lemma, [0, 0])
        c[0] += e.label
        c[1] += 1
    return counts


def fit(x: np.ndarray, y: np.ndarray, l2: float, encoder_weight: float = 1.0
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Standardisation (mean, scale) and logistic-regression weights and bias on standardised ``x``.

    ``encoder_weight`` < 1 shrinks the encoder's columns (those after `FEATURES`) after
    standardisation, which penalises their weights 1 / encoder_weight^2 times more than the others'.
    """
    from mwemt.preprocess.context import fit_classifier

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    scale[len(FEATURES):] /= encoder_weight
    clf = fit_classifier((x - mean) / scale, y, l2=l2)
    return mean, scale, clf.weights, clf.bias


@dataclass
class Prf:
    """Exact precision, lenient precision (inside one gold MWE) and exact recall of predictions."""

    pred: int = 0
    exact: int = 0
    inside: int = 0
    gold: int = 0
    found: int = 0

    def add(self, gold: Sequence[Mwe], pred: Sequence[Mwe]) -> None:
        spans = [set(g.indices) for g in gold]
        exact = {g.indices for g in gold}
        self.gold += len(gold)
        self.pred += len(pred)
        for m in pred:
            self.exact += m.indices in exact
            self.inside += any(set(m.indices) <= s for s in spans)
        self.found += len(exact & {m.indices for m in pred})

    @property
    def precision(self) -> float:
        return self.exact / self.pred if self.pred else 0.0

    @property
    def lenient(self) -> float:
        return self.inside / self.pred if self.pred else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.gold if self.gold else 0.0

    def row(self) -> str:
        return (f"{self.pred:5d} pred  exact P {100 * self.precision:5.1f}  lenient P {100 * self.lenient:5.1f}  "
                f"R {100 * self.recall:5.1f}")

    def to_json(self) -> dict:
        return {"pred": self.pred, "gold": self.gold, "exact": self.exact, "inside": self.inside,
                "found": self.found, "exact_precision": round(self.precision, 4),
                "lenient_precision": round(self.lenient, 4), "recall": round(self.recall, 4)}


def choose_threshold(scored: Sequence[tuple[Sequence[Mwe], Sequence[Mwe], Sequence[float]]],
                     target_precision: float = 0.75, grid: Sequence[float] | None = None) -> tuple[float, Prf]:
    """The lowest threshold whose exact precision on ``scored`` (gold, candidates, P per candidate;
    overlaps resolved most probable first) reaches ``target_precision``: the most recall at that
    precision. If none does, the threshold of the best F0.5."""
    from mwemt.preprocess.identify import resolve_overlaps

    grid = grid or [round(0.05 * k, 2) for k in range(1, 20)]
    results = []
    for t in grid:
        prf = Prf()
        for gold, cands, probs in scored:
            kept = [replace(m, confidence=float(p)) for m, p in zip(cands, probs) if p >= t]
            prf.add(gold, resolve_overlaps(kept, by_confidence=True))
        results.append((t, prf))
    ok = [(t, prf) for t, prf in results if prf.pred and prf.precision >= target_precision]
    if ok:
        return ok[0]

    def f05(prf: Prf) -> float:
        p, r = prf.precision, prf.recall
        return 1.25 * p * r / (0.25 * p + r) if p + r else 0.0

    return max(results, key=lambda tr: (f05(tr[1]), -tr[0]))


def read_dimsum(path: str | Path) -> list[tuple[list[str], list[Mwe]]]:
    """(forms, gold MWEs) per sentence of a DiMSUM 2016 file (offset, form, lemma, POS, MWE flag,
    parent offset, strength, supersense, sentence id); an MWE is a chain of tokens linked by their
    parent offsets."""
    out: list[tuple[list[str], list[Mwe]]] = []
    forms: list[str] = []
    parent: list[int] = []

    def close() -> None:
        if not forms:
            return
        group = list(range(len(forms)))

        def root(i: int) -> int:
            while group[i] != i:
                i = group[i]
            return i

        for i, p in enumerate(parent):
            if p > 0:
                group[root(i)] = root(p - 1)
        members: dict[int, list[int]] = {}
        for i in range(len(forms)):
            members.setdefault(root(i), []).append(i)
        mwes = [Mwe(tuple(idx), " ".join(forms[i].lower() for i in idx)) for idx in members.values() if len(idx) > 1]
        out.append((list(forms), sorted(mwes)))
        forms.clear()
        parent.clear()

    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            close()
            continue
        cols = line.split("\t")
        if len(cols) < 9 or not cols[0].isdigit() or not cols[5].isdigit() or cols[4] not in set("OoBbIi"):
            raise InputError(f"{len(cols)} columns / bad fields", path, lineno,
                             expected="offset, form, lemma, POS, MWE flag (OoBbIi), parent offset, strength, "
                                      "supersense, sentence id (TAB-separated)")
        if int(cols[0]) != len(forms) + 1 or int(cols[5]) > len(forms):
            raise InputError(f"token offset {cols[0]} / parent {cols[5]} out of place", path, lineno,
                             expected=f"offset {len(forms) + 1} and a parent before it")
        forms.append(cols[1])
        parent.append(int(cols[5]))
    close()
    return out


def bundled_model() -> MweContextModel:
    """The model shipped with mwemt (OEWN, English), trained by scripts/train_mwe_context.py."""
    if not BUNDLED.is_file():
        raise MwemtError(f"the bundled MWE-in-context model is missing ({BUNDLED}); rebuild it with "
                         "scripts/train_mwe_context.py")
    return MweContextModel.load(BUNDLED)
