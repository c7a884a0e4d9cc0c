"""Line-stable word alignment: a lexical model learned once per test, then each sentence pair aligned alone.

Why: eflomal (`mwemt.testsets.align`) aligns a file as a whole and is not seeded, so the links of one
line depend on the other lines of the file, on the system that wrote them and on the run. A score
that must depend on its line alone (the MWE scores) needs an alignment of a (source, hypothesis)
pair that is a pure function of that pair and of fixed resources. This module gives one:

- **The model** is IBM Model 1 with a diagonal prior in the style of fast_align (Dyer et al. 2013):
  target word j of m aligns to source word i of n with prior probability proportional to
  ``exp(-diagonal * |(i + 1/2)/n - (j + 1/2)/m|)``, or to NULL with probability ``null``. The word
  translation table t(f|e) is learned by plain EM from a uniform start, a fixed number of
  iterations, in a fixed order, in both directions (source->target and target->source), on a
  fixed *prior corpus*: for the MWE scores, the test's own (source, reference) pairs and any extra
  parallel text, never hypotheses. Tokens are lowercased.
- **Each pair is then aligned alone**, in each direction by Viterbi: a word links to the argmax of
  ``(t + boost) x prior`` over the other side's words, or to nothing when NULL scores at least as
  high (ties go to NULL, then to the leftmost word). ``boost`` adds ``identity`` for identical
  tokens (numbers, punctuation, words of 4+ characters) and ``cognate`` for words that share their
  first ``cognate_prefix`` letters, so that names, numbers and cognates align even when the prior
  corpus never saw them. A word the model never saw borrows ``backoff`` times the translation
  probabilities of the seen word that shares the longest prefix with it (at least
  ``backoff_prefix`` characters, and all but an ending of at most 3 characters of either word;
  ties: the more frequent, then the alphabetically first), so an inflected form of a known word
  (``conosciuta`` for ``conosciuto``) aligns as it does; a word
  without such a neighbour and without a boost stays unaligned. The two directions are symmetrized
  with `mwemt.testsets.align.symmetrize` (grow-diag-final-and by default).

Everything is deterministic: no sampling, sorted vocabularies, sums in a fixed order (numpy
``bincount``). The model is cached by the hash of its corpus and settings in the alignment cache
directory (`mwemt.testsets.align.AlignmentCache`: an entry is written atomically while holding its
lock, so processes that learn the same model at once learn it once), and memoized in the process.
A pair with an empty side or more than `MAX_TOKENS` tokens on a side is not aligned (None), as
under eflomal.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from mwemt.errors import MwemtError
from mwemt.testsets.align import (
    DEFAULT_SYMMETRIZATION,
    MAX_TOKENS,
    SYMMETRIZATIONS,
    Alignment,
    AlignmentCache,
    Directional,
    Tokens,
    _cache_problem,
    symmetrize,
)

ALGORITHM = "lex1"   # bump when the model or the Viterbi rule changes: it is in every signature and cache key
CACHE_FORMAT = 1
MODEL_FILE, VOCAB_FILE, INFO_FILE = "lexmodel.npz", "lexvocab.json", "info.json"
CHUNK_CELLS = 4_000_000   # EM works through the corpus in chunks of about this many (target word, source word) cells
MEMO_MODELS = 4           # models kept in the process (one per test scored)
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LexAlignConfig:
    """The settings of the lexical aligner; every field is in its signature and its cache key.

    ``iterations`` of EM; ``diagonal``: how strongly the prior favours the diagonal (0: no
    preference); ``null``: prior probability of aligning to nothing; ``identity`` and ``cognate``:
    added to t for identical tokens and for words sharing their first ``cognate_prefix`` letters;
    ``backoff``: the share of a seen word's translation probabilities an unseen word borrows when
    they share at least ``backoff_prefix`` characters (0: none).
    """

    iterations: int = 5
    diagonal: float = 4.0
    null: float = 0.08
    identity: float = 0.5
    cognate: float = 0.2
    cognate_prefix: int = 4
    backoff: float = 0.5
    backoff_prefix: int = 5

    def __post_init__(self) -> None:
        checks = [(isinstance(self.iterations, int) and 1 <= self.iterations <= 100, "iterations must be 1 to 100"),
                  (0.0 <= self.diagonal <= 100.0, "diagonal must be in [0, 100]"),
                  (0.0 < self.null < 1.0, "null must be in (0, 1)"),
                  (0.0 <= self.identity <= 10.0, "identity must be in [0, 10]"),
                  (0.0 <= self.cognate <= 10.0, "cognate must be in [0, 10]"),
                  (isinstance(self.cognate_prefix, int) and self.cognate_prefix >= 2, "cognate_prefix must be >= 2"),
                  (0.0 <= self.backoff <= 1.0, "backoff must be in [0, 1]"),
                  (isinstance(self.backoff_prefix, int) and self.backoff_prefix >= 2, "backoff_prefix must be >= 2")]
        for ok, message in checks:   # `not ok` also catches NaN
            if not ok:
                raise MwemtError(f"lexical aligner: {message}")

    def describe(self) -> str:
        """The aligner as a signature value (no spaces, no '|')."""
        return (f"{ALGORITHM}+diag{self.diagonal:g},it{self.iterations},null{self.null:g},id{self.identity:g},"
                f"cog{self.cognate_prefix}x{self.cognate:g},bo{self.backoff_prefix}x{self.backoff:g}")


DEFAULT_LEX_CONFIG = LexAlignConfig()


# ---------------------------------------------------------------- pieces (pure)


def _alignable(src: Tokens, tgt: Tokens) -> bool:
    return 0 < len(src) <= MAX_TOKENS and 0 < len(tgt) <= MAX_TOKENS


def _lower(tokens: Tokens) -> list[str]:
    return [t.lower() for t in tokens]


def diagonal_prior(n: int, m: int, config: LexAlignConfig) -> np.ndarray:
    """(m, n + 1): for target word j, the prior of NULL (column 0) and of each source word i."""
    i = (np.arange(n, dtype=np.float64) + 0.5) / n
    j = (np.arange(m, dtype=np.float64) + 0.5) / m
    w = np.exp(-config.diagonal * np.abs(j[:, None] - i[None, :]))
    w *= (1.0 - config.null) / w.sum(axis=1, keepdims=True)
    return np.concatenate([np.full((m, 1), config.null), w], axis=1)


def _identity_class(word: str) -> bool:
    """Whether identical copies of ``word`` on both sides are evidence: a number, punctuation, a name
    or a word of 4+ characters (short words are often function words that only look alike: it. *a*, *di*)."""
    return len(word) >= 4 or not word.isalpha()


def boost_matrix(src: Sequence[str], tgt: Sequence[str], config: LexAlignConfig) -> np.ndarray:
    """(m, n): ``identity`` where target word j equals source word i, ``cognate`` where they share
    their first ``cognate_prefix`` letters (lowercased tokens)."""
    out = np.zeros((len(tgt), len(src)), dtype=np.float64)
    if config.identity == 0.0 and config.cognate == 0.0:
        return out
    p = config.cognate_prefix
    same: dict[str, list[int]] = {}
    prefix: dict[str, list[int]] = {}
    for i, w in enumerate(src):
        if _identity_class(w):
            same.setdefault(w, []).append(i)
        if len(w) >= p and w[:p].isalpha():
            prefix.setdefault(w[:p], []).append(i)
    for j, w in enumerate(tgt):
        if len(w) >= p and w[:p].isalpha():
            for i in prefix.get(w[:p], ()):
                out[j, i] = config.cognate
        for i in same.get(w, ()) if _identity_class(w) else ():
            out[j, i] = config.identity
    return out


class Vocab:
    """The words of one side of the prior corpus (lowercased), sorted; id 0 is NULL."""

    def __init__(self, words: Sequence[str], counts: Sequence[int]):
        self.words = list(words)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.index = {w: k for k, w in enumerate(self.words) if k}
        self._proxies: dict[tuple[str, int], tuple[int, float]] = {}
        self._by_prefix: dict[str, list[int]] = {}
        self._prefix_len = 0

    @classmethod
    def build(cls, sentences: Iterable[Sequence[str]]) -> Vocab:
        counts: dict[str, int] = {}
        for toks in sentences:
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
        words = sorted(counts)
        return cls(["", *words], [0, *(counts[w] for w in words)])

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Sequence[str]) -> np.ndarray:
        """Ids of known words (ids of a training sentence)."""
        return np.array([self.index[t] for t in tokens], dtype=np.int64)

    def lookup(self, tokens: Sequence[str], backoff: float, backoff_prefix: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, weights): a known word is itself with weight 1; an unseen one its proxy (`proxy`) with
        weight ``backoff``, or id -1 and weight 0 when it has none."""
        ids = np.empty(len(tokens), dtype=np.int64)
        weights = np.empty(len(tokens), dtype=np.float64)
        for k, t in enumerate(tokens):
            known = self.index.get(t)
            if known is not None:
                ids[k], weights[k] = known, 1.0
            else:
                ids[k], weights[k] = self.proxy(t, backoff, backoff_prefix)
        return ids, weights

    def proxy(self, word: str, backoff: float, backoff_prefix: int) -> tuple[int, float]:
        """The seen word sharing the longest prefix with an unseen ``word``, at least ``backoff_prefix``
        characters and all but at most 3 characters of either word (an inflection: *conosciuta*,
        *conosciuto*): the more frequent on a tie, then the alphabetically first; (-1, 0) if none."""
        key = (word, backoff_prefix)
        hit = self._proxies.get(key)
        if hit is not None:
            return hit
        best: tuple[int, float] = (-1, 0.0)
        if backoff > 0.0 and len(word) >= backoff_prefix:
            if self._prefix_len != backoff_prefix:
                self._prefix_len, self._by_prefix = backoff_prefix, {}
                for k, w in enumerate(self.words):
                    if k and len(w) >= backoff_prefix:
                        self._by_prefix.setdefault(w[:backoff_prefix], []).append(k)
            rank = None
            for k in self._by_prefix.get(word[:backoff_prefix], ()):
                w = self.words[k]
                n = backoff_prefix
                while n < min(len(w), len(word)) and w[n] == word[n]:
                    n += 1
                if n < len(word) - 3 or n < len(w) - 3:   # more than an inflection apart
                    continue
                r = (n, int(self.counts[k]), -k)   # words are sorted: the smaller id is the first alphabetically
                if rank is None or r > rank:
                    rank, best = r, (k, backoff)
        self._proxies[key] = best
        return best


@dataclass
class Table:
    """t(f|e) of one direction: sorted keys ``e * width + f`` and their probabilities (e = 0: NULL)."""

    keys: np.ndarray
    probs: np.ndarray
    width: int

    def lookup(self, e: np.ndarray, f: np.ndarray) -> np.ndarray:
        """t(f|e) broadcast over ``e`` and ``f``; 0 for an unseen pair or a negative (unknown) id."""
        e, f = np.broadcast_arrays(np.asarray(e, dtype=np.int64), np.asarray(f, dtype=np.int64))
        if not len(self.keys):
            return np.zeros(e.shape, dtype=np.float64)
        key = e * self.width + f
        pos = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
        hit = (self.keys[pos] == key) & (e >= 0) & (f >= 0)
        return np.where(hit, self.probs[pos], 0.0)


def train_direction(src: Sequence[np.ndarray], tgt: Sequence[np.ndarray], width: int, n_src: int,
                    config: LexAlignConfig) -> Table:
    """t(f|e) by ``config.iterations`` rounds of EM for IBM Model 1 with the diagonal prior, from a
    uniform start; ``src``/``tgt`` are id arrays (source ids from 1, NULL added here), ``width`` the
    target vocabulary size and ``n_src`` the source one."""
    chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []   # (keys, prior, row, rows)
    keys_, prior_, row_ = [], [], []
    rows = cells = 0
    priors: dict[tuple[int, int], np.ndarray] = {}

    def flush() -> None:
        nonlocal keys_, prior_, row_, rows, cells
        if keys_:
            chunks.append((np.concatenate(keys_), np.concatenate(prior_), np.concatenate(row_), rows))
        keys_, prior_, row_, rows, cells = [], [], [], 0, 0

    for e, f in zip(src, tgt):
        n, m = len(e), len(f)
        prior = priors.get((n, m))
        if prior is None:
            prior = priors[(n, m)] = diagonal_prior(n, m, config).ravel()
        ecol = np.concatenate([np.zeros(1, dtype=np.int64), e])
        keys_.append((ecol[None, :] * width + f[:, None]).ravel())
        prior_.append(prior)
        row_.append(np.repeat(np.arange(rows, rows + m, dtype=np.int64), n + 1))
        rows += m
        cells += m * (n + 1)
        if cells >= CHUNK_CELLS:
            flush()
    flush()
    if not chunks:
        return Table(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), width)
    pairs, inverse = np.unique(np.concatenate([c[0] for c in chunks]), return_inverse=True)
    inverse = inverse.reshape(-1)
    cuts = np.cumsum([len(c[0]) for c in chunks])[:-1]
    chunks = [(inv, prior, row, rows) for inv, (_, prior, row, rows) in zip(np.split(inverse, cuts), chunks)]
    e_of_pair = pairs // width
    t = np.ones(len(pairs), dtype=np.float64)
    for _ in range(config.iterations):
        counts = np.zeros(len(pairs), dtype=np.float64)
        for inv, prior, row, n_rows in chunks:
            p = t[inv] * prior
            total = np.bincount(row, weights=p, minlength=n_rows)
            total[total == 0.0] = 1.0
            counts += np.bincount(inv, weights=p / total[row], minlength=len(pairs))
        per_e = np.bincount(e_of_pair, weights=counts, minlength=n_src)
        per_e[per_e == 0.0] = 1.0
        t = counts / per_e[e_of_pair]
    return Table(pairs.astype(np.int64), t, width)


def viterbi(table: Table, e_ids: np.ndarray, e_w: np.ndarray, f_ids: np.ndarray, f_w: np.ndarray,
            boost: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """For each f word, the index of its e word, or -1 (NULL). ``boost`` is (len f, len e) and
    ``prior`` (len f, len e + 1) with NULL first, so ties go to NULL, then to the leftmost word."""
    e_all = np.concatenate([np.zeros(1, dtype=np.int64), e_ids])
    w_all = np.concatenate([np.ones(1, dtype=np.float64), e_w])
    t = table.lookup(e_all[None, :], f_ids[:, None]) * (w_all[None, :] * f_w[:, None])
    t[:, 1:] += boost
    return np.argmax(t * prior, axis=1) - 1


# ---------------------------------------------------------------- the model


@dataclass
class LexicalModel:
    """Both directions' t tables and vocabularies of one prior corpus, with the settings that align."""

    config: LexAlignConfig
    src_vocab: Vocab
    tgt_vocab: Vocab
    forward: Table    # t(target word | source word)
    reverse: Table    # t(source word | target word)
    n_pairs: int
    key: str = ""
    cached: bool = False
    _priors: dict = field(default_factory=dict, repr=False)

    def _prior(self, n: int, m: int) -> np.ndarray:
        p = self._priors.get((n, m))
        if p is None:
            if len(self._priors) > 4096:
                self._priors.clear()
            p = self._priors[(n, m)] = diagonal_prior(n, m, self.config)
        return p

    def align_pair(self, src: Tokens, tgt: Tokens) -> tuple[Alignment, Alignment] | None:
        """(forward, reverse) links ``(i, j)`` of one pair (source token i, target token j), a pure
        function of the pair and the model; None for a pair that is not aligned (an empty side, or
        more than MAX_TOKENS tokens on a side)."""
        if not _alignable(src, tgt):
            return None
        c = self.config
        s, t = _lower(src), _lower(tgt)
        se, sw = self.src_vocab.lookup(s, c.backoff, c.backoff_prefix)
        te, tw = self.tgt_vocab.lookup(t, c.backoff, c.backoff_prefix)
        boost = boost_matrix(s, t, c)
        to_src = viterbi(self.forward, se, sw, te, tw, boost, self._prior(len(s), len(t)))
        to_tgt = viterbi(self.reverse, te, tw, se, sw, boost.T, self._prior(len(t), len(s)))
        forward = frozenset((int(i), j) for j, i in enumerate(to_src) if i >= 0)
        reverse = frozenset((i, int(j)) for i, j in enumerate(to_tgt) if j >= 0)
        return forward, reverse

    def align_directional(self, src: Sequence[Tokens], tgt: Sequence[Tokens]) -> Directional:
        """Both directions' links of every pair (pairs not aligned: no links, listed in ``skipped``)."""
        if len(src) != len(tgt):
            raise MwemtError(f"text to align: {len(src)} source sentences but {len(tgt)} target sentences")
        forward, reverse, skipped = [], [], []
        for k, (s, t) in enumerate(zip(src, tgt)):
            links = self.align_pair(s, t)
            if links is None:
                skipped.append(k)
                links = (frozenset(), frozenset())
            forward.append(links[0])
            reverse.append(links[1])
        return Directional(forward, reverse, key=self.key, cached=self.cached, skipped=skipped)

    def align(self, src: Sequence[Tokens], tgt: Sequence[Tokens],
              symmetrization: str = DEFAULT_SYMMETRIZATION) -> list[Alignment | None]:
        """Symmetrized links of each pair, each computed from that pair alone; None for a pair not aligned."""
        if symmetrization not in SYMMETRIZATIONS:
            raise MwemtError(f"unknown symmetrization {symmetrization!r}; choose one of {', '.join(SYMMETRIZATIONS)}")
        if len(src) != len(tgt):
            raise MwemtError(f"text to align: {len(src)} source sentences but {len(tgt)} target sentences")
        out: list[Alignment | None] = []
        for s, t in zip(src, tgt):
            links = self.align_pair(s, t)
            out.append(None if links is None else symmetrize(links[0], links[1], len(s), len(t), symmetrization))
        return out


def _corpus(src: Sequence[Tokens], tgt: Sequence[Tokens]) -> tuple[list[list[str]], list[list[str]]]:
    """The pairs the model learns from (lowercased), in order: those with both sides alignable."""
    if len(src) != len(tgt):
        raise MwemtError(f"prior corpus: {len(src)} source sentences but {len(tgt)} target sentences")
    kept = [(s, t) for s, t in zip(src, tgt) if _alignable(s, t)]
    return [_lower(s) for s, _ in kept], [_lower(t) for _, t in kept]


def train_model(src: Sequence[Tokens], tgt: Sequence[Tokens], config: LexAlignConfig = DEFAULT_LEX_CONFIG) -> LexicalModel:
    """Learn the model from the prior corpus ``src``/``tgt`` (token lists); pairs with an empty side or
    too long are left out."""
    s, t = _corpus(src, tgt)
    sv, tv = Vocab.build(s), Vocab.build(t)
    s_ids, t_ids = [sv.ids(x) for x in s], [tv.ids(x) for x in t]
    forward = train_direction(s_ids, t_ids, len(tv), len(sv), config)
    reverse = train_direction(t_ids, s_ids, len(sv), len(tv), config)
    return LexicalModel(config, sv, tv, forward, reverse, n_pairs=len(s))


def model_key(src: Sequence[Tokens], tgt: Sequence[Tokens], config: LexAlignConfig = DEFAULT_LEX_CONFIG) -> str:
    """SHA-256 of the settings and of the exact (lowercased) prior corpus the model learns from."""
    h = hashlib.sha256()
    settings = {"kind": "lexical-model", "format": CACHE_FORMAT, "algorithm": ALGORITHM, "max_tokens": MAX_TOKENS,
                **asdict(config)}
    h.update(json.dumps(settings, sort_keys=True).encode("utf-8"))
    s, t = _corpus(src, tgt)
    for side in (s, t):
        h.update(b"\0side\0")
        for toks in side:
            h.update("\t".join(toks).encode("utf-8"))
            h.update(b"\n")
    return h.hexdigest()


def _save(model: LexicalModel, directory: Path) -> None:
    np.savez(directory / MODEL_FILE, fwd_keys=model.forward.keys, fwd_probs=model.forward.probs,
             rev_keys=model.reverse.keys, rev_probs=model.reverse.probs,
             src_counts=model.src_vocab.counts, tgt_counts=model.tgt_vocab.counts)
    (directory / VOCAB_FILE).write_text(json.dumps({"src": model.src_vocab.words, "tgt": model.tgt_vocab.words},
                                                   ensure_ascii=False), encoding="utf-8")
    (directory / INFO_FILE).write_text(json.dumps({"format": CACHE_FORMAT, "algorithm": ALGORITHM,
                                                   "config": asdict(model.config), "pairs": model.n_pairs},
                                                  indent=1), encoding="utf-8")


def _load(directory: Path, config: LexAlignConfig, key: str) -> LexicalModel | None:
    """The model stored in ``directory``, or None when it is missing or damaged."""
    try:
        info = json.loads((directory / INFO_FILE).read_text(encoding="utf-8"))
        vocab = json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8"))
        with np.load(directory / MODEL_FILE, allow_pickle=False) as z:
            arrays = {k: z[k] for k in ("fwd_keys", "fwd_probs", "rev_keys", "rev_probs", "src_counts", "tgt_counts")}
        if info.get("format") != CACHE_FORMAT or info.get("config") != asdict(config):
            return None
        sv, tv = Vocab(vocab["src"], arrays["src_counts"]), Vocab(vocab["tgt"], arrays["tgt_counts"])
        if len(sv.words) != len(sv.counts) or len(tv.words) != len(tv.counts):
            return None
        if len(arrays["fwd_keys"]) != len(arrays["fwd_probs"]) or len(arrays["rev_keys"]) != len(arrays["rev_probs"]):
            return None
        return LexicalModel(config, sv, tv, Table(arrays["fwd_keys"], arrays["fwd_probs"], len(tv)),
                            Table(arrays["rev_keys"], arrays["rev_probs"], len(sv)), n_pairs=int(info["pairs"]),
                            key=key, cached=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None


_MEMO: dict[tuple[str, str], LexicalModel] = {}   # (cache directory, model key) -> model


def lexical_model(src: Sequence[Tokens], tgt: Sequence[Tokens], *, config: LexAlignConfig = DEFAULT_LEX_CONFIG,
                  cache_dir: str | Path | None = None) -> LexicalModel:
    """The model of the prior corpus ``src``/``tgt``: from this process's memory, else from the cache in
    ``cache_dir``, else learned (and stored there). The same corpus and settings give the same model
    whichever way it is found (the cache keeps the learned float64 tables as they are)."""
    key = model_key(src, tgt, config)
    memo = (str(cache_dir), key)   # a hit is what that cache would give: the same tables
    model = _MEMO.get(memo)
    if model is not None:
        return replace(model, cached=True)
    cache = AlignmentCache(cache_dir) if cache_dir is not None else None
    if cache is None:
        model = train_model(src, tgt, config)
    else:
        with cache.locked(key) as writable:   # one process learns, the others wait and read it
            model = _load(cache.entry(key), config, key)
            if model is None:
                model = train_model(src, tgt, config)
                if writable:
                    _store(cache, key, model)
    model.key = key
    while len(_MEMO) >= MEMO_MODELS:
        _MEMO.pop(next(iter(_MEMO)))
    _MEMO[memo] = model
    return model


def _store(cache: AlignmentCache, key: str, model: LexicalModel) -> None:
    from mwemt.fileio import atomic_directory

    try:
        with atomic_directory(cache.entry(key)) as tmp:
            _save(model, tmp)
    except (OSError, MwemtError) as exc:
        logger.warning("alignment cache %s not written: %s", cache.directory, _cache_problem(exc))


def align_lexical(src: Sequence[Tokens], tgt: Sequence[Tokens], *, prior: tuple[Sequence[Tokens], Sequence[Tokens]],
                  config: LexAlignConfig = DEFAULT_LEX_CONFIG, symmetrization: str = DEFAULT_SYMMETRIZATION,
                  cache_dir: str | Path | None = None) -> list[Alignment | None]:
    """Symmetrized links of each pair ``src[k]``/``tgt[k]``, each a function of that pair and of the
    model learned on ``prior`` = (source token lists, target token lists) alone."""
    return lexical_model(prior[0], prior[1], config=config, cache_dir=cache_dir).align(src, tgt, symmetrization)
