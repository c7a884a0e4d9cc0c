"""From reference translations to the compositionality weights that ``tesla-comp`` reads, in one step.

Why: tesla-comp weighs a reference MWE that a hypothesis lacks by how compositional it is. A user
with their own English test set needs a weight for the MWEs *their references* contain: find them
with an MWE lexicon (the same matching tesla-comp uses: contiguous, lemmatized), predict each one's
compositionality from corpus vectors, and write one ``mwe<TAB>score`` file. MWEs that the vectors
cannot score are written too, with ``NA``: tesla-comp then still finds them (the file's MWEs are its
lexicon) and gives them its default weight, and its score table counts them. Nothing found in the
references is dropped.

``rescale`` spreads the predictions over [0, 1] (`mwemt.compositionality.predict.rescale`): raw
PPMI cosines sit low (most below 0.3), which turns a "compositional" MWE into one that loses most
of its credit. Which scaling and which default weight work best was measured on the WMT23 ZH-EN
MQM set (studies/meta-evaluation/README.md, docs/tesla.md).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mwemt.compositionality.predict import rescale, score_mwes
from mwemt.compositionality.vectors import MANIFEST
from mwemt.errors import MwemtError
from mwemt.fileio import atomic_write
from mwemt.formats import COMPOSITIONALITY_HEADER
from mwemt.preprocess.annotate import Annotator, AnnotatorConfig, build_annotator
from mwemt.wordnet import multiword_entries

VECTORS_ENV = "MWEMT_VECTORS"  # a vectors directory to use when none is given
DEFAULT_CACHE = Path("runs") / "compositionality-cache"  # where `compositionality vectors` runs are cached
DEFAULT_MODEL, DEFAULT_METHOD, DEFAULT_ALPHA = "ppmi", "alpha", 0.7
DEFAULT_RESCALE = "minmax"  # measured on WMT23 ZH-EN MQM (docs/tesla.md)


@dataclass
class ReferenceMwes:
    """The MWEs a lexicon finds in reference sentences, with their number of occurrences."""

    counts: Counter = field(default_factory=Counter)
    lines: int = 0
    lines_with_mwes: int = 0

    @property
    def occurrences(self) -> int:
        return sum(self.counts.values())


WORDNET_LEXICON = "wordnet"  # the lexicon name that means WordNet 3.0's multiword lemmas


def reference_annotator(lexicon: str | Path = WORDNET_LEXICON, lexicon_format: str = "auto", *, lang: str = "en",
                        lemmatizer: str = "simplemma") -> Annotator:
    """The annotator that finds MWEs in references as tesla-comp does (contiguous, lemmatized): with the
    target side of a lexicon file, or with WordNet 3.0's multiword lemmas (``lexicon="wordnet"``)."""
    # contiguous, no identification filters: tesla-comp's own look-up (`mwemt.evaluate.tesla`)
    plain = {"lang": lang, "lexicon_format": lexicon_format, "lexicon_side": "target", "lemmatizer": lemmatizer,
             "max_gap": 0, "filters": "none"}
    if str(lexicon) != WORDNET_LEXICON:
        return build_annotator(AnnotatorConfig(lexicon=(str(lexicon),), **plain))
    if lang != "en":
        raise MwemtError(f"the WordNet lexicon is English; give a {lang!r} MWE lexicon file as lexicon")
    annotator = build_annotator(AnnotatorConfig(**plain), multiword_entries())
    assert annotator.lexicon is not None
    annotator.lexicon.name = "wordnet-3.0-mwes"
    return annotator


def find_reference_mwes(lines: Iterable[str], annotator: Annotator) -> ReferenceMwes:
    """Annotate each reference line with ``annotator`` (see `reference_annotator`)."""
    found = ReferenceMwes()
    for line in lines:
        found.lines += 1
        mwes = annotator.annotate_text(line).mwes
        found.lines_with_mwes += bool(mwes)
        found.counts.update(m.lemma for m in mwes)
    return found


@dataclass(frozen=True)
class Weight:
    """One reference MWE: its predicted compositionality (None: no prediction, and why)."""

    mwe: str
    occurrences: int
    score: float | None
    reason: str = ""


def predict_compositionality(mwes: Sequence[str], vectors: str | Path, *, model: str = DEFAULT_MODEL,
                             method: str = DEFAULT_METHOD, alpha: float = DEFAULT_ALPHA) -> list[tuple[float | None, str]]:
    """(score, reason) per MWE, in order, from a vectors directory (``compositionality vectors``),
    through `score_mwes` (without folding in: only MWEs that were tokens of the vectors are scored)."""
    scores = {s.mwe: s for s in score_mwes(mwes, vectors, model=model, method=method, alpha=alpha,
                                           allow_fold_in=False)}
    out = []
    for m in mwes:
        s = scores.get(" ".join(m.split()))
        out.append((None, "not a scorable MWE") if s is None else (s.score, s.reason))
    return out


def compositionality_weights(found: ReferenceMwes, vectors: str | Path, *, model: str = DEFAULT_MODEL,
                             method: str = DEFAULT_METHOD, alpha: float = DEFAULT_ALPHA,
                             scaling: str = DEFAULT_RESCALE) -> list[Weight]:
    """A weight for every MWE of ``found``, most frequent first; the predictions rescaled by ``scaling``."""
    mwes = [m for m, _ in sorted(found.counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    predicted = predict_compositionality(mwes, vectors, model=model, method=method, alpha=alpha)
    scored = rescale([(m, s) for m, (s, _) in zip(mwes, predicted) if s is not None], scaling)
    scaled = dict(scored)
    return [Weight(m, found.counts[m], scaled.get(m), "" if m in scaled else (why or "no prediction"))
            for m, (_, why) in zip(mwes, predicted)]


def write_weights(path: str | Path, weights: Sequence[Weight]) -> None:
    """The TSV tesla-comp reads: ``mwe<TAB>score`` (``NA`` without a prediction), then the number of
    reference occurrences and the reason a prediction is missing (columns readers ignore)."""
    with atomic_write(path) as fh:
        fh.write(f"{COMPOSITIONALITY_HEADER}\treference_occurrences\tnote\n")
        for w in weights:
            score = "NA" if w.score is None else f"{w.score:.6f}"
            fh.write(f"{w.mwe}\t{score}\t{w.occurrences}\t{w.reason}\n")


@dataclass(frozen=True)
class Coverage:
    mwes: int
    predicted: int
    occurrences: int
    occurrences_predicted: int

    def describe(self) -> str:
        share = lambda a, b: f"{a / b:.0%}" if b else "-"  # noqa: E731
        return (f"predicted {self.predicted} of {self.mwes} MWEs ({share(self.predicted, self.mwes)}), "
                f"{self.occurrences_predicted} of {self.occurrences} occurrences "
                f"({share(self.occurrences_predicted, self.occurrences)})")


def coverage(weights: Sequence[Weight]) -> Coverage:
    return Coverage(len(weights), sum(w.score is not None for w in weights), sum(w.occurrences for w in weights),
                    sum(w.occurrences for w in weights if w.score is not None))


def cached_vectors(lang: str = "en", cache: Path = DEFAULT_CACHE) -> Path | None:
    """The vectors to use when none are given: ``$MWEMT_VECTORS``, else the complete vectors directory
    for ``lang`` under ``cache`` built from the most tokens (the corpus-scale vectors once built)."""
    env = os.environ.get(VECTORS_ENV)
    if env:
        return Path(env)
    best: tuple[int, Path] | None = None
    for manifest in sorted(cache.glob(f"**/{MANIFEST}")) if cache.is_dir() else []:
        try:
            import json

            man = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if man.get("config", {}).get("lang") != lang or "corpus" not in man:
            continue
        tokens = int(man["corpus"].get("tokens", 0))
        if best is None or tokens > best[0]:
            best = (tokens, manifest.parent)
    return best[1] if best else None
