"""The annotation pipeline: raw or tokenised text -> MWE-annotated, encoded lines.

`Annotator` is the one place that chains tokenise -> lemmatise -> identify; `mwemt annotate`,
`mwemt translate`, augmentation and the metrics all call it, so source text is treated the same
everywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from mwemt.errors import MwemtError
from mwemt.preprocess.encode import encode_iob, encode_wws
from mwemt.preprocess.filters import FilterModel, cupt_heads
from mwemt.preprocess.identify import find_candidates, resolve_overlaps
from mwemt.preprocess.lemmatize import get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.preprocess.tokenize import tokenize
from mwemt.records import AnnotatedSentence

ENCODINGS = ("wws", "iob", "none")


class Annotator:
    """Tokenise, lemmatise and find lexicon MWEs with one fixed configuration.

    With ``filters`` (a `FilterModel` learned from annotated data), look-up candidates go through
    the filters before overlaps are resolved: the sentence's ``rejected`` list says which filter
    removed what, and every MWE kept carries the model's ``confidence``.
    """

    def __init__(self, lexicon: Lexicon | None, lang: str = "en", lemmatizer: str = "simplemma",
                 max_gap: int = 0, pretokenized: bool = False, filters: FilterModel | None = None):
        if max_gap < 0:
            raise MwemtError("max_gap must be 0 or more")
        self.lexicon = lexicon
        self.lang = lang
        self.lemmatizer = get_lemmatizer(lemmatizer, lang)
        self.max_gap = max_gap
        self.pretokenized = pretokenized
        self.filters = filters
        if lexicon is not None and lexicon.lemmatizer is None:
            lexicon.set_lemmatizer(self.lemmatizer)  # entries must be normalised like the text

    def tokens(self, text: str) -> list[str]:
        return text.split() if self.pretokenized else tokenize(text, self.lang)

    def annotate_tokens(self, tokens: Sequence[str], lemmas: Sequence[str] | None = None,
                        pos: Sequence[str] | None = None, heads: Sequence[int] | None = None) -> AnnotatedSentence:
        """One tokenised sentence; ``heads`` (0-based, root -1) let the syntax filter work."""
        tokens = list(tokens)
        lem = [x.lower() for x in lemmas] if lemmas is not None else self.lemmatizer.lemmatize(tokens, pos)
        rejected: list = []
        mwes: list = []
        if self.lexicon is not None and self.filters is None:
            candidates = find_candidates(lem, self.lexicon, self.max_gap)
            mwes = resolve_overlaps(candidates) if candidates else []
        elif self.lexicon is not None:
            candidates = find_candidates(lem, self.lexicon, self.max_gap, any_order=self.filters.any_order)
            if candidates:
                kept, rejected = self.filters.apply(candidates, tokens, lem, heads)
                mwes = self.filters.resolve(kept)
        return AnnotatedSentence(tokens, lem, mwes, list(pos) if pos is not None else None, rejected)

    def annotate_text(self, text: str) -> AnnotatedSentence:
        return self.annotate_tokens(self.tokens(text))

    @property
    def signature(self) -> str:
        lex = f"{self.lexicon.name}@{self.lexicon.fingerprint()}" if self.lexicon is not None else "none"
        sig = f"lang:{self.lang}|lemma:{self.lemmatizer.signature}|lex:{lex}|gap:{self.max_gap}"
        return sig + (f"|{self.filters.signature}" if self.filters is not None else "")


def encode_sentence(sent: AnnotatedSentence, encoding: str, confidence_buckets: int = 0) -> tuple[str, int]:
    """One output line in the chosen encoding, and the number of MWEs it could not encode.

    ``confidence_buckets`` > 0: IOB tags carry each MWE's confidence bucket (``B2``, ``I2``).
    """
    if encoding == "wws":
        toks, skipped = encode_wws(sent)
        return " ".join(toks), skipped
    if encoding == "iob":
        return " ".join(encode_iob(sent, confidence_buckets)), 0
    if encoding == "none":
        return " ".join(sent.tokens), 0
    raise MwemtError(f"unknown encoding {encoding!r}; choose one of {', '.join(ENCODINGS)}")


@dataclass
class AnnotationReport:
    """Counts for --report: what was found, how often, and how much of the text it covers."""

    sentences: int = 0
    tokens: int = 0
    mwe_tokens: int = 0
    sentences_with_mwe: int = 0
    mwes: int = 0
    discontinuous: int = 0
    unencoded_discontinuous: int = 0
    by_length: Counter = field(default_factory=Counter)
    by_entry: Counter = field(default_factory=Counter)
    by_category: Counter = field(default_factory=Counter)
    removed_by_filter: Counter = field(default_factory=Counter)

    def add(self, sent: AnnotatedSentence, unencoded: int = 0) -> None:
        self.sentences += 1
        for _, reason in sent.rejected:
            self.removed_by_filter[reason] += 1
        self.tokens += len(sent.tokens)
        if sent.mwes:
            self.sentences_with_mwe += 1
        for m in sent.mwes:
            self.mwes += 1
            self.mwe_tokens += m.length
            self.by_length[m.length] += 1
            self.by_entry[m.lemma] += 1
            if m.category:
                self.by_category[m.category] += 1
            if not m.contiguous:
                self.discontinuous += 1
        self.unencoded_discontinuous += unencoded

    def merge(self, other: AnnotationReport) -> None:
        for name in ("sentences", "tokens", "mwe_tokens", "sentences_with_mwe", "mwes", "discontinuous",
                     "unencoded_discontinuous"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.by_length.update(other.by_length)
        self.by_entry.update(other.by_entry)
        self.by_category.update(other.by_category)
        self.removed_by_filter.update(other.removed_by_filter)

    def to_dict(self, lexicon_size: int | None = None, top: int = 50, filters: dict | None = None) -> dict:
        """The report; ``filters`` describes the identification filters (see `describe_filters`)."""
        d = {
            "sentences": self.sentences,
            "tokens": self.tokens,
            "mwes": self.mwes,
            "discontinuous_mwes": self.discontinuous,
            "discontinuous_left_unjoined": self.unencoded_discontinuous,
            "mwes_by_length": {str(k): v for k, v in sorted(self.by_length.items())},
            "mwes_by_category": dict(self.by_category.most_common()),
            "coverage": {
                "sentences_with_mwe": self.sentences_with_mwe,
                "sentence_ratio": round(self.sentences_with_mwe / self.sentences, 4) if self.sentences else 0.0,
                "token_ratio": round(self.mwe_tokens / self.tokens, 4) if self.tokens else 0.0,
                "distinct_entries_seen": len(self.by_entry),
            },
            "top_entries": dict(self.by_entry.most_common(top)),
            "filters": {**(filters or describe_filters(None)),
                        "removed": {name: self.removed_by_filter.get(name, 0)
                                    for name in sorted(set(self.removed_by_filter) | set((filters or {}).get("active", ())))},
                        "candidates_removed": sum(self.removed_by_filter.values())},
        }
        if lexicon_size:
            d["coverage"]["lexicon_entries"] = lexicon_size
            d["coverage"]["lexicon_ratio"] = round(len(self.by_entry) / lexicon_size, 4)
        return d


NO_FILTERS_NOTE = ("no identification filters: every lexicon match is kept (the lexicon has no training "
                   "data and no raw corpus was given, or filters were turned off)")


def describe_filters(model) -> dict:
    """What the annotate report says about the filters in use (``model`` None: none)."""
    if model is None:
        return {"active": [], "note": NO_FILTERS_NOTE}
    return model.describe()


def annotate_cupt(annotator: Annotator, sentences: Iterable, *, relemmatize: bool = False) -> Iterator[tuple]:
    """(sentence, `AnnotatedSentence`) for each `CuptSentence`, annotated on its own words.

    The LEMMA column is used (the form where it is ``_``) unless ``relemmatize``, in which case the
    annotator's lemmatiser reads the forms; UPOS is passed on when every word has one, and the
    HEAD column (for the syntax filter) when every word has one.
    """
    for cs in sentences:
        words = cs.words
        forms = [w.form for w in words]
        pos = [w.upos for w in words] if all(w.upos not in ("_", "") for w in words) else None
        lemmas = None if relemmatize else [w.lemma if w.lemma != "_" else w.form for w in words]
        yield cs, annotator.annotate_tokens(forms, lemmas, pos, cupt_heads(words))


def annotate_lines(annotator: Annotator, lines: Iterable[str], encoding: str,
                   report: AnnotationReport | None = None, confidence_buckets: int = 0) -> Iterator[str]:
    for line in lines:
        sent = annotator.annotate_text(line)
        out, skipped = encode_sentence(sent, encoding, confidence_buckets)
        if report is not None:
            report.add(sent, skipped)
        yield out


# ---------------------------------------------------------------- many sentences, many processes
_WORKER: Annotator | None = None


def _annotate_chunk(args: tuple[list[str], str, int]) -> tuple[list[str], AnnotationReport]:
    lines, encoding, buckets = args
    report = AnnotationReport()
    assert _WORKER is not None
    out = list(annotate_lines(_WORKER, lines, encoding, report, buckets))
    return out, report


def _chunks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    buf: list[str] = []
    for line in lines:
        buf.append(line)
        if len(buf) >= size:
            yield buf
            buf = []
    if buf:
        yield buf


def annotate_stream(annotator: Annotator, lines: Iterable[str], encoding: str, report: AnnotationReport,
                    workers: int = 1, chunk_size: int = 512, confidence_buckets: int = 0) -> Iterator[str]:
    """Annotate a stream of lines in order, on ``workers`` processes; memory stays bounded.

    Workers are forked with the compiled lexicon already in memory, so nothing is rebuilt per
    process; chunks come back in input order.
    """
    if workers <= 1:
        yield from annotate_lines(annotator, lines, encoding, report, confidence_buckets)
        return
    import multiprocessing as mp
    from collections import deque

    global _WORKER
    _WORKER = annotator
    ctx = mp.get_context("fork")
    chunks = _chunks(lines, chunk_size)
    with ctx.Pool(workers) as pool:
        pending: deque = deque()
        for chunk in chunks:  # keep a bounded number of chunks in flight: memory stays flat
            pending.append(pool.apply_async(_annotate_chunk, ((chunk, encoding, confidence_buckets),)))
            if len(pending) >= 2 * workers:
                out, rep = pending.popleft().get()
                report.merge(rep)
                yield from out
        while pending:
            out, rep = pending.popleft().get()
            report.merge(rep)
            yield from out
    _WORKER = None
