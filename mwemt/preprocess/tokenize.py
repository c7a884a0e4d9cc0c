"""Tokenization and detokenization with sacremoses (Moses rules), one instance per language.

We never use Moses' XML escaping (`&apos;` ...): tokens stay as written. Escaping needed by a
format (the `|` of factored lines) is done by that format's writer.
"""

from __future__ import annotations

from functools import cache

from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer


@cache
def _tokenizer(lang: str) -> MosesTokenizer:
    tok = MosesTokenizer(lang=lang)
    # sacremoses rebuilds a set of every lowercase (alphabetic) Unicode character on each call of these
    # two checks (once per token ending in "."): a third of the tokenizing time on Wikipedia text. Same
    # answers from sets built once.
    lower, alpha = frozenset(tok.IsLower), frozenset(tok.IsAlpha)
    tok.islower = lambda text: lower.issuperset(text)
    tok.isanyalpha = lambda text: not alpha.isdisjoint(text)
    return tok


@cache
def _detokenizer(lang: str) -> MosesDetokenizer:
    return MosesDetokenizer(lang=lang)


@cache
def _normalizer(lang: str) -> MosesPunctNormalizer:
    return MosesPunctNormalizer(lang=lang)


def tokenize(text: str, lang: str = "en", *, normalize: bool = False, aggressive_dash: bool = False) -> list[str]:
    """Split raw text into Moses tokens (no escaping); returns [] for blank text."""
    if normalize:
        text = _normalizer(lang).normalize(text)
    if not text.strip():
        return []
    return _tokenizer(lang).tokenize(text, escape=False, aggressive_dash_splits=aggressive_dash)


# Italian apocopes written with an apostrophe ("un po' di", "a mo' di"): Moses splits the apostrophe
# off and its detokenizer then glues it to the next word ("po 'di"); we glue it back to the word.
_APOCOPES = {"it": {"po", "mo", "be", "to"}}
_HIDDEN_APOSTROPHE = "\ue000"  # a private-use character no text contains


def detokenize(tokens: list[str], lang: str = "en") -> str:
    apocopes = _APOCOPES.get(lang)
    if apocopes and "'" in tokens:
        merged: list[str] = []
        for tok in tokens:
            if tok == "'" and merged and merged[-1].lower() in apocopes:
                merged[-1] += _HIDDEN_APOSTROPHE  # hidden from Moses' elision rule, restored below
            else:
                merged.append(tok)
        return _detokenizer(lang).detokenize(merged).replace(_HIDDEN_APOSTROPHE, "'")
    return _detokenizer(lang).detokenize(tokens)


def split_apostrophes(tokens: list[str]) -> list[str]:
    """Split elided forms on apostrophes ("dell'acqua" -> "dell'", "acqua").

    Moses keeps Italian/French elisions as one token; metrics comparing words want them apart.
    """
    out: list[str] = []
    for tok in tokens:
        rest = tok
        while True:
            cut = -1
            for ch in ("'", "\u2019"):
                k = rest.find(ch)
                if 0 < k < len(rest) - 1 and (cut < 0 or k < cut):
                    cut = k
            if cut < 0:
                out.append(rest)
                break
            out.append(rest[: cut + 1])
            rest = rest[cut + 1:]
    return out
