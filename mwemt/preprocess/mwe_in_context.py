"""Is a table match an MWE here? Look-alike rules plus the MWE-in-context classifier at a recall-first threshold.

Judged constraints force a translation on every table match they accept. The MWE-in-context classifier
(`mwemt.preprocess.mwe_context`, tuned for 75% exact precision) keeps too few of them (on the MWE test,
402 of 1,200 items through the constraint look-up, which gives its table keys no category), and without it
the look-alikes are forced: *going to* + verb as *andare*, *on it*, *some other*, *clock on*, *matter to*.
`InContextDecision` keeps a match unless

1. a **look-alike rule** fires on the occurrence (`RULES`, each a named function of the sentence's forms and
   lemmas, the match and its lexicon entry):

   - ``to-infinitive``: an entry ending in *to* followed by a base-form verb (*going to win*, *came to save*,
     *a matter to attend to*): the *to* is an infinitive marker, not the entry's preposition;
   - ``particle-pronoun``: a particle and an object pronoun (*on it*, *at it*, *with it*) not after a form of
     *be* (*I'm on it* stays);
   - ``determiner-sequence``: bare determiners only (*some other*, *many another*) before a content word,
     whose determiners they are (with an article, *a few*, *many a*, the quantifier is lexicalized);
   - ``noun-reading``: a verb-and-particle entry whose verb follows an article or possessive (*the clock
     on*, *the matter to you*, *a call for help*): the verb is a noun here;

2. or the classifier's P(MWE reading), with the entry's OEWN category restored (the constraint look-up reads
   table keys, which carry none), is below ``threshold``, a **recall-first** threshold tuned on the
   classifier's own annotated training data (DiMSUM train and the PARSEME EN training split, never a test):
   the highest that keeps ``target_recall`` of the annotated MWEs the rules let through
   (`tune_threshold`, leave-one-out entry statistics).

A base-form verb is a word that follows a modal (*will*, *can*, *don't*, ...) in at least `VERB_RATE` of
its occurrences in a raw English corpus (`VerbForms.from_corpus`).

The model is one JSON file (`InContextDecision.save`; the bundled one, `BUNDLED`, is written by
``scripts/train_mwe_in_context.py``) holding the rules' word lists, the verb forms, the entry categories, the
threshold and its provenance; it names the classifier it wraps by signature and loads the bundled one.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.preprocess.filters import JudgingModel
from mwemt.records import Mwe

KIND = "mwemt-mwe-in-context"
VERSION = 1
FILTER = "mwe-context"
BUNDLED = Path(__file__).resolve().parents[1] / "data" / "identification" / "oewn-en.in-context.json.gz"

# a word is a base-form verb when at least this share of its corpus occurrences follows a modal (measured
# on 200k lines of English Wikipedia: verbs 0.02-0.5 (work 0.019, sleep 0.033), nouns under 0.003)
VERB_RATE = 0.01
VERB_MIN = 2
MODALS = frozenset({"will", "would", "can", "could", "should", "must", "might", "may", "shall", "'ll", "'d"})
DO_FORMS = frozenset({"do", "does", "did", "ca", "wo"}) | MODALS
BE_FORMS = frozenset({"be", "am", "is", "are", "was", "were", "been", "being", "'s", "'re", "'m"})
OBJECT_PRONOUNS = frozenset({"it", "them", "him", "her", "me", "us", "you", "this", "that"})
PARTICLES = frozenset({"on", "at", "in", "with", "to", "for", "of", "by", "about", "up", "off", "out", "over", "into",
                       "onto", "from", "after", "around", "through", "down"})
DETERMINERS = frozenset({"some", "other", "any", "another", "each", "every", "no", "such", "a", "an", "the", "all",
                         "both", "either", "neither", "many", "much", "few", "several", "what", "which"})
# articles and possessives: a verb right after one is a noun (this/that/these/those left out: they are often
# subjects, "that matters to me")
NOUN_MARKERS = frozenset({"the", "a", "an", "my", "your", "his", "her", "its", "our", "their", "no", "every", "each",
                          "another"})
ARTICLES = frozenset({"a", "an", "the"})
# closed-class words that follow modals too (inverted questions "can you", adverbs "will also") but are no verbs
NOT_VERBS = frozenset({"i", "you", "he", "she", "it", "we", "they", "there", "this", "that", "not", "no", "'t", "also",
                       "only", "then", "even", "now", "still", "thus", "either", "just", "rather", "instead", "never",
                       "always", "soon", "therefore", "later", "often", "sometimes", "already", "yet", "ever", "again",
                       "so", "too", "all", "both", "each", "perhaps", "hardly", "first", "once", "well", "better",
                       "best", "anyone", "someone", "somebody", "anybody", "one", "nothing", "something", "anything"})
INFINITIVE_ENTRIES = frozenset({"wont to", "out to"})   # entries whose "to" takes an infinitive


class VerbForms:
    """The words that are base-form verbs (`VERB_RATE` of their occurrences after a modal)."""

    def __init__(self, words: Iterable[str]):
        self.words = frozenset(words)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.casefold() in self.words

    @classmethod
    def from_corpus(cls, sentences: Iterable[Sequence[str]]) -> VerbForms:
        """From tokenized sentences: the words after a modal (*can go*, *don't go*, *will not go*) in at least
        `VERB_RATE` of their occurrences, at least `VERB_MIN` times; not the closed-class words that also
        follow modals (`NOT_VERBS`: pronouns of inverted questions, adverbs) nor adverbs in -ly."""
        total: Counter = Counter()
        after: Counter = Counter()
        for tokens in sentences:
            low = [t.casefold() for t in tokens]
            for i, w in enumerate(low):
                total[w] += 1
                p = low[i - 1] if i else ""
                pp = low[i - 2] if i > 1 else ""
                if p in MODALS or (p in ("n't", "not") and pp in DO_FORMS):
                    after[w] += 1
        return cls(w for w, n in after.items()
                   if n >= VERB_MIN and n / total[w] >= VERB_RATE and w.isalpha() and w not in NOT_VERBS
                   and not w.endswith("ly"))


# ---------------------------------------------------------------- the look-alike rules


def _entry_words(m: Mwe) -> list[str]:
    return m.lemma.casefold().split()


def _to_infinitive(m: Mwe, forms, lemmas, categories, verbs) -> bool:
    words = _entry_words(m)
    nxt = m.indices[-1] + 1
    return (words[-1] == "to" and m.lemma.casefold() not in INFINITIVE_ENTRIES and nxt < len(forms)
            and forms[nxt].casefold() in verbs)


def _particle_pronoun(m: Mwe, forms, lemmas, categories, verbs) -> bool:
    words = _entry_words(m)
    if len(words) != 2 or words[0] not in PARTICLES or words[1] not in OBJECT_PRONOUNS:
        return False
    prev = m.indices[0] - 1
    return not (prev >= 0 and forms[prev].casefold() in BE_FORMS)


def _determiner_sequence(m: Mwe, forms, lemmas, categories, verbs) -> bool:
    words = _entry_words(m)
    if not all(w in DETERMINERS for w in words) or any(w in ARTICLES for w in words):
        return False   # with an article (a few, many a) the quantifier is lexicalized
    nxt = m.indices[-1] + 1
    return nxt < len(forms) and any(c.isalpha() for c in forms[nxt]) and forms[nxt].casefold() not in DETERMINERS


def _noun_reading(m: Mwe, forms, lemmas, categories, verbs) -> bool:
    words = _entry_words(m)
    cats = categories.get(m.lemma.casefold(), ())
    if len(words) != 2 or words[1] not in PARTICLES or not cats or not all(c.startswith("verb.") for c in cats):
        return False   # a verb and its particle or preposition (clock on, call for), as OEWN lists it
    i = m.indices[0]
    return i >= 1 and forms[i - 1].casefold() in NOUN_MARKERS


# rule name -> does it fire on (match, forms, lemmas, categories by entry, verb forms)
RULES: Mapping[str, Callable[..., bool]] = {
    "to-infinitive": _to_infinitive,
    "particle-pronoun": _particle_pronoun,
    "determiner-sequence": _determiner_sequence,
    "noun-reading": _noun_reading,
}


def fired_rules(m: Mwe, forms: Sequence[str], lemmas: Sequence[str], categories: Mapping[str, Sequence[str]],
                verbs: VerbForms, rules: Sequence[str] = tuple(RULES)) -> list[str]:
    """The look-alike rules that fire on one match."""
    return [name for name in rules if RULES[name](m, forms, lemmas, categories, verbs)]


# ---------------------------------------------------------------- the decision


class _Thresholds:
    """What `JudgingModel` reads: the threshold, the overlap rule and the active filters."""

    def __init__(self, threshold: float, rules: Sequence[str]):
        self.min_probability = threshold
        self.overlap = "confident"
        self.max_gap = 0
        self.rules = tuple(rules)

    @property
    def active(self) -> tuple[str, ...]:
        return tuple(f"lookalike:{r}" for r in self.rules) + ((FILTER,) if self.min_probability > 0 else ())

    def describe(self) -> str:
        return f"rules={','.join(self.rules) or 'none'}, P(MWE in context)>={self.min_probability:g}"


class InContextDecision(JudgingModel):
    """Look-alike rules, then the MWE-in-context classifier at ``threshold`` (module docstring). A kept match
    carries P(MWE) as its confidence; a rejected one names the rule (``lookalike:NAME``) or ``mwe-context``."""

    KIND = KIND
    VERSION = VERSION
    SIGNATURE = "mwe-in-context"
    CONFIDENCE = "mwe-reading"
    any_order = False

    def __init__(self, classifier, categories: Mapping[str, Sequence[str]], verbs: VerbForms, threshold: float,
                 rules: Sequence[str] = tuple(RULES), meta: Mapping | None = None):
        if not 0.0 <= threshold <= 1.0 or not math.isfinite(threshold):
            raise MwemtError(f"the MWE-in-context threshold must be in [0, 1], not {threshold}")
        unknown = [r for r in rules if r not in RULES]
        if unknown:
            raise MwemtError(f"unknown look-alike rule(s) {', '.join(unknown)}; known: {', '.join(RULES)}")
        self.classifier = classifier
        self.categories = {k.casefold(): tuple(v) for k, v in categories.items()}
        self.verbs = verbs
        self.threshold = float(threshold)
        self.rules = tuple(rules)
        self.thresholds = _Thresholds(self.threshold, self.rules)
        self.entries: dict = {}
        self.meta = dict(meta or {})

    def with_categories(self, candidates: Sequence[Mwe]) -> list[Mwe]:
        """The candidates with their entry's first OEWN category where they have none."""
        out = []
        for m in candidates:
            cats = self.categories.get(m.lemma.casefold())
            out.append(replace(m, category=cats[0]) if cats and not m.category else m)
        return out

    def probabilities(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str]) -> np.ndarray:
        if not candidates:
            return np.zeros(0)
        return self.classifier.probabilities(self.with_categories(candidates), forms, lemmas)

    def judge(self, m: Mwe, forms, lemmas, heads=None) -> tuple[str | None, float | None]:
        kept, rejected = self.apply([m], forms, lemmas, heads)
        return (None, kept[0].confidence) if kept else (rejected[0][1], None)

    def apply(self, candidates: Sequence[Mwe], forms: Sequence[str], lemmas: Sequence[str],
              heads: Sequence[int] | None = None) -> tuple[list[Mwe], list[tuple[Mwe, str]]]:
        probs = self.probabilities(candidates, forms, lemmas)
        kept: list[Mwe] = []
        rejected: list[tuple[Mwe, str]] = []
        for m, p in zip(candidates, probs):
            m = replace(m, confidence=round(float(p), 4))
            fired = fired_rules(m, forms, lemmas, self.categories, self.verbs, self.rules)
            if fired:
                rejected.append((m, f"lookalike:{fired[0]}"))
            elif p < self.threshold:
                rejected.append((m, FILTER))
            else:
                kept.append(m)
        return kept, rejected

    def without(self, names: Iterable[str]) -> InContextDecision:
        names = set(names)
        rules = [r for r in self.rules if f"lookalike:{r}" not in names]
        threshold = 0.0 if FILTER in names else self.threshold
        return InContextDecision(self.classifier, self.categories, self.verbs, threshold, rules, self.meta)

    def with_threshold(self, threshold: float) -> InContextDecision:
        return InContextDecision(self.classifier, self.categories, self.verbs, threshold, self.rules, self.meta)

    def describe(self) -> dict:
        return {"signature": self.signature, "settings": self.thresholds.describe(),
                "classifier": self.classifier.signature, "verb_forms": len(self.verbs.words),
                "categories": len(self.categories), **{k: v for k, v in self.meta.items() if k == "tuning"}}

    # ------------------------------------------------------------ the saved artifact
    def content(self) -> dict:
        return {"thresholds": {"threshold": self.threshold, "rules": list(self.rules)},
                "entries": {}, "classifier": self.classifier.signature,
                "verb_forms": sorted(self.verbs.words),
                "categories": _by_category(self.categories)}

    def save(self, path: str | Path) -> None:
        """JSON, gzip-compressed when ``path`` ends in .gz; written atomically."""
        from mwemt.fileio import atomic_write

        text = json.dumps(self.to_json(), ensure_ascii=False)
        if str(path).endswith(".gz"):
            with atomic_write(path, "wb") as fh:
                fh.write(gzip.compress(text.encode("utf-8"), mtime=0))
        else:
            with atomic_write(path) as fh:
                fh.write(text + "\n")

    @classmethod
    def load(cls, path: str | Path, classifier=None) -> InContextDecision:
        """Read a saved decision; ``classifier`` (default: the bundled MWE-in-context model) must be the one
        it names."""
        from mwemt.preprocess.mwe_context import bundled_model

        p = Path(path)
        if not p.is_file():
            raise InputError("MWE-in-context decision not found", p,
                             expected="a model written by scripts/train_mwe_in_context.py")
        try:
            raw = p.read_bytes()
            obj = json.loads((gzip.decompress(raw) if str(p).endswith(".gz") else raw).decode("utf-8"))
        except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"not a JSON model: {exc}", p) from None
        if not isinstance(obj, dict) or obj.get("kind") != KIND or obj.get("version") != VERSION:
            raise InputError(f"not an MWE-in-context decision version {VERSION}", p, expected=f'"kind": "{KIND}"')
        classifier = classifier or bundled_model()
        try:
            if obj["classifier"] != classifier.signature:
                raise ValueError(f"it wraps classifier {obj['classifier']}, not {classifier.signature}")
            meta = {k: v for k, v in obj.items()
                    if k not in ("kind", "version", "thresholds", "entries", "classifier", "verb_forms", "categories")}
            return cls(classifier, _by_entry(obj["categories"]),
                       VerbForms(str(w) for w in obj["verb_forms"]), float(obj["thresholds"]["threshold"]),
                       tuple(obj["thresholds"]["rules"]), meta)
        except (KeyError, TypeError, ValueError, AttributeError, MwemtError) as exc:
            raise InputError(f"malformed MWE-in-context decision ({type(exc).__name__}: {exc})", p) from None


def _by_category(categories: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """entry -> categories as category -> entries (each entry's categories in order: "a" before "b" when the
    entry is listed under "a" first; stored as [[category, [entry, ...]], ...] by rank)."""
    out: dict[str, list[str]] = {}
    for key, cats in sorted(categories.items()):
        for rank, c in enumerate(cats):
            out.setdefault(f"{rank}:{c}", []).append(key)
    return dict(sorted(out.items()))


def _by_entry(stored: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    ranked: dict[str, list[tuple[int, str]]] = {}
    for name, keys in stored.items():
        rank, _, cat = name.partition(":")
        for k in keys:
            ranked.setdefault(str(k), []).append((int(rank), cat))
    return {k: tuple(c for _, c in sorted(v)) for k, v in ranked.items()}


def bundled_decision() -> InContextDecision:
    """The decision shipped with mwemt (OEWN, English), written by scripts/train_mwe_in_context.py."""
    if not BUNDLED.is_file():
        raise MwemtError(f"the bundled MWE-in-context decision is missing ({BUNDLED}); rebuild it with "
                         "scripts/train_mwe_in_context.py")
    return InContextDecision.load(BUNDLED)


def oewn_categories(entries: Iterable) -> dict[str, tuple[str, ...]]:
    """Entry lemma (casefolded, space-joined) -> its categories, from `LexiconEntry` rows (OEWN order)."""
    out: dict[str, list[str]] = {}
    for e in entries:
        key = " ".join(e.lemmas).casefold()
        if e.category and e.category not in out.setdefault(key, []):
            out[key].append(e.category)
    return {k: tuple(v) for k, v in out.items() if v}


def tune_threshold(scored: Sequence[tuple[float, int]], target_recall: float) -> tuple[float, dict]:
    """The highest threshold (two decimals) that keeps at least ``target_recall`` of the positives among
    ``scored`` = (P(MWE), label) pairs of the matches no rule rejects. Returns it and the curve."""
    if not 0.0 < target_recall <= 1.0:
        raise MwemtError(f"target recall must be in (0, 1], not {target_recall}")
    positives = sorted(p for p, y in scored if y)
    if not positives:
        raise MwemtError("no annotated MWE among the tuning matches: nothing to tune the threshold on")
    curve = []
    for k in range(100, -1, -1):
        t = k / 100
        kept_pos = sum(1 for p in positives if p >= t)
        kept_neg = sum(1 for p, y in scored if not y and p >= t)
        curve.append((t, kept_pos / len(positives), kept_pos / (kept_pos + kept_neg) if kept_pos + kept_neg else 0.0))
    best = next(c for c in curve if c[1] >= target_recall)
    return best[0], {"target_recall": target_recall, "threshold": best[0], "recall": round(best[1], 4),
                     "precision": round(best[2], 4), "positives": len(positives), "matches": len(scored),
                     "curve": [[t, round(r, 4), round(p, 4)] for t, r, p in curve[::5]]}
