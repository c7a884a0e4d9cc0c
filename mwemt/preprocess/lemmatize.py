"""Lemmatization behind one interface.

Backends, all offline:
- ``simplemma`` (default): dictionary lookup for 50+ languages, no POS needed.
- ``wordnet``: NLTK's WordNet lemmatizer (English) when WordNet is installed; uses POS tags
  when given (UPOS or Penn), otherwise tries noun, then verb, adjective, adverb.
- ``spacy``: a spaCy pipeline, when one is installed (never downloaded).
- ``none``: lowercased surface forms.

Every backend returns lowercased lemmas, so lexicon matching is case-insensitive.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, lru_cache

from mwemt.errors import MwemtError

BACKENDS = ("simplemma", "wordnet", "spacy", "none")


class Lemmatizer:
    name = "base"

    def __init__(self, lang: str = "en"):
        self.lang = lang

    def lemmatize(self, tokens: Sequence[str], pos: Sequence[str] | None = None) -> list[str]:
        raise NotImplementedError

    def lemma(self, token: str, pos: str | None = None) -> str:
        return self.lemmatize([token], [pos] if pos else None)[0]

    @property
    def signature(self) -> str:
        return f"{self.name}:{self.lang}"


class NoLemmatizer(Lemmatizer):
    name = "none"

    def lemmatize(self, tokens, pos=None):
        return [t.lower() for t in tokens]


class SimplemmaLemmatizer(Lemmatizer):
    name = "simplemma"

    def __init__(self, lang: str = "en"):
        super().__init__(lang)
        import simplemma

        self._simplemma = simplemma
        try:
            simplemma.lemmatize("test", lang=lang)
        except Exception as exc:
            raise MwemtError(f"simplemma does not support language {lang!r}: {exc}") from None
        self._cached = lru_cache(maxsize=1 << 18)(self._one)

    def _one(self, token: str) -> str:
        return self._simplemma.lemmatize(token, lang=self.lang).lower()

    def lemmatize(self, tokens, pos=None):
        f = self._cached
        return [f(t) for t in tokens]


_UPOS_TO_WN = {"NOUN": "n", "PROPN": "n", "VERB": "v", "AUX": "v", "ADJ": "a", "ADV": "r"}


def wordnet_pos(tag: str | None) -> str | None:
    """Map a UPOS or Penn tag to a WordNet POS letter (None when it has none)."""
    if not tag:
        return None
    if tag in _UPOS_TO_WN:
        return _UPOS_TO_WN[tag]
    t = tag.upper()
    if t.startswith("NN"):
        return "n"
    if t.startswith("VB") or t == "MD":
        return "v"
    if t.startswith("JJ"):
        return "a"
    if t.startswith("RB"):
        return "r"
    return None


class WordnetLemmatizer(Lemmatizer):
    name = "wordnet"

    def __init__(self, lang: str = "en"):
        if lang != "en":
            raise MwemtError("the wordnet lemmatizer is for English only; use the simplemma lemmatizer")
        super().__init__(lang)
        from mwemt import wordnet

        if not wordnet.available():
            wordnet.install()
        if not wordnet.available():
            raise MwemtError("NLTK cannot find WordNet: install Debian's wordnet-base and run "
                             "'python -m mwemt.wordnet' (scripts/install.sh does both)")
        from nltk.stem import WordNetLemmatizer as _W

        self._wnl = _W()
        self._cached = lru_cache(maxsize=1 << 18)(self._one)

    def _one(self, token: str, wpos: str | None) -> str:
        low = token.lower()
        if wpos:
            return self._wnl.lemmatize(low, wpos)
        for p in ("n", "v", "a", "r"):
            lem = self._wnl.lemmatize(low, p)
            if lem != low:
                return lem
        return low

    def lemmatize(self, tokens, pos=None):
        if pos is None:
            return [self._cached(t, None) for t in tokens]
        return [self._cached(t, wordnet_pos(p)) for t, p in zip(tokens, pos)]


class SpacyLemmatizer(Lemmatizer):
    name = "spacy"

    def __init__(self, lang: str = "en", model: str | None = None):
        super().__init__(lang)
        try:
            import spacy
        except ImportError:
            raise MwemtError("spaCy is not installed (pip install spacy and a pipeline package)") from None
        model = model or {"en": "en_core_web_sm", "it": "it_core_news_sm"}.get(lang, f"{lang}_core_news_sm")
        try:
            self._nlp = spacy.load(model, disable=["parser", "ner"])
        except OSError:
            raise MwemtError(f"spaCy pipeline {model!r} is not installed; mwemt never downloads one") from None
        self.model = model

    def lemmatize(self, tokens, pos=None):
        from spacy.tokens import Doc

        doc = Doc(self._nlp.vocab, words=list(tokens))
        for _, proc in self._nlp.pipeline:
            doc = proc(doc)
        return [t.lemma_.lower() or t.text.lower() for t in doc]

    @property
    def signature(self) -> str:
        return f"spacy:{self.model}"


@cache
def get_lemmatizer(name: str = "simplemma", lang: str = "en") -> Lemmatizer:
    """The lemmatizer called ``name`` for ``lang`` (cached: one instance per process)."""
    if name == "simplemma":
        return SimplemmaLemmatizer(lang)
    if name == "wordnet":
        return WordnetLemmatizer(lang)
    if name == "spacy":
        return SpacyLemmatizer(lang)
    if name == "none":
        return NoLemmatizer(lang)
    raise MwemtError(f"unknown lemmatizer {name!r}; choose one of {', '.join(BACKENDS)}")
