"""An MWE agreement test from any MQM file of the WMT format: per source MWE and system line, was the MWE
translated right (Y) or not (N), by the raters' error spans.

Input: an MQM file with error spans (``wmt-mqm-errors`` or ``marot-sxs``, read by
`mwemt.judgements.read_mqm_ratings`: a row per error or ``No-error`` mark, the span marked ``<v>…</v>``
in the target, or in the source for an omission), the human reference being one of its systems (``ref``).

Steps (`mqm_judgements`):

1. **Source MWEs**: each segment's source is annotated by the given `Annotator` (the OEWN look-up of
   `mwemt annotate`, `build_annotator`): its Moses tokens and MWEs.
2. **Alignment**: every system's line and the reference of every segment are aligned to the source
   tokens in *one* call of the MWE score's aligner (`MweScore.align_hypotheses` under the given
   `MweAlignSettings`), so the lines of all systems share one alignment model.
3. **Reference translations**: each MWE's translation in the reference is taken from the reference's
   links by the test builder's span rules and filters (`mwemt.testsets.aligned.build_aligned_testset`);
   MWEs whose reference translation is unusable (no linked word, too long, scattered, only function
   words) are left out of the test and counted by reason (``counts["mwes_without_reference"]``). The
   MWE translation table of the test (`MweTranslationTable.build_from_alignment` on the same reference
   links) gives each MWE its attested translations elsewhere in the test (its ``alternatives``).
4. **Verdicts**: for every other system and every MWE with a reference translation, the MWE's target
   words are the system's tokens linked to the MWE's source tokens. The verdict is

   - **N** when a rater of that line marked an error of an ``error_categories`` kind (default Accuracy
     and Fluency, any severity) whose target span overlaps those words (by character), or whose source
     span (an omission) overlaps the MWE's source tokens;
   - **Y** when the raters of that line marked no error span of any kind over those words;
   - left out when only errors of another kind (Terminology, Style, Other, Locale convention...) overlap
     the words: the raters saw a problem there that is not clearly about the translation being wrong
     (``other_errors="exclude"``; ``"Y"`` counts them as Y);
   - left out when no system token is linked to the MWE (and no omission span covers it: then N), or
     the aligner skipped the line: there are no words to judge;
   - left out when a rater marked an error of an ``error_categories`` kind with no span anywhere (no
     ``<v>`` in the target or the source, e.g. a stray ``</v>``): it may be on the MWE's words, so the
     line's MWEs are neither N nor Y by that error (an error of another kind without a span counts as
     one over the words: left out, or Y with ``other_errors="Y"``).

   Every row left out is counted by reason (``counts["rows_left_out"]``). Spans are compared in
   non-whitespace character offsets (`mwemt.judgements.marked_spans`, `token_offsets`), so whitespace
   variants of a text and Moses' token splits do not move them.

The result is a `mwemt.evaluate.mwe_agreement.MweJudgements` (its rows grouped by segment id for the
bootstrap); `write_judgements` writes it as a test set, one hypothesis file per system and a verdict
table (`mwemt meta-eval mwe-test`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.evaluate.mwe_agreement import JudgedMwe, MweJudgements
from mwemt.judgements import MqmRating

NO_ERROR = "no-error"
OTHER_ERRORS = ("exclude", "Y")


@dataclass(frozen=True)
class MqmMweRules:
    """How error spans become MWE verdicts (module docstring)."""

    error_categories: tuple[str, ...] = ("Accuracy", "Fluency")
    other_errors: str = "exclude"
    reference_system: str | None = None  # None: the one system named like a reference (ref, ref-A...)

    def __post_init__(self) -> None:
        if self.other_errors not in OTHER_ERRORS:
            raise MwemtError(f"other_errors must be one of {', '.join(OTHER_ERRORS)}, not {self.other_errors!r}")
        if not self.error_categories:
            raise MwemtError("name at least one MQM error category whose spans make a verdict N")

    def is_error(self, category: str) -> bool:
        """Whether ``category`` (e.g. ``Accuracy/Mistranslation``) is one of the N-making kinds."""
        top = category.split("/")[0].strip().lower()
        return top in {c.lower() for c in self.error_categories}


def is_no_error(rating: MqmRating) -> bool:
    return rating.category.strip().lower() == NO_ERROR or rating.severity.strip().lower() == NO_ERROR


def token_offsets(text: str, tokens: Sequence[str]) -> list[tuple[int, int] | None]:
    """Each token's (start, end) in non-whitespace characters of ``text``, found left to right; None for a
    token the text does not hold there (a tokenizer that rewrote characters)."""
    squashed = "".join(ch for ch in text if not ch.isspace())
    out: list[tuple[int, int] | None] = []
    at = 0
    for tok in tokens:
        piece = "".join(ch for ch in tok if not ch.isspace())
        k = squashed.find(piece, at) if piece else -1
        if k < 0:
            out.append(None)
            continue
        out.append((k, k + len(piece)))
        at = k + len(piece)
    return out


def overlaps(spans: Sequence[tuple[int, int]], ranges: Sequence[tuple[int, int] | None]) -> bool:
    """Whether any span shares a character with any of the ranges."""
    return any(a < e and s < b for a, b in spans for r in ranges if r is not None for s, e in [r])


@dataclass
class LineErrors:
    """The errors marked on one system's line of one segment: (category, source spans, target spans)."""

    errors: list[tuple[str, tuple, tuple]]
    raters: set[str]


def collect_errors(ratings: Sequence[MqmRating]) -> dict[tuple[str, str], LineErrors]:
    out: dict[tuple[str, str], LineErrors] = defaultdict(lambda: LineErrors([], set()))
    for r in ratings:
        line = out[(r.system, r.segment)]
        line.raters.add(r.rater)
        if not is_no_error(r):
            line.errors.append((r.category, r.source_spans, r.target_spans))
    return dict(out)


def verdict_of(errors: LineErrors, target_ranges: Sequence[tuple[int, int] | None],
               source_ranges: Sequence[tuple[int, int] | None], rules: MqmMweRules) -> tuple[str | None, str]:
    """("Y" | "N" | None, why) for one MWE: ``target_ranges`` are its linked tokens' character ranges in the
    line, ``source_ranges`` its source tokens'. None = left out, ``why`` says the reason."""
    hit_error, hit_other, unplaced = [], [], []
    for category, src_spans, tgt_spans in errors.errors:
        if not src_spans and not tgt_spans:   # marked nowhere: it may be on these words
            (unplaced if rules.is_error(category) else hit_other).append(category)
            continue
        on_words = bool(target_ranges) and overlaps(tgt_spans, target_ranges)
        omitted = overlaps(src_spans, source_ranges)
        if on_words or omitted:
            (hit_error if rules.is_error(category) else hit_other).append(category)
    if hit_error:
        return "N", "; ".join(sorted(set(hit_error)))
    if not any(target_ranges):
        return None, "no aligned words"
    if unplaced:
        return None, "an error without a marked span"
    if hit_other:
        if rules.other_errors == "Y":
            return "Y", "other errors only: " + "; ".join(sorted(set(hit_other)))
        return None, "other errors only"
    return "Y", ""


def source_annotator(lexicon: str | Path, lang: str = "en"):
    """The source-side MWE look-up of an agreement test: `build_annotator` with ``lexicon`` and the
    MWE-in-context judgement that test-set building uses (``mwe_context="auto"``: the bundled model for
    an OEWN lexicon)."""
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator

    return build_annotator(AnnotatorConfig(lang, (str(lexicon),), mwe_context="auto"), log=lambda _msg: None)


def mqm_judgements(path: str | Path, annotator, *, tgt_lang: str = "de", fmt: str = "auto",
                   rules: MqmMweRules = MqmMweRules(), align=None,
                   progress: Callable[[str], None] = lambda _msg: None) -> MweJudgements:
    """The MWE agreement test of an MQM file (module docstring). ``annotator``: finds the source MWEs
    (`mwemt.preprocess.annotate.build_annotator`); ``align``: the MWE score's alignment settings
    (`MweAlignSettings`; default: the MWE score's, with the shared alignment cache)."""
    from mwemt.evaluate.mwe_score import MweAlignSettings, MweScore
    from mwemt.judgements import collect_texts, guess_reference_system, read_mqm_ratings
    from mwemt.testsets.align import default_cache_dir
    from mwemt.testsets.aligned import ReferenceFilters, build_aligned_testset
    from mwemt.testsets.mwe_table import MweTranslationTable

    ratings = list(read_mqm_ratings(path, fmt))
    texts = collect_texts(ratings, path)
    ref_system = rules.reference_system or guess_reference_system(texts.systems)
    if ref_system is None or ref_system not in texts.systems:
        raise MwemtError(f"{path}: no reference system to take the MWEs' reference translations from "
                         f"(systems: {', '.join(texts.systems)}); name it (reference_system, --reference-system)")
    systems = [s for s in texts.systems if s != ref_system]
    if not systems:
        raise InputError(f"only the reference system {ref_system!r} is rated: there is no system line to judge", path,
                         expected="MQM rows of at least one system besides the reference")
    segments = [g for g in texts.ids if (ref_system, g) in texts.targets]
    progress(f"annotating {len(segments)} source segments")
    sentences = [annotator.annotate_text(texts.sources[g]) for g in segments]
    scorer = MweScore(tgt_lang, align=align if align is not None else MweAlignSettings(cache_dir=default_cache_dir()))
    lines = {s: [texts.targets.get((s, g), "") for g in segments] for s in [ref_system, *systems]}
    names = list(lines)
    progress(f"aligning {len(names) * len(segments)} lines ({len(names)} systems with the reference)")
    tokens = {s: [scorer.moses_tokens(t) for t in lines[s]] for s in names}
    sources = [" ".join(sent.tokens) for sent in sentences]
    by_system, facts = {}, {}
    for s in names:  # each line alone, by the model of the test's source/reference pairs (line-stable)
        by_system[s], facts = scorer.align_hypotheses(sources, tokens[s], lines[ref_system])
    n = len(segments)
    ref_links = [lk if lk is not None else [] for lk in by_system[ref_system]]
    table, table_counts = MweTranslationTable.build_from_alignment(
        sentences, tokens[ref_system], ref_links, filters=ReferenceFilters(tgt_lang=tgt_lang),
        provenance={"from": f"{Path(path).name}: source/reference alignment"})
    items, report = build_aligned_testset(
        sentences, tokens[ref_system], ref_links, list(range(1, n + 1)), tgt_lang=tgt_lang,
        filters=ReferenceFilters(tgt_lang=tgt_lang),
        unaligned_pairs=[k for k, lk in enumerate(by_system[ref_system]) if lk is None], table=table)
    at = [int(it.id) - 1 for it in items]  # item -> segment position
    for it, k in zip(items, at):
        it.meta["seg_id"] = segments[k]
    errors = collect_errors(ratings)
    rows: list[JudgedMwe] = []
    left_out: Counter = Counter()
    verdicts: Counter = Counter()
    for s in systems:
        for i, (it, k) in enumerate(zip(items, at)):
            seg = segments[k]
            line_errors = errors.get((s, seg))
            if line_errors is None:
                left_out["line not rated"] += len(it.mwes)
                continue
            line_links = by_system[s][k]
            if line_links is None:
                left_out["line not aligned"] += len(it.mwes)
                continue
            tgt_ranges = token_offsets(lines[s][k], tokens[s][k])
            src_ranges = token_offsets(texts.sources[seg], sentences[k].tokens)
            for m, mwe in enumerate(it.mwes):
                linked = sorted({j for a, j in line_links if a in set(mwe.indices)})
                verdict, why = verdict_of(line_errors, [tgt_ranges[j] for j in linked],
                                          [src_ranges[a] for a in mwe.indices], rules)
                if verdict is None:
                    left_out[why] += 1
                    continue
                verdicts[verdict] += 1
                words = " ".join(tokens[s][k][j] for j in linked)
                rows.append(JudgedMwe(s, i, m, 1 if verdict == "Y" else 0, seg,
                                      note=f"{words}\t{why}"))
    if not rows:
        why = (f"{report.mwes_found} source MWE(s) of the lexicon found, {report.mwes_kept} with a reference "
               f"translation; rows left out: {dict(left_out) or 'none'}")
        raise InputError(f"no MWE could be judged ({why})", path,
                         expected="source sentences with MWEs of --lexicon, and rated system lines with words aligned "
                                  "to them")
    hyps = {s: [lines[s][k] for k in at] for s in systems}
    counts = {"segments": len(segments), "systems": len(systems), "reference_system": ref_system,
              "mwes_found": report.mwes_found, "mwes_with_reference": report.mwes_kept,
              "mwes_without_reference": dict(report.filtered),
              "system_lines_with_mwes": len(systems) * len(items), "verdicts": dict(verdicts),
              "rows_left_out": dict(left_out), "table": {"keys": len(table), **table_counts}}
    judgements = MweJudgements(f"{Path(path).name} (MQM spans)", tgt_lang, items, hyps, rows, pretokenized=False,
                               alignments={s: [by_system[s][k] for k in at] for s in systems},
                               alignment=facts.get("alignment", ""), table=table, counts=counts)
    return judgements


def write_judgements(out_dir: str | Path, judgements: MweJudgements) -> dict[str, Path]:
    """Write the test (``testset.jsonl``: items with their MWEs and reference translations), each system's
    lines (``hyp/SYSTEM.txt``, one per item), and ``verdicts.tsv``: system, segment id, item line, MWE,
    its reference translation, the system's aligned words, verdict (Y/N) and the error categories behind
    an N."""
    from mwemt.fileio import write_lines
    from mwemt.formats import write_testset
    from mwemt.judgements import system_file_names

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"testset": out / "testset.jsonl", "verdicts": out / "verdicts.tsv"}
    write_testset(paths["testset"], judgements.items)
    names = system_file_names(judgements.hyps)
    for s, hyps in judgements.hyps.items():
        paths[f"hyp:{s}"] = out / "hyp" / names[s]
        paths[f"hyp:{s}"].parent.mkdir(parents=True, exist_ok=True)
        write_lines(paths[f"hyp:{s}"], [h.replace("\n", " ") for h in hyps])
    lines = ["system\tseg_id\titem\tmwe\treference\taligned_words\tverdict\terrors"]
    for r in judgements.rows:
        it = judgements.items[r.item]
        mwe = it.mwes[r.mwe]
        words, _, why = r.note.partition("\t")
        lines.append("\t".join([r.system, r.group, str(r.item + 1), mwe.display_name, mwe.reference, words,
                                "Y" if r.label else "N", why]))
    write_lines(paths["verdicts"], lines)
    return paths
