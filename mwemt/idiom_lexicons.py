"""Idiom resources read as MWE lexicons, in the formats their authors publish.

Why: idiom lists are the natural target-language MWE lexicons of the TESLA-like metrics and of
annotation, and the two we use ship in formats of their own; reading them as published spares
users a conversion that would quietly lose entries (a Turtle file read as a plain list yields
prefixes and blank lines as "MWEs"). `mwemt.formats.read_lexicon_entries` dispatches here.

- ``lidioms``: LIdioms (Moussallem et al. 2018), OntoLex-Lemon Turtle. Each
  ``ontolex:LexicalEntry`` has a canonical form whose ``ontolex:writtenRep`` is the idiom with a
  language tag (``"um den heißen brei herumreden"@de``); definitions in other languages ride
  along and are ignored. The file is parsed with rdflib; entries are taken in one language.
- ``epie``: EPIE (Saxena & Paul 2020): ``Formal_idioms.txt`` and ``Static_idioms.txt``, one idiom
  per line, formal idioms with slots (``keep [pron] eye on``, an optional ``(somebody)``), and
  beside each list an instance corpus ``<Kind>_Idioms_Corpus/<Kind>_Idioms_{Words,Tags,Candidates}.txt``
  (sentences, BIO tags of the idiom span, the idiom of each sentence). Counts come from the
  instances; a formal idiom with slots becomes the forms attested in its instances (``keep an
  eye on``, ``keeps an eye on``...), as a slot cannot be matched as a word.

Both drop the placeholders that stand for an argument (``jdm``, ``someone's``, ``[pron]``...):
they never occur as such in text. Trailing sentence punctuation of proverbs (``eile mit weile.``)
goes too, so that the idiom matches mid-sentence.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from mwemt.errors import InputError
from mwemt.fileio import iter_lines
from mwemt.records import LexiconEntry

ONTOLEX = "http://www.w3.org/ns/lemon/ontolex#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LIDIOMS_CATEGORY = "idiom"

# Words that stand for an argument of the idiom, per language (lowercase, as LIdioms writes them).
PLACEHOLDERS = {
    "de": {"jdm", "jdn", "jds", "jd", "jemandem", "jemanden", "jemandes", "jemand", "etw", "etwas"},
    "en": {"someone", "someone's", "somebody", "somebody's", "something", "something's", "one's", "oneself",
           "sb", "sth"},
    "it": {"qualcuno", "qualcosa", "qcn", "qlcu", "qc", "qlco"},
    "pt": {"alguém", "algo", "fulano"},
}
_TRAILING_PUNCT = re.compile(r"[\s.!?…;:,]+$")
_EPIE_SLOT = re.compile(r"^\(?\[[^\]]*\]\)?$|^\([^)]*\)$")  # [pron], ([pron]), (somebody)
EPIE_LIST = re.compile(r"(?i)^(formal|static)_idioms\.txt$")


def idiom_words(text: str, lang: str | None) -> tuple[str, ...]:
    """An idiom's words: trailing sentence punctuation and argument placeholders removed."""
    drop = PLACEHOLDERS.get((lang or "").split("-")[0].lower(), set())
    words = _TRAILING_PUNCT.sub("", text.strip()).split()
    return tuple(w for w in words if w.lower() not in drop and not _EPIE_SLOT.match(w))


# ---------------------------------------------------------------- LIdioms (OntoLex-Lemon Turtle)


def lidioms_written_forms(path: str | Path) -> dict[str, list[str]]:
    """Language tag -> the written forms of every lexical entry's canonical form, in a stable order."""
    try:
        import rdflib
    except ImportError:  # pragma: no cover - rdflib is a dependency
        raise InputError("reading Turtle needs rdflib", path, expected="`pip install rdflib`") from None
    from rdflib.plugins.parsers.notation3 import BadSyntax

    expected = "an OntoLex-Lemon Turtle file such as LIdioms' german.ttl"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read Turtle: {exc.strerror}", path, expected="a readable Turtle file") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}", path, data[:exc.start].count(b"\n") + 1,
                         expected="a UTF-8 Turtle file") from None
    graph = rdflib.Graph()
    try:
        graph.parse(data=text, format="turtle", publicID=Path(path).resolve().as_uri())
    except BadSyntax as exc:
        why = exc.args[-1] if exc.args else "bad syntax"  # rdflib's own message spans several lines
        # the error's character offset gives its line; rdflib's own `lines` count can overshoot
        offset = getattr(exc, "_i", None)
        line = text[:offset].count("\n") + 1 if isinstance(offset, int) else exc.lines + 1
        raise InputError(f"not valid Turtle: {why}", path, min(line, text.count("\n") + 1),
                         expected=expected) from None
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - rdflib fails on some garbage with IndexError, ValueError...
        raise InputError(f"not valid Turtle (the parser gave up without a position: {type(exc).__name__}: {exc})",
                         path, expected=expected) from None
    ontolex = rdflib.Namespace(ONTOLEX)
    forms: dict[str, set[str]] = defaultdict(set)
    for entry in graph.subjects(rdflib.URIRef(RDF_TYPE), ontolex.LexicalEntry):
        for form in graph.objects(entry, ontolex.canonicalForm):
            for rep in graph.objects(form, ontolex.writtenRep):
                if isinstance(rep, rdflib.Literal):
                    forms[rep.language or ""].add(str(rep))
    return {lang: sorted(texts) for lang, texts in forms.items()}


def read_lidioms(path: str | Path, lang: str | None = None, min_words: int = 2) -> Iterator[LexiconEntry]:
    """LIdioms entries in ``lang`` (the file's only language when None), placeholders dropped."""
    forms = lidioms_written_forms(path)
    if not forms:
        raise InputError("no ontolex:LexicalEntry with a canonical form and a written representation", path,
                         expected="an OntoLex-Lemon lexicon such as LIdioms (a .ttl file of another kind "
                                  "is no lexicon)")
    if lang is None:
        if len(forms) > 1:
            raise InputError(f"idioms in several languages ({', '.join(sorted(forms))})", path,
                             expected="a language to take the idioms of")
        lang = next(iter(forms))
    base = lang.split("-")[0].lower()
    texts = forms.get(lang) or [t for tag, ts in forms.items() if tag.split("-")[0].lower() == base for t in ts]
    if not texts:
        raise InputError(f"no idioms in language {lang!r}", path,
                         expected=f"one of the languages the file has: {', '.join(sorted(forms)) or 'none'}")
    for text in sorted(set(texts)):
        words = idiom_words(text, lang)
        if len(words) >= min_words:
            yield LexiconEntry(words, category=LIDIOMS_CATEGORY)


# ---------------------------------------------------------------- EPIE (idiom lists and instances)


def epie_lists(path: str | Path) -> list[Path]:
    """The idiom lists meant by ``path``: an EPIE directory's lists, or the one list named."""
    p = Path(path)
    if p.is_dir():
        lists = sorted(f for f in p.iterdir() if EPIE_LIST.match(f.name))
        if not lists:
            raise InputError("no Formal_idioms.txt or Static_idioms.txt in this directory", p,
                             expected="the EPIE directory, or one of its idiom lists")
        return lists
    if not EPIE_LIST.match(p.name):
        raise InputError("not an EPIE idiom list", p, expected="Formal_idioms.txt, Static_idioms.txt or their directory")
    return [p]


def _epie_instances(list_path: Path) -> dict[str, Counter]:
    """Idiom (as in the list) -> attested span forms (lowercased) -> count, from the instance corpus."""
    kind = list_path.name.split("_")[0].capitalize()
    stem = list_path.parent / f"{kind}_Idioms_Corpus" / f"{kind}_Idioms_"
    files = [Path(f"{stem}{part}.txt") for part in ("Candidates", "Words", "Tags")]
    if not all(f.exists() for f in files):
        return {}
    forms: dict[str, Counter] = defaultdict(Counter)
    streams = [iter_lines(f) for f in files]
    for lineno, (idiom, words, tags) in enumerate(zip(*streams), 1):
        if not idiom.strip():
            continue
        toks, labels = words.split(" "), tags.split(" ")
        if len(toks) != len(labels):
            raise InputError(f"{len(toks)} words but {len(labels)} tags", files[2], lineno,
                             expected="one BIO tag per space-separated word of the Words file")
        span = [t for t, lab in zip(toks, labels) if lab in ("B-IDIOM", "I-IDIOM")]
        if span:
            forms[idiom.strip()][" ".join(span).lower()] += 1
    return forms


def read_epie(path: str | Path, min_words: int = 2) -> Iterator[LexiconEntry]:
    """EPIE idioms with instance counts; slotted formal idioms as their attested forms."""
    for list_path in epie_lists(path):
        category = f"idiom-{list_path.name.split('_')[0].lower()}"
        instances = _epie_instances(list_path)
        for lineno, line in enumerate(iter_lines(list_path), 1):
            idiom = line.strip()
            if not idiom:
                continue
            # the corpus sometimes names an idiom without its slots ("bring to knees")
            attested = instances.get(idiom) or instances.get(" ".join(idiom_words(idiom, "en")), Counter())
            slotted = any(_EPIE_SLOT.match(w) for w in idiom.split())
            if slotted and attested:
                for form, n in sorted(attested.items(), key=lambda kv: (-kv[1], kv[0])):
                    words = idiom_words(form, None)  # real text: no placeholder to drop
                    if len(words) >= min_words:
                        yield LexiconEntry(words, category, count=n, source_line=lineno)
                continue
            words = idiom_words(idiom, "en")
            if len(words) >= min_words:
                yield LexiconEntry(words, category, count=sum(attested.values()), source_line=lineno)
