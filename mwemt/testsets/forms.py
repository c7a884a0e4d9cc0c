"""Form from the sentence: the inflected forms of a candidate translation that the training target attests.

A table translation is one inflected form, the one alignment happened to see (*sbarazzato di*, *stanca
morta*). Forced as it is, it can disagree with the sentence (a feminine participle for "he", a past for
"I'll get rid of it"). `FormIndex` groups the training target's phrases by their **lemma key** (each word's
Italian lemma, an infinitive with an enclitic pronoun as its infinitive, the clitic pronouns *mi ti si ci vi*
as one) and offers, for a candidate, the other forms with the same key (*sbarazzarmi di*, *sbarazzarsi di*;
*stanco morto*), most frequent first: judged constraints decode each as a constraint and let the model's
score choose (fairseq's constraints are exact token sequences).

Only contiguous translations get forms (a gapped one, *ha ... vinto*, is offered as it is). The index keeps
only the lemma keys of the table's translations that have two or more forms.

File (JSONL, gzip-compressed when the name ends in .gz): header ``{"format": "mwemt-target-forms",
"version": 1, ...}``, then ``{"lemmas": [...], "forms": [{"tokens": [...], "count": N}, ...]}`` per key.

API::

    index = FormIndex.build(table, target_tokens, target_lemmas)     # the training target, tokenized
    index.alternatives(("sbarazzato", "di"), limit=3)     # -> (("sbarazzato", "di"), ("sbarazzarsi", "di"), ...)
    index.write("forms.jsonl.gz"); FormIndex.read("forms.jsonl.gz")
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.testsets.mwe_table import GAP

FORMS_FORMAT = "mwemt-target-forms"
FORMS_VERSION = 1
MAX_WORDS = 6                      # longer translations get no forms
CLITICS = frozenset({"mi", "ti", "si", "ci", "vi"})
# an Italian infinitive with enclitic pronoun(s), which simplemma keeps whole: farlo -> fare
_ENCLITIC = re.compile(r"^(\w+[aei]r)(?:si|mi|ti|ci|vi|lo|la|li|le|ne|gli|glielo|gliela|selo|sela)$")


def lemma_key(tokens: Sequence[str], lemmas: Sequence[str] | None = None, lemmatizer=None) -> tuple[str, ...]:
    """The lemma key of a phrase (casefolded tokens): per word its lemma (``lemmas``, else ``lemmatizer``'s),
    an infinitive with an enclitic as the infinitive, a clitic pronoun as ``si``."""
    forms = [t.casefold() for t in tokens]
    if lemmas is None:
        if lemmatizer is None:
            raise MwemtError("lemma_key needs the lemmas or a lemmatizer")
        lemmas = lemmatizer.lemmatize(forms)
    out = []
    for form, lemma in zip(forms, lemmas):
        lemma = lemma.casefold()
        if form in CLITICS:
            lemma = "si"
        elif lemma == form:
            lemma = _ENCLITIC.sub(r"\1e", lemma)
        out.append(lemma)
    return tuple(out)


class FormIndex:
    """Lemma key -> the forms of the training target with that key and their counts."""

    def __init__(self, forms: Mapping[tuple[str, ...], Mapping[tuple[str, ...], int]], *, lemmatizer=None,
                 provenance: Mapping | None = None):
        self.forms = {tuple(k): dict(v) for k, v in forms.items()}
        self.provenance = dict(provenance or {})
        self._lemmatizer = lemmatizer
        self._keys: dict[tuple[str, ...], tuple[str, ...]] = {}

    @property
    def lemmatizer(self):
        if self._lemmatizer is None:
            from mwemt.preprocess.lemmatize import get_lemmatizer

            self._lemmatizer = get_lemmatizer("simplemma", "it")
        return self._lemmatizer

    def key(self, tokens: Sequence[str]) -> tuple[str, ...]:
        tokens = tuple(t.casefold() for t in tokens)
        if tokens not in self._keys:
            self._keys[tokens] = lemma_key(tokens, lemmatizer=self.lemmatizer)
        return self._keys[tokens]

    def signature(self) -> str:
        return f"forms|keys:{len(self.forms)}|forms:{sum(len(v) for v in self.forms.values())}"

    @classmethod
    def build(cls, table, target_tokens: Sequence[Sequence[str]], target_lemmas: Sequence[Sequence[str]], *,
              lemmatizer=None, provenance: Mapping | None = None) -> FormIndex:
        """The forms of every contiguous translation of ``table`` in the training target (tokens and their
        lemmas, one list per sentence)."""
        if len(target_tokens) != len(target_lemmas):
            raise MwemtError("FormIndex.build: target tokens and lemmas must have the same length")
        index = cls({}, lemmatizer=lemmatizer, provenance=provenance)
        wanted: set[tuple[str, ...]] = set()
        for key in table.keys():
            for e in table.translations(key, min_count=0):
                if GAP not in e.translation and len(e.translation) <= MAX_WORDS:
                    wanted.add(index.key(e.translation))
        lengths = sorted({len(k) for k in wanted})
        found: dict[tuple[str, ...], Counter] = {}
        for tokens, lemmas in zip(target_tokens, target_lemmas):
            forms = [t.casefold() for t in tokens]
            keys = lemma_key(forms, lemmas)
            for n in lengths:
                for i in range(len(forms) - n + 1):
                    k = keys[i:i + n]
                    if k in wanted:
                        found.setdefault(k, Counter())[tuple(forms[i:i + n])] += 1
        index.forms = {k: dict(c) for k, c in found.items() if len(c) >= 2}
        return index

    def alternatives(self, tokens: Sequence[str], limit: int = 3) -> tuple[tuple[str, ...], ...]:
        """``tokens`` first, then the other attested forms of its lemma key, most frequent first (ties by the
        tokens), ``limit`` in all. A gapped or unknown phrase has only itself."""
        tokens = tuple(t.casefold() for t in tokens)
        if limit < 1:
            raise MwemtError(f"forms limit must be at least 1, not {limit}")
        if GAP in tokens or len(tokens) > MAX_WORDS:
            return (tokens,)
        others = sorted(((f, n) for f, n in self.forms.get(self.key(tokens), {}).items() if f != tokens),
                        key=lambda fn: (-fn[1], fn[0]))
        return (tokens,) + tuple(f for f, _ in others[:limit - 1])

    # -- files
    def write(self, path: str | Path) -> None:
        from mwemt.fileio import write_text

        rows = [{"format": FORMS_FORMAT, "version": FORMS_VERSION, "signature": self.signature(),
                 "provenance": self.provenance}]
        rows += [{"lemmas": list(k), "forms": [{"tokens": list(f), "count": n}
                                               for f, n in sorted(v.items(), key=lambda fn: (-fn[1], fn[0]))]}
                 for k, v in sorted(self.forms.items())]
        write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))

    @classmethod
    def read(cls, path: str | Path, *, lemmatizer=None) -> FormIndex:
        from mwemt.fileio import iter_lines

        expected = f'{{"format": "{FORMS_FORMAT}", "version": {FORMS_VERSION}, ...}}'
        head = None
        forms: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {}
        for lineno, line in enumerate(iter_lines(path), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc}", path, lineno, expected=expected) from None
            if head is None:
                if not isinstance(row, dict) or row.get("format") != FORMS_FORMAT:
                    raise InputError("not a target-forms header", path, lineno, expected=expected)
                if row.get("version") != FORMS_VERSION:
                    raise InputError(f"version {row.get('version')!r}", path, lineno, expected=f"version {FORMS_VERSION}")
                head = row
                continue
            try:
                key = tuple(str(x) for x in row["lemmas"])
                forms[key] = {tuple(str(t) for t in f["tokens"]): int(f["count"]) for f in row["forms"]}
                if not key or not forms[key]:
                    raise ValueError("no lemmas or no forms")
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise InputError(f"bad row ({type(exc).__name__}: {exc})", path, lineno,
                                 expected='{"lemmas": [...], "forms": [{"tokens": [...], "count": N}]}') from None
        if head is None:
            raise InputError("empty file", path, expected=expected)
        return cls(forms, lemmatizer=lemmatizer, provenance=head.get("provenance"))


def with_forms(candidates: Iterable[Sequence[str]], index: FormIndex | None, per_candidate: int,
               limit: int | None = None) -> list[tuple[str, ...]]:
    """Each candidate followed by its other forms (`FormIndex.alternatives`, ``per_candidate`` in all per
    candidate), each phrase once; at most ``limit`` phrases in all (None: no limit)."""
    out: list[tuple[str, ...]] = []
    for c in candidates:
        for f in (index.alternatives(c, per_candidate) if index is not None else (tuple(c),)):
            if f not in out:
                out.append(f)
    return out if limit is None else out[:limit]
