"""The MWE score of Zaninello & Birch (2020), aligned to the source MWE: how close the words a
hypothesis uses for each source MWE come to the MWE's reference translation.

Why alignment: the published score looks for the closest hypothesis word to each reference word
anywhere in the sentence, so a word of the reference translation that turns up elsewhere earns
credit. By default the hypothesis is word-aligned to the source sentence, line by line, by the
lexical aligner (`mwemt.testsets.lexalign`: a model learned once per test from the test's own
source and reference sentences, then each (source, hypothesis) pair aligned alone, so a line's
links and score depend on that line alone; ``align="lex"``; ``align="eflomal"`` aligns each
system's file as a whole with eflomal instead, not line-stable: `hypothesis_alignments`), and each
MWE is scored only against the hypothesis words aligned to its source tokens, and the first place where
its reference translation itself occurs in the hypothesis (its words in a row, each run of a
discontinuous reference in order; signature ``span:ref``), so that a hypothesis identical to its
reference scores 100 whatever the aligner made of it; given alignments
(``alignments=`` of `MweScore.sentence_stats`, ``mwemt score --align FILE``) take the aligner's
place (a file whose header names its aligner, as `write_alignments` writes them, keeps that
aligner's signature: a published run rescores bit for bit), and ``align="none"`` searches the
whole hypothesis, as the published score does.

For each word x of an MWE's reference translation we take the candidate hypothesis word y with the
least charge, by default ``min(d(x, y), len(x)) / len(x)`` (d = character Levenshtein distance;
`mwemt.evaluate.mwe_match` adds lemmas, synonyms, elided forms and function-word weights); the MWE
scores 1 minus the (weighted) mean charge over its words. With ``precision`` p > 0 and
alignments, the MWE scores (1 - p) x that recall plus p x the same measure taken the other way
(each aligned hypothesis word against the reference words), so extra words aligned to the MWE
cost. A sentence scores the mean over its MWEs and the corpus the mean over sentences that have
MWEs (``average="mwe"`` instead pools all MWEs, as the published scorer does). Scores are
reported on a 0-100 scale.

Words on both sides come from the same tokenization: Moses tokens (`mwemt.preprocess.tokenize`)
with elisions split after the apostrophe (``dell'acqua`` -> ``dell'`` ``acqua``); tokens without
any letter or digit (punctuation, the ``...`` that marks a gap in a discontinuous reference) are
dropped. Matching is case-insensitive unless ``case_sensitive=True``. A hypothesis with no words
(empty, or only punctuation) scores 0, never NaN. Under alignment, an MWE none of whose source
tokens is linked scores 0; an MWE without source token indices (not located in the source) and the
MWEs of a sentence the aligner skipped (an empty side, e.g. a test set without sources) are
searched in the whole hypothesis and counted (``info["mwes_without_indices"]``,
``info["alignment_skipped"]``).

Deliberate differences from the authors' scorer (azaninello/MWE_NMT, scripts/score_mwe.py), which
``compat="zaninello2020"`` reproduces instead (`mwemt.evaluate.mwe_compat`):
- it replaces every ASCII punctuation character by a space, so elided articles lose their
  apostrophe (``dell'`` -> ``dell``) and hyphenated words split in two; we tokenize with Moses,
  keep the apostrophe on the elided word, and keep hyphenated words whole;
- it lowercases the hypothesis only; we lowercase both sides (or neither);
- it averages over all MWEs of the corpus (micro); we average per sentence first (``average``
  selects either);
- an empty hypothesis makes its ``min`` over no words fail, the exception is swallowed and the
  MWE gets NaN; we score it 0;
- it has no alignment and matches characters only.
"""

from __future__ import annotations

import functools
import gzip
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.base import REFERENCE_MWES, RatioMetric, SentenceStats, Signature
from mwemt.evaluate.mwe_compat import COMPAT_MODES, compat_sentence
from mwemt.evaluate.mwe_match import MweMatching, WordMatcher
from mwemt.evaluate.registry import MetricOptions, register_metric
from mwemt.fileio import atomic_write, iter_lines
from mwemt.preprocess.tokenize import split_apostrophes, tokenize
from mwemt.records import TestMwe
from mwemt.testsets.align import SYMMETRIZATIONS, AlignConfig, eflomal_version
from mwemt.testsets.lexalign import DEFAULT_LEX_CONFIG, LexAlignConfig

AVERAGES = ("sentence", "mwe")
ALIGNERS = ("lex", "eflomal")      # the modes that align (`hypothesis_alignments`); "lex" is line-stable
ALIGN_MODES = (*ALIGNERS, "none")
# Where an MWE's acceptable translations besides its reference come from (``alternatives``):
# none (the single reference), the test set's own (TestMwe.alternatives), or those plus an MWE
# translation table's (mwemt.testsets.mwe_table) for the MWE's type.
ALTERNATIVE_MODES = ("none", "testset", "table")
Alignment = Sequence[tuple[int, int]]

# The defaults, chosen by agreement with the human verdicts on the TED EN-IT MWEs
# (studies/mwe-test-and-score/mwe_score_human.py; docs/evaluate.md has the ablation table).
DEFAULT_MATCHING = MweMatching(near_miss=0.75, order=1.0)
DEFAULT_PRECISION = 0.0
DEFAULT_WINDOW = 1
# One eflomal sampler (``align="eflomal"``): on the TED MWEs as good as three (AUC 0.710 vs 0.713) and
# three times faster (bench/mwe_score_speed.py); test-set building keeps the aligner's own default.
DEFAULT_ALIGN_CONFIG = AlignConfig(samplers=1)


class AlignmentError(ValueError):
    """An alignment that does not fit its hypothesis; ``sentence`` is 1-based once known and
    ``system`` the index of the system whose alignments failed (set by multi-system scoring)."""

    def __init__(self, message: str, sentence: int | None = None):
        super().__init__(message)
        self.message = message
        self.sentence = sentence
        self.system: int | None = None


@dataclass(frozen=True)
class MweAlignSettings:
    """How the MWE score gets its alignments when none are given (`hypothesis_alignments`).

    ``mode``: ``lex`` (the default: each hypothesis aligned to its source alone, by the lexical model
    `mwemt.testsets.lexalign` learned once per test from the test's (source, reference) pairs and
    ``extra``: line-stable and deterministic), ``eflomal`` (each system's hypotheses aligned to
    their sources as one file with `mwemt.testsets.align.align`, on top of ``extra``: not seeded,
    and a line's links depend on the file) or ``none`` (no alignment: search the whole hypothesis).
    ``extra``: extra parallel text (source token lists, target token lists) for the aligner's
    statistics, named in the signature by ``extra_name``. ``cache_dir``: the alignment cache (None:
    no cache; it keeps eflomal's links and the lexical models). ``config`` (eflomal), ``lex`` (the
    lexical aligner) and ``symmetrization``: the aligner's settings. ``window``: an MWE's candidate
    hypothesis words are those aligned to its source tokens and the ``window`` tokens on each side
    of them (given alignments too).
    """

    mode: str = "lex"
    extra: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = field(default=None, compare=False)
    extra_name: str = ""
    cache_dir: str | Path | None = None
    config: AlignConfig | None = None  # None = DEFAULT_ALIGN_CONFIG
    symmetrization: str = "grow-diag-final-and"
    window: int = DEFAULT_WINDOW
    lex: LexAlignConfig | None = None  # None = DEFAULT_LEX_CONFIG

    def __post_init__(self) -> None:
        if self.mode not in ALIGN_MODES:
            raise MwemtError(f"MWE alignment mode must be one of {', '.join(ALIGN_MODES)}, not {self.mode!r}")
        if self.window < 0:
            raise MwemtError(f"MWE alignment window must be 0 or more, not {self.window}")
        if self.symmetrization not in SYMMETRIZATIONS:
            raise MwemtError(f"unknown symmetrization {self.symmetrization!r}; choose one of {', '.join(SYMMETRIZATIONS)}")

    @property
    def n_extra(self) -> int:
        return len(self.extra[0]) if self.extra is not None else 0

    def describe(self, test_prior: bool = True) -> str:
        """The signature value of an alignment this mode computes. For ``lex``, ``prior=`` names what
        the model learned from: ``test`` (the test's source and reference sentences, ``test_prior``),
        the extra text by name and size, or ``none``."""
        sym = {"grow-diag-final-and": "gdfa"}.get(self.symmetrization, self.symmetrization)
        extra = f"{self.extra_name or 'text'}:{self.n_extra}" if self.extra is not None else ""
        if self.mode == "lex":
            prior = "+".join(p for p in ("test" if test_prior else "", extra) if p) or "none"
            return f"{(self.lex or DEFAULT_LEX_CONFIG).describe()},{sym},prior={prior}"
        c = self.config or DEFAULT_ALIGN_CONFIG
        return (f"eflomal-{eflomal_version()},m{c.model},s{c.samplers},it{c.iterations:g},"
                f"null{c.null_prior:g},{sym},extra={extra or '0'}")


_EFLOMAL_MEMO: dict[str, object] = {}   # eflomal is not seeded: one alignment per input and cache in a process
_LEX_MEMO: dict[str, list] = {}         # the lexical aligner's links of one text (a pure function of it)


def _lines_key(*parts) -> str:
    """A hash of strings and lists of token lists, for the memos."""
    import hashlib

    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, str):
            h.update(part.encode("utf-8"))
        else:
            for toks in part:
                h.update("\t".join(toks).encode("utf-8"))
                h.update(b"\n")
        h.update(b"\0")
    return h.hexdigest()


def hypothesis_alignments(settings: MweAlignSettings, src: Sequence[Sequence[str]], hyp: Sequence[Sequence[str]],
                          references: Sequence[Sequence[str]] | None = None) -> tuple[list, dict]:
    """The one way the MWE metrics align: source -> hypothesis links of every sentence under ``settings``
    (mode ``lex`` or ``eflomal``), symmetrized, one list of (i, j) links per sentence, or None for a
    sentence the aligner skips (an empty side, or more than `mwemt.testsets.align.MAX_TOKENS` tokens),
    whose MWEs are then searched in the whole hypothesis; and facts for ``info``.

    ``src``: the source token lists (the test set's tokens, which MWE indices count); ``hyp``: the
    hypothesis token lists (indices j count them). ``references``: the test's reference sentences as
    token lists (tokenized like the hypotheses), which with ``settings.extra`` are the prior corpus
    of the lexical model (``lex``): each line's links are then a function of that line's source and
    hypothesis alone, whatever the other lines and whichever system wrote them. eflomal ignores
    ``references`` and aligns the hypotheses as one text. Facts: ``alignment_cached`` (the links
    or the model came from the cache), ``alignment_skipped`` (sentences not aligned) and
    ``alignment`` (the signature value of the aligner, `MweAlignSettings.describe`)."""
    if settings.mode not in ALIGNERS:
        raise MwemtError(f"MWE alignment mode {settings.mode!r} does not align; use one of {', '.join(ALIGNERS)}")
    if len(src) != len(hyp):
        raise ValueError(f"{len(src)} source sentences but {len(hyp)} hypotheses")
    if settings.mode == "lex":
        from mwemt.testsets.lexalign import lexical_model

        prior_src: list = list(src) if references is not None else []
        prior_tgt: list = list(references) if references is not None else []
        if references is not None and len(references) != len(src):
            raise ValueError(f"{len(references)} reference sentences but {len(src)} source sentences")
        if settings.extra is not None:
            prior_src += list(settings.extra[0])
            prior_tgt += list(settings.extra[1])
        model = lexical_model(prior_src, prior_tgt, config=settings.lex or DEFAULT_LEX_CONFIG,
                              cache_dir=settings.cache_dir)
        memo = _lines_key(model.key, settings.symmetrization, src, hyp)   # mwe, mwe-p...: one alignment
        links = _LEX_MEMO.get(memo)
        if links is None:
            links = model.align(src, hyp, settings.symmetrization)
            while len(_LEX_MEMO) >= 64:
                _LEX_MEMO.pop(next(iter(_LEX_MEMO)))
            _LEX_MEMO[memo] = links
        links = list(links)
        return links, {"alignment_cached": model.cached, "alignment_skipped": sum(x is None for x in links),
                       "alignment": settings.describe(test_prior=references is not None)}
    from mwemt.testsets.align import align_directional, cache_key

    config = settings.config or DEFAULT_ALIGN_CONFIG
    key = f"{settings.cache_dir}\0{cache_key(src, hyp, settings.extra, config)}"
    directional = _EFLOMAL_MEMO.get(key)
    if directional is not None:   # aligned before in this process: as good as cached (the same links)
        directional = replace(directional, cached=True)
    else:
        directional = align_directional(src, hyp, extra=settings.extra, config=config, cache_dir=settings.cache_dir)
        while len(_EFLOMAL_MEMO) >= 16:
            _EFLOMAL_MEMO.pop(next(iter(_EFLOMAL_MEMO)))
        _EFLOMAL_MEMO[key] = directional
    out: list = directional.symmetrized(src, hyp, settings.symmetrization)
    for k in directional.skipped:
        out[k] = None  # not aligned (an empty side, or too long for eflomal): search the whole hypothesis
    return out, {"alignment_cached": directional.cached, "alignment_skipped": len(directional.skipped),
                 "alignment": settings.describe()}


@functools.lru_cache(maxsize=1 << 16)
def _moses_tokens(text: str, lang: str) -> tuple[str, ...]:
    """Moses tokens of a test set's reference sentence, remembered: every system and metric of a test
    aligns with the model of the same references."""
    return tuple(tokenize(text, lang))


def is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


@dataclass(frozen=True)
class HypWords:
    """The words of one hypothesis, each with the index of the Moses token it came from."""

    words: tuple[str, ...]
    token_index: tuple[int, ...]
    n_tokens: int

    def positions_in(self, tokens: set[int]) -> list[int]:
        """The positions (in ``words``) of the words that come from ``tokens``."""
        return [p for p, t in enumerate(self.token_index) if t in tokens]


def is_gap_marker(token: str) -> bool:
    """The mark of a gap in a discontinuous reference MWE: ``...`` (or more dots), ``…``."""
    return not is_word(token) and ("..." in token or "\u2026" in token)


def find_span(runs: Sequence[Sequence[str]], words: Sequence[str]) -> list[int] | None:
    """The positions in ``words`` of the first occurrence of ``runs`` (the reference MWE's words,
    split at its gap marks): each run as consecutive words, the runs in order; None when absent.
    Taking each run's leftmost occurrence after the previous one finds an occurrence whenever
    there is one."""
    if not any(runs):
        return None
    out: list[int] = []
    start = 0
    for run in runs:
        n = len(run)
        if not n:
            continue
        at = next((p for p in range(start, len(words) - n + 1) if tuple(words[p:p + n]) == tuple(run)), None)
        if at is None:
            return None
        out.extend(range(at, at + n))
        start = at + n
    return out


@dataclass(frozen=True)
class Candidates:
    """The hypothesis words one MWE is scored against, in hypothesis order.

    ``core``: whether each word is aligned to one of the MWE's source tokens (not a window word, not
    a word added because the reference occurs there, not a word of an unaligned search);
    ``aligned``: whether alignment chose the words (False: the whole hypothesis was searched).
    """

    words: tuple[str, ...]
    positions: tuple[int, ...]
    core: tuple[bool, ...]
    aligned: bool


def word_pieces(tokens: Sequence[str], case_sensitive: bool) -> tuple[list[str], list[int]]:
    """Apostrophe-split, punctuation-free, optionally lowercased pieces with their token index."""
    words: list[str] = []
    origin: list[int] = []
    for k, tok in enumerate(tokens):
        for piece in split_apostrophes([tok]):
            if is_word(piece):
                words.append(piece if case_sensitive else piece.lower())
                origin.append(k)
    return words, origin


_CHARACTERS = WordMatcher(MweMatching(), "none")


def word_charges(ref_words: Sequence[str], hyp_words: Sequence[str]) -> list[float]:
    """For each reference word, ``min(distance to the closest hypothesis word, len) / len``."""
    if not ref_words:
        return []
    return [float(c) for c in _CHARACTERS.best_charges(ref_words, hyp_words)]


def mwe_match_score(ref_words: Sequence[str], hyp_words: Sequence[str]) -> float | None:
    """1 - mean character charge over the reference words (in [0, 1]); None without reference words."""
    return _CHARACTERS.score(ref_words, hyp_words)


@dataclass
class SentenceMweScores:
    """The per-MWE scores (0-1; None if the reference had no word, NaN in the compatibility mode
    when the published scorer gives NaN) of one sentence."""

    mwe_scores: list[float | None]

    @property
    def scored(self) -> list[float]:
        return [s for s in self.mwe_scores if s is not None and not math.isnan(s)]

    @property
    def nan(self) -> int:
        return sum(1 for s in self.mwe_scores if s is not None and math.isnan(s))

    @property
    def sentence(self) -> float | None:
        s = self.scored
        return sum(s) / len(s) if s else None

    def stats_row(self) -> tuple[float, float, float, float]:
        """(sum of MWE scores, scored MWEs, sentence mean, 1 if the sentence has a scored MWE)."""
        scored = self.scored
        sent = self.sentence
        return float(sum(scored)), float(len(scored)), (0.0 if sent is None else sent), float(sent is not None)


STATS_COLUMNS = ("mwe_sum", "mwes", "sentence_mean", "sentences")


def alignment_signature(settings: MweAlignSettings, stats=None) -> str:
    """The ``align`` value of an MWE metric's signature: the aligner the statistics ``stats`` were aligned with
    (``info["aligned"]``, ``info["alignment"]``), else the one ``settings`` would use, with the window."""
    aligned = "none" if stats is None else stats.info.get("aligned", "none")
    if aligned in ALIGNERS:
        align = stats.info.get("alignment") or settings.describe()
    elif stats is None and settings.mode in ALIGNERS:
        align = settings.describe()
    else:
        align = str(aligned)
    if align != "none" and settings.window:
        align += f",win{settings.window}"
    return align


@register_metric("mwe")
class MweScore(RatioMetric):
    """The MWE translation score (see the module docstring for the details).

    Statistics per sentence: the sum of its MWE scores, the number of scored MWEs, the sentence
    mean and whether it has one, so one extraction serves both averages and the counts.
    ``info["mwe_scores"]`` keeps every MWE's score (0-1, NaN when not scored), sentence by
    sentence in test-set order.
    """

    key = "mwe"
    name = "MWE"
    undefined_reason = "no sentence of the test set has an MWE to score"
    reference_kind = REFERENCE_MWES
    uses_alignments = True
    reads = frozenset({"mwe_case_sensitive", "mwe_average", "mwe_pretokenized", "mwe_align", "mwe_matching",
                       "mwe_precision", "mwe_wordnet", "mwe_compat"})
    # whether `mwe_score` reads the reference sentence's words outside the MWE (``other_words``): only
    # then does `score_sentence` tokenize the reference sentence
    reads_reference_sentence: ClassVar[bool] = False

    def __init__(self, lang: str = "it", *, case_sensitive: bool = False, average: str = "sentence",
                 pretokenized: bool = False, align: MweAlignSettings | str = "lex",
                 matching: MweMatching = DEFAULT_MATCHING, precision: float = DEFAULT_PRECISION,
                 wordnet=None, lemmatizer: str = "simplemma", compat: str | None = None,
                 alternatives: str = "none", table=None, table_min_count: int = 1, table_name: str = "") -> None:
        if alternatives not in ALTERNATIVE_MODES:
            raise MwemtError(f"MWE alternatives must be one of {', '.join(ALTERNATIVE_MODES)}, not {alternatives!r}")
        if alternatives == "table" and table is None:
            raise MwemtError("--mwe-alternatives table needs an MWE translation table (table=, --mwe-table)")
        if compat is not None and alternatives != "none":
            raise MwemtError(f"the {compat} compatibility mode scores the single reference; drop the alternatives")
        if table_min_count < 0:
            raise MwemtError(f"the table's minimum count must be 0 or more, not {table_min_count}")
        if average not in AVERAGES:
            raise ValueError(f"average must be one of {', '.join(AVERAGES)}, not {average!r}")
        if not 0.0 <= precision <= 1.0:
            raise ValueError(f"precision must be in [0, 1], not {precision}")
        if compat is not None and compat not in COMPAT_MODES:
            raise MwemtError(f"unknown MWE compatibility mode {compat!r}; choose one of {', '.join(COMPAT_MODES)}")
        self.lang = lang
        self.case_sensitive = case_sensitive
        self.average = average if compat is None else "mwe"
        self.pretokenized = pretokenized
        self.align = align if isinstance(align, MweAlignSettings) else MweAlignSettings(align)
        if compat is not None:
            self.align = MweAlignSettings("none")
        self.matching = matching
        self.precision = precision
        self.compat = compat
        if matching.synonyms and wordnet is None:
            raise MwemtError("synonym matching needs a target-language wordnet (wordnet=, --mwe-wordnet)")
        self.wordnet = wordnet if matching.synonyms else None
        lemmatizer_obj = None
        if matching.lemma or matching.synonyms:
            from mwemt.preprocess.lemmatize import get_lemmatizer

            lemmatizer_obj = get_lemmatizer(lemmatizer, lang)
        self.lemmatizer = lemmatizer_obj
        self.matcher = WordMatcher(matching, lang, lemmatizer_obj, self.wordnet)
        self.alternatives = alternatives
        self.table = table if alternatives == "table" else None
        self.table_min_count = table_min_count
        self.table_name = table_name
        self._ref_cache: dict[str, list[str]] = {}
        self._run_cache: dict[str, tuple[tuple[str, ...], ...]] = {}

    @classmethod
    def from_options(cls, key: str, options: MetricOptions, inputs=None) -> MweScore:
        matching = options.mwe_matching if options.mwe_matching is not None else DEFAULT_MATCHING
        wordnet = None
        if matching.synonyms and options.mwe_wordnet:
            from mwemt.evaluate.similarity import omw_wordnet

            wordnet = omw_wordnet(str(options.mwe_wordnet))
        precision = options.mwe_precision if options.mwe_precision is not None else DEFAULT_PRECISION
        align = options.mwe_align
        if align in ALIGNERS:  # front ends share the alignment cache: eflomal's links, the lexical models
            from mwemt.testsets.align import default_cache_dir

            align = MweAlignSettings(align, cache_dir=default_cache_dir())
        table = None
        alternatives = cls.alternatives_mode(options)
        if alternatives == "table":
            if not options.mwe_table:
                raise MwemtError("--mwe-alternatives table needs --mwe-table FILE (`mwemt testset table`)")
            from mwemt.testsets.mwe_table import MweTranslationTable

            table = MweTranslationTable.read(options.mwe_table)
        return cls(options.lang, case_sensitive=options.mwe_case_sensitive, average=options.mwe_average,
                   pretokenized=options.mwe_pretokenized, align=align, matching=matching,
                   precision=precision, wordnet=wordnet, compat=options.mwe_compat,
                   alternatives=alternatives, table=table,
                   table_min_count=options.mwe_table_min_count,
                   table_name=Path(options.mwe_table).name if options.mwe_table else "")

    @classmethod
    def alternatives_mode(cls, options: MetricOptions) -> str:
        """``mwe`` is always the single-reference score: ``--mwe-alternatives`` only feeds ``mwe-alts``."""
        return "none"

    # -- tokenization
    def moses_tokens(self, text: str) -> list[str]:
        return text.split() if self.pretokenized else tokenize(text, self.lang)

    def hyp_words(self, hyp: str, tokens: Sequence[str] | None = None) -> HypWords:
        tokens = self.moses_tokens(hyp) if tokens is None else tokens
        words, origin = word_pieces(tokens, self.case_sensitive)
        return HypWords(tuple(words), tuple(origin), len(tokens))

    def ref_words(self, reference: str) -> list[str]:
        # MWE references are short phrases typed by annotators: always tokenize them. Cached, since
        # every system is scored against the same references.
        words = self._ref_cache.get(reference)
        if words is None:
            words = self._ref_cache[reference] = word_pieces(tokenize(reference, self.lang), self.case_sensitive)[0]
        return words

    def ref_runs(self, reference: str) -> tuple[tuple[str, ...], ...]:
        """The reference MWE's words split at its gap marks (``prendere ... decisione``: two runs)."""
        runs = self._run_cache.get(reference)
        if runs is None:
            out: list[list[str]] = [[]]
            for tok in tokenize(reference, self.lang):
                if is_gap_marker(tok):
                    out.append([])
                else:
                    out[-1].extend(word_pieces([tok], self.case_sensitive)[0])
            runs = self._run_cache[reference] = tuple(tuple(r) for r in out if r)
        return runs

    def sentence_words(self, reference: str) -> Counter:
        """The words of a reference sentence (tokenized like the hypotheses), counted."""
        return Counter(self.hyp_words(reference).words)

    # -- alignment
    def align_hypotheses(self, sources: Sequence[str], hyp_tokens: Sequence[Sequence[str]],
                         references: Sequence[str] | None = None) -> tuple[list, dict]:
        """Source (test-set tokens, split on spaces) -> hypothesis token links of every sentence by
        `hypothesis_alignments` under this metric's settings, and facts for ``info``. ``references``:
        the test's reference sentences (text, Moses-tokenized here), the lexical aligner's prior
        corpus. A sentence the aligner skips (an empty side, or too long) gets None: its MWEs are
        searched in the whole hypothesis, and ``alignment_skipped`` counts them."""
        refs = None if references is None else [self.reference_tokens(r) for r in references]
        return hypothesis_alignments(self.align, [s.split() for s in sources], hyp_tokens, refs)

    def reference_tokens(self, reference: str) -> list[str]:
        """A reference sentence as the aligner's prior corpus sees it: Moses tokens (idempotent on the
        tokenized references of a test set such as TED's)."""
        return list(_moses_tokens(reference, self.lang))

    # -- scoring
    def mwe_score(self, ref_words: Sequence[str], candidates: Candidates, other_words: Counter | None) -> float | None:
        """One MWE (0-1): recall of the reference words, mixed with precision under alignment.
        ``other_words``: the reference sentence's words outside this MWE, None unless the class
        reads them (`reads_reference_sentence`: `mwe-p`, which does not charge them)."""
        words = candidates.words
        recall = self.matcher.score(ref_words, words)
        if recall is None or not candidates.aligned or self.precision == 0.0 or not words:
            return recall
        precision = 1.0 - float(self.matcher.best_charges(words, ref_words).mean())
        return float((1.0 - self.precision) * recall + self.precision * precision)

    def candidates(self, hw: HypWords, translation: str, linked: set[int] | None) -> Candidates:
        """The words one translation of an MWE is scored against: the whole hypothesis when
        ``linked`` (the hypothesis tokens aligned to the MWE's source tokens) is None; else the
        words of the linked tokens, of ``window`` tokens on each side of the window's anchors
        (`window_anchors`), and of the first place where the translation itself occurs in the
        hypothesis (its words in a row, each run of a discontinuous one in order): words identical
        to the reference count whatever the alignment made of them, so a hypothesis equal to its
        reference always scores 100."""
        if linked is None:
            return Candidates(hw.words, tuple(range(len(hw.words))), (False,) * len(hw.words), False)
        w = self.align.window
        anchors = self.window_anchors(hw, linked, translation) if w else set()
        tokens = linked.union(j + d for j in anchors for d in range(-w, w + 1))
        span = find_span(self.ref_runs(translation), hw.words) or ()
        at = sorted(set(hw.positions_in(tokens)).union(span))
        core = set(hw.positions_in(linked))
        return Candidates(tuple(hw.words[p] for p in at), tuple(at), tuple(p in core for p in at), True)

    def window_anchors(self, hw: HypWords, linked: set[int], translation: str) -> set[int]:
        """The linked tokens whose neighbours join the candidates: all of them."""
        return linked

    def score_sentence(self, hyp: str, mwes: Sequence[TestMwe | str], alignment: Alignment | None = None,
                       hyp_tokens: Sequence[str] | None = None, counts: dict | None = None,
                       reference: str | None = None) -> SentenceMweScores:
        """Every MWE of one sentence scored (0-1): the detail behind one row of statistics.
        ``reference``: the reference sentence, whose words outside an MWE `mwe-p` does not charge."""
        if self.compat is not None:
            return SentenceMweScores(compat_sentence(hyp, [m if isinstance(m, str) else m.reference for m in mwes]))
        hw = self.hyp_words(hyp, hyp_tokens)
        if alignment is not None:
            for _, j in alignment:
                if not 0 <= j < hw.n_tokens:
                    raise AlignmentError(f"alignment points to hypothesis token {j}, "
                                         f"but the hypothesis has {hw.n_tokens} tokens")
        sentence = self.sentence_words(reference) if reference and self.reads_reference_sentence else None
        scores: list[float | None] = []
        for mwe in mwes:
            linked: set[int] | None = None  # None: the whole hypothesis
            if alignment is not None:
                if isinstance(mwe, str):
                    raise TypeError("alignments need TestMwe objects (with source token indices)")
                if mwe.indices:
                    src = set(mwe.indices)
                    linked = {j for i, j in alignment if i in src}
                elif counts is not None:
                    counts["mwes_without_indices"] = counts.get("mwes_without_indices", 0) + 1
            if isinstance(mwe, str):
                translations: tuple[str, ...] = (mwe,)
            else:  # with alternatives, the closest acceptable translation counts
                translations = (mwe.reference, *self.alternatives_of(mwe))
            options = []
            for translation in translations:
                ref_words = self.ref_words(translation)
                other = None if sentence is None else sentence - Counter(ref_words)
                options.append(self.mwe_score(ref_words, self.candidates(hw, translation, linked), other))
            known = [x for x in options if x is not None]
            scores.append(max(known) if known else None)
        return SentenceMweScores(scores)

    def alternatives_of(self, mwe: TestMwe) -> tuple[str, ...]:
        """The acceptable translations of ``mwe`` besides its reference, under ``alternatives``:
        the test set's (``mwe.alternatives``), and with ``table`` those of the MWE's type in the
        table attested at least ``table_min_count`` times (dictionary entries always)."""
        if self.alternatives == "none":
            return ()
        out = list(getattr(mwe, "alternatives", ()))
        if self.table is not None:
            from mwemt.testsets.mwe_table import mwe_key

            out += [e.text for e in self.table.translations(mwe_key(mwe), min_count=self.table_min_count)]
        return tuple(dict.fromkeys(a for a in out if a != mwe.reference))

    def sentence_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[TestMwe | str]],
                       alignments: Sequence[Alignment] | None = None, sources: Sequence[str] | None = None,
                       references: Sequence[str] | None = None, **kwargs) -> SentenceStats:
        """One row per sentence (`STATS_COLUMNS`); ``refs`` holds each sentence's MWEs.

        ``alignments`` (source -> hypothesis token links per sentence) are used as given; without
        them and with ``align`` mode ``eflomal``, the hypotheses are aligned to ``sources`` (the
        test set's source sentences, tokens split on spaces, which the MWE indices count).
        ``references``: the test set's reference sentences (`mwe-p` does not charge a word the
        reference uses outside the MWE; `mwe` does not read them).
        ``info["mwe_scores"]`` keeps the score (0-1) of every MWE, sentence by sentence in test-set
        order (NaN for a reference without words, and in the compatibility mode for an MWE the
        published scorer makes NaN), so per-MWE analyses (`mwemt compare`) read them from the one
        extraction instead of scoring again."""
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} test-set sentences")
        if alignments is not None and len(alignments) != len(hyps):
            raise ValueError(f"{len(alignments)} alignment lines but {len(hyps)} hypotheses")
        if references is not None and len(references) != len(hyps):
            raise ValueError(f"{len(references)} reference sentences but {len(hyps)} hypotheses")
        if self.compat is not None and alignments is not None:
            raise MwemtError(f"the {self.compat} compatibility mode has no alignment; do not pass alignments")
        info: dict = {"aligned": "none"}
        if alignments is not None:   # given: named by their aligner when the file says (`read_alignments`)
            origin = getattr(alignments, "origin", "")
            info["aligned"] = origin or "given"
            skipped = sum(links is None for links in alignments)
            if skipped or origin:   # as the aligner reports them
                info["alignment_skipped"] = skipped
        hyp_tokens = None
        if alignments is None and self.align.mode in ALIGNERS and self.compat is None:
            if sources is None:
                raise MwemtError("alignment-aware MWE scoring needs the source sentences (sources=); "
                                 "or score without alignment (align='none')")
            if len(sources) != len(hyps):
                raise ValueError(f"{len(sources)} source sentences but {len(hyps)} hypotheses")
            if self.align.mode == "lex" and references is None and self.align.extra is None:
                raise MwemtError("line-stable alignment learns its model from the test set's reference sentences "
                                 "(references=; `mwemt score` and `score_systems` pass them), or from extra "
                                 "parallel text; or align with 'eflomal', or not at all ('none')")
            hyp_tokens = [self.moses_tokens(h) for h in hyps]
            alignments, facts = self.align_hypotheses(sources, hyp_tokens, references)
            info.update(aligned=self.align.mode, **facts)
        rows = []
        per_mwe: list[float] = []
        counts: dict = {}
        nan = 0
        for i, (h, r) in enumerate(zip(hyps, refs)):
            try:
                scored = self.score_sentence(h, r, alignments[i] if alignments is not None else None,
                                             hyp_tokens[i] if hyp_tokens is not None else None, counts,
                                             references[i] if references is not None else None)
            except AlignmentError as exc:
                raise AlignmentError(exc.message, sentence=i + 1) from None
            rows.append(scored.stats_row())
            nan += scored.nan
            per_mwe.extend(math.nan if s is None else s for s in scored.mwe_scores)
        info.update(counts)
        info["mwe_scores"] = np.array(per_mwe, dtype=np.float64)
        if self.compat is not None:
            info["nan_mwes"] = nan
        return SentenceStats(np.array(rows, dtype=np.float64).reshape(-1, len(STATS_COLUMNS)), STATS_COLUMNS, info)

    def sentence_score(self, hyp: str, ref: Sequence[TestMwe | str], alignment: Alignment | None = None,
                       source: str | None = None, reference: str | None = None, **kwargs) -> float | None:
        """0-100, or None when the sentence has no MWE with a scorable reference."""
        row = self.sentence_stats([hyp], [ref], None if alignment is None else [alignment],
                                  None if source is None else [source],
                                  None if reference is None else [reference]).rows[0]
        return self.sentence_score_from_row(row)

    def ratio_columns(self) -> tuple[int, int]:
        return (0, 1) if self.average == "mwe" else (2, 3)

    def sentence_score_from_row(self, row: np.ndarray) -> float | None:
        """The sentence's mean MWE score (0-100) under either average; None without MWEs."""
        return None if row[3] <= 0 else self.scale * row[2] / row[3]

    def extra_from_stats(self, stats: SentenceStats) -> dict:
        totals = stats.totals()
        extra = {"mwes": int(totals[1]), "sentences_with_mwes": int(totals[3])}
        for key in ("nan_mwes", "mwes_without_indices", "alignment_skipped"):
            if key in stats.info:
                extra[key] = int(stats.info[key])
        return extra

    def signature(self, stats: SentenceStats | None = None) -> Signature:
        if self.compat is not None:
            return Signature.of(self.name, {
                "compat": self.compat, "tok": "ascii-punct-to-space", "case": "hyp-lc", "avg": "mwe",
                "nan": "skip", "align": "none", "dist": "levenshtein-char", "cap": "len"})
        tok = "none" if self.pretokenized else f"moses-{self.lang}"
        align = alignment_signature(self.align, stats)
        fields: dict[str, object] = {
            "tok": f"{tok}+apos", "punct": "drop", "case": "mixed" if self.case_sensitive else "lc",
            "avg": self.average, "align": align,
        }
        if align != "none":  # the reference's own words in the hypothesis count whatever the alignment
            fields["span"] = "ref"
        fields.update(self.matching.signature_fields(self.lang, getattr(self.wordnet, "name", None)))
        if self.precision:
            fields["prec"] = f"{self.precision:g}"
        if self.alternatives != "none":  # no alts field: the single reference
            alts = self.alternatives
            if self.table is not None:
                alts += f"[{self.table_name or 'table'},keys{len(self.table)},min{self.table_min_count}]"
            fields["alts"] = alts
        fields.update({"dist": "levenshtein-char", "cap": "len"})
        return Signature.of(self.name, fields)


def parse_alignment(line: str) -> list[tuple[int, int]]:
    """Pharaoh ``i-j`` pairs (source token i, hypothesis token j); raises AlignmentError if malformed."""
    pairs = []
    for item in line.split():
        left, sep, right = item.partition("-")
        if not sep or not left.isdigit() or not right.isdigit():
            raise AlignmentError(f"bad alignment pair {item!r}")
        pairs.append((int(left), int(right)))
    return pairs


ALIGNER_HEADER = "# aligner: "   # first line of an alignment file that names the aligner of its links
SKIPPED_LINE = "skipped"          # a sentence the aligner skipped: its MWEs are searched in the whole hypothesis


class Alignments(list):
    """Source -> hypothesis links of every sentence of one system, as given (``--align FILE``): a list
    of (i, j) pairs per sentence, or None for a sentence its aligner skipped (an empty side, or too
    long for eflomal), whose MWEs are searched in the whole hypothesis as under the aligner itself.
    ``origin``: the signature value of the aligner that made the links (`MweAlignSettings.describe`),
    which the score's signature then names instead of ``given``; "" when unknown. ``line_offset``:
    the lines before the first sentence's (the header) in the file read."""

    def __init__(self, links: Sequence[Alignment | None] = (), origin: str = "", line_offset: int = 0):
        super().__init__(links)
        self.origin = origin
        self.line_offset = line_offset


def read_alignments(path: str | Path) -> Alignments:
    """One line of Pharaoh pairs per hypothesis. Hypothesis indices count the Moses tokens of the
    hypothesis (before apostrophe splitting), as an aligner run on Moses-tokenized text produces.
    An optional first line ``# aligner: DESCRIPTION`` names the aligner that made the links (what
    `write_alignments` writes), and a line ``skipped`` is a sentence it could not align. ``.gz`` is
    read as the text inside."""
    out, origin, offset = [], "", 0
    for lineno, line in enumerate(iter_lines(path), 1):
        if lineno == 1 and line.startswith(ALIGNER_HEADER):
            origin, offset = line[len(ALIGNER_HEADER):].strip(), 1
            if not origin or any(ch.isspace() or ch == "|" for ch in origin):
                raise InputError(f"bad aligner description {origin!r}", path, lineno,
                                 expected=f"'{ALIGNER_HEADER}DESCRIPTION' without spaces or '|' (a signature value)")
            continue
        if line.strip() == SKIPPED_LINE:
            out.append(None)
            continue
        try:
            out.append(parse_alignment(line))
        except AlignmentError as exc:
            raise InputError(exc.message, path, lineno,
                             expected=f"space-separated i-j pairs, or '{SKIPPED_LINE}'") from None
    return Alignments(out, origin, offset)


def format_alignment(links: Alignment | None) -> str:
    """One line of an alignment file: Pharaoh ``i-j`` pairs, or ``skipped``."""
    return SKIPPED_LINE if links is None else " ".join(f"{i}-{j}" for i, j in links)


def write_alignments(path: str | Path, links: Sequence[Alignment | None], origin: str) -> None:
    """The links of every sentence (None: skipped by the aligner) under a header naming their aligner
    (``origin``), atomically; gzip-compressed when ``path`` ends in ``.gz``, byte for byte the same
    for the same links (no time stamp), so `read_alignments` gives back what scoring used."""
    text = "".join(f"{line}\n" for line in [f"{ALIGNER_HEADER}{origin}", *map(format_alignment, links)])
    data = text.encode("utf-8")
    if str(path).endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_write(path, "wb") as fh:
        fh.write(data)
