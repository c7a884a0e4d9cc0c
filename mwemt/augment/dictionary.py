"""Bilingual (MWE) dictionary entries as extra parallel pairs (Zaninello & Birch 2020, "MWE dictionary").

A dictionary row lists synonyms: ``source<TAB>t1; t2`` (``bilingual``) or one synset of the
EN-xx WordNet-aligned TSVs (``wn-aligned``: `` | ``-separated lemmas on each side). Every row is
expanded to one pair per (source synonym, target synonym): that is the shape of the paper's sample
data ("abide by" -> osservare / rispettare / attenersi a ...).

Both sides are lemmatized to build the deduplication key, which drops punctuation tokens, so
"Run!"/"Corri!" in the training data and the entry "run"/"correre" count as the same pair. The
written text is the normalized dictionary form by default, because dictionaries already hold
lemmas and re-lemmatizing them damages some ("according to" -> "accord to"); ``--output-form
lemmas`` writes the lemmatized form instead.

Built right (issue 30), a pair must pass three more filters, each optional and counted in the manifest:

- ``drop_identical``: a pair whose two sides are the same text (casefolded) carries no translation
  knowledge (MultiWordNet lists Latin taxa such as *Barbarea vulgaris* on both sides);
- ``sense_filter`` (an `MweTranslationTable`, `mwemt.testsets.mwe_table`): a pair is kept only when
  its translation is attested with the MWE in parallel text: the table lists, for the pair's source
  MWE type, a translation found by alignment (at least ``sense_min_count`` times) that contains the
  pair's translation approximately (`mwemt.preprocess.hints.phrase_match`: content words in order,
  inflection allowed). That drops the senses the corpus never uses ("of course" -> "già");
- ``form``: ``entries`` adds the (citation-form) pairs themselves; ``sentences`` adds, for each kept
  pair, up to ``max_sentences_per_pair`` *sentence pairs* of a pool of parallel text that is not
  training data (e.g. the pairs `data.train_size` leaves out) whose source contains the MWE (its
  lemmas, contiguous) and whose target contains the translation (approximately): the dictionary's
  knowledge offered in context and in natural case; ``both`` adds both. A pool pair whose source or
  target is also a training sentence is never used, and each pool pair at most once.

With ``allow_repeat`` off, fewer candidates than the ratio asks for are all used once and the
shortfall is reported (``ratio.shortfall``) instead of repeating them.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from mwemt.augment.corpus import check_new_prefix, corpus_path, read_corpus, write_corpus
from mwemt.augment.ratio import Choice, achieved_ratio, check_ratio, choose, requested_pairs
from mwemt.errors import MwemtError
from mwemt.preprocess.lemmatize import Lemmatizer, get_lemmatizer
from mwemt.preprocess.tokenize import detokenize, tokenize
from mwemt.provenance import manifest, write_json
from mwemt.testsets.mwe_table import read_dictionary

DICT_FORMATS = ("auto", "bilingual", "wn-aligned")
OUTPUT_FORMS = ("dictionary", "lemmas")
PLACEHOLDERS = frozenset({"GAP!", "PSEUDOGAP!"})  # MultiWordNet's marks for lexical gaps


@dataclass(frozen=True)
class DictPair:
    """One (source synonym, target synonym) pair and the dictionary line it came from."""

    source: str
    target: str
    line: int


@dataclass(frozen=True)
class DictionaryConfig:
    ratio: float = 0.10
    seed: int = 1
    fmt: str = "auto"
    dict_side: str = "source"
    mwe_only: bool = False
    output_form: str = "dictionary"
    lemmatizer: str = "simplemma"
    src_lang: str = "en"
    tgt_lang: str = "it"
    drop_identical: bool = False
    sense_filter: bool = False          # needs a table (augment_with_dictionary's ``table``)
    sense_min_count: int = 1
    form: str = "entries"               # entries | sentences | both
    max_sentences_per_pair: int = 3
    allow_repeat: bool = True


FORMS = ("entries", "sentences", "both")


def read_dictionary_pairs(path: str | Path, fmt: str = "auto", dict_side: str = "source") -> list[DictPair]:
    """Expand every dictionary row into its synonym pairs (source split on ``;`` too, for bilingual rows),
    with the line each came from: `mwemt.testsets.mwe_table.read_dictionary` (the one dictionary
    reader), MultiWordNet's gap marks kept so that `prepare_pairs` counts them.

    ``dict_side`` says which dictionary column holds the corpus source language: ``source`` (the
    first/English column) or ``target`` (swap the sides). Bad rows raise `InputError` with the line.
    """
    if fmt not in DICT_FORMATS:
        raise MwemtError(f"unknown dictionary format {fmt!r}; choose one of {', '.join(DICT_FORMATS)}")
    return [DictPair(s, t, line) for s, t, line in read_dictionary(path, fmt, dict_side, min_words=1,
                                                                   placeholders=True, with_lines=True)]


def normalize_text(text: str) -> str:
    """NFC and collapsed whitespace: the dictionary form we write."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def lemma_tokens(text: str, lang: str, lemmatizer: Lemmatizer) -> list[str]:
    """Moses tokens, lemmatized (lowercased)."""
    return lemmatizer.lemmatize(tokenize(normalize_text(text), lang))


def dedup_key(lemmas: Sequence[str]) -> tuple[str, ...]:
    """Lemmas without punctuation-only tokens: what two pairs must share to count as duplicates."""
    return tuple(lem for lem in lemmas if any(ch.isalnum() for ch in lem))


def _word_count(text: str) -> int:
    """A lower bound on ``len(dedup_key(...))``: whitespace tokens that hold a letter or digit."""
    return sum(1 for w in text.split() if any(ch.isalnum() for ch in w))


@dataclass
class PreparedPair:
    source: str
    target: str
    line: int
    key: tuple[tuple[str, ...], tuple[str, ...]]


def prepare_pairs(pairs: Iterable[DictPair], config: DictionaryConfig, counts: dict[str, int],
                  progress: bool = True) -> list[PreparedPair]:
    """Drop placeholders and (optionally) single-word sources, normalize, lemmatize, dedupe by key."""
    src_lem = get_lemmatizer(config.lemmatizer, config.src_lang)
    tgt_lem = get_lemmatizer(config.lemmatizer, config.tgt_lang)
    seen: set = set()
    out: list[PreparedPair] = []
    for p in tqdm(list(pairs), desc="dictionary pairs", unit="pair", file=sys.stderr, disable=not progress):
        if p.source in PLACEHOLDERS or p.target in PLACEHOLDERS:
            counts["placeholder"] += 1
            continue
        if config.drop_identical and normalize_text(p.source).casefold() == normalize_text(p.target).casefold():
            counts["identical_sides"] += 1
            continue
        sl = lemma_tokens(p.source, config.src_lang, src_lem)
        if config.mwe_only and 0 < len(dedup_key(sl)) < 2:
            counts["single_word_source"] += 1
            continue
        tl = lemma_tokens(p.target, config.tgt_lang, tgt_lem)
        key = (dedup_key(sl), dedup_key(tl))
        if not key[0] or not key[1]:
            counts["no_word"] += 1
            continue
        if key in seen:
            counts["duplicate_in_dictionary"] += 1
            continue
        seen.add(key)
        if config.output_form == "lemmas":
            src, tgt = detokenize(sl, config.src_lang), detokenize(tl, config.tgt_lang)
        else:
            src, tgt = normalize_text(p.source), normalize_text(p.target)
        out.append(PreparedPair(src, tgt, p.line, key))
    return out


def training_keys(train: Sequence[tuple[str, str]], candidates: Sequence[PreparedPair],
                  config: DictionaryConfig, progress: bool = True) -> set:
    """Dedup keys of the training pairs that could equal some candidate.

    Only sources no longer (in words) than the longest candidate are lemmatized, each distinct one
    once; the target is lemmatized only when the source key is a candidate's.
    """
    if not candidates:
        return set()
    src_keys = {c.key[0] for c in candidates}
    max_src = max(len(k) for k in src_keys)
    src_lem = get_lemmatizer(config.lemmatizer, config.src_lang)
    tgt_lem = get_lemmatizer(config.lemmatizer, config.tgt_lang)
    by_source: dict[str, list[str]] = {}
    for s, t in train:
        if _word_count(s) <= max_src:
            by_source.setdefault(s, []).append(t)
    keys = set()
    for s, targets in tqdm(by_source.items(), desc="training sources", unit="sent", file=sys.stderr,
                           disable=not progress):
        sk = dedup_key(lemma_tokens(s, config.src_lang, src_lem))
        if sk in src_keys:
            keys.update((sk, dedup_key(lemma_tokens(t, config.tgt_lang, tgt_lem))) for t in targets)
    return keys


def attested(pair: PreparedPair, table, config: DictionaryConfig, lemma=None) -> bool:
    """The sense filter: does ``table`` list an aligned translation of the pair's source MWE that
    contains the pair's translation approximately (`mwemt.preprocess.hints.phrase_match`, with the
    target-language one-word ``lemma`` function)?"""
    from mwemt.preprocess.hints import phrase_match
    from mwemt.testsets.mwe_table import translation_tokens, type_key

    found = table.translations(type_key(pair.source), min_count=config.sense_min_count, sources={"aligned"})
    if not found:
        return False
    target = translation_tokens(pair.target, config.tgt_lang)
    return any(phrase_match(target, e.translation, lemma) is not None for e in found)


@dataclass(frozen=True)
class ContextPair:
    """A pool sentence pair that shows a dictionary pair in context: its 1-based pool line and the
    candidate (index into the candidate list) it shows."""

    source: str
    target: str
    pool_line: int
    candidate: int


def find_context(candidates: Sequence[PreparedPair], pool: Sequence[tuple[str, str]],
                 train: Sequence[tuple[str, str]], config: DictionaryConfig, counts: dict[str, int],
                 progress: bool = True) -> list[ContextPair]:
    """Pool pairs that contain a candidate's source MWE (its lemma key, contiguous, punctuation
    ignored) in the source and its translation (approximately) in the target; pool pairs that share
    a sentence with the training data are skipped. Each pool pair shows at most one candidate (the
    first in candidate order that still has room), each candidate at most
    ``max_sentences_per_pair`` pool pairs. In pool order."""
    from mwemt.preprocess.hints import phrase_match, word_lemma

    src_lem = get_lemmatizer(config.lemmatizer, config.src_lang)
    lemma = word_lemma(get_lemmatizer(config.lemmatizer, config.tgt_lang))
    by_first: dict[str, list[int]] = {}
    for k, c in enumerate(candidates):
        by_first.setdefault(c.key[0][0], []).append(k)
    targets = [tuple(t.casefold() for t in tokenize(normalize_text(c.target), config.tgt_lang)) for c in candidates]
    train_src = {normalize_text(s).casefold() for s, _ in train}
    train_tgt = {normalize_text(t).casefold() for _, t in train}
    used = [0] * len(candidates)
    out: list[ContextPair] = []
    for lineno, (s, t) in enumerate(tqdm(pool, desc="context sentences", unit="pair", file=sys.stderr,
                                         disable=not progress), 1):
        counts["pool_pairs"] += 1
        if normalize_text(s).casefold() in train_src or normalize_text(t).casefold() in train_tgt:
            counts["pool_in_training"] += 1
            continue
        lemmas = dedup_key(lemma_tokens(s, config.src_lang, src_lem))
        tgt_tokens: list[str] | None = None
        chosen = None
        for pos, lem in enumerate(lemmas):
            for k in by_first.get(lem, ()):
                key = candidates[k].key[0]
                if used[k] >= config.max_sentences_per_pair or tuple(lemmas[pos:pos + len(key)]) != key:
                    continue
                if tgt_tokens is None:
                    tgt_tokens = tokenize(normalize_text(t), config.tgt_lang)
                if phrase_match(targets[k], tgt_tokens, lemma) is not None:
                    chosen = k if chosen is None else min(chosen, k)
        if chosen is None:
            continue
        used[chosen] += 1
        out.append(ContextPair(normalize_text(s), normalize_text(t), lineno, chosen))
    counts["pairs_with_context"] = sum(1 for n in used if n)
    counts["context_sentences"] = len(out)
    return out


@dataclass(frozen=True)
class Synthetic:
    """One synthetic pair and where it came from: a dictionary entry (pool_line 0) or a pool sentence pair."""

    source: str
    target: str
    dictionary_line: int
    pool_line: int
    entry: tuple[str, str]


def augment_with_dictionary(dict_path: str | Path, train_prefix: str | Path, out_prefix: str | Path,
                            config: DictionaryConfig, progress: bool = True, *, table=None,
                            table_path: str | Path | None = None, pool_prefix: str | Path | None = None,
                            examples: int = 20) -> dict:
    """Write ``OUT.{src,tgt}`` = training pairs + dictionary pairs, and ``OUT.manifest.json``; return it.

    ``table`` (an `MweTranslationTable`; ``table_path`` names its file in the manifest) for
    ``sense_filter``; ``pool_prefix`` (``PREFIX.SRC`` + ``PREFIX.TGT``, parallel text that is not
    training data) for ``form`` ``sentences``/``both``. The manifest's ``report`` shows the pairs:
    examples, the most frequent MWEs, how many distinct MWE types.
    """
    from collections import Counter

    if config.output_form not in OUTPUT_FORMS:
        raise MwemtError(f"output_form must be one of {', '.join(OUTPUT_FORMS)}, not {config.output_form!r}")
    if config.form not in FORMS:
        raise MwemtError(f"form must be one of {', '.join(FORMS)}, not {config.form!r}")
    if config.sense_filter and table is None:
        raise MwemtError("the sense filter needs an MWE translation table (--table)")
    if config.form != "entries" and pool_prefix is None:
        raise MwemtError(f"form {config.form!r} needs a pool of parallel sentences that are not training data (--pool)")
    if config.max_sentences_per_pair < 1 or config.sense_min_count < 0:
        raise MwemtError("max_sentences_per_pair must be at least 1 and sense_min_count 0 or more")
    check_ratio(config.ratio)
    src_path, tgt_path = corpus_path(train_prefix, config.src_lang), corpus_path(train_prefix, config.tgt_lang)
    pool_paths = [corpus_path(pool_prefix, lang) for lang in (config.src_lang, config.tgt_lang)] \
        if pool_prefix is not None else []
    check_new_prefix(out_prefix, [src_path, tgt_path, dict_path, *pool_paths, *([table_path] if table_path else [])],
                     config.src_lang, config.tgt_lang)
    train = read_corpus(train_prefix, config.src_lang, config.tgt_lang)
    n_requested = requested_pairs(config.ratio, len(train))
    expanded = read_dictionary_pairs(dict_path, config.fmt, config.dict_side)
    counts: dict[str, int] = {"dictionary_rows": len({p.line for p in expanded}),
                              "expanded_pairs": len(expanded), "placeholder": 0, "identical_sides": 0, "no_word": 0,
                              "single_word_source": 0, "duplicate_in_dictionary": 0}
    prepared = prepare_pairs(expanded, config, counts, progress)
    if config.sense_filter:
        from mwemt.preprocess.hints import word_lemma

        lemma = word_lemma(get_lemmatizer(config.lemmatizer, config.tgt_lang))
        kept = [p for p in prepared if attested(p, table, config, lemma)]
        counts["not_attested"] = len(prepared) - len(kept)
        prepared = kept
    in_train = training_keys(train, prepared, config, progress)
    candidates = [p for p in prepared if p.key not in in_train]
    counts["in_training_data"] = len(prepared) - len(candidates)
    counts["unique_candidates"] = len(candidates)
    pool_items: list[Synthetic] = []
    if config.form != "entries":
        pool = read_corpus(pool_prefix, config.src_lang, config.tgt_lang)
        counts.update(pool_pairs=0, pool_in_training=0)
        context = find_context(candidates, pool, train, config, counts, progress)
        pool_items = [Synthetic(x.source, x.target, candidates[x.candidate].line, x.pool_line,
                                (candidates[x.candidate].source, candidates[x.candidate].target)) for x in context]
    items = pool_items
    if config.form != "sentences":
        items = [Synthetic(c.source, c.target, c.line, 0, (c.source, c.target)) for c in candidates] + pool_items
    counts["synthetic_candidates"] = len(items)
    if not items:
        raise MwemtError("no dictionary pair is left after filtering; nothing to add")
    if config.allow_repeat or len(items) >= n_requested:
        choice = choose(len(items), n_requested, config.seed)
    else:   # every candidate once: the shortfall is reported, not filled by repetition
        choice = Choice(list(range(len(items))), "all")
    synthetic = [items[i] for i in choice.indices]
    counts["synthetic_pairs"] = len(synthetic)
    pairs = train + [(x.source, x.target) for x in synthetic]
    outputs = write_corpus(out_prefix, pairs, config.src_lang, config.tgt_lang)
    first = len(train) + 1
    inputs = {"dictionary": dict_path, "train_" + config.src_lang: src_path, "train_" + config.tgt_lang: tgt_path}
    if table_path is not None:
        inputs["table"] = table_path
    if pool_prefix is not None:
        inputs.update({f"pool_{lang}": p for lang, p in zip((config.src_lang, config.tgt_lang), pool_paths)})
    by_entry = Counter(" -> ".join(x.entry) for x in synthetic)
    m = manifest(
        "augment.dictionary",
        inputs=inputs,
        seed=config.seed, config=asdict(config),
        counts=counts,
        ratio={"definition": "synthetic pairs / original training pairs", "requested": config.ratio,
               "training_pairs": len(train), "requested_pairs": n_requested,
               "achieved": round(achieved_ratio(len(synthetic), len(train)), 6),
               "mode": choice.mode, "repeats": choice.repeats, "remainder": choice.remainder,
               "shortfall": max(0, n_requested - len(synthetic))},
        report={"sentence_pairs": sum(1 for x in synthetic if x.pool_line),
                "entry_pairs": sum(1 for x in synthetic if not x.pool_line),
                "distinct_entries": len(by_entry),
                "distinct_source_mwes": len({x.entry[0].casefold() for x in synthetic}),
                "top_entries": dict(by_entry.most_common(20)),
                "examples": [{"source": x.source, "target": x.target, "entry": list(x.entry),
                              "pool_line": x.pool_line}
                             for x in ([x for x in synthetic if x.pool_line] + [x for x in synthetic
                                                                              if not x.pool_line])[:examples]]},
        outputs=outputs,
        synthetic={"first_line": first, "last_line": len(pairs),
                   "fields": ["output_line", "dictionary_line"] + (["pool_line (0: the entry itself)"]
                                                                   if config.form != "entries" else []),
                   "pairs": [[first + k, x.dictionary_line] + ([x.pool_line] if config.form != "entries" else [])
                             for k, x in enumerate(synthetic)]},
    )
    write_json(f"{out_prefix}.manifest.json", m)
    return m
