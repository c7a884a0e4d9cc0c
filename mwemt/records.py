"""Typed records shared by every stage of the pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Mwe:
    """One MWE occurrence in a sentence.

    ``indices`` are sorted 0-based token positions, so discontinuous MWEs are first-class.
    ``lemma`` is the lexicon form with components joined by single spaces ("take care of").
    ``confidence`` (0-1, None = unknown) is how sure identification is that this occurrence is
    idiomatic (see `mwemt.preprocess.filters`); it takes no part in equality or ordering.
    """

    indices: tuple[int, ...]
    lemma: str
    category: str = ""
    confidence: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not self.indices:
            raise ValueError("an MWE needs at least one token index")
        if list(self.indices) != sorted(set(self.indices)):
            raise ValueError(f"MWE token indices must be strictly increasing: {self.indices}")

    @property
    def length(self) -> int:
        return len(self.indices)

    @property
    def span(self) -> tuple[int, int]:
        """First and last index (inclusive)."""
        return self.indices[0], self.indices[-1]

    @property
    def contiguous(self) -> bool:
        return self.indices[-1] - self.indices[0] + 1 == len(self.indices)

    @property
    def gap_indices(self) -> tuple[int, ...]:
        members = set(self.indices)
        return tuple(i for i in range(self.indices[0], self.indices[-1] + 1) if i not in members)

    @property
    def joined_lemma(self) -> str:
        """The lemma as one token, as used in words-with-spaces and the IOB lemma factor."""
        return "_".join(self.lemma.split())


@dataclass(frozen=True)
class LexiconEntry:
    """An MWE type in a lexicon.

    ``lemmas`` are the components as written in the lexicon; matching uses the normalized
    form the `Lexicon` computes with the run's lemmatizer.
    """

    lemmas: tuple[str, ...]
    category: str = ""
    pos: tuple[str, ...] | None = None
    compositionality: float | None = None
    count: int = 0
    translations: tuple[str, ...] = ()
    source_line: int | None = None

    @property
    def key(self) -> str:
        return " ".join(self.lemmas)

    @property
    def length(self) -> int:
        return len(self.lemmas)


@dataclass
class AnnotatedSentence:
    """A tokenized, lemmatized sentence with its MWEs: the unit every encoder consumes.

    ``rejected`` lists the look-up candidates that identification filters removed, each with the
    name of the filter (empty without filters).
    """

    tokens: list[str]
    lemmas: list[str]
    mwes: list[Mwe] = field(default_factory=list)
    pos: list[str] | None = None
    rejected: list[tuple[Mwe, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.lemmas):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.lemmas)} lemmas")
        if self.pos is not None and len(self.pos) != len(self.tokens):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.pos)} POS tags")


@dataclass(frozen=True)
class TestMwe:
    """An MWE of a test-set sentence with the reference translation the MWE score compares to.

    ``indices`` point into ``source.split()``; ``lemma`` is the lemmas of those tokens (the matching
    key, e.g. "have get"), ``surface`` the tokens as written, and ``name`` the display name: the
    lexicon's form of the MWE ("have got"), never a lemma artifact. ``reference_indices`` are the
    reference tokens (``reference.split()``) the MWE translation was taken from, when it was derived
    by word alignment. ``confidence`` (0-1) is how sure identification is that this occurrence is
    idiomatic, ``compositionality`` (0-1, 1 = compositional) the MWE type's predicted
    compositionality, and ``part`` the test part it belongs to ("idiomatic" or "literal", see
    `mwemt.testsets.select`); None / "" = unknown. ``alternatives``: other acceptable
    translations of the MWE (e.g. from `mwemt.testsets.mwe_table`), which the MWE score credits
    with ``--mwe-alternatives``. New fields are added with defaults, so older test-set files stay
    readable.
    """

    __test__ = False  # not a pytest class

    indices: tuple[int, ...]
    lemma: str
    reference: str
    category: str = ""
    surface: str = ""
    name: str = ""
    reference_indices: tuple[int, ...] = ()
    confidence: float | None = None
    compositionality: float | None = None
    part: str = ""
    alternatives: tuple[str, ...] = ()  # other acceptable translations (an MWE translation table's), issue 29

    @property
    def display_name(self) -> str:
        return self.name or self.surface or self.lemma


@dataclass
class TestItem:
    """One sentence of an MWE-annotated test set (a JSONL line)."""

    __test__ = False  # not a pytest class

    id: str
    source: str
    reference: str
    mwes: list[TestMwe] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
