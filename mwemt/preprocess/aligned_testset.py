"""MWE test sets from any parallel text: lexicon MWEs in the source, their translation by word alignment.

`mwemt testset build` annotates each source sentence with the same `Annotator` as `mwemt annotate`,
aligns the pairs (`mwemt.preprocess.align`), and takes as each MWE's reference translation the
target words aligned to its tokens, in target order:

- the *core* is the set of target words linked to any token of the MWE (punctuation is left out);
- a target token between two core words joins the translation when nothing links it elsewhere
  (an article or preposition that the aligner left unlinked, as "dell'" in "problema dell' accumulo");
- a run of tokens linked to source words outside the MWE is a gap, written ``...`` as in the TED
  references ("ha ... vinto").

Alignments are noisy, so three filters drop MWEs whose translation cannot be trusted, each counted
in the report: ``unaligned`` (no target word is linked to the MWE), ``span_too_long`` (first to last
target word spans more than ``max_span_factor`` times the MWE's length plus ``max_span_slack``
tokens) and ``scattered`` (more than ``max_gaps`` gaps). The annotator's MWEs never overlap.

Everything here is pure: the caller annotates, aligns and writes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from mwemt.errors import MwemtError
from mwemt.preprocess.align import Alignment, format_pharaoh
from mwemt.preprocess.tokenize import detokenize
from mwemt.records import AnnotatedSentence, TestItem, TestMwe

GAP = "..."
FILTERS = ("unaligned", "span_too_long", "scattered")


@dataclass(frozen=True)
class ReferenceFilters:
    """When an alignment-derived MWE translation is unusable (see the module docstring)."""

    max_span_factor: float = 2.0
    max_span_slack: int = 2
    max_gaps: int = 1

    def __post_init__(self) -> None:
        if self.max_span_factor <= 0 or self.max_span_slack < 0 or self.max_gaps < 0:
            raise MwemtError("reference filters need max_span_factor > 0, max_span_slack >= 0 and max_gaps >= 0")

    def max_span(self, mwe_length: int) -> int:
        return int(self.max_span_factor * mwe_length) + self.max_span_slack


@dataclass(frozen=True)
class AlignedReference:
    """The target tokens an MWE translates to: their indices, and the runs of tokens between gaps."""

    indices: tuple[int, ...]
    runs: tuple[tuple[str, ...], ...]
    span: int  # target tokens from the first to the last word, gaps included

    @property
    def gaps(self) -> int:
        return len(self.runs) - 1

    @property
    def text(self) -> str:
        """The tokens joined by spaces, ``...`` between runs: "ha ... vinto"."""
        return f" {GAP} ".join(" ".join(run) for run in self.runs)

    def detokenized(self, lang: str) -> str:
        """Each run detokenized ("problema dell'accumulo"): the form the MWE score tokenizes back into
        the same tokens as a hypothesis, since it Moses-tokenizes both."""
        return f" {GAP} ".join(detokenize(list(run), lang) for run in self.runs)


def _is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


def aligned_reference(mwe_indices: Sequence[int], links: Alignment, tgt_tokens: Sequence[str]) -> AlignedReference | None:
    """The MWE's translation under ``links`` (source index, target index); None when no target word
    is linked to it."""
    members = set(mwe_indices)
    linked_src: dict[int, set[int]] = {}
    for i, j in links:
        linked_src.setdefault(j, set()).add(i)
    core = sorted(j for j, srcs in linked_src.items() if srcs & members and _is_word(tgt_tokens[j]))
    if not core:
        return None
    kept: list[int] = []
    runs: list[list[str]] = [[]]
    for j in range(core[0], core[-1] + 1):
        srcs = linked_src.get(j, set())
        if srcs & members or not srcs:  # linked to the MWE, or unlinked inside its span
            kept.append(j)
            runs[-1].append(tgt_tokens[j])
        elif runs[-1]:
            runs.append([])  # the first token linked elsewhere opens a gap
    return AlignedReference(tuple(kept), tuple(tuple(r) for r in runs), core[-1] - core[0] + 1)


def filter_reason(ref: AlignedReference | None, mwe_length: int, filters: ReferenceFilters) -> str | None:
    """Which filter drops this reference (one of `FILTERS`), or None to keep it."""
    if ref is None:
        return "unaligned"
    if ref.span > filters.max_span(mwe_length):
        return "span_too_long"
    if ref.gaps > filters.max_gaps:
        return "scattered"
    return None


@dataclass
class BuildReport:
    """Counts of `build_aligned_testset`, with a few examples of each filter for the user to read."""

    pairs: int = 0
    empty_pairs: int = 0
    not_aligned_pairs: int = 0  # empty side or too long for the aligner
    sentences_with_mwes: int = 0
    mwes_found: int = 0
    mwes_kept: int = 0
    gapped_references: int = 0
    filtered: Counter = field(default_factory=Counter)
    examples: dict[str, list[dict]] = field(default_factory=dict)
    items: int = 0
    by_length: Counter = field(default_factory=Counter)
    by_category: Counter = field(default_factory=Counter)
    top_names: Counter = field(default_factory=Counter)
    max_examples: int = 10

    def note_filtered(self, reason: str, example: dict) -> None:
        self.filtered[reason] += 1
        bucket = self.examples.setdefault(reason, [])
        if len(bucket) < self.max_examples:
            bucket.append(example)

    def to_dict(self, top: int = 20) -> dict:
        return {
            "pairs": self.pairs, "empty_pairs": self.empty_pairs, "not_aligned_pairs": self.not_aligned_pairs,
            "sentences_with_mwes": self.sentences_with_mwes, "mwes_found": self.mwes_found,
            "filtered": {r: self.filtered.get(r, 0) for r in FILTERS}, "mwes_kept": self.mwes_kept,
            "kept_ratio": round(self.mwes_kept / self.mwes_found, 4) if self.mwes_found else 0.0,
            "gapped_references": self.gapped_references, "items": self.items,
            "mwes_by_length": {str(k): v for k, v in sorted(self.by_length.items())},
            "mwes_by_category": dict(self.by_category.most_common()),
            "distinct_mwes": len(self.top_names), "top_mwes": dict(self.top_names.most_common(top)),
            "filtered_examples": self.examples,
        }

    def summary(self) -> str:
        f = self.filtered
        return (f"{self.pairs} pairs, {self.mwes_found} MWEs found in {self.sentences_with_mwes} sentences: "
                f"{self.mwes_kept} kept ({len(self.top_names)} distinct), {f['unaligned']} unaligned, "
                f"{f['span_too_long']} with too long a span, {f['scattered']} scattered; {self.items} items")


def build_aligned_testset(sentences: Sequence[AnnotatedSentence], tgt_tokens: Sequence[Sequence[str]],
                          alignments: Sequence[Alignment], line_numbers: Sequence[int], *,
                          tgt_lang: str, filters: ReferenceFilters = ReferenceFilters(),
                          all_sentences: bool = False, raw: Sequence[tuple[str, str]] | None = None,
                          unaligned_pairs: Sequence[int] = ()) -> tuple[list[TestItem], BuildReport]:
    """One `TestItem` per input pair that keeps at least one MWE (every pair with ``all_sentences``).

    ``sentences[k]`` is the annotated source of input line ``line_numbers[k]`` (the item id),
    ``tgt_tokens[k]`` its tokenized target (in ``tgt_lang``) and ``alignments[k]`` their links. MWE
    references are written detokenized (see `AlignedReference.detokenized`). ``raw`` holds the
    input lines as given, kept in the item's meta. ``unaligned_pairs`` are the 0-based pairs the
    aligner could not align (counted apart in the report).
    """
    n = len(sentences)
    if not (len(tgt_tokens) == len(alignments) == len(line_numbers) == n) or (raw is not None and len(raw) != n):
        raise MwemtError("build_aligned_testset: sentences, targets, alignments, line numbers and raw "
                         "lines must have the same length")
    report = BuildReport(pairs=n, not_aligned_pairs=len(unaligned_pairs))
    items: list[TestItem] = []
    for k, (sent, tgt, links, lineno) in enumerate(zip(sentences, tgt_tokens, alignments, line_numbers)):
        mwes, filtered = _sentence_mwes(sent, tgt, links, lineno, tgt_lang, filters, report)
        if mwes or all_sentences:
            meta: dict = {"line": lineno, "alignment": format_pharaoh(links)}
            if filtered:
                meta["filtered"] = filtered
            if raw is not None:
                meta["raw_source"], meta["raw_reference"] = raw[k]
            items.append(TestItem(str(lineno), " ".join(sent.tokens), " ".join(tgt), mwes, meta))
    report.items = len(items)
    return items, report


def _sentence_mwes(sent: AnnotatedSentence, tgt: Sequence[str], links: Alignment, lineno: int, tgt_lang: str,
                   filters: ReferenceFilters, report: BuildReport) -> tuple[list[TestMwe], list[dict]]:
    if sent.mwes:
        report.sentences_with_mwes += 1
    kept: list[TestMwe] = []
    filtered: list[dict] = []
    for m in sent.mwes:
        report.mwes_found += 1
        ref = aligned_reference(m.indices, links, tgt)
        reason = filter_reason(ref, m.length, filters)
        surface = " ".join(sent.tokens[i] for i in m.indices)
        if reason is not None:
            filtered.append({"indices": list(m.indices), "name": m.lemma, "reason": reason,
                             **({"reference": ref.text} if ref is not None else {})})
            report.note_filtered(reason, {"line": lineno, "mwe": surface,
                                          "reference": ref.text if ref is not None else "",
                                          "source": " ".join(sent.tokens), "target": " ".join(tgt)})
            continue
        assert ref is not None
        lemma = " ".join(sent.lemmas[i] for i in m.indices)
        kept.append(TestMwe(m.indices, lemma, ref.detokenized(tgt_lang), m.category, surface, name=m.lemma,
                            reference_indices=ref.indices, confidence=m.confidence))
        report.mwes_kept += 1
        report.gapped_references += ref.gaps > 0
        report.by_length[m.length] += 1
        report.by_category[m.category or "(none)"] += 1
        report.top_names[m.lemma] += 1
    return kept, filtered
