"""A TESLA-like metric (after TESLA-M, Liu, Dahlmeier & Ng 2010) with the compositionality
weighting of MWEs proposed by Salehi et al. (2015).

For n = 1..``max_n``, hypothesis and reference n-grams are linked by similarity
(`mwemt.evaluate.similarity`: lemmas, WordNet synsets, lexical POS) and matched by the exact
maximum-weight LP of `mwemt.evaluate.ngram_match`. N-grams made only of function words or
punctuation weigh ``function_weight`` (0.1), others 1. With M the LP optimum,
P = M / (hypothesis weight), R = M / (reference weight) and F = P R / (alpha P + (1 - alpha) R),
alpha = 0.8 weighting recall. A sentence scores the mean of F over the orders n that at least one
side has n-grams for (an order only one side has scores 0); the corpus scores the mean over sentences.
Scores are on a 0-100 scale, sentence scores too.

Variants, for MWEs identified with a target-language lexicon in both reference and hypothesis:

- ``tesla``: no MWE treatment.
- ``tesla-comp``: a reference MWE that the hypothesis does not contain (no hypothesis MWE with the
  same lemma; occurrences are matched by count) multiplies every link into it, i.e. into any
  reference n-gram that overlaps it, by its compositionality c in [0, 1] (1 = compositional;
  the smallest c when an n-gram overlaps several). *white tower* for *ivory tower* (c low)
  earns little; *traffic signal* for *traffic light* (c high) keeps its credit.
  MWEs without a value get ``default_compositionality``: by default the median of the table's
  predictions (an unscored MWE weighs like a typical scored one; chosen by measurement on WMT23
  ZH-EN MQM, docs/tesla.md), 0.5 when the values come from a lexicon column only;
  `MetricScore.extra` counts them.
- ``tesla-01``: the same with c = 0: an MWE is matched exactly or its links score nothing.

Compositionality values come from the table (`CompositionalityTable`), else from the lexicon
entry's compositionality column. Without a lexicon, the MWEs of the table are the lexicon. English
uses WordNet 3.0 through NLTK; another language can use a wordnet in the Open Multilingual Wordnet
``.tab`` format (`Tesla.from_files` with ``wordnet=PATH``, e.g. MultiWordNet for Italian). Targets
without one (or with ``wordnet=False``) degrade to exact lemma matching, and the signature says
``wn:none``. `Tesla` itself takes loaded data; `Tesla.from_files` reads the files.

Per sentence the metric keeps its score and its MWE counts (`STATS_COLUMNS`): the corpus score, the
bootstrap and the counts in `MetricScore.extra` are computed from these rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mwemt.errors import MwemtError
from mwemt.evaluate.base import RatioMetric, SegmentError, SentenceStats, Signature
from mwemt.evaluate.compositionality_table import CompositionalityTable
from mwemt.evaluate.function_words import describe as describe_function_words
from mwemt.evaluate.function_words import is_function_token
from mwemt.evaluate.ngram_match import max_weight_matching
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.evaluate.similarity import (
    OmwResource,
    WordNetResource,
    distinct_synset_sets,
    english_wordnet,
    ngram_min,
    ngram_similarity,
    omw_wordnet,
    shared_synsets,
    token_pos,
    unigram_similarity,
)
from mwemt.formats import normalize_mwe
from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.records import LexiconEntry, Mwe

if TYPE_CHECKING:
    from mwemt.evaluate.inputs import ScoreInputs

VARIANTS = ("tesla", "tesla-comp", "tesla-01")
FUNCTION_WEIGHT = 0.1
DEFAULT_COMPOSITIONALITY = 0.5
_CACHE_LIMIT = 200_000
MAX_SEGMENT_TOKENS = 1000  # per segment: bounds the pair's similarity matrices (about 8 MB each)


@dataclass
class Analysis:
    """One sentence as the metric sees it: lemmas as ids, POS ids, synsets, weights, MWEs."""

    tokens: list[str]
    lemmas: list[str]
    lemma_ids: np.ndarray
    function: np.ndarray
    pos_ids: np.ndarray | None = None
    synset_sets: list[frozenset] | None = None  # synsets of the distinct content lemmas ...
    synset_index: np.ndarray | None = None  # ... and each token's index into them (-1: none)
    mwes: list[Mwe] = field(default_factory=list)


@dataclass
class PairStats:
    """The MWE bookkeeping of one sentence pair: one statistics row's counts."""

    ref_mwes: int = 0
    matched: int = 0
    without_value: Counter = field(default_factory=Counter)


STATS_COLUMNS = ("score", "sentences", "ref_mwes", "ref_mwes_matched", "unmatched_without_compositionality")


@register_metric(*VARIANTS)
class Tesla(RatioMetric):
    """TESLA-like sentence and corpus scores (module docstring), 0-100.

    Statistics per sentence: its score (0-100), 1, and the MWE counts of the variants; the corpus
    score is the mean of the sentence scores. Takes loaded data (`from_files` reads files).
    """

    scale = 1.0  # the score column is already on the 0-100 scale
    reads = frozenset({"tesla_wordnet", "tesla_default", "compositionality", "tesla_lexicon"})

    def __init__(self, variant: str = "tesla", lang: str = "en", lemmatizer: str = "simplemma",
                 compositionality: Mapping[str, float] | CompositionalityTable | None = None,
                 lexicon: Lexicon | None = None, alpha: float = 0.8, max_n: int = 3, max_gap: int = 0,
                 *, default_compositionality: float | str | None = None,
                 function_weight: float = FUNCTION_WEIGHT, wordnet: bool | WordNetResource | OmwResource = True):
        if variant not in VARIANTS:
            raise MwemtError(f"unknown TESLA variant {variant!r}; choose one of {', '.join(VARIANTS)}")
        if not 0.0 < alpha < 1.0:
            raise MwemtError(f"alpha must be in (0, 1), got {alpha}")
        if max_n < 1:
            raise MwemtError(f"max_n must be at least 1, got {max_n}")
        if default_compositionality is not None and default_compositionality != "median" and not (
                isinstance(default_compositionality, (int, float)) and 0.0 <= default_compositionality <= 1.0):
            raise MwemtError(f"default_compositionality must be in [0, 1] or 'median', not {default_compositionality!r}")
        if isinstance(compositionality, (str, Path)) or isinstance(wordnet, (str, Path)):
            raise TypeError("Tesla takes loaded data; use Tesla.from_files to read files")
        self.key = self.name = variant
        self.variant = variant
        self.lang = lang
        self.alpha = alpha
        self.max_n = max_n
        self.max_gap = max_gap
        self.function_weight = function_weight

        table = None
        if compositionality is not None:
            table = compositionality if isinstance(compositionality, CompositionalityTable) \
                else CompositionalityTable.from_mapping(compositionality)
        comp: Mapping[str, float] = table.values if table is not None else {}
        self.compositionality_source = table.source if table is not None else "none"
        if default_compositionality is None:  # measured choice (docs/tesla.md): the median of the predictions
            default_compositionality = "median" if table is not None and table.values else DEFAULT_COMPOSITIONALITY
        self.default_rule = str(default_compositionality)
        if default_compositionality == "median":
            if variant == "tesla-comp" and table is None:
                raise MwemtError("default_compositionality 'median' needs a compositionality table")
            default_compositionality = table.median() if table is not None else DEFAULT_COMPOSITIONALITY
            self.default_rule = f"median={default_compositionality:.3g}"
        self.default_compositionality = float(default_compositionality)
        if variant == "tesla-comp" and not comp and not (
                lexicon is not None and any(e.compositionality is not None for e in lexicon.entries)):
            raise MwemtError("tesla-comp needs compositionality scores: a table (compositionality) or a "
                             "lexicon with a compositionality column")

        uses_mwes = variant != "tesla"
        self.table_single_words = 0  # table entries of one word: not MWEs a lexicon can find
        if uses_mwes and lexicon is None:
            listed = table.mwes if table is not None else []
            if not listed:
                raise MwemtError(f"{variant} needs a target-language MWE lexicon or a compositionality table "
                                 "whose MWEs serve as the lexicon")
            self.table_single_words = sum(" " not in k for k in listed)
            lexicon = Lexicon((LexiconEntry(tuple(k.split())) for k in listed if " " in k),
                              get_lemmatizer(lemmatizer, lang), lang=lang, name="compositionality-mwes")
        self.lexicon = lexicon if uses_mwes else None
        self.annotator = build_annotator(AnnotatorConfig(lang, lemmatizer=lemmatizer, max_gap=max_gap, filters="none"),
                                         lexicon=self.lexicon)
        self.lemmatizer = self.annotator.lemmatizer

        if self.lexicon is not None and any(e.compositionality is not None for e in self.lexicon.entries):
            column = "lexicon-column"
            self.compositionality_source = column if not comp else f"{self.compositionality_source}+{column}"
        self._comp_raw = comp
        self._comp_norm: dict[str, float] = {}
        if self.lexicon is not None:
            for key, value in comp.items():
                self._comp_norm.setdefault(" ".join(self.lexicon.normalize(key.split())), value)
        self._comp_cache: dict[str, float | None] = {}

        if isinstance(wordnet, bool):
            self.wordnet = english_wordnet() if (wordnet and lang == "en") else None
        else:
            self.wordnet = wordnet
        self._lemma_ids: dict[str, int] = {}
        self._pos_ids: dict[str, int] = {}
        self._cache: dict[str, Analysis] = {}

    @classmethod
    def from_files(cls, variant: str = "tesla", lang: str = "en", *, compositionality: str | Path | None = None,
                   lexicon: str | Path | None = None, lexicon_format: str = "auto",
                   wordnet: bool | str | Path = True, **kwargs) -> Tesla:
        """Read the compositionality table, the target-language lexicon and an OMW ``.tab`` wordnet
        (``wordnet=PATH``; True: English WordNet for English) and build the metric."""
        from mwemt.preprocess.annotate import load_lexicon

        table = CompositionalityTable.from_file(compositionality) if compositionality is not None else None
        lex = load_lexicon(lexicon, lexicon_format, lang=lang, side="target") if lexicon is not None else None
        resource = omw_wordnet(str(wordnet)) if isinstance(wordnet, (str, Path)) else wordnet
        return cls(variant, lang, compositionality=table, lexicon=lex, wordnet=resource, **kwargs)

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs: ScoreInputs | None = None) -> Tesla:
        extra = {} if options.tesla_default is None else {"default_compositionality": options.tesla_default}
        return cls(key, lang=options.lang, wordnet=options.tesla_wordnet,
                   compositionality=inputs.compositionality if inputs is not None else None,
                   lexicon=inputs.lexicon if inputs is not None else None, **extra)

    # ---- analysis -------------------------------------------------------------------------

    def analyze(self, text: str) -> Analysis:
        """Tokenize, lemmatize, tag and find MWEs in one sentence (cached per text)."""
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        sent = self.annotator.annotate_text(text)
        lemma_ids = np.fromiter((self._lemma_ids.setdefault(lem, len(self._lemma_ids)) for lem in sent.lemmas),
                                dtype=np.int64, count=len(sent.lemmas))
        function = np.fromiter((is_function_token(t, lem, self.lang) for t, lem in zip(sent.tokens, sent.lemmas)),
                               dtype=bool, count=len(sent.tokens))
        result = Analysis(sent.tokens, sent.lemmas, lemma_ids, function, mwes=sent.mwes)
        wn = self.wordnet
        if wn is not None:
            tags = [token_pos(t, lem, f, wn) for t, lem, f in zip(sent.tokens, sent.lemmas, function)]
            result.pos_ids = np.fromiter((self._pos_ids.setdefault(t, len(self._pos_ids)) for t in tags),
                                         dtype=np.int64, count=len(tags))
            result.synset_sets, result.synset_index = distinct_synset_sets(sent.lemmas, ~function, wn)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = result
        return result

    def compositionality_of(self, mwe_lemma: str) -> float | None:
        """An MWE lemma's compositionality: the table's value (raw or lexicon-normalized form),
        else the lexicon entry's own column, else None."""
        if mwe_lemma in self._comp_cache:
            return self._comp_cache[mwe_lemma]
        key = normalize_mwe(mwe_lemma)
        value = self._comp_raw.get(key)
        if value is None and self.lexicon is not None:
            value = self._comp_norm.get(" ".join(self.lexicon.normalize(key.split())))
            if value is None:
                entry = self.lexicon.by_key.get(mwe_lemma)
                value = entry.compositionality if entry is not None else None
        self._comp_cache[mwe_lemma] = value
        return value

    def reference_factors(self, hyp: Analysis, ref: Analysis, stats: PairStats | None = None) -> np.ndarray:
        """Per reference token, the factor its incoming links get (1 outside unmatched MWEs)."""
        factors = np.ones(len(ref.tokens))
        if self.variant == "tesla" or not ref.mwes:
            return factors
        available = Counter(m.lemma for m in hyp.mwes)
        for m in ref.mwes:
            if stats is not None:
                stats.ref_mwes += 1
            if available[m.lemma] > 0:
                available[m.lemma] -= 1
                if stats is not None:
                    stats.matched += 1
                continue
            if self.variant == "tesla-01":
                c = 0.0
            else:
                value = self.compositionality_of(m.lemma)
                if value is None:
                    c = self.default_compositionality
                    if stats is not None:
                        stats.without_value[m.lemma] += 1
                else:
                    c = value
            idx = list(m.indices)
            factors[idx] = np.minimum(factors[idx], c)
        return factors

    # ---- scoring --------------------------------------------------------------------------

    def _pair_score(self, hyp: Analysis, ref: Analysis, stats: PairStats | None = None,
                    solver_stats: dict | None = None) -> float:
        """Sentence score in [0, 1]."""
        factors = self.reference_factors(hyp, ref, stats)
        h, r = len(hyp.tokens), len(ref.tokens)
        if h == 0 or r == 0:
            return 1.0 if h == r else 0.0
        shared = None
        if hyp.synset_sets is not None and ref.synset_sets is not None:
            shared = shared_synsets(hyp.synset_sets, hyp.synset_index, ref.synset_sets, ref.synset_index)
        unigram = unigram_similarity(hyp.lemma_ids, ref.lemma_ids, hyp.pos_ids, ref.pos_ids, shared)
        hyp_w = np.where(hyp.function, self.function_weight, 1.0)
        ref_w = np.where(ref.function, self.function_weight, 1.0)
        f_values = []
        for n in range(1, self.max_n + 1):
            if h < n and r < n:
                continue
            if h < n or r < n:
                f_values.append(0.0)
                continue
            sim = ngram_similarity(unigram, n)
            w_h = -ngram_min(-hyp_w, n)  # an n-gram weighs 1 as soon as it has a content word
            w_r = -ngram_min(-ref_w, n)
            if self.variant != "tesla":
                sim = sim * ngram_min(factors, n)[None, :]
            matched = max_weight_matching(sim, w_h, w_r, solver_stats)
            p = matched / w_h.sum()
            rec = matched / w_r.sum()
            f_values.append(p * rec / (self.alpha * p + (1 - self.alpha) * rec) if p > 0 and rec > 0 else 0.0)
        return float(np.mean(f_values))

    def _analyze_bounded(self, text: str, sentence: int, side: str) -> Analysis:
        """`analyze`, refusing a segment longer than `MAX_SEGMENT_TOKENS`: the similarity matrices of
        a pair grow with the product of its lengths (a 1 MB line would need tens of GiB)."""
        n = len(text.split())  # a lower bound of the token count: refuse before tokenizing a huge line
        if n <= MAX_SEGMENT_TOKENS:
            analysis = self.analyze(text)
            n = len(analysis.tokens)
        if n > MAX_SEGMENT_TOKENS:
            raise SegmentError(f"{'hypothesis' if side == 'hyp' else 'reference'} of {n} tokens is too long for "
                               f"{self.name} (at most {MAX_SEGMENT_TOKENS} tokens per segment: its word-similarity "
                               "matrices grow with the product of the two lengths; split the segment)", sentence, side)
        return analysis

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[str], *, progress: bool | None = None,
                       **kwargs) -> SentenceStats:
        """One row per sentence (`STATS_COLUMNS`); ``progress=None`` shows a bar only for long runs
        on a terminal."""
        if isinstance(refs, str) or isinstance(hyps, str):
            raise MwemtError("sentence_stats takes sequences of sentences, not one string")
        if len(hyps) != len(refs):
            raise MwemtError(f"{len(hyps)} hypotheses but {len(refs)} references")
        from tqdm import tqdm

        disable = (not progress) if progress is not None else (None if len(hyps) >= 500 else True)
        without_value: Counter = Counter()
        solver_stats: dict[str, int] = {}
        rows = []
        for k, (hyp, ref) in enumerate(tqdm(zip(hyps, refs), total=len(hyps), desc=self.name, unit="seg",
                                            disable=disable, leave=False), 1):
            pair = PairStats()
            hyp_analysis, ref_analysis = self._analyze_bounded(hyp, k, "hyp"), self._analyze_bounded(ref, k, "ref")
            score = 100.0 * self._pair_score(hyp_analysis, ref_analysis, pair, solver_stats)
            rows.append((score, 1.0, pair.ref_mwes, pair.matched, sum(pair.without_value.values())))
            without_value.update(pair.without_value)
        info = {"solver": dict(sorted(solver_stats.items())), "types_without_compositionality": len(without_value)}
        return SentenceStats(np.array(rows, dtype=np.float64).reshape(-1, len(STATS_COLUMNS)), STATS_COLUMNS, info)

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        """Sentence count and solver statistics; for the MWE variants, reference MWE counts."""
        totals = stats.totals()
        extra: dict = {"sentences": len(stats), "solver": stats.info.get("solver", {})}
        if self.variant != "tesla":
            extra.update({
                "ref_mwes": int(totals[2]),
                "ref_mwes_matched": int(totals[3]),
                "ref_mwes_unmatched": int(totals[2] - totals[3]),
            })
            if self.variant == "tesla-comp":
                extra["unmatched_with_compositionality"] = int(totals[2] - totals[3] - totals[4])
                extra["unmatched_without_compositionality"] = int(totals[4])
                extra["types_without_compositionality"] = stats.info.get("types_without_compositionality", 0)
                extra["default_compositionality"] = self.default_compositionality
                extra["default_rule"] = self.default_rule  # "0.5", or "median=0.216" for the median of the table
            if self.table_single_words:
                extra["table_single_words_ignored"] = self.table_single_words
        return extra

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        fields: dict[str, object] = {
            "n": self.max_n, "alpha": self.alpha, "fw": self.function_weight, "lang": self.lang,
            "tok": f"moses-{self.lang}", "lemma": self.lemmatizer.signature,
            "wn": self.wordnet.name if self.wordnet is not None else "none",
            "pos": "none" if self.wordnet is None else (
                "wn-lexical" if self.wordnet.name == "wordnet-3.0" else "omw-lexical"),
            "match": "syn+lemma" if self.wordnet is not None else "lemma-exact",
            "stop": describe_function_words(self.lang), "solver": "exact-lp",
        }
        if self.lexicon is not None:
            fields["lex"] = f"{self.lexicon.name}@{self.lexicon.fingerprint()}"
            fields["gap"] = self.max_gap
        if self.variant == "tesla-comp":
            fields["comp"] = self.compositionality_source
            fields["comp-default"] = self.default_rule
        return Signature.of(self.name, fields)
