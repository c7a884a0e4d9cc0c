"""The annotation pipeline: raw or tokenized text -> MWE-annotated, encoded lines.

`Annotator` is the one place that chains tokenize -> lemmatize -> identify, and `build_annotator`
the one place that makes an annotator and loads its lexicon: `mwemt annotate`, `mwemt translate`,
the experiment stages, augmentation and the compositionality tools all call it, so source text
(and a lexicon file, `.cupt` included) is treated the same everywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mwemt.errors import MwemtError
from mwemt.formats import LEXICON_FORMATS, LEXICON_SIDES, detect_lexicon_format, read_lexicon_entries
from mwemt.preprocess.corpus_filters import CORPUS_FILTERS
from mwemt.preprocess.encode import HINT_ENCODINGS, encode_constant, encode_iob, encode_wws, plain_factored
from mwemt.preprocess.filters import FILTERS, JudgingModel, cupt_heads
from mwemt.preprocess.identification import FILTER_SOURCES, IdentificationOptions, filters_for
from mwemt.preprocess.identify import find_candidates, identify
from mwemt.preprocess.lemmatize import BACKENDS, Lemmatizer, get_lemmatizer
from mwemt.preprocess.lexicon import Lexicon
from mwemt.preprocess.mwe_context import FILTER as MWE_CONTEXT_FILTER
from mwemt.preprocess.tokenize import tokenize
from mwemt.records import AnnotatedSentence, LexiconEntry, Mwe
from mwemt.schema import setting

ENCODINGS = ("none", "wws", "iob", "iob-constant", *HINT_ENCODINGS)
# the source factors each encoding produces (words-with-spaces joins tokens but keeps one factor; inline
# hints add a 0/1/2 stream: plain word, hinted source MWE, hint: `mwemt.preprocess.hints`)
FACTOR_NAMES: dict[str, tuple[str, ...]] = {"none": ("word",), "wws": ("word",), "iob": ("word", "lemma", "tag"),
                                            "iob-constant": ("word", "lemma", "tag"),
                                            **{e: ("word", "hint") for e in HINT_ENCODINGS}}


IDENTIFICATION_FILTERS = FILTERS + CORPUS_FILTERS + (MWE_CONTEXT_FILTER,)


@dataclass(frozen=True)
class PreprocessConfig:
    """How source text is tokenized, lemmatized and matched against the lexicon, and which
    identification filters judge the matches (docs/identification.md). The model directory records
    it, so `mwemt translate` repeats exactly this on new text."""

    lemmatizer: str = setting("simplemma", choices=BACKENDS,
                              help="lemmatizer that normalizes text and lexicon entries alike (all offline)")
    max_gap: int | None = setting(None, minimum=0, help="most tokens allowed between two components of an MWE "
                                                        "(0 = contiguous MWEs only); null: the gap the "
                                                        "identification filters were tuned with, else 0")
    pretokenized: bool = setting(False, help="the text is already tokenized: split on spaces only")
    filters: str = setting("auto", path="file", literals=FILTER_SOURCES,
                           help="identification filters: `auto` (a saved LEXICON-STEM.filters.json beside the lexicon, "
                                "else learned from a .cupt lexicon, else estimated from `raw_corpus`, else none), "
                                "`none`, or a saved filter model")
    filters_off: tuple[str, ...] = setting((), choices=IDENTIFICATION_FILTERS,
                                           help="filters turned off, e.g. [rate, syntax]")
    filters_context: bool = setting(False, help="also learn the contextual idiomatic/literal classifier when "
                                                "learning filters from a .cupt lexicon (opt-in: slow on CPU)")
    raw_corpus: str | None = setting(None, path="file",
                                     help="plain text to estimate literal readings from, for a lexicon without "
                                          "training data (`filters: auto`)")
    confidence_buckets: int = setting(0, minimum=0, maximum=9,
                                      help="iob encoding: > 0 appends each MWE's identification confidence bucket "
                                           "to its tags (B2, I2 with 3 buckets)")


@dataclass(frozen=True)
class AnnotatorConfig:
    """Everything that makes an `Annotator`: the language, the lexicon file(s) and how to read them,
    the preprocessing settings and the identification filters (`IdentificationOptions`). Several
    lexicon files are used as one (their union); `filters: auto` then applies to none of them."""

    lang: str = "en"
    lexicon: tuple[str, ...] = ()
    lexicon_format: str = "auto"
    lexicon_side: str = "source"
    lemmatizer: str = "simplemma"
    max_gap: int | None = None
    pretokenized: bool = False
    filters: str = "auto"
    filters_off: tuple[str, ...] = ()
    filters_context: bool = False
    raw_corpus: str | None = None
    mwe_context: str = "none"            # the MWE-in-context model: none | auto | bundled | PATH
    mwe_threshold: float | None = None   # None: the model's own threshold

    @classmethod
    def of(cls, preprocess: PreprocessConfig, *, lang: str, lexicon: Sequence[str | Path] = (),
           lexicon_format: str = "auto", lexicon_side: str = "source") -> AnnotatorConfig:
        return cls(lang, tuple(str(p) for p in lexicon), lexicon_format, lexicon_side, preprocess.lemmatizer,
                   preprocess.max_gap, preprocess.pretokenized, preprocess.filters, preprocess.filters_off,
                   preprocess.filters_context, preprocess.raw_corpus)

    @property
    def identification(self) -> IdentificationOptions:
        return IdentificationOptions(self.filters, tuple(self.filters_off), self.max_gap, self.raw_corpus,
                                     self.filters_context, self.mwe_context, self.mwe_threshold)


def build_annotator(config: AnnotatorConfig, entries: Sequence[LexiconEntry] | None = None, *,
                    lexicon: Lexicon | None = None, log=None) -> Annotator:
    """The `Annotator` of ``config``, with its lexicon read from ``config.lexicon``, or given as
    ``entries`` (compiled here) or as a compiled ``lexicon`` (e.g. one `load_lexicon` read), and
    its identification filters (`mwemt.preprocess.identification.filters_for`; ``filters: none``
    for a plain look-up); no lexicon = tokenize and lemmatize only. ``log`` hears which filters
    were chosen (default: stderr). The one place an `Annotator` is made.

    Entries of a `.cupt` lexicon are already tokens (they come from annotated sentences), so only
    entries of the other formats are tokenized like the text.
    """
    if entries is not None and lexicon is not None:
        raise ValueError("build_annotator: give entries or a compiled lexicon, not both")
    if config.lexicon_format not in LEXICON_FORMATS:
        raise MwemtError(f"lexicon format {config.lexicon_format!r}: choose one of {', '.join(LEXICON_FORMATS)}")
    if config.lexicon_side not in LEXICON_SIDES:
        raise MwemtError(f"lexicon side {config.lexicon_side!r}: choose one of {', '.join(LEXICON_SIDES)}")
    lemmatizer = get_lemmatizer(config.lemmatizer, config.lang)
    formats: set[str] = set()
    if entries is not None:
        lexicon = Lexicon(entries, lemmatizer, lang=config.lang, tokenize_entries=config.lexicon_format != "cupt")
    elif lexicon is None and config.lexicon:
        formats = {detect_lexicon_format(p) if config.lexicon_format == "auto" else config.lexicon_format
                   for p in config.lexicon}
        entries = [e for p in config.lexicon for e in read_lexicon_entries(p, config.lexicon_format,
                                                                           side=config.lexicon_side,
                                                                           lang=config.lang)]
        lexicon = Lexicon(entries, lemmatizer, lang=config.lang, name="+".join(Path(p).name for p in config.lexicon),
                          tokenize_entries="cupt" not in formats)
    filters, max_gap = None, config.max_gap or 0
    if lexicon is not None:
        source = config.lexicon[0] if len(config.lexicon) == 1 and formats else None
        filters, max_gap = filters_for(source, formats.pop() if source else None, config.identification,
                                       lexicon=lexicon, lang=config.lang, lemmatizer=config.lemmatizer, log=log)
    return Annotator(lexicon, config.lang, lemmatizer, max_gap, pretokenized=config.pretokenized, filters=filters)


def load_lexicon(path: str | Path, fmt: str = "auto", *, lang: str = "en", lemmatizer: str = "simplemma",
                 side: str = "source") -> Lexicon:
    """The lexicon of one file exactly as `build_annotator` loads it, for callers that need no annotator."""
    lexicon = build_annotator(AnnotatorConfig(lang, (str(path),), fmt, side, lemmatizer, filters="none")).lexicon
    assert lexicon is not None
    return lexicon


def occurrence_confidences(sent: AnnotatedSentence) -> list[tuple[Mwe, float | None]]:
    """Each MWE occurrence identified in ``sent`` with its identification confidence.

    The confidence is what the annotator's filters made of that occurrence: the entry's smoothed
    idiomaticity rate in the annotated training data, P(idiomatic) from the contextual classifier
    when it is on, or the literal-reading estimate of a raw corpus; in [0, 1], higher = more
    likely an MWE. None: nothing judged it (no filters, or an entry the filters have no data on).
    The same value the IOB encoding buckets with ``confidence_buckets``.
    """
    return [(m, m.confidence) for m in sent.mwes]


class Annotator:
    """Tokenize, lemmatize and find lexicon MWEs with one fixed configuration (make one with
    `build_annotator`).

    With ``filters`` (a model learned from annotated data or estimated from a raw corpus), look-up
    candidates go through the filters before overlaps are resolved: the sentence's ``rejected``
    list says which filter removed what, and every MWE kept carries the model's ``confidence``
    (see `occurrence_confidences`).
    """

    def __init__(self, lexicon: Lexicon | None, lang: str = "en", lemmatizer: str | Lemmatizer = "simplemma",
                 max_gap: int = 0, pretokenized: bool = False, filters: JudgingModel | None = None):
        if max_gap < 0:
            raise MwemtError(f"max_gap must be 0 or more, not {max_gap}")
        self.lexicon = lexicon
        self.lang = lang
        self.lemmatizer = get_lemmatizer(lemmatizer, lang) if isinstance(lemmatizer, str) else lemmatizer
        self.max_gap = max_gap
        self.pretokenized = pretokenized
        self.filters = filters
        if lexicon is not None and lexicon.lemmatizer is None:
            lexicon.set_lemmatizer(self.lemmatizer)  # entries must be normalized like the text

    def tokens(self, text: str) -> list[str]:
        return text.split() if self.pretokenized else tokenize(text, self.lang)

    def annotate_tokens(self, tokens: Sequence[str], lemmas: Sequence[str] | None = None,
                        pos: Sequence[str] | None = None, heads: Sequence[int] | None = None) -> AnnotatedSentence:
        """One tokenized sentence; ``heads`` (0-based, root -1) let the syntax filter work."""
        tokens = list(tokens)
        lem = [x.lower() for x in lemmas] if lemmas is not None else self.lemmatizer.lemmatize(tokens, pos)
        rejected: list = []
        mwes: list = []
        if self.lexicon is not None and self.filters is None:
            mwes = identify(lem, self.lexicon, self.max_gap, forms=tokens)
        elif self.lexicon is not None:
            candidates = find_candidates(lem, self.lexicon, self.max_gap, any_order=self.filters.any_order,
                                         forms=tokens)
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
    if encoding == "iob-constant":
        return " ".join(encode_constant(sent)), 0
    if encoding == "none":
        return " ".join(sent.tokens), 0
    if encoding in HINT_ENCODINGS:   # no hints: every word |0 (hints need a table: `mwemt.preprocess.hints`)
        return " ".join(plain_factored(sent)), 0
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
    # list up to this many occurrences with their probability (0 = none; see `occurrence_record`)
    list_occurrences: int = 0
    occurrences: list = field(default_factory=list)
    occurrences_left_out: int = 0

    def add(self, sent: AnnotatedSentence, unencoded: int = 0) -> None:
        self.sentences += 1
        for _, reason in sent.rejected:
            self.removed_by_filter[reason] += 1
        if self.list_occurrences:
            judged = [(m, True) for m in sent.mwes] + [(m, False) for m, _ in sent.rejected if m.confidence is not None]
            for m, kept in sorted(judged, key=lambda mk: mk[0].indices):
                if len(self.occurrences) < self.list_occurrences:
                    self.occurrences.append(occurrence_record(self.sentences, sent, m, kept))
                else:
                    self.occurrences_left_out += 1
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
        for occ in other.occurrences:  # the other report counted its sentences from 1
            if len(self.occurrences) < self.list_occurrences:
                self.occurrences.append({**occ, "sentence": occ["sentence"] + self.sentences})
            else:
                self.occurrences_left_out += 1
        self.occurrences_left_out += other.occurrences_left_out
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
        if self.list_occurrences:
            d["occurrences"] = self.occurrences
            d["occurrences_left_out"] = self.occurrences_left_out
        if lexicon_size:
            d["coverage"]["lexicon_entries"] = lexicon_size
            d["coverage"]["lexicon_ratio"] = round(len(self.by_entry) / lexicon_size, 4)
        return d


def occurrence_record(sentence: int, sent: AnnotatedSentence, m: Mwe, kept: bool) -> dict:
    """One occurrence for the annotate report: sentence number (1-based), token indices (0-based),
    the entry as the lexicon writes it, the words of the text, P(MWE) (None: not judged) and whether
    it was kept."""
    return {"sentence": sentence, "indices": list(m.indices), "name": m.lemma,
            "surface": " ".join(sent.tokens[i] for i in m.indices), "probability": m.confidence, "kept": kept}


NO_FILTERS_NOTE = ("no identification filters: every lexicon match is kept (the lexicon has no training "
                   "data and no raw corpus was given, or filters were turned off)")


def describe_filters(model) -> dict:
    """What the annotate report says about the filters in use (``model`` None: none)."""
    if model is None:
        return {"active": [], "note": NO_FILTERS_NOTE}
    return model.describe()


@dataclass
class AnnotatedPairs:
    """A parallel corpus ready for subwords: encoded source lines, tokenized target lines, counts."""

    source: list[str]
    target: list[str]
    report: AnnotationReport
    dropped_empty: int = 0


def annotate_pairs(annotator: Annotator, pairs: Iterable[tuple[str, str]], encoding: str,
                   tgt_lang: str, confidence_buckets: int = 0) -> AnnotatedPairs:
    """Encode each source with its MWE annotation and tokenize each target like the source.

    A pair with a side that has no token is dropped (and counted), so both sides stay aligned.
    """
    out = AnnotatedPairs([], [], AnnotationReport())
    for src, tgt in pairs:
        sent = annotator.annotate_text(src)
        tgt_tokens = tgt.split() if annotator.pretokenized else tokenize(tgt, tgt_lang)
        if not sent.tokens or not tgt_tokens:
            out.dropped_empty += 1
            continue
        line, skipped = encode_sentence(sent, encoding, confidence_buckets)
        out.report.add(sent, skipped)
        out.source.append(line)
        out.target.append(" ".join(tgt_tokens))
    return out


def annotate_cupt(annotator: Annotator, sentences: Iterable, *, relemmatize: bool = False) -> Iterator[tuple]:
    """(sentence, `AnnotatedSentence`) for each `CuptSentence`, annotated on its own words.

    The LEMMA column is used (the form where it is ``_``) unless ``relemmatize``, in which case the
    annotator's lemmatizer reads the forms; UPOS is passed on when every word has one, and the
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


def _annotate_chunk(annotator: Annotator, task: tuple[list[str], str, int, int]) -> tuple[list[str], AnnotationReport]:
    lines, encoding, buckets, listed = task
    report = AnnotationReport(list_occurrences=listed)
    out = list(annotate_lines(annotator, lines, encoding, report, buckets))
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
    process; chunks come back in input order. Closing the iterator early (or an interrupt) kills
    and reaps the workers (`mwemt.processes.ordered_map`).
    """
    if workers <= 1:
        yield from annotate_lines(annotator, lines, encoding, report, confidence_buckets)
        return
    from mwemt.processes import ordered_map

    chunks = ((chunk, encoding, confidence_buckets, report.list_occurrences) for chunk in _chunks(lines, chunk_size))
    results = ordered_map(_annotate_chunk, chunks, workers, state=annotator)
    try:
        for out, rep in results:
            report.merge(rep)
            yield from out
    finally:
        results.close()
