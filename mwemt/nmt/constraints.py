"""Which target words lexically constrained decoding forces, and whether it keeps them: the one
component `mwemt translate --constraints` and the grid's translate stage both use.

Two kinds of constrained decoding (`CONSTRAINT_MODES`):

- ``unordered`` / ``ordered`` (`ForcedConstraints`, the reference point): every source MWE the MWE
  translation table lists gets the table's best translation forced into the output by fairseq's
  lexically constrained beam search (`TableConstraints`), anywhere or in source order.
- ``judged`` (`JudgedConstraints`): constraints only where the model needs them and the model accepts
  them.

  1. *Which MWEs*: the table's multi-word keys, found in the source and kept only when the
     MWE-in-context classifier (`mwemt.preprocess.mwe_context`) reads them as MWEs in their sentence
     (*going to* + verb is no *go to*).
  2. *Candidates* (`CandidateFinder`): the MWE's attested translations (alignment counts at least
     ``min_count``) and the dictionary's (``sources``), ranked by alignment count, then by their
     target-side frequency in the model's training target text (`TargetFrequency`), never by the
     alphabet; at most ``candidates`` of them.
  3. *First pass*: plain beam search, the baseline's output. An MWE one of whose candidates the first
     pass already has (compared by Italian lemma or a shared stem, `Presence`) is left alone.
  4. *The model chooses*: each remaining MWE's line is decoded with each candidate as its constraint
     (batched; fairseq's constrained search); the candidate with the best model score wins. A line
     with several such MWEs is decoded once more with every winner.
  5. *Accepted or not*: the constrained output replaces the first pass only when its length-normalized
     model score (fairseq's ``score``: log-probability per output token) is at most ``threshold``
     below the first pass's. ``threshold`` is tuned on the validation split only (`tune_threshold`:
     the validation BLEU of every threshold between observed drops), never on a test set.

`constrained_translate` runs either kind and returns the translations with a `ConstraintReport`
(lines constrained, accepted, rejected), which the translate stage writes as constraints.json and
`mwemt translate` prints as its summary line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.testsets.mwe_table import GAP, MweTranslationTable, type_key
from mwemt.testsets.mwe_table import SOURCES as TABLE_SOURCES

# fairseq's lexically constrained beam search (Post & Vilar 2018): every constraint anywhere, or in order
CONSTRAINT_ORDERS = ("unordered", "ordered")
# how constraints are chosen and kept: forced as the table says (an order above), or judged (module docstring)
CONSTRAINT_MODES = CONSTRAINT_ORDERS + ("judged",)
# the MWE-in-context model of judged constraints: the bundled English OEWN classifier, none (every
# table match), or in-context (`mwemt.preprocess.mwe_in_context`: look-alike rules, then the classifier with
# the entries' categories at a recall-first threshold; issue 42)
CONTEXT_MODELS = ("bundled", "none", "in-context")
# how judged constraints rank an MWE's candidates: by alignment count, then target frequency (count), or by fit
# to the line's source context (context: `mwemt.testsets.senses`, one candidate per sense; needs senses_file)
RANKINGS = ("count", "context")
MAX_FORMS = 10
THRESHOLD_FORMAT = "mwemt-constraint-threshold"
# the largest |threshold| (a drop of the per-token log-probability): the config's bound and the command line's
MAX_THRESHOLD = 100.0
TUNE_METRIC = "bleu"
TUNE_RULE = "largest threshold with validation BLEU >= the first pass's"
# how judged constraints accept an option: ``plain`` (the tuned threshold alone, as first built) or ``guarded``
# (issue 42: never an output the degenerate-output check flags, and the threshold is the median of the no-loss
# points of seeded bootstrap resamples of the tuning lines, which moves less with the few lines that decide it)
ACCEPTANCES = ("plain", "guarded")
TUNE_RULE_GUARDED = ("median over {n} seeded resamples of the tuning lines of the largest threshold with "
                     "validation BLEU >= the first pass's; degenerate outputs never accepted")
TUNE_RESAMPLES, TUNE_SEED = 200, 12345


@dataclass(frozen=True)
class ConstraintOptions:
    """How constraints are chosen (checked once, here). ``threshold``: the largest drop of the
    length-normalized model score a judged constraint may cost (None: not known yet, tune it)."""

    mode: str = "unordered"
    min_count: int = 1
    sources: tuple[str, ...] = TABLE_SOURCES
    candidates: int = 3
    threshold: float | None = None
    mwe_context: str = "bundled"
    ranking: str = "count"
    forms: int = 1                    # judged: inflected forms per candidate (1: the table's form only)
    senses_file: str | None = None    # ranking context: the sense contexts (`mwemt.testsets.senses`)
    forms_file: str | None = None     # forms > 1: the target forms (`mwemt.testsets.forms`)
    acceptance: str = "plain"         # judged: plain | guarded (`ACCEPTANCES`)

    def __post_init__(self) -> None:
        if self.mode not in CONSTRAINT_MODES:
            raise MwemtError(f"constraint mode {self.mode!r}: choose one of {', '.join(CONSTRAINT_MODES)}")
        if self.min_count < 0:
            raise MwemtError(f"constraint min_count must be 0 or more, not {self.min_count}")
        if not self.sources or not set(self.sources) <= set(TABLE_SOURCES):
            raise MwemtError(f"constraint sources {list(self.sources)}: choose from {', '.join(TABLE_SOURCES)}")
        if self.candidates < 1:
            raise MwemtError(f"constraint candidates must be at least 1, not {self.candidates}")
        if self.threshold is not None and not math.isfinite(self.threshold):
            raise MwemtError(f"constraint threshold must be a finite number, not {self.threshold}")
        if self.mode != "judged" and self.threshold is not None:
            raise MwemtError("a constraint threshold judges constraints: it needs constraint mode 'judged'")
        if self.mwe_context not in CONTEXT_MODELS:
            raise MwemtError(f"constraint mwe_context {self.mwe_context!r}: choose one of {', '.join(CONTEXT_MODELS)}")
        if self.acceptance not in ACCEPTANCES:
            raise MwemtError(f"constraint acceptance {self.acceptance!r}: choose one of {', '.join(ACCEPTANCES)}")
        if self.mode != "judged" and self.acceptance != "plain":
            raise MwemtError("constraint acceptance 'guarded' decides which judged constraints are kept: it needs "
                             "constraint mode 'judged'")
        if self.ranking not in RANKINGS:
            raise MwemtError(f"constraint ranking {self.ranking!r}: choose one of {', '.join(RANKINGS)}")
        if not 1 <= self.forms <= MAX_FORMS:
            raise MwemtError(f"constraint forms must be between 1 and {MAX_FORMS}, not {self.forms}")
        if self.mode != "judged" and (self.ranking != "count" or self.forms != 1):
            raise MwemtError("candidate ranking by context and inflected forms are judged constraints' (they choose "
                             "among candidates): they need constraint mode 'judged'")
        if self.ranking == "context" and not self.senses_file:
            raise MwemtError("constraint ranking 'context' needs the sense contexts (a senses file written with the "
                             "table, scripts/sense_data.py or the run's sense-data stage)")
        if self.forms > 1 and not self.forms_file:
            raise MwemtError(f"constraint forms {self.forms} needs the target forms (a forms file written with the "
                             "table, scripts/sense_data.py or the run's sense-data stage)")


# ---------------------------------------------------------------- which phrases the table gives


def table_translations(table, key: str, min_count: int, sources: Sequence[str]):
    """The table's translations of ``key`` that ``min_count`` and ``sources`` let through, highest count
    first. The dictionary's exemption from ``min_count`` holds only while the dictionary is a chosen source:
    ``sources=("aligned",), min_count=100000`` lets nothing through that alignment attests fewer times,
    dictionary-listed or not (an explicit filter wins over the exemption)."""
    found = table.translations(key, min_count=min_count, sources=sources)
    return found if "dictionary" in sources else tuple(e for e in found if e.count >= min_count)


def _constraint_annotator(table, *, lang: str, lemmatizer: str, max_gap: int, mwe_context: str = "none"):
    """An `Annotator` whose lexicon is the table's multi-word keys (so a model trained without MWE
    annotation can be constrained), lemmatized as the model's training source was."""
    from mwemt.preprocess.annotate import AnnotatorConfig, build_annotator
    from mwemt.records import LexiconEntry

    entries = [LexiconEntry(tuple(key.split())) for key in table.keys() if len(key.split()) >= 2]
    if not entries:
        raise MwemtError("the MWE translation table has no multi-word key: nothing to constrain")
    if mwe_context in ("bundled", "in-context") and lang != "en":
        raise MwemtError(f"the bundled MWE-in-context classifier reads English sources, not {lang!r}: "
                         "use constraint mwe_context none, or a model of your own")
    annotator = build_annotator(AnnotatorConfig(lang=lang, lemmatizer=lemmatizer, max_gap=max_gap, filters="none",
                                                lexicon_format="list",
                                                mwe_context="none" if mwe_context == "in-context" else mwe_context),
                                entries, log=lambda *_: None)
    if mwe_context == "in-context":   # look-alike rules + the classifier with categories (issue 42)
        from mwemt.preprocess.mwe_in_context import bundled_decision

        annotator.filters = bundled_decision()
    return annotator


def _read_table(table):
    return table if isinstance(table, MweTranslationTable) else MweTranslationTable.read(table)


def constraint_table(table) -> MweTranslationTable:
    """``table`` (a table or its file) read and checked as constrained decoding needs it: a table with at least
    one multi-word key (one-word keys are never constrained). Needs no model: callers check it first."""
    found = _read_table(table)
    if not any(len(key.split()) >= 2 for key in found.keys()):
        where = "" if isinstance(table, MweTranslationTable) else f"{table}: "
        raise MwemtError(f"{where}the MWE translation table has no multi-word key: nothing to constrain "
                         "(expected a table of MWEs, e.g. from `mwemt testset table`)")
    return found


def _parts(words: Sequence[str], capitalize: bool) -> list[tuple[str, ...]]:
    """A translation as constraints: one per gap-separated part, the first word capitalized when the MWE
    starts a capitalized sentence (the table's tokens are casefolded)."""
    words = list(words)
    if capitalize and words:
        words[0] = words[0][:1].upper() + words[0][1:]
    out: list[tuple[str, ...]] = []
    part: list[str] = []
    for tok in words + [GAP]:
        if tok == GAP:
            if part:
                out.append(tuple(part))
            part = []
        else:
            part.append(tok)
    return out


class TableConstraints:
    """Target constraints from an MWE translation table (`mwemt.testsets.mwe_table`), forced as the table
    says (constraint modes ``unordered`` and ``ordered``: the reference point of judged constraints).

    The MWEs are found in the source with the table's own multi-word keys as the lexicon, lemmatized as the
    model's training source was, no identification filters. Each MWE found gets its table entry's best
    translation (highest alignment count, `table_translations` with ``min_count`` and ``sources``) as one
    constraint; a gapped translation (``ha ... vinto``) gives one constraint per part. Phrases come in source
    order (what ``ordered`` decoding keeps), each phrase once. The translation of a capitalized
    sentence-initial MWE is capitalized (*By the way* -> *A proposito*).
    """

    def __init__(self, table, *, lang: str, lemmatizer: str = "simplemma", max_gap: int = 0, min_count: int = 1,
                 sources: Sequence[str] = TABLE_SOURCES):
        self.table = _read_table(table)
        self.min_count, self.sources = min_count, tuple(sources)
        self.annotator = _constraint_annotator(self.table, lang=lang, lemmatizer=lemmatizer, max_gap=max_gap)

    def phrases(self, tokens: Sequence[str]) -> list[tuple[str, ...]]:
        """The constraints of one tokenized source sentence, in source order."""
        sent = self.annotator.annotate_tokens(list(tokens))
        out: list[tuple[str, ...]] = []
        for m in sorted(sent.mwes, key=lambda m: m.indices):
            found = table_translations(self.table, type_key(m.lemma), self.min_count, self.sources)
            if not found:
                continue
            initial = m.indices[0] == 0 and bool(tokens) and tokens[0][:1].isupper()
            for p in _parts(found[0].translation, initial):
                if p not in out:
                    out.append(p)
        return out


# ---------------------------------------------------------------- judged: candidates


class TargetFrequency:
    """How often the model's training target text has a word, read from the model's target dictionary
    (fairseq's counts of the segmented training target text): a word the target subword model keeps
    whole has its piece's count; a word cut into pieces comes after every whole word, by its rarest
    piece's count (an upper bound of its own)."""

    def __init__(self, tgt_dict, subword=None):
        self.dict, self.subword = tgt_dict, subword
        self._memo: dict[str, tuple[int, int]] = {}

    def word(self, word: str) -> tuple[int, int]:
        """(count as a whole word or 0, count of the rarest piece)."""
        if word not in self._memo:
            pieces = self.subword.encode_tokens([word]) if self.subword is not None else [word]
            counts = [self.dict.count[self.dict.index(p)] if self.dict.index(p) != self.dict.unk() else 0
                      for p in pieces]
            self._memo[word] = (counts[0] if len(counts) == 1 else 0, min(counts) if counts else 0)
        return self._memo[word]

    def phrase(self, words: Sequence[str]) -> tuple[int, int]:
        """A translation's frequency: its rarest word's (a phrase is as common as its rarest word)."""
        found = [self.word(w) for w in words if w != GAP]
        return min(found) if found else (0, 0)


@dataclass(frozen=True)
class Candidate:
    """One translation of a source MWE that judged decoding may force."""

    words: tuple[str, ...]
    count: int                   # alignment count (0: only the dictionary lists it)
    sources: tuple[str, ...]
    frequency: tuple[int, int]   # `TargetFrequency.phrase`

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class FoundMwe:
    """A source MWE read as an MWE in its sentence, with its candidates, best first."""

    key: str
    indices: tuple[int, ...]
    probability: float | None    # P(MWE reading) from the MWE-in-context classifier, None without one
    candidates: tuple[Candidate, ...]
    initial: bool                # starts a capitalized sentence: its translation is capitalized


class CandidateFinder:
    """The source MWEs of a sentence that judged decoding may constrain, and their candidates."""

    def __init__(self, table, options: ConstraintOptions, *, lang: str, lemmatizer: str, max_gap: int,
                 frequency: TargetFrequency):
        self.table, self.options, self.frequency = _read_table(table), options, frequency
        self.annotator = _constraint_annotator(self.table, lang=lang, lemmatizer=lemmatizer, max_gap=max_gap,
                                               mwe_context=options.mwe_context)
        self.ranker = self.forms = None
        if options.ranking == "context":   # sense from context (issue 42): `mwemt.testsets.senses`
            from mwemt.testsets.senses import SenseContexts, SenseRanker

            self.ranker = SenseRanker(SenseContexts.read(options.senses_file))
        if options.forms > 1:              # form from the sentence (issue 42): `mwemt.testsets.forms`
            from mwemt.testsets.forms import FormIndex

            self.forms = FormIndex.read(options.forms_file)

    def candidates(self, key: str, lemmas: Sequence[str] | None = None,
                   indices: Sequence[int] | None = None) -> tuple[Candidate, ...]:
        """Attested and dictionary translations, by alignment count, then target-side frequency (ranking
        ``count``), or one per sense by fit to the sentence's ``lemmas`` around the MWE at ``indices`` (ranking
        ``context``); the best ``options.candidates``, each followed by up to ``options.forms`` - 1 other forms
        the training target attests."""
        o = self.options
        entries = table_translations(self.table, key, o.min_count, o.sources)
        if self.ranker is not None and lemmas is not None and indices is not None:
            entries = tuple(r.entry for r in self.ranker.best(key, entries, lemmas, indices, o.candidates))
        found = [Candidate(e.translation, e.count, tuple(sorted(e.sources)), self.frequency.phrase(e.translation))
                 for e in entries]
        if self.ranker is None or lemmas is None:
            found.sort(key=lambda c: (-c.count, -c.frequency[0], -c.frequency[1], len(c.words)))
        found = found[:o.candidates]
        if self.forms is None:
            return tuple(found)
        counts = {e.translation: e.count for e in self.table.translations(key, min_count=0)}
        out: list[Candidate] = []
        for c in found:
            for words in self.forms.alternatives(c.words, o.forms):
                if all(words != d.words for d in out):
                    out.append(c if words == c.words else
                               Candidate(words, counts.get(words, 0), ("form",), self.frequency.phrase(words)))
        return tuple(out)

    def mwes(self, tokens: Sequence[str]) -> tuple[list[FoundMwe], int]:
        """The sentence's MWEs in context that have candidates, in source order, and how many table matches
        the MWE-in-context classifier read as literal (not constrained)."""
        sent = self.annotator.annotate_tokens(list(tokens))
        out = []
        for m in sorted(sent.mwes, key=lambda m: m.indices):
            cands = self.candidates(type_key(m.lemma), sent.lemmas, m.indices)
            if cands:
                initial = m.indices[0] == 0 and bool(tokens) and tokens[0][:1].isupper()
                out.append(FoundMwe(type_key(m.lemma), tuple(m.indices), m.confidence, cands, initial))
        return out, len(sent.rejected)


_ENCLITIC = re.compile(r"^(\w+[aei]r)(?:si|mi|ti|ci|vi|lo|la|li|le|ne|gli|glielo|gliela|selo|sela)$")


class Presence:
    """Whether an output already has a candidate translation, lemma-aware: each of the candidate's
    content words (4 characters or more; all its words when none is) matches a word of the output with
    the same lemma (the target language's `mwemt.preprocess.lemmatize` lemmatizer) or the same stem (a
    shared prefix of at least 5 characters that leaves at most 3 of either word); an Italian infinitive with
    an enclitic pronoun counts as its infinitive (*farlo* as *fare*): *prendersi cura di* is in *si prende cura
    del cane*, *rallegrarsi* in *rallegrati*, *lavatrice* is not in *lavabiancheria*."""

    MIN_CONTENT = 4
    MIN_STEM = 5
    MAX_ENDING = 3

    def __init__(self, lang: str, lemmatizer: str = "simplemma"):
        from mwemt.preprocess.lemmatize import get_lemmatizer

        self.lang = lang
        self.lemmatizer = get_lemmatizer(lemmatizer, lang)

    def words(self, text: str) -> list[tuple[str, str]]:
        from mwemt.preprocess.tokenize import tokenize

        forms = [t.casefold() for t in tokenize(text, self.lang) if t.strip()]
        lemmas = self.lemmatizer.lemmatize(forms)
        if self.lang == "it":   # farlo -> fare, prendersi -> prendere (the lemmatizer keeps them whole)
            lemmas = [_ENCLITIC.sub(r"\1e", lemma) if lemma == form else lemma for form, lemma in zip(forms, lemmas)]
        return list(zip(forms, lemmas))

    def _same(self, a: tuple[str, str], b: tuple[str, str]) -> bool:
        if a[0] == b[0] or a[1] == b[1]:
            return True
        n = 0
        for x, y in zip(a[0], b[0]):
            if x != y:
                break
            n += 1
        return n >= self.MIN_STEM and n >= max(len(a[0]), len(b[0])) - self.MAX_ENDING

    def has(self, candidate: Sequence[str], output: Sequence[tuple[str, str]]) -> bool:
        words = self.words(" ".join(w for w in candidate if w != GAP))
        content = [w for w in words if len(w[0]) >= self.MIN_CONTENT] or words
        return all(any(self._same(w, o) for o in output) for w in content)


# ---------------------------------------------------------------- judged: decoding and the decision


@dataclass(frozen=True)
class Option:
    """A constrained decoding of one line: the candidates it forced (MWE key -> translation), its output
    and the drop of the length-normalized model score from the first pass (positive = worse)."""

    forced: tuple[tuple[str, str], ...]
    output: str
    drop: float
    degenerate: frozenset[str] = frozenset()   # guarded acceptance: the degenerate-output flags of ``output``


def choose(options: Sequence[Option], threshold: float) -> Option | None:
    """The option a line keeps: the one that forces the most MWEs, then has the smallest drop, among those
    whose drop is at most ``threshold`` and whose output is not degenerate; None (the first pass stays) when
    none is."""
    kept = [o for o in options if o.drop <= threshold and not o.degenerate]
    return min(kept, key=lambda o: (-len(o.forced), o.drop)) if kept else None


@dataclass
class LineJudgement:
    """What judged decoding found and did on one line (1-based ``line``)."""

    line: int
    mwes: list[dict]                  # key, span, P(MWE), candidates, in_first_pass
    options: list[Option] = field(default_factory=list)
    failed: int = 0                   # candidate decodings that could not meet their constraint
    accepted: Option | None = None

    @property
    def constrained(self) -> bool:
        return bool(self.options)

    def to_json(self) -> dict:
        return {"line": self.line, "mwes": self.mwes,
                "options": [{"forced": dict(o.forced), "drop": round(o.drop, 5), "output": o.output}
                            for o in self.options],
                "failed": self.failed, "accepted": None if self.accepted is None else dict(self.accepted.forced)}


@dataclass
class ConstraintReport:
    """The lines constrained, accepted and rejected by one constrained translation (constraints.json)."""

    mode: str
    lines: int
    lines_with_mwes: int = 0          # lines with a constrainable MWE (judged: read as an MWE in context)
    mwes: int = 0
    mwes_in_first_pass: int = 0       # judged: MWEs the first pass already translated with a candidate
    literal_matches: int = 0          # judged: table matches the MWE-in-context classifier read as literal
    constrained_lines: int = 0        # lines decoded with constraints
    accepted: int = 0                 # constrained lines whose constrained output was kept
    rejected: int = 0                 # judged: constrained lines that kept the first pass (score drop too big)
    constraints: int = 0              # phrases forced into the kept outputs
    unspellable: int = 0              # unordered/ordered: phrases never forced (the target dictionary cannot
                                      # spell them without <unk>)
    threshold: float | None = None
    lines_decoded_without_constraints: list[int] = field(default_factory=list)
    per_line: list[list[tuple[str, ...]]] = field(default_factory=list)   # each line's forced phrases
    judgements: list[LineJudgement] = field(default_factory=list)

    def to_json(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("per_line", "judgements")}
        if self.mode == "judged":
            d["judgements"] = [j.to_json() for j in self.judgements]
        return d

    def summary(self) -> str:
        head = f"constraints ({self.mode}"
        head += f", threshold {self.threshold:.4g})" if self.threshold is not None else ")"
        if self.mode == "judged":
            return (f"{head}: {self.lines} line(s), {self.lines_with_mwes} with an MWE in context "
                    f"({self.mwes} MWE(s), {self.mwes_in_first_pass} already translated, {self.literal_matches} "
                    f"table match(es) read as literal); {self.constrained_lines} constrained, {self.accepted} "
                    f"accepted, {self.rejected} rejected")
        left = (f"; {self.unspellable} constraint(s) left out: the model's target vocabulary cannot spell them "
                "without <unk>") if self.unspellable else ""
        return (f"{head}: {self.lines} line(s), {self.constrained_lines} constrained, {self.accepted} accepted, "
                f"{self.rejected} rejected, {len(self.lines_decoded_without_constraints)} decoded without their "
                f"constraints (no room within the length limit){left}")


def _tokens(translator, line: str, input_format: str) -> list[str]:
    return line.split() if input_format == "tokenized" else translator.annotator.tokens(line)


def _check_input_format(input_format: str) -> None:
    if input_format not in ("raw", "tokenized"):
        raise MwemtError(f"constraints are found in raw or tokenized input, not {input_format!r} lines")


class ForcedConstraints:
    """Constraint modes ``unordered`` and ``ordered``: the table's best translation of every MWE, forced."""

    def __init__(self, translator, table, options: ConstraintOptions):
        pre = translator.preprocess
        self.translator, self.options = translator, options
        self.finder = TableConstraints(table, lang=pre["src_lang"], lemmatizer=pre["lemmatizer"],
                                       max_gap=int(pre.get("max_gap") or 0), min_count=options.min_count,
                                       sources=options.sources)

    def phrases(self, lines: Sequence[str], input_format: str = "raw",
                source: str | None = None) -> list[list[tuple[str, ...]]]:
        _check_input_format(input_format)
        out = []
        for i, line in enumerate(lines):
            try:
                out.append(self.finder.phrases(_tokens(self.translator, line, input_format)) if line.strip() else [])
            except MwemtError as exc:
                raise InputError(str(exc), source or "<input>", i + 1) from None
        return out

    def translate(self, lines: Sequence[str], *, input_format: str = "raw", source: str | None = None,
                  **decode) -> tuple[list[str], ConstraintReport]:
        tr = self.translator
        phrases = self.phrases(lines, input_format, source)
        # a phrase the target dictionary cannot spell without <unk> is never forced (`constraint_ids`): a line
        # whose every phrase is such is decoded plainly and counts as neither constrained nor accepted
        forced = [[q for q in p if tr.constraint_ids([q])] for p in phrases]
        hyps = tr.translate(lines, input_format=input_format, source=source, constraints=forced,
                            constraint_order=self.options.mode, **decode)
        failed = sorted(tr.unconstrained_lines)
        constrained = sum(1 for f in forced if f)
        dropped = set(failed)
        per_line = [[] if i in dropped else f for i, f in enumerate(forced)]
        report = ConstraintReport(self.options.mode, len(lines), lines_with_mwes=sum(1 for p in phrases if p),
                                  mwes=sum(len(p) for p in phrases), constrained_lines=constrained,
                                  accepted=constrained - len(failed), constraints=sum(len(p) for p in per_line),
                                  unspellable=sum(len(p) - len(f) for p, f in zip(phrases, forced)),
                                  lines_decoded_without_constraints=[i + 1 for i in failed], per_line=per_line)
        return hyps, report


# judged constraints decode the variants of one line (its candidates, its forms) in batches of this many: a fixed
# number, so that no output depends on --batch-size
VARIANT_BATCH = 32


class JudgedConstraints:
    """Constraint mode ``judged`` (the module docstring): constrain only MWEs in context the first pass
    missed, let the model choose among the candidates, keep what costs at most the threshold."""

    def __init__(self, translator, table, options: ConstraintOptions):
        pre = translator.preprocess
        self.translator, self.options = translator, options
        freq = TargetFrequency(translator.tgt_dict, translator.tgt_subword)
        self.finder = CandidateFinder(table, options, lang=pre["src_lang"], lemmatizer=pre["lemmatizer"],
                                      max_gap=int(pre.get("max_gap") or 0), frequency=freq)
        self.presence = Presence(pre["tgt_lang"], "simplemma")

    def judge(self, lines: Sequence[str], *, input_format: str = "raw", source: str | None = None,
              **decode) -> tuple[list[str], list[LineJudgement], int]:
        """The first pass and every line's constrained options (no decision yet), and the count of table
        matches read as literal."""
        _check_input_format(input_format)
        tr = self.translator
        first = tr.translate(lines, input_format=input_format, source=source, **decode)
        first_score = dict(tr.line_scores)
        judgements: list[LineJudgement] = []
        wanted: list[tuple[LineJudgement, int, FoundMwe, Candidate]] = []   # (line, index, MWE, candidate)
        literal = 0
        for i, line in enumerate(lines):
            if not line.strip() or i not in first_score:
                continue
            try:
                found, rejected = self.finder.mwes(_tokens(tr, line, input_format))
            except MwemtError as exc:
                raise InputError(str(exc), source or "<input>", i + 1) from None
            literal += rejected
            if not found:
                continue
            output = self.presence.words(first[i])
            j = LineJudgement(i + 1, [])
            for m in found:
                done = any(self.presence.has(c.words, output) for c in m.candidates)
                j.mwes.append({"mwe": m.key, "span": list(m.indices), "p_mwe": m.probability,
                               "candidates": [c.text for c in m.candidates], "in_first_pass": done})
                if not done:
                    wanted += [(j, i, m, c) for c in m.candidates]
            judgements.append(j)
        # the lines judged are decoded apart from other lines from here on, their first pass again too (alone): a
        # line's scores (and so its drops, its decision and the tuned threshold) never depend on --batch-size or on
        # which lines share its batch (padding moves a batched score in its last digits); its constrained variants
        # share a batch only with each other (one source, no padding; each variant ends at its own length limit)
        alone = {**decode, "batch_size": 1}
        judged = sorted({i for _, i, _, _ in wanted})
        if judged:
            again = tr.translate([lines[i] for i in judged], input_format=input_format, **alone)
            for n, i in enumerate(judged):
                first[i], first_score[i] = again[n], tr.line_scores[n]
        # every candidate of every missed MWE: one constrained decoding each, a line's candidates batched together
        # (the same source: no padding, and each ends at its own limit), never with another line's
        singles = self._decode(lines, [(i, ((m, c),)) for _, i, m, c in wanted], first_score, input_format, decode)
        best: dict[int, dict[str, tuple[Option, FoundMwe, Candidate]]] = {}
        for (j, i, m, c), opt in zip(wanted, singles):
            if opt is None:
                j.failed += 1
            elif m.key not in best.setdefault(i, {}) or opt.drop < best[i][m.key][0].drop:
                best[i][m.key] = (opt, m, c)
        # a line with several missed MWEs: once more with every MWE's winner
        several = [(i, tuple((m, c) for _, m, c in b.values())) for i, b in best.items() if len(b) > 1]
        combined = dict(zip([i for i, _ in several],
                            self._decode(lines, several, first_score, input_format, decode)))
        by_line = {j.line - 1: j for j in judgements}
        for i, b in best.items():
            opts = [o for o, _, _ in b.values()] + ([combined[i]] if combined.get(i) is not None else [])
            by_line[i].options = sorted(opts, key=lambda o: (-len(o.forced), o.drop))
        return first, judgements, literal

    def _degenerate(self, line: str, output: str, input_format: str) -> frozenset[str]:
        """Guarded acceptance: the degenerate-output flags of a constrained ``output`` of ``line``
        (`mwemt.evaluate.degenerate`: a loop, far longer than the source predicts, a fragment appended after a
        sentence end); plain acceptance reads none."""
        if self.options.acceptance != "guarded":
            return frozenset()
        from mwemt.evaluate.degenerate import degenerate_line

        # the instrument's own tokenization of both texts (words and punctuation apart), as its report counts
        # them: the Moses tokens keep "modo." whole before a lower-case word, which hid an appended sentence
        return degenerate_line(" ".join(_tokens(self.translator, line, input_format)), output)

    def _decode(self, lines, variants, first_score, input_format, decode) -> list[Option | None]:
        """Each (line index, ((MWE, candidate), ...)) decoded with those candidates as constraints; None for
        one the search could not meet within its length limit."""
        tr = self.translator
        cons = [[p for m, c in forced for p in _parts(c.words, m.initial)] for _, forced in variants]
        # a phrase the target dictionary cannot spell without <unk> is never forced (`constraint_ids`): such a
        # variant would be a plain decoding that claims a constraint
        ok = [k for k, c in enumerate(cons) if len(tr.constraint_ids(c)) == len(c)]
        out: list[Option | None] = [None] * len(variants)
        if not ok:
            return out
        # batches of one line's variants only, VARIANT_BATCH at a time whatever --batch-size says
        hyps = tr.translate([lines[variants[k][0]] for k in ok], input_format=input_format,
                            constraints=[cons[k] for k in ok], constraint_order="unordered",
                            batch_groups=[variants[k][0] for k in ok], **{**decode, "batch_size": VARIANT_BATCH})
        failed = set(tr.unconstrained_lines)
        for n, k in enumerate(ok):
            if n not in failed and n in tr.line_scores:
                i, forced = variants[k]
                out[k] = Option(tuple((m.key, c.text) for m, c in forced), hyps[n], first_score[i] - tr.line_scores[n],
                                self._degenerate(lines[i], hyps[n], input_format))
        return out

    def translate(self, lines: Sequence[str], *, input_format: str = "raw", source: str | None = None,
                  **decode) -> tuple[list[str], ConstraintReport]:
        """The first pass, each line's constrained output kept where it costs at most ``options.threshold``."""
        threshold = self.options.threshold
        first, judgements, literal = self.judge(lines, input_format=input_format, source=source, **decode)
        hyps = list(first)
        per_line: list[list[tuple[str, ...]]] = [[] for _ in lines]
        for j in judgements:
            j.accepted = choose(j.options, threshold)
            if j.accepted is not None:
                hyps[j.line - 1] = j.accepted.output
                per_line[j.line - 1] = [p for _, text in j.accepted.forced for p in _parts(text.split(), False)]
        constrained = [j for j in judgements if j.constrained]
        accepted = sum(1 for j in constrained if j.accepted is not None)
        report = ConstraintReport(
            "judged", len(lines), lines_with_mwes=len(judgements), mwes=sum(len(j.mwes) for j in judgements),
            mwes_in_first_pass=sum(1 for j in judgements for m in j.mwes if m["in_first_pass"]),
            literal_matches=literal, constrained_lines=len(constrained), accepted=accepted,
            rejected=len(constrained) - accepted, constraints=sum(len(p) for p in per_line), threshold=threshold,
            lines_decoded_without_constraints=[j.line for j in judgements if j.failed and not j.options],
            per_line=per_line, judgements=judgements)
        return hyps, report


# a constraint mode -> what decodes it
DECODERS: Mapping[str, Callable] = {"unordered": ForcedConstraints, "ordered": ForcedConstraints,
                                    "judged": JudgedConstraints}


def constrained_translate(translator, lines: Sequence[str], table, options: ConstraintOptions, *,
                          input_format: str = "raw", source: str | None = None,
                          **decode) -> tuple[list[str], ConstraintReport]:
    """``lines`` translated by ``translator`` with constraints from ``table`` (an `MweTranslationTable` or its
    file) as ``options`` say; ``decode``: `Translator.translate`'s decoding settings (beam, batch_size, ...).
    Judged constraints need ``options.threshold`` (`tune_threshold` finds it on the validation split)."""
    if decode.get("sampling"):
        raise MwemtError("constrained decoding is a beam search: it cannot be combined with sampling")
    if options.mode == "judged" and options.threshold is None:
        raise MwemtError("judged constraints need a threshold tuned on the validation split "
                         "(`mwemt translate --constraint-tune VALID.src VALID.ref`, or a number)")
    decoder = DECODERS[options.mode](translator, table, options)
    return decoder.translate(lines, input_format=input_format, source=source, **decode)


# ---------------------------------------------------------------- judged: the threshold, from validation only


def tune_threshold(translator, sources: Sequence[str], references: Sequence[str], table,
                   options: ConstraintOptions, *, lowercase: bool = False, **decode) -> dict:
    """The threshold of judged constraints, tuned on a *validation* split (``sources``, ``references``): the
    largest threshold whose corpus BLEU (sacrebleu) is no lower than the first pass's, i.e. the most MWEs
    constrained at no validation cost. Every line's options are decoded once; each candidate threshold (just
    below the smallest observed drop, i.e. nothing accepted, and every observed drop) decides which constrained
    outputs replace the first pass, as `choose` does at test time. (The threshold of the best validation BLEU
    is noise where few validation lines are constrained: cpu-science-2's 1,002 validation lines have 18; the
    record keeps it as ``threshold_best_bleu`` beside the whole curve.) Returns the tuning record
    (`write_threshold`)."""
    from mwemt.evaluate.sacrebleu_metrics import Bleu

    if len(sources) != len(references):
        raise MwemtError(f"the validation split has {len(sources)} source and {len(references)} reference lines")
    if not any(line.strip() for line in sources):
        raise MwemtError("the validation split has no line with text: there is nothing to tune the threshold on")
    judged = JudgedConstraints(translator, table, replace(options, threshold=None))
    first, judgements, literal = judged.judge(sources, **decode)
    if not any(j.options for j in judgements):   # no evidence: no threshold is recorded, none is made up
        missed = sum(1 for j in judgements for m in j.mwes if not m["in_first_pass"])
        raise MwemtError(
            f"no validation line could be constrained, so no threshold can be tuned: of {len(sources)} line(s), "
            f"{len(judgements)} have a table MWE read as an MWE in context, {missed} such MWE(s) missing from the first "
            f"pass, {sum(j.failed for j in judgements)} constrained decoding(s) that could not meet their constraint "
            f"({literal} table match(es) read as literal). Tune on a validation split with MWEs the first pass misses "
            "(the grid adds left-out pairs with `translate.constraint_tune_extra`), or give the threshold as a number")
    metric = Bleu(lowercase=lowercase)
    rows = metric.sentence_stats(list(first), list(references)).rows
    options_rows = {j.line - 1: metric.sentence_stats([o.output for o in j.options],
                                                      [references[j.line - 1]] * len(j.options)).rows
                    for j in judgements if j.options}
    drops = sorted({o.drop for j in judgements for o in j.options})
    grid = ([drops[0] - 1e-3] if drops else [0.0]) + drops
    # each grid point: how the totals move (the chosen option's stats minus the first pass's, per judged line)
    changes = np.zeros((len(grid), len(judgements), rows.shape[1]))
    accepted_at = np.zeros((len(grid), len(judgements)), dtype=bool)
    for g, t in enumerate(grid):
        for n, j in enumerate(judgements):
            pick = choose(j.options, t)
            if pick is not None:
                changes[g, n] = options_rows[j.line - 1][j.options.index(pick)] - rows[j.line - 1]
                accepted_at[g, n] = True

    def curve_of(line_weights: np.ndarray) -> list[tuple[float, float, int]]:
        base = line_weights @ rows
        judged_weights = line_weights[[j.line - 1 for j in judgements]]
        moved = np.einsum("gjs,j->gs", changes, judged_weights)
        return [(t, metric.score_from_totals(base + moved[g]), int(accepted_at[g].sum())) for g, t in enumerate(grid)]

    curve = curve_of(np.ones(len(sources)))
    best, top = no_loss_point(curve), max(curve, key=lambda c: (round(c[1], 6), c[0]))
    guarded = {}
    if options.acceptance == "guarded":   # the median no-loss point of seeded resamples of the tuning lines
        resampled = resampled_no_loss(curve_of, len(sources))
        at = max((c for c in curve if c[0] <= resampled["median"]), key=lambda c: c[0])
        guarded = {"threshold_no_loss": best[0], "resampled_no_loss": resampled}
        best = (resampled["median"], at[1], at[2])
    constrained = sum(1 for j in judgements if j.options)
    rule = TUNE_RULE_GUARDED.format(n=TUNE_RESAMPLES) if guarded else TUNE_RULE
    return {"format": THRESHOLD_FORMAT, "version": 1, "threshold": best[0], "rule": rule, **guarded,
            "metric": TUNE_METRIC, "threshold_best_bleu": top[0], "bleu_best": top[1],
            "signature": str(metric.signature()), "validation_lines": len(sources),
            "lines_with_mwes": len(judgements), "literal_matches": literal, "constrained_lines": constrained,
            "accepted_at_threshold": best[2], "bleu_first_pass": curve[0][1], "bleu_at_threshold": best[1],
            "bleu_all_accepted": curve[-1][1], "options": asdict(options) | {"threshold": None, **{
                k: Path(v).name for k in ("senses_file", "forms_file") if (v := getattr(options, k))}},
            "curve": [[round(t, 6), round(s, 4), a] for t, s, a in curve]}


def resampled_no_loss(curve_of: Callable[[np.ndarray], list], n_lines: int, *, resamples: int = TUNE_RESAMPLES,
                      seed: int = TUNE_SEED) -> dict:
    """The no-loss points (`no_loss_point`) of ``resamples`` seeded bootstrap resamples of ``n_lines`` tuning
    lines: ``curve_of(weights)`` is the tuning curve with each line counted ``weights[i]`` times. Their median is
    guarded acceptance's threshold; the 10% and 90% points show how much the few deciding lines move it."""
    rng = np.random.default_rng(seed)
    points = sorted(no_loss_point(curve_of(np.bincount(rng.integers(0, n_lines, n_lines),
                                                       minlength=n_lines).astype(float)))[0]
                    for _ in range(resamples))
    return {"resamples": resamples, "seed": seed, "q10": points[len(points) // 10],
            "median": points[len(points) // 2], "q90": points[(9 * len(points)) // 10]}


def no_loss_point(curve: Sequence[tuple[float, float, int]]) -> tuple[float, float, int]:
    """Of (threshold, validation BLEU, lines accepted) points, the first being nothing accepted: the one with
    the largest threshold whose BLEU is no lower than that first point's (`TUNE_RULE`)."""
    return max((c for c in curve if round(c[1], 6) >= round(curve[0][1], 6)), key=lambda c: c[0])


def write_threshold(path: str | Path, record: dict) -> None:
    from mwemt.provenance import write_json

    write_json(path, record)


def parse_threshold(text: str, name: str = "threshold") -> float:
    """A threshold as given on the command line: a number (the largest drop), or a tuning record file
    (`read_threshold`); bounded like the config's (`MAX_THRESHOLD`)."""
    if not text.strip():
        raise MwemtError(f"{name} is empty (expected a number, the largest score drop, or the tuning record file "
                         "that --constraint-tuning wrote)")
    try:
        value = float(text)
    except ValueError:
        return read_threshold(text)
    if not (math.isfinite(value) and -MAX_THRESHOLD <= value <= MAX_THRESHOLD):
        raise MwemtError(f"{name} {text}: expected a number from {-MAX_THRESHOLD:g} to {MAX_THRESHOLD:g} (a drop of "
                         "the per-token log-probability), or a tuning record file")
    return value


def read_threshold(path: str | Path) -> float:
    """The threshold of a tuning record (`tune_threshold`) file; ``.gz`` is read as the text inside, as every
    input of mwemt."""
    from mwemt.fileio import read_lines

    p = Path(path)
    expected = "a tuning record written by `mwemt translate --constraint-tuning`"
    if p.is_dir():
        raise InputError("is a directory, not a tuning record file", p, expected=expected)
    if not p.exists():
        raise InputError("constraint threshold file not found", p, expected=expected)
    try:
        obj = json.loads("\n".join(read_lines(p)))
    except json.JSONDecodeError as exc:
        raise InputError(f"not a JSON tuning record ({exc})", p, expected=expected) from None
    t = obj.get("threshold") if isinstance(obj, dict) and obj.get("format") == THRESHOLD_FORMAT else None
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        raise InputError("not a constraint threshold tuning record", p,
                         expected=f'{{"format": "{THRESHOLD_FORMAT}", "threshold": NUMBER, ...}}')
    if not -MAX_THRESHOLD <= t <= MAX_THRESHOLD:
        raise InputError(f"threshold {t} is out of range", p,
                         expected=f"a threshold from {-MAX_THRESHOLD:g} to {MAX_THRESHOLD:g}")
    return float(t)
