"""``mwe-verdict``: was this MWE translated right in this line? A probability per MWE occurrence, and
the share of MWEs translated right as the corpus score.

Why: the MWE scores (``mwe``, ``mwe-p``, ``mwe-alts``) measure how close the words a line spends on an
MWE come to its reference translation. People judge more: a correct paraphrase is right although it
shares no word with the reference, and an exact copy of the reference is wrong inside a sentence that
makes no sense around it, or when it was appended after the sentence. The verdict combines what the
project knows about one MWE in one line into a probability with a small logistic regression whose
parameters ship with mwemt (``mwemt/data/evaluate/mwe-verdict.en-it.json``, plain JSON; no pickle),
fitted on the 1,262 adjudicated TED EN->IT checks (Monti et al.) by `mwemt meta-eval mwe-verdict-train`.

Features of one MWE occurrence (`FEATURES`; all in [0, 1] except ``length`` and ``ref_length``), language-independent
except where a resource is named:

- ``ref_mwe``: the MWE score (`MweScore`: aligned words and a window of one, Levenshtein characters,
  near-miss floor, order penalty) of the reference translation;
- ``ref_mwe_p``: ``mwe-p`` of the reference translation (one-to-one, wasted aligned words charged);
- ``ref_exact``: the share of the reference translation's words found exactly among the MWE's words
  (`MweScore.candidates`: aligned words, their window, the reference's own occurrence);
- ``ref_lemma``: the share found by lemma (simplemma of the target language);
- ``inflection``: the share found by lemma but not by form: the right word in the wrong inflection
  (agreement errors);
- ``unmatched``: the share of the MWE's aligned words that are no word of the reference translation (a
  literal extra beside the right words, a wrong rendering);
- ``alt_best``: ``mwe-p`` of the best of the reference and every attested translation: the test
  items' alternatives and, when given, an MWE translation table's (`mwemt.testsets.mwe_table`,
  dictionary entries included); equal to ``ref_mwe_p`` without them;
- ``literal``: LiTER's signal (`mwemt.evaluate.liter`): an MWE word aligned to a word-for-word
  dictionary translation of one of the MWE's content words that the reference sentence does not use;
  needs a bilingual dictionary (0 without one);
- ``fragment``: the share of the MWE's aligned words that sit in a fragment appended after a sentence
  end (more sentences than the source: `mwemt.evaluate.degenerate.sentence_count`);
- ``loop``: the share of the MWE's aligned words inside a loop (a repeated span run the source does not
  have: `mwemt.evaluate.degenerate`);
- ``chrf``: sentence chrF of the line against the reference sentence (lowercased, 0-1);
- ``length``: |log(hypothesis words / reference sentence words)|;
- ``coverage``: the share of the MWE's source tokens with an alignment link;
- ``ref_length``: log(1 + words of the reference translation): a long reference translation is harder to
  match and more often a free rendering.

The probability is the logistic regression's on these features (standardized with the training
means and scales), with one rule the human checks cannot teach, because they hold almost no such
lines: the aligned words of an MWE that sit in an appended fragment or a loop are not a fluent part of
the sentence, so the probability is multiplied by (1 - ``fragment``) x (1 - ``loop``).

Corpus score: the **mean probability over the MWEs of the test set x 100**, i.e. the expected share of
MWEs translated right (pooled over MWEs, not averaged per sentence). Statistics per sentence: the sum
of its MWEs' probabilities and their number, so the paired bootstrap, sentence scores and subsets come
from the rows as for every metric. ``info["mwe_probabilities"]`` and ``info["mwe_features"]`` keep every
MWE's probability and features, in test-set order.

A line's statistics depend on that line alone given its alignment: the table, the dictionary and the
model are fixed inputs, and the alignments come from the MWE score's own aligner (`MweAlignSettings`,
`MweScore.align_hypotheses`), so the verdict is exactly as line-stable as the MWE score.

A learned verdict is evaluated only by cross-validation grouped by sentence with fixed folds
(`sentence_folds`: a sentence's rows are all in one fold); `mwemt.evaluate.mwe_agreement` reports it.
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.base import REFERENCE_MWES, RatioMetric, SentenceStats, Signature
from mwemt.evaluate.mwe_precision import MwePrecisionScore
from mwemt.evaluate.mwe_score import ALIGNERS, AlignmentError, MweAlignSettings, MweScore, alignment_signature
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.records import TestMwe

FEATURES = ("ref_mwe", "ref_mwe_p", "ref_exact", "ref_lemma", "inflection", "unmatched", "alt_best", "literal",
            "fragment", "loop", "chrf", "length", "coverage", "ref_length")
# features whose value (share of the MWE's aligned words) multiplies the probability down: see the docstring
NOT_FLUENT = ("fragment", "loop")
MODEL_FORMAT = "mwemt-mwe-verdict"
MODEL_VERSION = 1
BUNDLED_MODEL = Path(__file__).resolve().parents[1] / "data" / "evaluate" / "mwe-verdict.en-it.json"
DEFAULT_FOLDS = 10
DEFAULT_C = 1.0  # inverse L2 strength of the logistic regression on standardized features; not tuned
STATS_COLUMNS = ("probability_sum", "mwes")


# ---------------------------------------------------------------- the model


@dataclass(frozen=True)
class VerdictModel:
    """A logistic regression over `FEATURES`: P(right) = sigmoid(intercept + sum coef * (x - mean) / scale).

    ``meta`` holds how it was trained (data, counts, alignment, cross-validated agreement); it takes no
    part in equality. Read and written as JSON (`read`, `write`)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    meta: Mapping = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ValueError("a verdict model needs a mean, scale and coefficient per feature")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"unknown verdict feature(s) {unknown}; known: {', '.join(FEATURES)}")
        if any(not s > 0 for s in self.scale):
            raise ValueError("feature scales must be positive")

    def columns(self) -> list[int]:
        return [FEATURES.index(f) for f in self.features]

    def decision(self, X: np.ndarray) -> np.ndarray:
        """The linear score (log-odds) of each row of ``X`` (columns in `FEATURES` order)."""
        X = np.asarray(X, dtype=np.float64)
        z = (X[:, self.columns()] - np.array(self.mean)) / np.array(self.scale)
        return z @ np.array(self.coef) + self.intercept

    def probability(self, X: np.ndarray) -> np.ndarray:
        """P(the MWE is translated right) of each row of ``X``, the not-fluent rule applied."""
        X = np.asarray(X, dtype=np.float64).reshape(-1, len(FEATURES))
        p = 1.0 / (1.0 + np.exp(-self.decision(X)))
        for name in NOT_FLUENT:
            p = p * (1.0 - np.clip(X[:, FEATURES.index(name)], 0.0, 1.0))
        return p

    def fingerprint(self) -> str:
        """A short hash of the parameters (what the signature names)."""
        text = json.dumps([self.features, self.mean, self.scale, self.coef, self.intercept])
        return hashlib.sha256(text.encode()).hexdigest()[:10]

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "custom"))

    def to_dict(self) -> dict:
        return {"format": MODEL_FORMAT, "version": MODEL_VERSION, "name": self.name,
                "features": list(self.features), "mean": list(self.mean), "scale": list(self.scale),
                "coef": list(self.coef), "intercept": self.intercept,
                "meta": {k: v for k, v in self.meta.items() if k != "name"}}

    def write(self, path: str | Path) -> None:
        from mwemt.fileio import write_text

        write_text(path, json.dumps(self.to_dict(), indent=1, sort_keys=False) + "\n")

    @classmethod
    def read(cls, path: str | Path) -> VerdictModel:
        expected = f'a JSON object with "format": "{MODEL_FORMAT}", features, mean, scale, coef and intercept'
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InputError("no such file", path, expected=expected) from None
        except json.JSONDecodeError as exc:
            raise InputError(f"not JSON: {exc.msg}", path, exc.lineno, expected=expected) from None
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
            raise InputError("not an MWE verdict model", path, 1, expected=expected)
        if data.get("version") != MODEL_VERSION:
            raise InputError(f"model version {data.get('version')!r}", path, 1, expected=f"version {MODEL_VERSION}")
        try:
            return cls(tuple(data["features"]), tuple(map(float, data["mean"])), tuple(map(float, data["scale"])),
                       tuple(map(float, data["coef"])), float(data["intercept"]),
                       {"name": data.get("name", Path(path).stem), **data.get("meta", {})})
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"bad model: {exc}", path, 1, expected=expected) from None


def bundled_model() -> VerdictModel:
    """The model that ships with mwemt (trained on the TED EN->IT checks)."""
    if not BUNDLED_MODEL.is_file():
        raise MwemtError(f"the bundled MWE verdict model is missing ({BUNDLED_MODEL}); rebuild it with "
                         "`mwemt meta-eval mwe-verdict-train` (docs/evaluate.md)")
    return VerdictModel.read(BUNDLED_MODEL)


def fit_model(X: np.ndarray, y: np.ndarray, *, features: Sequence[str] = FEATURES, C: float = DEFAULT_C,
              meta: Mapping | None = None) -> VerdictModel:
    """An L2-regularized logistic regression (scikit-learn, lbfgs) on standardized ``features``;
    deterministic for the same rows."""
    from sklearn.linear_model import LogisticRegression

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if len(set(y.tolist())) != 2:
        raise MwemtError("fitting a verdict model needs rows of both verdicts")
    cols = [FEATURES.index(f) for f in features]
    sub = X[:, cols]
    mean = sub.mean(axis=0)
    scale = sub.std(axis=0)
    scale[scale < 1e-9] = 1.0  # a constant feature: its coefficient stays 0 under the penalty
    clf = LogisticRegression(C=C, max_iter=1000)
    clf.fit((sub - mean) / scale, y)
    return VerdictModel(tuple(features), tuple(map(float, mean)), tuple(map(float, scale)),
                        tuple(float(c) for c in clf.coef_[0]), float(clf.intercept_[0]), dict(meta or {}))


def sentence_folds(groups: Sequence, k: int = DEFAULT_FOLDS) -> np.ndarray:
    """The fold (0..k-1) of each row: a numeric sentence id mod k, any other id by its CRC-32 mod k.
    Fixed (no random draw) and grouped: every row of one sentence is in the same fold."""
    if k < 2:
        raise MwemtError(f"cross-validation needs 2 folds or more, not {k}")
    return np.array([int(g) % k if str(g).isdigit() else zlib.crc32(str(g).encode()) % k for g in groups],
                    dtype=np.int64)


def cross_validated_probabilities(X: np.ndarray, y: np.ndarray, groups: Sequence, *, k: int = DEFAULT_FOLDS,
                                  features: Sequence[str] = FEATURES, C: float = DEFAULT_C) -> np.ndarray:
    """Each row's probability from a model fitted on the other folds only (`sentence_folds`)."""
    folds = sentence_folds(groups, k)
    out = np.full(len(y), np.nan)
    for f in range(k):
        test = folds == f
        if not test.any():
            continue
        model = fit_model(X[~test], y[~test], features=features, C=C)
        out[test] = model.probability(X[test])
    return out


# ---------------------------------------------------------------- features


def _share(flags: Sequence[bool]) -> float:
    return float(sum(flags)) / len(flags) if flags else 0.0


def appended_from(src_tokens: Sequence[str], hyp_tokens: Sequence[str]) -> int | None:
    """The first hypothesis token of text appended after a sentence end that the source has no sentence
    for (`mwemt.evaluate.degenerate.sentence_count`); None when the hypothesis has no more sentences."""
    from mwemt.evaluate.degenerate import sentence_count

    allowed = max(sentence_count(src_tokens), 1)
    if sentence_count(hyp_tokens) <= allowed:
        return None
    for end in range(1, len(hyp_tokens) + 1):
        if sentence_count(hyp_tokens[:end]) > allowed:
            return end - 1
    return None


def loop_positions(src_tokens: Sequence[str], hyp_tokens: Sequence[str]) -> set[int]:
    """The hypothesis tokens inside a loop (`mwemt.evaluate.degenerate`: a span of up to 4 tokens 3 times
    in a row, or a longer one twice) when the line has one its source lacks; else none."""
    from mwemt.evaluate.degenerate import DEFAULT_SETTINGS as S
    from mwemt.evaluate.degenerate import has_loop, repeat_runs

    if not has_loop(src_tokens, hyp_tokens, S):
        return set()
    out: set[int] = set()
    for start, n, times in repeat_runs(hyp_tokens):
        if times >= (S.loop_short_repeats if n <= S.loop_max_short else S.loop_long_repeats):
            out.update(range(start, start + n * times))
    return out


@register_metric("mwe-verdict")
class MweVerdict(RatioMetric):
    """The MWE verdict (module docstring): per MWE a probability that it is translated right; the corpus
    score is the mean probability over MWEs x 100."""

    key = "mwe-verdict"
    name = "MWE-verdict"
    undefined_reason = "no sentence of the test set has an MWE to judge"
    reference_kind = REFERENCE_MWES
    uses_alignments = True
    reads = frozenset({"mwe_align", "mwe_pretokenized", "mwe_table", "mwe_table_min_count", "dictionary",
                       "dictionary_format"})

    def __init__(self, lang: str = "it", *, pretokenized: bool = False, align: MweAlignSettings | str = "lex",
                 table=None, table_min_count: int = 1, table_name: str = "",
                 dictionary: Mapping[str, frozenset[str]] | None = None, dictionary_name: str = "",
                 model: VerdictModel | None = None, src_lang: str = "en",
                 references: Sequence[str] | None = None) -> None:
        from mwemt.evaluate.sacrebleu_metrics import Chrf
        from mwemt.preprocess.lemmatize import get_lemmatizer

        self.lang = lang
        self.pretokenized = pretokenized
        self._model = model
        # the three MWE scores the features read; they share the alignment settings (and so the aligner)
        self.mwe = MweScore(lang, pretokenized=pretokenized, align=align)
        self.align = self.mwe.align
        self.mwe_p = MwePrecisionScore(lang, pretokenized=pretokenized, align=self.align)
        self.alts = MwePrecisionScore(lang, pretokenized=pretokenized, align=self.align,
                                      alternatives="table" if table is not None else "testset", table=table,
                                      table_min_count=table_min_count, table_name=table_name)
        self.table, self.table_name = table, table_name
        self.table_min_count = table_min_count
        self.lemmatizer = get_lemmatizer("simplemma", lang)
        self.chrf = Chrf(lowercase=True)
        self.liter = None
        if dictionary:
            from mwemt.evaluate.liter import Liter

            self.liter = Liter(dict(dictionary), lang, src_lang)
        self.dictionary_name = dictionary_name
        self.references = references
        self._lemmas: dict[str, str] = {}

    @property
    def model(self) -> VerdictModel:
        """The verdict model: the one given, else the bundled one (read on first use)."""
        if self._model is None:
            self._model = bundled_model()
        return self._model

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> MweVerdict:
        base = MweScore.from_options("mwe", options, inputs)  # the MWE score's aligner and cache
        table = None
        if options.mwe_table:
            from mwemt.testsets.mwe_table import MweTranslationTable

            table = MweTranslationTable.read(options.mwe_table)
        dictionary = None
        if options.dictionary:
            from mwemt.evaluate.liter import word_dictionary
            from mwemt.testsets.mwe_table import read_dictionary

            dictionary = word_dictionary(read_dictionary(options.dictionary, options.dictionary_format, min_words=1))
        refs = [it.reference for it in inputs.testset] if inputs is not None and inputs.testset is not None else None
        return cls(options.lang, pretokenized=options.mwe_pretokenized, align=base.align, table=table,
                   table_min_count=options.mwe_table_min_count,
                   table_name=Path(options.mwe_table).name if options.mwe_table else "",
                   dictionary=dictionary, dictionary_name=Path(options.dictionary).name if options.dictionary else "",
                   references=refs)

    # -- the MWE score's tokenization and aligner (what front ends that align once per system call)
    compat = None  # no compatibility mode: front ends ask every aligned MWE metric

    def moses_tokens(self, text: str) -> list[str]:
        return self.mwe.moses_tokens(text)

    def align_hypotheses(self, sources: Sequence[str], hyp_tokens: Sequence[Sequence[str]],
                         references: Sequence[str] | None = None) -> tuple[list, dict]:
        """`MweScore.align_hypotheses` of the MWE score the verdict reads: the same links."""
        return self.mwe.align_hypotheses(sources, hyp_tokens, references)

    # -- features
    def _lemma(self, word: str) -> str:
        lemma = self._lemmas.get(word)
        if lemma is None:
            lemma = self._lemmas[word] = self.lemmatizer.lemma(word).lower()
        return lemma

    def word_features(self, ref_words: Sequence[str], cand_words: Sequence[str]) -> tuple[float, float, float]:
        """(exact, lemma, inflection): shares of the reference words found among the candidate words by
        form, by lemma, and by lemma only."""
        if not ref_words:
            return 0.0, 0.0, 0.0
        forms = set(cand_words)
        lemmas = {self._lemma(w) for w in cand_words}
        exact = [w in forms for w in ref_words]
        lemma = [w in forms or self._lemma(w) in lemmas for w in ref_words]
        return _share(exact), _share(lemma), _share([b and not a for a, b in zip(exact, lemma)])

    def features(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe]], alignments=None,
                 sources: Sequence[str] | None = None, references: Sequence[str] | None = None
                 ) -> tuple[np.ndarray, np.ndarray, dict]:
        """The feature rows of every MWE (`FEATURES` columns, test-set order), the number of MWEs of each
        sentence, and facts for ``info`` (how the alignments were made)."""
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} test-set sentences")
        references = references if references is not None else self.references
        if references is not None and len(references) != len(hyps):
            references = None  # built for another test set
        sentences = references  # the test's reference sentences: the lexical aligner's prior corpus
        if references is None:  # library use without reference sentences: the MWE translations stand in
            references = [" ".join(m.reference for m in r) for r in refs]
        if sources is not None and len(sources) != len(hyps):
            raise ValueError(f"{len(sources)} source sentences but {len(hyps)} hypotheses")
        info: dict = {"aligned": "none"}
        hyp_tokens = [self.mwe.moses_tokens(h) for h in hyps]
        if alignments is None and self.align.mode in ALIGNERS:
            if sources is None:
                raise MwemtError("the MWE verdict aligns each hypothesis to its source: give the source sentences "
                                 "(sources=), alignments, or score without alignment (align='none')")
            alignments, facts = self.mwe.align_hypotheses(sources, hyp_tokens, sentences)
            info.update(aligned=self.align.mode, **facts)
        elif alignments is not None:
            info["aligned"] = getattr(alignments, "origin", "") or "given"
        scores = {}
        for name, scorer in (("ref_mwe", self.mwe), ("ref_mwe_p", self.mwe_p), ("alt_best", self.alts)):
            stats = scorer.sentence_stats(hyps, refs, alignments, references=references)
            scores[name] = np.nan_to_num(stats.info["mwe_scores"], nan=0.0)
        chrf = [self.chrf.sentence_score_from_row(r) / 100.0
                for r in self.chrf.sentence_stats(list(hyps), list(references)).rows]
        rows: list[list[float]] = []
        counts = []
        flat = 0
        for k, (hyp, mwes) in enumerate(zip(hyps, refs)):
            toks = hyp_tokens[k]
            src = sources[k].split() if sources is not None else None
            hw = self.mwe.hyp_words(hyp, toks)
            links = alignments[k] if alignments is not None else None
            if links is not None:
                for _, j in links:
                    if not 0 <= j < hw.n_tokens:
                        raise AlignmentError(f"alignment points to hypothesis token {j}, but the hypothesis has "
                                             f"{hw.n_tokens} tokens", sentence=k + 1)
            ref_len = max(1, len(self.mwe.hyp_words(references[k]).words))
            length = abs(math.log(max(1, len(hw.words)) / ref_len))
            appended = appended_from(src, toks) if src is not None else None
            loops = loop_positions(src or [], toks)
            for mwe in mwes:
                linked = None
                coverage = 0.0
                if links is not None and mwe.indices:
                    src_set = set(mwe.indices)
                    linked = {j for i, j in links if i in src_set}
                    coverage = _share([any(i == a for a, _ in links) for i in mwe.indices])
                elif links is None:
                    coverage = 1.0  # not aligned: the whole hypothesis is the MWE's (as the MWE score searches it)
                ref_words = self.mwe.ref_words(mwe.reference)
                cand = self.mwe.candidates(hw, mwe.reference, linked)
                exact, lemma, inflection = self.word_features(ref_words, cand.words)
                core = sorted(linked) if linked else []
                core_words = [w for w, t in zip(hw.words, hw.token_index) if t in linked] if linked else []
                unmatched = _share([w not in set(ref_words) for w in core_words])
                fragment = _share([appended is not None and j >= appended for j in core])
                loop = _share([j in loops for j in core])
                literal = 0.0
                if self.liter is not None:
                    block = self.liter.blocklist(mwe, references[k])
                    own = hw.words if linked is None else core_words
                    literal = float(bool(block) and self.liter.is_literal(own, block))
                values = {"ref_mwe": scores["ref_mwe"][flat], "ref_mwe_p": scores["ref_mwe_p"][flat],
                          "ref_exact": exact, "ref_lemma": lemma, "inflection": inflection, "unmatched": unmatched,
                          "alt_best": max(scores["alt_best"][flat], scores["ref_mwe_p"][flat]),
                          "literal": literal, "fragment": fragment, "loop": loop, "chrf": chrf[k],
                          "length": length, "coverage": coverage, "ref_length": math.log1p(len(ref_words))}
                rows.append([float(values[f]) for f in FEATURES])
                flat += 1
            counts.append(len(mwes))
        X = np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES))
        return X, np.array(counts, dtype=np.int64), info

    # -- the metric
    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe]], alignments=None,
                       sources: Sequence[str] | None = None, references: Sequence[str] | None = None,
                       **kwargs) -> SentenceStats:
        """One row per sentence: the sum of its MWEs' probabilities and their number."""
        X, counts, info = self.features(hyps, refs, alignments, sources, references)
        p = self.model.probability(X) if len(X) else np.zeros(0)
        ends = np.cumsum(counts)
        sums = np.array([p[e - c:e].sum() for e, c in zip(ends, counts)], dtype=np.float64)
        rows = np.stack([sums, counts.astype(np.float64)], axis=1) if len(counts) else np.zeros((0, 2))
        info.update(mwe_probabilities=p, mwe_features=X)
        return SentenceStats(rows, STATS_COLUMNS, info)

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        t = stats.totals()
        p = stats.info.get("mwe_probabilities", np.zeros(0))
        return {"mwes": int(t[1]), "mwes_above_half": int((np.asarray(p) > 0.5).sum())}

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        align = alignment_signature(self.align, stats)
        fields: dict[str, object] = {
            "model": f"{self.model.name}@{self.model.fingerprint()}", "avg": "mwe-prob",
            "tok": f"{'none' if self.pretokenized else 'moses-' + self.lang}+apos", "align": align,
            "lemma": f"simplemma:{self.lang}",
            "alts": (f"table[{self.table_name or 'table'},keys{len(self.table)},min{self.table_min_count}]"
                     if self.table is not None else "testset"),
            "dict": self.dictionary_name or ("given" if self.liter is not None else "none"),
        }
        return Signature.of(self.name, fields)
