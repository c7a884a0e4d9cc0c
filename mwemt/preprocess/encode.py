"""Encode MWEs on the source side, and decode back exactly.

Two encodings, and a control:
- words-with-spaces (``wws``): the tokens of each contiguous MWE become one token joined by
  ``_`` (``walked_off``). Discontinuous MWEs are left as they are (and counted by the caller).
- IOB factors: every token becomes ``surface|lemma|tag`` where the lemma factor is the
  underscore-joined MWE lemma on MWE tokens (``walk_off``) and the word lemma elsewhere; the
  first MWE token is ``B``, later ones ``I``, gap tokens and others ``O``. A gap token that is
  itself part of another MWE (interleaved MWEs share no token, so identification keeps both)
  carries that MWE's lemma factor and tag; the lemma factor says which MWE an ``I`` continues.
  Optionally (``buckets`` > 0) the tag carries the MWE's identification confidence, bucketed:
  ``B2``/``I2`` for the third of three buckets; an MWE without a confidence keeps plain ``B``/``I``.

- constant IOB factors (``iob-constant``): ``surface|-|O`` for every token, the factors of the IOB
  encoding with no information in them. A model trained on it has the IOB model's architecture
  (the same factor tables and embedding sizes) and the baseline's information: the ablation that
  separates what the factors say from what the factored architecture costs.

To make both encodings exactly invertible, ``&``, ``|`` and ``_`` inside a token are escaped
(``&amp;``, ``&#124;``, ``&#95;``), so a literal underscore is never mistaken for a join and a
literal bar never splits factors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mwemt.errors import MwemtError
from mwemt.formats import FACTOR_SEP
from mwemt.records import AnnotatedSentence, Mwe

JOIN = "_"
_ESC = (("&", "&amp;"), ("|", "&#124;"), ("_", "&#95;"))


def escape(token: str) -> str:
    if "&" in token or "|" in token or "_" in token:
        for raw, esc in _ESC:
            token = token.replace(raw, esc)
    return token


def unescape(token: str) -> str:
    if "&" in token:
        for raw, esc in reversed(_ESC):
            token = token.replace(esc, raw)
    return token


# ---------------------------------------------------------------- words with spaces
def encode_wws(sent: AnnotatedSentence) -> tuple[list[str], int]:
    """Join contiguous MWEs with ``_``; returns the tokens and the number of MWEs left unjoined."""
    starts: dict[int, Mwe] = {}
    skipped = 0
    for m in sent.mwes:
        if m.contiguous:
            starts[m.indices[0]] = m
        else:
            skipped += 1
    out: list[str] = []
    i = 0
    n = len(sent.tokens)
    while i < n:
        m = starts.get(i)
        if m is not None:
            out.append(JOIN.join(escape(sent.tokens[j]) for j in m.indices))
            i = m.indices[-1] + 1
        else:
            out.append(escape(sent.tokens[i]))
            i += 1
    return out, skipped


def decode_wws(tokens: Sequence[str]) -> list[str]:
    """Undo `encode_wws`: split joined tokens and unescape."""
    out: list[str] = []
    for tok in tokens:
        out.extend(unescape(part) for part in tok.split(JOIN))
    return out


# ---------------------------------------------------------------- IOB factors
def confidence_bucket(confidence: float | None, buckets: int) -> str:
    """The tag suffix of a confidence: ``""`` (no buckets, or unknown), else ``0`` .. ``buckets-1``."""
    if buckets <= 0 or confidence is None:
        return ""
    return str(min(max(int(confidence * buckets), 0), buckets - 1))


def tag_base(tag: str) -> str:
    """``B``, ``I`` or ``O`` without a confidence bucket (``B2`` -> ``B``)."""
    return tag[0] if len(tag) > 1 and tag[0] in "BI" and tag[1:].isdigit() else tag


def iob_tags(n_tokens: int, mwes: Sequence[Mwe], buckets: int = 0) -> list[tuple[str, str | None]]:
    """Per token: (tag, MWE joined lemma or None); ``buckets`` > 0 appends the confidence bucket."""
    tags: list[tuple[str, str | None]] = [("O", None)] * n_tokens
    for m in mwes:
        joined = escape_lemma(m.lemma)
        bucket = confidence_bucket(m.confidence, buckets)
        for k, i in enumerate(m.indices):
            if tags[i][0] != "O":
                raise ValueError(f"token {i} belongs to two MWEs; resolve overlaps first")
            tags[i] = (("B" if k == 0 else "I") + bucket, joined)
    return tags


def escape_lemma(lemma: str) -> str:
    """An MWE lemma as one factor: components escaped, then joined with ``_``."""
    return JOIN.join(escape(w) for w in lemma.split())


def encode_iob(sent: AnnotatedSentence, buckets: int = 0) -> list[str]:
    """``surface|lemma|tag`` for every token (tags with confidence buckets if ``buckets`` > 0)."""
    tags = iob_tags(len(sent.tokens), sent.mwes, buckets)
    out = []
    for tok, lem, (tag, mwe_lemma) in zip(sent.tokens, sent.lemmas, tags):
        out.append(FACTOR_SEP.join((escape(tok), mwe_lemma if mwe_lemma is not None else escape(lem), tag)))
    return out


CONSTANT_LEMMA = "-"


def encode_constant(sent: AnnotatedSentence) -> list[str]:
    """``surface|-|O`` for every token: IOB-shaped factors that carry nothing (the ``iob-constant`` control)."""
    return [FACTOR_SEP.join((escape(tok), CONSTANT_LEMMA, "O")) for tok in sent.tokens]


def decode_iob(factored: Sequence[str]) -> tuple[list[str], list[Mwe]]:
    """Undo `encode_iob`: the surface tokens and the MWEs read back from tags and lemma factors.

    An ``I`` joins the nearest open MWE with the same lemma factor; an ``I`` with no open MWE
    of its lemma is an error, as is a token without exactly three factors.
    """
    tokens: list[str] = []
    open_: dict[str, list[int]] = {}
    done: list[tuple[str, list[int]]] = []
    for i, item in enumerate(factored):
        parts = item.split(FACTOR_SEP)
        if len(parts) != 3:
            raise ValueError(f"token {i + 1} {item!r} has {len(parts)} factors, expected 3 (surface|lemma|tag)")
        surface, lemma, tag = parts
        tag = tag_base(tag)
        tokens.append(unescape(surface))
        if tag == "B":
            if lemma in open_:
                done.append((lemma, open_.pop(lemma)))
            open_[lemma] = [i]
        elif tag == "I":
            if lemma not in open_:
                raise ValueError(f"token {i + 1} {item!r}: I without a preceding B of the same MWE")
            open_[lemma].append(i)
        elif tag != "O":
            raise ValueError(f"token {i + 1} {item!r}: tag {tag!r} is not B, I or O")
    done.extend(open_.items())
    mwes = [Mwe(tuple(idx), " ".join(unescape(w) for w in lem.split(JOIN))) for lem, idx in done]
    mwes.sort(key=lambda m: m.indices)
    return tokens, mwes


def check_iob(tags: Sequence[str], lemma_factors: Sequence[str]) -> None:
    """Raise ValueError unless every I continues an MWE (same lemma factor) begun by a B."""
    open_: set[str] = set()
    for i, (tag, lem) in enumerate(zip(tags, lemma_factors)):
        tag = tag_base(tag)
        if tag == "B":
            open_.add(lem)
        elif tag == "I" and lem not in open_:
            raise ValueError(f"position {i + 1}: I of {lem!r} follows no B of the same MWE")
        elif tag not in ("B", "I", "O"):
            raise ValueError(f"position {i + 1}: bad tag {tag!r}")


# ---------------------------------------------------------------- inline target hints (the encoding)
# Which hints a sentence gets, and from where, is `mwemt.preprocess.hints`; how they are written is here.

HINT_ENCODINGS: dict[str, str] = {"hints": "surface", "hints-lemma": "lemma"}   # encoding -> hint form
PLAIN, SOURCE_MWE, HINT = "0", "1", "2"   # the hint factor: plain word, word of a hinted MWE, hint word
GAP = "..."                               # a gap in a translation (never written as a hint word)


def insert_hints(sent: AnnotatedSentence, hints: Mapping[int, Sequence[str]]) -> list[str]:
    """The factored tokens of ``sent`` with ``hints`` (MWE index in ``sent.mwes`` -> hint tokens):
    ``word|0`` for plain words, ``word|1`` for the words of a hinted MWE, the hint's words as
    ``word|2`` right after the MWE's last word. Tokens are escaped (`mwemt.preprocess.encode`)."""
    marked: dict[int, str] = {}
    after: dict[int, list[str]] = {}
    for k, tokens in hints.items():
        if not 0 <= k < len(sent.mwes):
            raise MwemtError(f"hint for MWE {k}, but the sentence has {len(sent.mwes)} MWE(s)")
        words = [t for t in tokens if t != GAP and t.strip()]
        if not words:
            continue
        mwe = sent.mwes[k]
        for i in mwe.indices:
            marked[i] = SOURCE_MWE
        after.setdefault(mwe.indices[-1], []).extend(words)
    out: list[str] = []
    for i, tok in enumerate(sent.tokens):
        out.append(f"{escape(tok)}{FACTOR_SEP}{marked.get(i, PLAIN)}")
        out.extend(f"{escape(w)}{FACTOR_SEP}{HINT}" for w in after.get(i, ()))
    return out


def plain_factored(sent: AnnotatedSentence) -> list[str]:
    """The sentence as a hint model reads it without hints: every word ``word|0``."""
    return insert_hints(sent, {})
