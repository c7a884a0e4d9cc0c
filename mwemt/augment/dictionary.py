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
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tqdm import tqdm

from mwemt.augment.corpus import check_new_prefix, corpus_path, read_corpus, write_corpus
from mwemt.augment.ratio import achieved_ratio, choose, requested_pairs
from mwemt.errors import MwemtError
from mwemt.formats import detect_lexicon_format, read_lexicon_entries
from mwemt.preprocess.lemmatize import Lemmatizer, get_lemmatizer
from mwemt.preprocess.tokenize import detokenize, tokenize
from mwemt.provenance import manifest, write_json

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


def read_dictionary_pairs(path: str | Path, fmt: str = "auto", dict_side: str = "source") -> list[DictPair]:
    """Expand every dictionary row into its synonym pairs (source split on ``;`` too, for bilingual rows).

    ``dict_side`` says which dictionary column holds the corpus source language: ``source`` (the
    first/English column) or ``target`` (swap the sides). Bad rows raise `InputError` with the line.
    """
    if fmt == "auto":
        fmt = "wn-aligned" if detect_lexicon_format(path) == "wn-aligned" else "bilingual"
    if fmt not in DICT_FORMATS[1:]:
        raise MwemtError(f"unknown dictionary format {fmt!r}; choose one of {', '.join(DICT_FORMATS)}")
    if dict_side not in ("source", "target"):
        raise MwemtError(f"dict_side must be source or target, not {dict_side!r}")
    side = dict_side if fmt == "wn-aligned" else "source"
    entries = read_lexicon_entries(path, fmt, side=side, min_words=1)
    pairs: list[DictPair] = []
    for e in entries:
        sources = [s.strip() for s in e.key.split(";")] if fmt == "bilingual" else [e.key]
        for s in sources:
            for t in e.translations:
                if s and t:
                    pairs.append(DictPair(s, t, e.source_line or 0))
    if fmt == "bilingual" and dict_side == "target":
        pairs = [DictPair(p.target, p.source, p.line) for p in pairs]
    return pairs


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


def augment_with_dictionary(dict_path: str | Path, train_prefix: str | Path, out_prefix: str | Path,
                            config: DictionaryConfig, progress: bool = True) -> dict:
    """Write ``OUT.{src,tgt}`` = training pairs + dictionary pairs, and ``OUT.manifest.json``; return it."""
    if config.output_form not in OUTPUT_FORMS:
        raise MwemtError(f"output_form must be one of {', '.join(OUTPUT_FORMS)}, not {config.output_form!r}")
    src_path, tgt_path = corpus_path(train_prefix, config.src_lang), corpus_path(train_prefix, config.tgt_lang)
    check_new_prefix(out_prefix, [src_path, tgt_path, dict_path], config.src_lang, config.tgt_lang)
    train = read_corpus(train_prefix, config.src_lang, config.tgt_lang)
    n_requested = requested_pairs(config.ratio, len(train))
    expanded = read_dictionary_pairs(dict_path, config.fmt, config.dict_side)
    counts: dict[str, int] = {"dictionary_rows": len({p.line for p in expanded}),
                              "expanded_pairs": len(expanded), "placeholder": 0, "no_word": 0,
                              "single_word_source": 0, "duplicate_in_dictionary": 0}
    prepared = prepare_pairs(expanded, config, counts, progress)
    in_train = training_keys(train, prepared, config, progress)
    candidates = [p for p in prepared if p.key not in in_train]
    counts["in_training_data"] = len(prepared) - len(candidates)
    counts["unique_candidates"] = len(candidates)
    choice = choose(len(candidates), n_requested, config.seed)
    synthetic = [candidates[i] for i in choice.indices]
    counts["synthetic_pairs"] = len(synthetic)
    pairs = train + [(c.source, c.target) for c in synthetic]
    outputs = write_corpus(out_prefix, pairs, config.src_lang, config.tgt_lang)
    first = len(train) + 1
    m = manifest(
        "augment.dictionary",
        inputs={"dictionary": dict_path, "train_" + config.src_lang: src_path,
                "train_" + config.tgt_lang: tgt_path},
        seed=config.seed, config=asdict(config),
        counts=counts,
        ratio={"definition": "synthetic pairs / original training pairs", "requested": config.ratio,
               "training_pairs": len(train), "requested_pairs": n_requested,
               "achieved": round(achieved_ratio(len(synthetic), len(train)), 6),
               "mode": choice.mode, "repeats": choice.repeats, "remainder": choice.remainder},
        outputs=outputs,
        synthetic={"first_line": first, "last_line": len(pairs),
                   "fields": ["output_line", "dictionary_line"],
                   "pairs": [[first + k, c.line] for k, c in enumerate(synthetic)]},
    )
    write_json(f"{out_prefix}.manifest.json", m)
    return m
