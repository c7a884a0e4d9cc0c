"""What a comparison reads, checked before any work: the score inputs (`load_score_inputs`: one
hypothesis file per system, the references, the MWE test set, TESLA's data) plus the source text,
the training corpus (for frequency buckets), a compositionality table of the test MWEs and the
augmentation dictionary.

Beyond equal lengths (checked by `ScoreInputs`), a test set must be the test set *of these
references* (and of the source text, when given): sentence by sentence, the texts must agree up
to spacing and case, since test sets store tokenized text and references are often detokenized.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.inputs import PathLike, ScoreInputs, load_score_inputs
from mwemt.records import TestItem


@dataclass(frozen=True)
class CompareInputs:
    """Everything `compare_systems` needs; ``score.systems[0]`` is the baseline."""

    score: ScoreInputs
    source_lines: Sequence[str] | None = None
    train_src: str | None = None                 # file: MWE frequency buckets
    train_tgt: str | None = None                 # file: word frequency buckets
    mwe_compositionality: Mapping[str, float] | None = None
    dictionary: object | None = None             # a compiled Lexicon (source side)
    labels: dict[str, str] = field(default_factory=dict)   # input -> how the report names it

    def __post_init__(self) -> None:
        if len(self.score.systems) < 2:
            raise MwemtError(f"a comparison needs two or more systems, got {len(self.score.systems)}")
        if self.score.refs is None:
            raise MwemtError("a comparison needs reference translations (a reference file or a test set)")
        if self.source_lines is not None and len(self.source_lines) != self.score.n_sentences:
            raise InputError(f"{len(self.source_lines)} source lines but there are {self.score.n_sentences} "
                             "reference sentences", self.score.sources.get("src"),
                             expected="one source sentence per reference sentence")
        if self.score.testset is not None:
            check_testset_matches(self.score.testset, self.score.refs, self.score.sources.get("testset"),
                                  self.score.sources.get("ref"), "reference")
            if self.source_lines is not None:
                check_testset_matches(self.score.testset, self.source_lines, self.score.sources.get("testset"),
                                      self.score.sources.get("src"), "source")

    @property
    def system_names(self) -> list[str]:
        return [s.name for s in self.score.systems]

    @property
    def sources(self) -> list[str]:
        """The source sentences to show: the test set's, else the source file's (may be empty)."""
        if self.score.testset is not None:
            return [it.source for it in self.score.testset]
        return list(self.source_lines) if self.source_lines is not None else []


def _comparable(text: str) -> str:
    return "".join(html.unescape(text).split()).casefold()


def check_testset_matches(items: Sequence[TestItem], lines: Sequence[str], testset_path: str | None,
                          other_path: str | None, side: str) -> None:
    """Every test-set item's ``side`` text equals the same line of the other file, up to spacing and
    case; the first mismatch is an `InputError` that shows both texts."""
    for i, (item, line) in enumerate(zip(items, lines)):
        text = item.reference if side == "reference" else item.source
        if _comparable(text) != _comparable(line):
            where = f"line {i + 1} of {other_path}" if other_path else f"{side} sentence {i + 1}"
            raise InputError(f"test-set sentence {item.id!r} has the {side} {text!r}, but {where} is {line!r}",
                             testset_path, i + 1,
                             expected=f"the MWE test set of these {side} sentences, in the same order")


def load_compare_inputs(hyps: Sequence[tuple[str, PathLike]], *, ref: PathLike | None = None,
                        testset: PathLike | None = None, src: PathLike | None = None,
                        train_src: PathLike | None = None, train_tgt: PathLike | None = None,
                        mwe_compositionality: PathLike | None = None, dictionary: PathLike | None = None,
                        dictionary_format: str = "auto", tesla_lexicon: PathLike | None = None,
                        tesla_lexicon_format: str = "auto", tesla_compositionality: PathLike | None = None, lang: str = "en",
                        src_lang: str = "en") -> CompareInputs:
    """Read and check every input of a comparison (see `load_score_inputs` for the shared ones).

    ``mwe_compositionality`` is a ``mwe<TAB>score`` table of the *test set's* (source) MWEs, for the
    tertile buckets; ``tesla_compositionality`` the target-language table of the TESLA metrics.
    ``dictionary``: the augmentation dictionary (any lexicon format, source side), for coverage.
    """
    from mwemt.fileio import read_lines, sha256_file
    from mwemt.formats import read_compositionality

    score = load_score_inputs(hyps, ref=ref, testset=testset, lexicon=tesla_lexicon,
                              lexicon_format=tesla_lexicon_format, compositionality=tesla_compositionality, lang=lang)
    labels: dict[str, str] = {}
    for role, path in (("src", src), ("train_src", train_src), ("train_tgt", train_tgt),
                       ("mwe_compositionality", mwe_compositionality), ("dictionary", dictionary)):
        if path is not None:
            if not Path(path).is_file():
                raise InputError("file not found", path)
            score.sources[role] = str(path)
            labels[role] = f"{Path(path).name}@{sha256_file(path)[:12]}"
    lexicon = load_dictionary(dictionary, dictionary_format, src_lang) if dictionary is not None else None
    return CompareInputs(score, read_lines(src) if src is not None else None,
                         str(train_src) if train_src is not None else None,
                         str(train_tgt) if train_tgt is not None else None,
                         read_compositionality(mwe_compositionality) if mwe_compositionality is not None else None,
                         lexicon, labels)


def load_dictionary(path: PathLike, fmt: str = "auto", lang: str = "en", dict_side: str = "source"):
    """The source side of an augmentation dictionary, read as `mwemt augment` reads it, compiled as
    a lexicon for ``lang`` (so an entry meets a test MWE whatever the inflection of either)."""
    from mwemt.preprocess.lemmatize import get_lemmatizer
    from mwemt.preprocess.lexicon import Lexicon
    from mwemt.records import LexiconEntry
    from mwemt.testsets.mwe_table import read_dictionary

    sources = dict.fromkeys(s for s, _ in read_dictionary(path, fmt, dict_side, placeholders=True))
    return Lexicon((LexiconEntry(tuple(s.split())) for s in sources), get_lemmatizer("simplemma", lang),
                   lang=lang, name=Path(str(path)).name)
