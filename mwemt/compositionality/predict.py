"""Predict how compositional an MWE is by comparing its vector with the vectors of its parts.

Scores (every one mapped to [0, 1], 1 = compositional; a negative cosine is clipped to 0):

- ``direct``: cos(v_mwe, sum of the vectors of its content words) (Salehi, Cook and Baldwin 2015,
  their comp1). Content words are the components outside the most frequent words of the corpus (the
  ranks above the PPMI contexts, 1..50 by default); if every component is that frequent, all count.
- ``alpha``: alpha·cos(v_mwe, v_w1) + (1 - alpha)·cos(v_mwe, v_w2) over the content words (their
  comp2; alpha = 0.7 by default). With more than two content words the later ones share 1 - alpha
  equally; with one, it gets the whole weight.
- ``ss``: string similarity of translations (after Salehi and Cook 2013): for each component, the best
  longest-common-substring ratio between a translation of the MWE and a translation of the component,
  relative to the component translation's length (1 when the component's translation appears inside
  the MWE's translation); components combined with the same alpha weights.
- ``ss+ds``: the mean of ``ss`` and the ``alpha`` score of a vector model (Salehi et al. 2014 combine
  string and distributional similarity by averaging).

An MWE that cannot be scored by a method (MWE token or a component absent from the vectors, or no
translation) gets no score for it and a reason; callers report these, they are never dropped silently.

A hyphenated single word (``full-time``) is its own MWE token, compared with its parts (``full``,
``time``). An MWE that was not in the lexicon when the vectors were built has no token of its own;
`fold_in` gives it a PPMI (and PPMI-SVD) vector from its contiguous occurrences in the collapsed
corpus, so `score_mwes` can score any list of MWEs from cached vectors (word2vec cannot be extended
without retraining: those MWEs are reported as missing there).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np

from mwemt.compositionality.vectors import MODELS, Space, VectorStore, load_store, mwe_token, word_token
from mwemt.errors import MwemtError
from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
from mwemt.records import LexiconEntry

DS_METHODS = ("direct", "alpha")
METHODS = ("direct", "alpha", "ss", "ss+ds")
MIN_TRANSLATION_CHARS = 3
# MultiWordNet marks a lexical gap with this placeholder lemma; it is not a translation.
GAP_PLACEHOLDERS = frozenset({"gap!"})
HYPHEN = "-"


@dataclass(frozen=True)
class Target:
    """An MWE as the vector spaces see it: its collapsed token and its content-word tokens."""

    key: str
    words: tuple[str, ...]
    normalized: tuple[str, ...]
    token: str
    content: tuple[int, ...]

    @property
    def content_tokens(self) -> tuple[str, ...]:
        return tuple(word_token(self.normalized[i]) for i in self.content)

    def content_pairs(self) -> list[tuple[str, str]]:
        """(word as written in the MWE list, its lemma) for each content word, for translation lookup.

        When tokenization changed the number of words, every written word is used with itself as lemma.
        """
        if len(self.words) == len(self.normalized):
            return [(self.words[i], self.normalized[i]) for i in self.content]
        return [(w, w) for w in self.words]


@dataclass
class Prediction:
    key: str
    token: str
    corpus_count: int
    scores: dict[str, float] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


def targets_for(entries: Iterable[LexiconEntry], store: VectorStore) -> list[Target]:
    """Normalize MWEs exactly as the corpus was (same language, lemmatizer and tokenization)."""
    config = store.config
    lexicon = build_annotator(AnnotatorConfig(config.lang, lemmatizer=config.lemmatizer), entries=[]).lexicon
    lemmatizer = lexicon.lemmatizer
    function = store.function_words()
    seen: set[str] = set()
    out: list[Target] = []
    for e in entries:
        if e.key in seen:
            continue
        seen.add(e.key)
        norm = lexicon.normalize(e.lemmas)
        token = mwe_token(norm)
        if len(norm) == 1 and HYPHEN in norm[0].strip(HYPHEN):  # full-time: the word is the MWE token
            token = word_token(norm[0])
            norm = tuple(lemmatizer.lemmatize([w for w in norm[0].split(HYPHEN) if w]))
        content = tuple(i for i, w in enumerate(norm) if word_token(w) not in function)
        if not content:
            content = tuple(range(len(norm)))
        out.append(Target(e.key, tuple(e.lemmas), norm, token, content))
    return out


def cosine(a: np.ndarray, b: np.ndarray) -> float | None:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return None
    return float(np.dot(a, b) / (na * nb))


def clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def component_weights(n: int, alpha: float) -> list[float]:
    """alpha for the first component, 1 - alpha shared by the rest (all of it for a single one)."""
    if n == 1:
        return [1.0]
    return [alpha] + [(1.0 - alpha) / (n - 1)] * (n - 1)


def _vectors(space: Space, target: Target) -> tuple[np.ndarray | None, list[np.ndarray] | None, str | None]:
    if len(target.normalized) < 2:
        return None, None, "a single word: no parts to compare with"
    v_mwe = space.get(target.token)
    if v_mwe is None:
        return None, None, f"MWE token {target.token!r} not in {space.name}"
    comps = []
    for tok in target.content_tokens:
        v = space.get(tok)
        if v is None:
            return None, None, f"component {tok!r} not in {space.name}"
        comps.append(v)
    if not np.any(v_mwe):
        return None, None, f"MWE token {target.token!r} has an all-zero vector in {space.name}"
    return v_mwe, comps, None


def direct_score(space: Space, target: Target) -> tuple[float | None, str | None]:
    v_mwe, comps, why = _vectors(space, target)
    if why is not None:
        return None, why
    cos = cosine(v_mwe, np.sum(comps, axis=0))
    if cos is None:
        return None, "the components sum to a zero vector"
    return clip01(cos), None


def alpha_score(space: Space, target: Target, alpha: float) -> tuple[float | None, str | None]:
    v_mwe, comps, why = _vectors(space, target)
    if why is not None:
        return None, why
    total = 0.0
    for w, v in zip(component_weights(len(comps), alpha), comps):
        cos = cosine(v_mwe, v)
        total += w * (cos if cos is not None else 0.0)
    return clip01(total), None


# ---------------------------------------------------------------- string similarity over translations


class Translations:
    """Lowercased source phrase -> its translations, from a bilingual or synset-aligned lexicon."""

    def __init__(self, entries: Iterable[LexiconEntry], name: str = "bilingual"):
        self.name = name
        self.table: dict[str, list[str]] = {}
        for e in entries:
            key = " ".join(w.lower() for w in e.lemmas)
            bucket = self.table.setdefault(key, [])
            for t in e.translations:
                t = " ".join(t.lower().split())
                if t and t not in GAP_PLACEHOLDERS and len(t) >= MIN_TRANSLATION_CHARS and t not in bucket:
                    bucket.append(t)

    def get(self, *candidates: str) -> list[str]:
        for c in candidates:
            found = self.table.get(" ".join(c.lower().split()))
            if found:
                return found
        return []


def substring_ratio(mwe_translation: str, component_translation: str) -> float:
    """Longest common substring over the component translation's length."""
    if not component_translation:
        return 0.0
    m = SequenceMatcher(None, mwe_translation, component_translation, autojunk=False)
    match = m.find_longest_match(0, len(mwe_translation), 0, len(component_translation))
    return match.size / len(component_translation)


def string_similarity(target: Target, translations: Translations, alpha: float) -> tuple[float | None, str | None]:
    mwe_tr = translations.get(target.key, " ".join(target.normalized))
    if not mwe_tr:
        return None, f"no translation of {target.key!r} in {translations.name}"
    sims = []
    for word, lemma in target.content_pairs():
        comp_tr = translations.get(word, lemma)
        if not comp_tr:
            return None, f"no translation of component {word!r} in {translations.name}"
        sims.append(max(substring_ratio(m, c) for m in mwe_tr for c in comp_tr))
    return clip01(sum(w * s for w, s in zip(component_weights(len(sims), alpha), sims))), None


# ---------------------------------------------------------------- all scores for a list of MWEs


def score_names(models: Sequence[str], with_ss: bool) -> list[str]:
    names = [f"{m}:{meth}" for m in models for meth in DS_METHODS]
    if with_ss:
        names.append("ss")
        names += [f"{m}:ss+ds" for m in models]
    return names


def predict(entries: Iterable[LexiconEntry], store: VectorStore, alpha: float = 0.7,
            translations: Translations | None = None, models: Sequence[str] | None = None) -> list[Prediction]:
    """Every score for every MWE (see the module docstring), with a reason for each one missing."""
    if not 0.0 <= alpha <= 1.0:
        raise MwemtError(f"alpha must be in [0, 1], got {alpha}")
    models = list(models or store.spaces)
    for m in models:
        if m not in store.spaces:
            raise MwemtError(f"the vectors in {store.path} have no {m!r} model (have: {', '.join(store.spaces)})")
    out = []
    for t in targets_for(entries, store):
        p = Prediction(t.key, t.token, store.counts.get(t.token) or store.folded_counts.get(t.token, 0))
        ss = None
        if translations is not None:
            ss, why = string_similarity(t, translations, alpha)
            if ss is None:
                p.missing["ss"] = why or ""
            else:
                p.scores["ss"] = ss
        for m in models:
            space = store.spaces[m]
            for name, (score, why) in (("direct", direct_score(space, t)), ("alpha", alpha_score(space, t, alpha))):
                if score is None:
                    p.missing[f"{m}:{name}"] = f"{why} ({_count_note(p.corpus_count, store.config.mwe_min_count)})"
                else:
                    p.scores[f"{m}:{name}"] = score
            if translations is not None:
                ds = p.scores.get(f"{m}:alpha")
                if ss is not None and ds is not None:
                    p.scores[f"{m}:ss+ds"] = (ss + ds) / 2.0
                else:
                    p.missing[f"{m}:ss+ds"] = p.missing.get("ss") or p.missing.get(f"{m}:alpha", "")
        out.append(p)
    return out


RESCALES = ("none", "minmax", "rank")


def rescale(scores: Sequence[tuple[str, float]], how: str = "none") -> list[tuple[str, float]]:
    """Spread raw scores over [0, 1] for consumers that use absolute values (the weighted metric).

    Cosines of different models live in different ranges (PPMI: mostly below 0.3; a sentence
    encoder: above 0.9). ``minmax`` maps the lowest score to 0 and the highest to 1; ``rank`` maps each
    score to its mean rank (ties averaged) scaled to [0, 1]. Both keep the order, so correlations with
    ratings are unchanged (Spearman exactly; Pearson not for ``rank``).
    """
    if how == "none" or len(scores) < 2:
        return list(scores)
    values = np.array([v for _, v in scores], dtype=np.float64)
    if how == "minmax":
        lo, hi = float(values.min()), float(values.max())
        scaled = (values - lo) / (hi - lo) if hi > lo else np.full_like(values, 0.5)
    elif how == "rank":
        from scipy.stats import rankdata

        scaled = (rankdata(values) - 1.0) / (len(values) - 1.0)
    else:
        raise MwemtError(f"unknown rescaling {how!r}; choose one of {', '.join(RESCALES)}")
    return [(k, clip01(float(v))) for (k, _), v in zip(scores, scaled)]


def _count_note(count: int, min_count: int) -> str:
    if count == 0:
        return "never seen as one token: absent from the corpus, or not in the lexicon the vectors were built with"
    if count < min_count:
        return f"MWE seen {count} times, below the min count {min_count}"
    return f"MWE seen {count} times"


def table_rows(predictions: Sequence[Prediction], names: Sequence[str]) -> list[str]:
    """A wide TSV: every score (NA when missing) and the reasons for the missing ones."""
    rows = ["mwe\tcorpus_count\t" + "\t".join(names) + "\tmissing"]
    for p in predictions:
        cells = [f"{p.scores[n]:.6f}" if n in p.scores else "NA" for n in names]
        by_reason: dict[str, list[str]] = {}
        for name, why in p.missing.items():
            by_reason.setdefault(why, []).append(name)
        reasons = "; ".join(f"{', '.join(names_)}: {why}" for why, names_ in by_reason.items())
        rows.append(f"{p.key}\t{p.corpus_count}\t" + "\t".join(cells) + f"\t{reasons}")
    return rows


# ---------------------------------------------------------------- MWEs that were not collapsed: fold in


FOLD_IN_DIR = "fold-in"


def _fold_in_chunk(state: tuple, lines: list[str]) -> tuple[dict, dict]:
    """Context counts of every contiguous occurrence of the patterns in these collapsed lines."""
    firsts, ctx_id, window = state
    counts: dict[tuple, dict[int, int]] = {}
    seen: dict[tuple, int] = {}
    for line in lines:
        toks = line.split(" ")
        for i, tok in enumerate(toks):
            pats = firsts.get(tok)
            if pats is None:
                continue
            for pat in pats:
                end = i + len(pat)
                if tuple(toks[i:end]) != pat:
                    continue
                seen[pat] = seen.get(pat, 0) + 1
                row = counts.setdefault(pat, {})
                for c in toks[max(0, i - window):i] + toks[end:end + window]:
                    j = ctx_id.get(c)
                    if j is not None:
                        row[j] = row.get(j, 0) + 1
    return counts, seen


def fold_in(store: VectorStore, targets: Sequence[Target], workers: int = 0, progress: bool = False) -> int:
    """Give MWEs without a token of their own a PPMI (and PPMI-SVD) vector; return how many got one.

    Their contiguous occurrences in the collapsed corpus (as lemma sequences) are counted with the
    window of the PPMI space, against its context words and context distribution, so the new rows
    live in the same space. It approximates a rebuild with the MWE in the lexicon: the MWE's words
    keep these occurrences in their own counts. Results are cached in ``VECTORS/fold-in/``.
    """
    import json

    import scipy.sparse
    from tqdm import tqdm

    from mwemt.compositionality.corpus import CORPUS, chunked, ordered_map, resolve_workers, stage_key
    from mwemt.compositionality.ppmi import ppmi_rows
    from mwemt.fileio import atomic_write, iter_lines

    if "ppmi" not in store.spaces:
        return 0
    space = store.spaces["ppmi"]
    todo = sorted({tuple(word_token(w) for w in t.normalized): t.token for t in targets
                   if len(t.normalized) > 1 and t.token == mwe_token(t.normalized) and t.token not in space}.items())
    if not todo:
        return 0
    config = store.config
    ppmi_key = json.loads((store.path / "ppmi.json").read_text(encoding="utf-8"))["key"]
    key = stage_key(stage="fold-in", ppmi=ppmi_key, patterns=[p for p, _ in todo])
    cache = store.path / FOLD_IN_DIR / f"{key}.npz"
    if cache.is_file():
        data = np.load(cache, allow_pickle=False)
        tokens, occurrences, rows = list(data["tokens"]), data["occurrences"], data["rows"]
    else:
        contexts = list(iter_lines(store.path / "ppmi.contexts.txt"))
        firsts: dict[str, list[tuple]] = {}
        for pat, _ in todo:
            firsts.setdefault(pat[0], []).append(pat)
        state = (firsts, {c: j for j, c in enumerate(contexts)}, config.ppmi_window)
        total: dict[tuple, dict[int, int]] = {}
        seen: dict[tuple, int] = {}
        lines = iter_lines(store.path / CORPUS)
        chunks = chunked(lines, 2000)
        with tqdm(desc="fold in MWEs", unit=" lines", unit_scale=True, disable=not progress, mininterval=1.0) as bar:
            for counts, n in ordered_map(_fold_in_chunk, chunks, resolve_workers(workers), state):
                for pat, row in counts.items():
                    acc = total.setdefault(pat, {})
                    for j, v in row.items():
                        acc[j] = acc.get(j, 0) + v
                for pat, k in n.items():
                    seen[pat] = seen.get(pat, 0) + k
                bar.update(2000)
        tokens = [tok for _, tok in todo]
        occurrences = np.array([seen.get(p, 0) for p, _ in todo], dtype=np.int64)
        r, c, v = [], [], []
        for i, (pat, _) in enumerate(todo):
            for j, x in total.get(pat, {}).items():
                r.append(i)
                c.append(j)
                v.append(x)
        counts_m = scipy.sparse.coo_matrix((np.array(v, dtype=np.float64), (np.array(r, dtype=np.int64),
                                            np.array(c, dtype=np.int64))), shape=(len(todo), len(contexts)))
        col_sum = np.load(store.path / "ppmi.context_counts.npy")
        rows = ppmi_rows(counts_m, col_sum, config.ppmi_cds).toarray().astype(np.float32)
        cache.parent.mkdir(exist_ok=True)
        with atomic_write(cache, "wb") as fh:
            np.savez(fh, tokens=np.array(tokens), occurrences=occurrences, rows=rows)
    projection = None
    if "svd" in store.spaces and (store.path / "svd.projection.npy").is_file():
        projection = np.load(store.path / "svd.projection.npy")
    added = 0
    for tok, n, row in zip(tokens, occurrences, rows):
        store.folded_counts[str(tok)] = int(n)
        if n < config.mwe_min_count:
            continue
        space.extra[str(tok)] = row.astype(np.float64)
        if projection is not None:
            store.spaces["svd"].extra[str(tok)] = (row @ projection).astype(np.float64)
        added += 1
    return added


# ---------------------------------------------------------------- the library entry point


@dataclass(frozen=True)
class MweScore:
    """The predicted compositionality of one MWE (None with a reason when it cannot be predicted).

    ``how`` says where the MWE vector came from: ``collapsed`` (the MWE was one token when the
    vectors were built), ``folded-in`` (see `fold_in`), or ``""`` when there is no score.
    """

    mwe: str
    score: float | None
    corpus_count: int
    how: str = ""
    reason: str = ""


DEFAULT_MODEL = "ppmi"
DEFAULT_METHOD = "alpha"


def score_mwes(mwes: Iterable[str | LexiconEntry], vectors: str | Path | VectorStore, *,
               model: str = DEFAULT_MODEL, method: str = DEFAULT_METHOD, alpha: float = 0.7,
               allow_fold_in: bool = True, workers: int = 0, progress: bool = False) -> list[MweScore]:
    """Predict the compositionality (in [0, 1], 1 = compositional) of any MWEs from cached vectors.

    ``mwes`` are strings (``"ivory tower"``, ``"full-time"``) or lexicon entries, in any inflection:
    they are normalized like the corpus. ``vectors`` is a directory written by `build_vectors`
    (``mwemt compositionality vectors``) or a loaded `VectorStore`. MWEs that were not collapsed
    when the vectors were built are folded in (PPMI and PPMI-SVD only) unless ``allow_fold_in`` is
    False. One result per distinct MWE, in input order.
    """
    if model not in MODELS:
        raise MwemtError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
    if method not in DS_METHODS:
        raise MwemtError(f"unknown method {method!r}; score_mwes computes {', '.join(DS_METHODS)}")
    needed = [model, "ppmi"] if model == "svd" and allow_fold_in else [model]  # folding in starts from PPMI
    store = vectors if isinstance(vectors, VectorStore) else load_store(vectors, models=needed)
    if model not in store.spaces:
        raise MwemtError(f"the vectors in {store.path} have no {model!r} model (have: {', '.join(store.spaces)})")
    entries = [m if isinstance(m, LexiconEntry) else LexiconEntry(tuple(m.split())) for m in mwes]
    entries = [e for e in entries if e.lemmas]
    targets = targets_for(entries, store)
    space = store.spaces[model]
    if allow_fold_in and model != "w2v":
        fold_in(store, targets, workers=workers, progress=progress)
    name = f"{model}:{method}"
    out = []
    for t, p in zip(targets, predict(entries, store, alpha=alpha, models=[model])):
        how = "collapsed" if t.token in space.index else "folded-in"
        if name in p.scores:
            out.append(MweScore(p.key, p.scores[name], p.corpus_count, how))
        else:
            out.append(MweScore(p.key, None, p.corpus_count, "", p.missing.get(name, "")))
    return out
