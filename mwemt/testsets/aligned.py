"""MWE test sets from any parallel text: lexicon MWEs in the source, their translation by word alignment.

`mwemt testset build` annotates each source sentence with the same `Annotator` as `mwemt annotate`,
aligns the pairs (`mwemt.testsets.align`), and takes as each MWE's reference translation the
target words aligned to its tokens, in target order:

- the *core* is the set of target words linked to any token of the MWE (punctuation is left out);
- a target token between two core words joins the translation when nothing links it elsewhere
  (an article or preposition that the aligner left unlinked, as "dell'" in "problema dell' accumulo");
- a run of tokens linked to source words outside the MWE is a gap, written ``...`` as in the TED
  references ("ha ... vinto").

The span is then made complete and minimal (`SpanRules`, issue 29): a negation before the MWE and
its auxiliary join ("non era sorpreso" for *was n't surprised*; not a modal's), so does a reflexive
clitic ("si alza") or a preverbal clitic cluster ("non se ne andrà", "Mi sono sdraiato"); a leading
article goes unless the source MWE has a determiner, a trailing definite article always ("perso di
vista", not "perso di vista i"); a known translation of the MWE (an `mwemt.testsets.mwe_table`
table: dictionary or training alignment) found where the alignment points completes a partial
alignment ("restiamo in contatto", not "in"); a neighbouring cognate ("programma televisivo"), a
fused future ("avrà luogo") and a linking preposition in a one-word gap ("fermata dell' autobus")
join; an edge word that also translates a determiner or copula outside the MWE goes ("stia bene"
-> "bene").

Alignments are noisy, so four filters drop MWEs whose translation cannot be trusted, each counted
in the report: ``unaligned`` (no target word is linked to the MWE), ``span_too_long`` (first to last
target word spans more than ``max_span_factor`` times the MWE's length plus ``max_span_slack``
tokens), ``scattered`` (more than ``max_gaps`` gaps) and ``function_only`` (only function words
for an MWE with a content word: "in" for *keep in touch*). The annotator's MWEs never overlap.

Everything here is pure: the caller annotates, aligns and writes.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from mwemt.errors import MwemtError
from mwemt.preprocess.tokenize import detokenize
from mwemt.records import AnnotatedSentence, TestItem, TestMwe
from mwemt.testsets.align import Alignment, format_pharaoh

GAP = "..."
FILTERS = ("unaligned", "span_too_long", "scattered", "function_only")


@dataclass(frozen=True)
class ReferenceFilters:
    """When an alignment-derived MWE translation is unusable (see the module docstring)."""

    max_span_factor: float = 2.0
    max_span_slack: int = 2
    max_gaps: int = 1
    function_only: bool = True
    src_lang: str = "en"
    tgt_lang: str = "it"

    def __post_init__(self) -> None:
        if self.max_span_factor <= 0 or self.max_span_slack < 0 or self.max_gaps < 0:
            raise MwemtError("reference filters need max_span_factor > 0, max_span_slack >= 0 and max_gaps >= 0")

    def max_span(self, mwe_length: int) -> int:
        scaled = self.max_span_factor * mwe_length   # a huge factor (1e308) is no limit, not an overflow
        return (int(scaled) if math.isfinite(scaled) else sys.maxsize) + self.max_span_slack


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


# Word classes the span rules need, by language (lowercase; elided forms end in an apostrophe).
NEGATIONS = {"en": frozenset({"not", "n't", "never", "cannot"}),  # not "no": a determiner ("no alternative energy")
             "it": frozenset({"non", "mai", "né"})}
SOURCE_AUXILIARIES = {"en": frozenset("am is are was were be been being do does did have has had will would shall "
                                      "should can could may might must 's 're 've 'd 'll 'm".split())}
# the auxiliary left of a split "'t" / "n't" ("won 't", "ca n't", "hasn 't"): `SpanRules.contractions`
SOURCE_CONTRACTED = {"en": frozenset("wo ca sha won don doesn didn isn aren wasn weren haven hasn hadn couldn "
                                     "wouldn shouldn mustn needn mightn ain".split())}
SOURCE_ARTICLES = {"en": frozenset({"a", "an", "the"})}
SOURCE_PRONOUNS = {"en": frozenset("i me myself you yourself yourselves he him himself she her herself it itself we us "
                                   "ourselves they them themselves one oneself".split())}
SOURCE_PARTICLES = {"en": frozenset("about across after along around at away back by down for from in into of off on "
                                    "onto out over through to under up upon with without".split())}
ARTICLES = {"it": frozenset("il lo la i gli le l' un uno una un'".split())}
DEFINITE = {"it": frozenset("il lo la i gli le l'".split())}
SOURCE_DETERMINERS = {"en": frozenset("a an the one this that these those some any".split())}
# Modals (a negation they carry is theirs) and the auxiliaries of tenses that Italian writes in one word
SOURCE_MODALS = {"en": frozenset("can could may might must should ought cannot ca couldn shouldn mustn needn mightn "
                                 "oughtn".split())}
SOURCE_TENSE = {"en": frozenset("will would shall 'll 'd wo won wouldn sha".split())}
SOURCE_SUBJECTS = {"en": frozenset("i you he she it we they one".split())}
# object pronouns ("her" is left out: as often a possessive, "made up her mind")
SOURCE_OBJECTS = {"en": frozenset("me you him it us them".split())}
SOURCE_COPULA = {"en": frozenset("am is are was were be been being 's 're 'm isn aren wasn weren".split())}
SOURCE_QUANTIFIERS = {"en": frozenset("another other others both either neither such no".split())}
REFLEXIVES = {"en": frozenset("myself yourself yourselves himself herself itself ourselves themselves oneself".split())}
ARTICULATED = {"it": frozenset(f"{p}{a}" for p in ("de", "ne", "a", "da", "su")
                               for a in ("l", "llo", "lla", "ll'", "i", "gli", "lle"))
               | frozenset({"col", "coi", "pel"})}
CLITICS = {"it": frozenset("mi ti si ci vi m' t' s' c' v' me te se ce ve".split())}
IMPERSONAL = {"it": frozenset({"si", "s'"})}
# Preverbal clitic clusters (issue 29): a word of CLITIC_CLUSTER directly before a verb is a clitic; the
# words that are also articles (lo, la, li, le, gli, l') count only inside a cluster that a clitic opens
# ("se la cava", "me lo dice"), never alone ("la casa").
CLITIC_CLUSTER = {"it": frozenset("mi ti si ci vi ne m' t' s' c' v' n' me te se ce ve glie".split())}
CLITIC_OBJECTS = {"it": frozenset("lo la li le gli l' ne n'".split())}
# Forms of the Italian auxiliaries (essere, avere; stare of the progressive) between a clitic and its
# participle or gerund: "mi sono sdraiato", "si sta attenuando"
AUXILIARIES = {"it": frozenset("sto stai sta stiamo state stanno stavo stavi stava stavamo stavate stavano "
                               "sono sei è siamo siete ero eri era eravamo eravate erano sarò sarai sarà saremo "
                               "sarete saranno sarei sarebbe saremmo sareste sarebbero sia siano fossi fosse fossimo "
                               "foste fossero ho hai ha abbiamo avete hanno avevo avevi aveva avevamo avevate avevano "
                               "avrò avrai avrà avremo avrete avranno avrei avresti avrebbe avremmo avreste avrebbero "
                               "abbia abbiano avessi avesse avessimo aveste avessero".split())}
# Function words that may link the two parts of a gapped translation ("fermata dell' autobus")
LINKING = {"it": frozenset("di d' a ad da in con su per del dello della dei degli delle dell' al allo alla ai agli "
                           "alle all' dal dallo dalla dai dagli dalle dall' nel nello nella nei negli nelle nell' "
                           "sul sullo sulla sui sugli sulle sull'".split())}


# The version of the span rules' code: raise it when a rule's behaviour changes, so that test sets built inside
# `mwemt run` are built again (2: clitic clusters, contractions, cognates, tense, linking gaps, edges)
SPAN_RULES_VERSION = 2


@dataclass(frozen=True)
class SpanRules:
    """How a reference span is made complete and minimal (issue 29), each a switch:

    - ``negation``: a negation in the source at or just before the MWE (``was n't surprised``: up
      to ``negation_window`` tokens before it, auxiliaries between) counts as part of the MWE, with
      the auxiliaries between and the one carrying it, so "non era sorpreso" is the translation,
      not "sorpreso"; a target
      negation (``non``) directly before the span joins it when the source has one;
    - ``clitics``: a reflexive/adverbial clitic (``mi``, ``si``, ``ne``...) directly before the span
      joins it when nothing links it elsewhere than a source pronoun ("mi alzo" for *get up*);
    - ``articles``: a leading article is dropped unless the source MWE starts with one ("perso di
      vista i" -> "perso di vista"; *the bottom line* keeps "il"); a trailing article always, and a
      trailing articulated preposition unless the source MWE ends in a particle ("rientrare nelle"
      -> "rientrare"; *fall into* keeps it);
    - ``candidates``: a known translation of the MWE (from an `MweTranslationTable`: dictionary or
      training alignment) found in the target sentence where the alignment points (overlapping or
      next to its words) becomes the span, so a particle or a content word the aligner left out
      ("in" for *keep in touch*) is completed to "restare in contatto"; an MWE the aligner linked
      to nothing takes a candidate found anywhere in the sentence. Words match on a common prefix
      (``stem`` letters or more, all but the last 3 letters of the shorter word, to forgive
      inflection: *restare* / *restiamo*).

    - ``clusters``: a preverbal clitic cluster right before the span, or before the auxiliary
      (essere, avere, stare) right before it, joins it when its words are unlinked or linked only
      to the MWE, auxiliaries, reflexives or a subject pronoun before the MWE: "Ti fai" (*do
      drugs*), "non se ne andrà" (*won't go away*), "Mi sono sdraiato" (*lay down*), "si sta
      attenuando" (*letting up*); not a clitic linked to an object outside the MWE ("ne parlano"
      for *talk about it*: "ne" is *it*) or while an object pronoun just after the MWE is
      translated by nothing ("mi gridò" for *cried out to me*), not for an MWE that starts with a determiner or particle,
      not before an article or preposition; "la", "se" and the like count only inside a cluster
      ("se la cava", "se ne");
    - ``cognates``: a word next to the span that shares a stem with an MWE word of 5 letters or
      more ("programma televisivo" for *television program*, where the aligner gave "programma" to
      *favorite*) joins it, unless it is the cognate of the word it is linked to;
    - ``tense``: when an MWE word is linked to nothing and the word before the span is linked only
      to a tense auxiliary (*will*, *would*, *'ll*...) just before the MWE, that word is the Italian
      verb form that fused them and joins the span ("avrà luogo" for *will take place*);
    - ``gaps``: a one-word gap that is a preposition (plain or articulated) linked only to source
      articles, determiners or particles is closed ("fermata dell' autobus", not "fermata ...
      autobus");
    - ``edges``: an aligned word at either end that also translates a determiner outside the MWE
      goes ("altra telefonata" -> "telefonata" for *another phone call*), and so does one that also
      translates a copula when its links into the MWE are function words ("stia bene" -> "bene" for
      *'s all right*; but "costa la metà" for *'s half the cost* stays); a cognate of an MWE word
      stays; an unlinked word left at an end once the article beyond it went goes too ("scoperto
      che le" -> "scoperto"); and a candidate as long as the MWE, once found, is the span, extended
      only by aligned words right next to it ("inquinamento da anidride carbonica" -> "anidride
      carbonica");
    - ``contractions``: the negation rule reads "'t" ("won 't", "hasn 't", as some corpora split
      them) as well as "n't", and leaves out a negation that a modal carries (*should n't have
      logged off*: "disconnettermi", not "Non avrei dovuto disconnettermi").

    Rules apply to the languages the word lists above cover (source ``en``, target ``it``); for
    others only the language-independent parts (candidates) do.
    """

    negation: bool = True
    negation_window: int = 3
    clitics: bool = True
    articles: bool = True
    candidates: bool = True
    contractions: bool = True
    clusters: bool = True
    cognates: bool = True
    tense: bool = True
    gaps: bool = True
    edges: bool = True
    stem: int = 4
    src_lang: str = "en"
    tgt_lang: str = "it"

    @classmethod
    def none(cls) -> SpanRules:
        """The rule before issue 29: aligned words and the unlinked ones between them, nothing else."""
        return cls(negation=False, clitics=False, articles=False, candidates=False, contractions=False,
                   clusters=False, cognates=False, tense=False, gaps=False, edges=False)

    def describe(self) -> str:
        on = [n for n in ("negation", "clitics", "articles", "candidates", "contractions", "clusters", "cognates",
                          "tense", "gaps", "edges") if getattr(self, n)]
        return "+".join(on) or "none"

    def signature(self) -> str:
        """The rules switched on and the version of their code: a cached test build is redone when either
        changes (`mwemt run`'s testdata stage keys on it)."""
        return f"spans{SPAN_RULES_VERSION}:{self.describe()}"


def _words(table: dict, lang: str) -> frozenset:
    return table.get(lang, frozenset())


def _negation_members(mwe_indices: Sequence[int], src_tokens: Sequence[str], rules: SpanRules) -> set[int]:
    """Source negations inside the MWE's span or shortly before it, and the auxiliaries between."""
    negs, aux = _words(NEGATIONS, rules.src_lang), _words(SOURCE_AUXILIARIES, rules.src_lang)
    modals = frozenset()
    if rules.contractions:  # "'t" as some corpora split "won't"; a modal keeps its negation
        negs, aux = negs | {"'t"}, aux | _words(SOURCE_CONTRACTED, rules.src_lang)
        modals = _words(SOURCE_MODALS, rules.src_lang)
    first, last = min(mwe_indices), max(mwe_indices)
    extra = {i for i in range(first, last + 1) if src_tokens[i].lower() in negs}
    between: list[int] = []
    for i in range(first - 1, max(-1, first - 1 - rules.negation_window), -1):
        word = src_tokens[i].lower()
        if word in negs:
            if word in modals or (i > 0 and src_tokens[i - 1].lower() in modals):
                break  # a modal's negation ("ca n't sign in", "should n't have logged off") is not the MWE's
            extra.add(i)
            extra.update(between)
            # the auxiliary that carries the negation ("was n't", "did not")
            if i > 0 and src_tokens[i - 1].lower() in aux:
                extra.add(i - 1)
            break
        if word not in aux:
            break
        between.append(i)
    return extra


def _same_word(a: str, b: str, stem: int) -> bool:
    a, b = a.lower(), b.lower()
    if a == b:
        return True
    n = min(len(a), len(b))
    if n < stem:
        return False
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= max(stem, n - 3)


def find_candidate(candidates: Sequence[Sequence[str]], tgt_tokens: Sequence[str], core: Sequence[int],
                    stem: int) -> tuple[int, int] | None:
    """The target span [start, end] of a candidate translation (contiguous; gaps in a candidate
    split it into parts that must come in order, up to 3 tokens apart) that overlaps the aligned
    core or touches it (anywhere without a core): the first candidate, in the order given (a
    table's: most frequent first), found there, at its first such position."""
    lo, hi = (min(core), max(core)) if core else (None, None)
    n = len(tgt_tokens)
    for cand in candidates:
        parts: list[list[str]] = [[]]
        for t in cand:
            if t == GAP:
                parts.append([])
            else:
                parts[-1].append(t)
        parts = [p for p in parts if p]
        if not parts:
            continue
        for start in range(n):
            pos, end, ok = start, None, True
            for k, part in enumerate(parts):
                if k:  # find the next part within 3 tokens
                    found = next((q for q in range(pos, min(n, pos + 4))
                                  if q + len(part) <= n and all(_same_word(a, b, stem) for a, b in
                                                                zip(part, tgt_tokens[q:q + len(part)]))), None)
                    if found is None:
                        ok = False
                        break
                    pos = found
                elif pos + len(part) > n or not all(_same_word(a, b, stem)
                                                    for a, b in zip(part, tgt_tokens[pos:pos + len(part)])):
                    ok = False
                    break
                end = pos + len(part) - 1
                pos = end + 1
            if not ok or end is None:
                continue
            if lo is not None and (end < lo - 1 or start > hi + 1):
                continue  # elsewhere in the sentence: not where the aligner put the MWE
            return start, end
    return None


def aligned_reference(mwe_indices: Sequence[int], links: Alignment, tgt_tokens: Sequence[str], *,
                      src_tokens: Sequence[str] | None = None, rules: SpanRules | None = None,
                      candidates: Sequence[Sequence[str]] = ()) -> AlignedReference | None:
    """The MWE's translation under ``links`` (source index, target index); None when no target word
    is linked to it (and no candidate was found where it could be).

    ``src_tokens`` (the source sentence) lets the rules see negations, articles and particles;
    ``rules`` (default `SpanRules()`) make the span complete and minimal; ``candidates``: known
    translations of the MWE (token tuples, ``...`` for a gap), see `SpanRules.candidates`."""
    rules = rules if rules is not None else SpanRules()
    mwe = set(mwe_indices)
    members = set(mwe)
    if rules.negation and src_tokens is not None:
        members |= _negation_members(mwe_indices, src_tokens, rules)
    linked_src: dict[int, set[int]] = {}
    for i, j in links:
        linked_src.setdefault(j, set()).add(i)
    core = sorted(j for j, srcs in linked_src.items() if srcs & members and _is_word(tgt_tokens[j]))
    forced: set[int] = set()
    if rules.candidates and candidates:
        found = find_candidate(candidates, tgt_tokens, core, rules.stem)
        if found is not None:
            forced = set(range(found[0], found[1] + 1))
            if rules.edges and sum(t != GAP for t in tgt_tokens[found[0]:found[1] + 1]) >= len(mwe):
                # a candidate as long as the MWE is the span: aligned words join it only right next to
                # it (or when they carry the negation), not across a word ("inquinamento da anidride
                # carbonica" -> "anidride carbonica"); a shorter one ("mazza" for *baseball bat*) may be partial
                lo, hi = found
                aligned = set(core)
                while lo - 1 in aligned:
                    lo -= 1
                while hi + 1 in aligned:
                    hi += 1
                negated = {j for j in aligned if linked_src[j] & (members - mwe)}
                core = sorted({j for j in range(lo, hi + 1) if _is_word(tgt_tokens[j])} | negated)
            else:
                core = sorted(set(core) | {j for j in forced if _is_word(tgt_tokens[j])})
    if not core:
        return None
    first, last = core[0], core[-1]
    lower = [t.lower() for t in tgt_tokens]
    pronouns = _words(SOURCE_PRONOUNS, rules.src_lang)
    reflexives = _words(REFLEXIVES, rules.src_lang)
    src_aux = _words(SOURCE_AUXILIARIES, rules.src_lang) | _words(SOURCE_CONTRACTED, rules.src_lang)

    def reflexive(j: int) -> bool:  # "si", or a clitic linked to the MWE or a source reflexive
        srcs = linked_src.get(j, set())
        if lower[j] in _words(IMPERSONAL, rules.tgt_lang):
            return not (srcs - members) or (src_tokens is not None and all(
                i in members or src_tokens[i].lower() in pronouns for i in srcs))
        return bool(srcs) and src_tokens is not None and all(
            i in members or src_tokens[i].lower() in reflexives for i in srcs)

    subjects = _words(SOURCE_SUBJECTS, rules.src_lang)

    def verb_word(j: int) -> bool:
        """Linked to nothing, the MWE, an auxiliary or reflexive, or a subject pronoun before the MWE
        that a reflexive clitic repeats ("Ti fai" for *you do*); not to an object outside it ("mi
        disturbava" for *disturbed me*, "ne parlano" for *talk about it*: the clitic translates it)."""
        return src_tokens is not None and all(
            i in members or src_tokens[i].lower() in reflexives | src_aux
            or (src_tokens[i].lower() in subjects and i < min(mwe_indices)) for i in linked_src.get(j, ()))

    # clitics and fused tenses belong to verbs: not to an MWE that starts with a determiner ("some good news")
    verbal = src_tokens is not None and src_tokens[min(mwe_indices)].lower() not in (
        _words(SOURCE_DETERMINERS, rules.src_lang) | _words(SOURCE_QUANTIFIERS, rules.src_lang)
        | _words(SOURCE_PARTICLES, rules.src_lang))

    if rules.cognates and src_tokens is not None:
        # a word next to the span that is a cognate of an MWE word ("programma" for *program*) is
        # part of the translation, whatever the aligner linked it to
        def cognate(j: int) -> bool:
            if not tgt_tokens[j].isalpha() or len(tgt_tokens[j]) < 5 or j in core:
                return False
            if any(_same_word(tgt_tokens[j], src_tokens[i], rules.stem) for i in linked_src.get(j, ()) if i not in mwe):
                return False  # the cognate of the word it is linked to
            return any(len(src_tokens[i]) >= 5 and _same_word(tgt_tokens[j], src_tokens[i], rules.stem)
                       for i in mwe_indices)

        while first > 0 and cognate(first - 1):
            first -= 1
            forced.add(first)
        while last + 1 < len(tgt_tokens) and cognate(last + 1):
            last += 1
            forced.add(last)
    if rules.tense and verbal and first > 0 and any(
            not any(i in srcs for srcs in linked_src.values()) for i in mwe_indices):
        # an MWE word the aligner left out, and before the span the Italian verb form that the
        # aligner gave to the English auxiliary just before the MWE: "avrà luogo" (*will take place*)
        start = min(mwe_indices)
        tense = _words(SOURCE_TENSE, rules.src_lang)
        window = set(range(max(0, start - rules.negation_window), start))
        srcs = linked_src.get(first - 1, set())
        closed = (_words(CLITIC_CLUSTER, rules.tgt_lang) | _words(CLITIC_OBJECTS, rules.tgt_lang)
                  | _words(ARTICLES, rules.tgt_lang) | _words(LINKING, rules.tgt_lang))
        if srcs and srcs <= window and lower[first - 1] not in closed and all(src_tokens[i].lower() in tense for i in srcs) and all(
                src_tokens[i].lower() in src_aux | _words(NEGATIONS, rules.src_lang) for i in range(min(srcs), start)):
            first -= 1
            forced.add(first)
    if rules.clitics:
        clitics = _words(CLITICS, rules.tgt_lang)
        while first > 0 and lower[first - 1] in clitics and reflexive(first - 1):
            first -= 1
    if rules.clusters and verbal and lower[first] not in _words(LINKING, rules.tgt_lang) | _words(
            ARTICLES, rules.tgt_lang):
        # a preverbal clitic cluster ("Ti fai", "se ne andrà"), also across an auxiliary ("Mi sono sdraiato");
        # not before an article or preposition, where the auxiliary is a main verb ("si hanno delle allergie")
        at = first
        if at > 1 and lower[at - 1] in _words(AUXILIARIES, rules.tgt_lang) and verb_word(at - 1):
            at -= 1
        size = _clitic_cluster(lower, at, rules.tgt_lang)
        cluster = set(range(at - size, at))
        # an object pronoun just after the MWE that nothing else translates is what the clitic
        # translates ("mi gridò" for *cried out to me*, "lo votino" for *go for him*)
        end = max(mwe_indices)
        objects = [i for i in range(end + 1, min(len(src_tokens), end + 4))
                   if src_tokens[i].lower() in _words(SOURCE_OBJECTS, rules.src_lang)
                   and all(j in cluster for j, srcs in linked_src.items() if i in srcs)]
        if size and not objects and all(verb_word(j) for j in cluster):
            first = at - size
    if rules.negation and src_tokens is not None and members != set(mwe_indices):
        negs = _words(NEGATIONS, rules.tgt_lang)
        if first > 0 and lower[first - 1] in negs:
            first -= 1
    src_function = (SOURCE_FUNCTION_WORDS.get(rules.src_lang, frozenset()) | _words(SOURCE_DETERMINERS, rules.src_lang)
                    | _words(SOURCE_QUANTIFIERS, rules.src_lang))

    def inside(j: int) -> bool:
        srcs = linked_src.get(j, set())
        return j in forced or bool(srcs & members) or not srcs or j < core[0]  # linked to the MWE, unlinked, or added

    kept = [j for j in range(first, last + 1) if inside(j)]
    if rules.gaps and src_tokens is not None:
        # a one-word gap that is a preposition/article linking the two parts, linked only to source
        # function words ("the" for "dell'"), is part of the translation: "fermata dell' autobus"
        linking = _words(LINKING, rules.tgt_lang)
        gap_src = (_words(SOURCE_ARTICLES, rules.src_lang) | _words(SOURCE_DETERMINERS, rules.src_lang)
                   | _words(SOURCE_PARTICLES, rules.src_lang))
        ks = set(kept)
        for j in range(first + 1, last):
            if j not in ks and j - 1 in ks and j + 1 in ks and lower[j] in linking and all(
                    src_tokens[i].lower() in gap_src for i in linked_src.get(j, ())):
                ks.add(j)
        kept = sorted(ks)
    if rules.articles:
        kept = _trim_articles(kept, lower, mwe_indices, src_tokens, rules, forced)
    if rules.edges and src_tokens is not None and kept:
        # words outside the MWE an edge word may not also translate: determiners ("another"), and a
        # copula before an MWE that is not a verb form of its own ("'s all right", not "'m going away");
        # not articles, which Italian writes apart, so a content word linked to one is an aligner slip
        outside = ((_words(SOURCE_DETERMINERS, rules.src_lang) | _words(SOURCE_QUANTIFIERS, rules.src_lang))
                   - _words(SOURCE_ARTICLES, rules.src_lang))
        copula = _words(SOURCE_COPULA, rules.src_lang)
        if src_tokens[min(mwe_indices)].lower().endswith(("ing", "ed", "en")):
            copula = frozenset()
        # a cognate of an MWE word stays, whatever else it is linked to ("allergie" for *any ... allergies*)
        own = {j for j in kept if tgt_tokens[j].isalpha() and len(tgt_tokens[j]) >= 5 and any(
            len(src_tokens[i]) >= 5 and _same_word(tgt_tokens[j], src_tokens[i], rules.stem) for i in mwe_indices)}
        kept = _trim_edges(kept, linked_src, members, set(core), src_tokens, outside, copula, src_function,
                           forced | own)
    if not kept:
        return None
    runs: list[list[str]] = []
    for k, j in enumerate(kept):
        if k == 0 or j != kept[k - 1] + 1:
            runs.append([])  # a token left out opens a gap
        runs[-1].append(tgt_tokens[j])
    span = kept[-1] - kept[0] + 1
    return AlignedReference(tuple(kept), tuple(tuple(r) for r in runs), span)


def _clitic_cluster(lower: Sequence[str], at: int, lang: str) -> int:
    """How many tokens right before ``at`` make a preverbal clitic cluster: one or two of ``mi ti si
    ci vi ne`` ("ci si", "ti"), or ``me te se ce ve glie`` + ``lo la li le ne`` ("se ne", "me lo"). The
    forms that are also articles or conjunctions ("la", "se") never count alone."""
    singles, objects = _words(CLITIC_CLUSTER, lang), _words(CLITIC_OBJECTS, lang)
    initials = singles - {"mi", "ti", "si", "ci", "vi", "ne", "m'", "t'", "s'", "c'", "v'", "n'"}
    if at >= 2 and lower[at - 1] in objects and lower[at - 2] in initials:
        return 2
    size = 0
    while size < 2 and at - size > 0 and lower[at - size - 1] in singles - initials:
        size += 1
    return size


def _trim_articles(kept: list[int], lower: Sequence[str], mwe_indices: Sequence[int],
                   src_tokens: Sequence[str] | None, rules: SpanRules, forced: set[int]) -> list[int]:
    articles = _words(ARTICLES, rules.tgt_lang)
    definite = _words(DEFINITE, rules.tgt_lang)
    src = [src_tokens[i].lower() for i in mwe_indices] if src_tokens is not None else []
    # a source MWE with a determiner of its own ("take a peek", "the bottom line") keeps the article
    keep_leading = src_tokens is None or any(w in _words(SOURCE_DETERMINERS, rules.src_lang) for w in src)
    kept = list(kept)
    while len(kept) > 1 and not keep_leading and lower[kept[0]] in articles and kept[0] not in forced:
        kept.pop(0)
    while len(kept) > 1 and kept[-1] not in forced and lower[kept[-1]] in definite:
        kept.pop()
    return kept


def _trim_edges(kept: list[int], linked_src: dict[int, set[int]], members: set[int], core: set[int],
                src_tokens: Sequence[str], outside: frozenset, copula: frozenset, function: frozenset,
                forced: set[int]) -> list[int]:
    """Minimal spans: an aligned word at either end that also translates a function word outside
    the MWE goes ("stia bene" for *'s all right*: "stia" is the copula; "altra telefonata" for
    *another phone call*), and so does an unlinked word left at an end once its neighbour went
    ("scoperto che le" -> "scoperto che" -> "scoperto"). ``outside``: the determiners such a word
    may not also translate; ``copula``: the copula forms, which count only when the word's links
    into the MWE are all ``function`` words ("stia" for *'s all*, but "costa" for *'s ... cost* is
    the predicate made a verb)."""
    kept = list(kept)

    def outside_function(j: int) -> bool:
        srcs = linked_src.get(j, set())
        out = srcs - members
        if not (j in core and j not in forced and out and srcs & members):
            return False
        words = {src_tokens[i].lower() for i in out}
        if words <= outside:
            return True
        return words <= outside | copula and all(src_tokens[i].lower() in function for i in srcs & members)

    def aligned_left(ks: list[int]) -> bool:
        return any(linked_src.get(j, set()) & members or j in forced for j in ks)

    changed = True
    while changed and len(kept) > 1:
        changed = False
        if outside_function(kept[-1]) and aligned_left(kept[:-1]):
            kept.pop()
            changed = True
        elif kept[-1] > min(core) and not linked_src.get(kept[-1]) and kept[-1] not in forced and aligned_left(
                kept[:-1]) and max(core) not in kept:
            kept.pop()
            changed = True
        if len(kept) > 1 and outside_function(kept[0]) and aligned_left(kept[1:]):
            kept.pop(0)
            changed = True
        elif len(kept) > 1 and kept[0] > min(core) and not linked_src.get(kept[0]) and kept[0] not in forced and \
                aligned_left(kept[1:]) and min(core) not in kept:
            kept.pop(0)
            changed = True
    return kept


def filter_reason(ref: AlignedReference | None, mwe_length: int, filters: ReferenceFilters, *,
                  src_tokens: Sequence[str] | None = None) -> str | None:
    """Which filter drops this reference (one of `FILTERS`), or None to keep it. ``src_tokens``:
    the MWE's source tokens, for ``function_only`` (a translation made only of function words for
    an MWE with a content word, e.g. "in" for *keep in touch*: a partial alignment)."""
    if ref is None:
        return "unaligned"
    if ref.span > filters.max_span(mwe_length):
        return "span_too_long"
    if ref.gaps > filters.max_gaps:
        return "scattered"
    if filters.function_only and src_tokens is not None:
        function = _words(ARTICLES, filters.tgt_lang) | _words(ARTICULATED, filters.tgt_lang) | FUNCTION_WORDS.get(
            filters.tgt_lang, frozenset())
        src_function = SOURCE_FUNCTION_WORDS.get(filters.src_lang)
        words = [w.lower() for run in ref.runs for w in run if _is_word(w)]
        if src_function is not None and function and words and all(w in function for w in words) and any(
                t.lower() not in src_function and _is_word(t) for t in src_tokens):
            return "function_only"
    return None


FUNCTION_WORDS = {"it": frozenset("a ad di da in con su per tra fra e ed o che non mi ti si ci vi ne lo la li le gli "
                                  "è ha ho hai abbiamo hanno sono sei siamo era c' d' l' m' s' t'".split())}
SOURCE_FUNCTION_WORDS = {"en": SOURCE_AUXILIARIES["en"] | SOURCE_ARTICLES["en"] | SOURCE_PRONOUNS["en"]
                         | SOURCE_PARTICLES["en"] | NEGATIONS["en"] | frozenset(
                             "and or but if as than that this these those there here so too very much many "
                             "more most some any all each every what which who how when where why because although "
                             "though unless whether since while even just only also".split())}


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
                f"{f['span_too_long']} with too long a span, {f['scattered']} scattered, "
                f"{f['function_only']} translated by function words only; {self.items} items")


def build_aligned_testset(sentences: Sequence[AnnotatedSentence], tgt_tokens: Sequence[Sequence[str]],
                          alignments: Sequence[Alignment], line_numbers: Sequence[int], *,
                          tgt_lang: str, filters: ReferenceFilters = ReferenceFilters(),
                          all_sentences: bool = False, raw: Sequence[tuple[str, str]] | None = None,
                          unaligned_pairs: Sequence[int] = (), rules: SpanRules | None = None,
                          table=None, max_alternatives: int = 10, table_min_count: int = 1,
                          candidate_min_count: int = 2) -> tuple[list[TestItem], BuildReport]:
    """One `TestItem` per input pair that keeps at least one MWE (every pair with ``all_sentences``).

    ``sentences[k]`` is the annotated source of input line ``line_numbers[k]`` (the item id),
    ``tgt_tokens[k]`` its tokenized target (in ``tgt_lang``) and ``alignments[k]`` their links. MWE
    references are written detokenized (see `AlignedReference.detokenized`). ``raw`` holds the
    input lines as given, kept in the item's meta. ``unaligned_pairs`` are the 0-based pairs the
    aligner could not align (counted apart in the report). ``rules``: how spans are made complete
    and minimal (default `SpanRules()`). ``table`` (an `mwemt.testsets.mwe_table.MweTranslationTable`):
    its translations of each MWE type attested ``candidate_min_count`` times or more (dictionary
    entries always) are span candidates (`SpanRules.candidates`), most frequent first, and, up to
    ``max_alternatives`` of them attested ``table_min_count`` times or more (dictionary entries
    always), the MWE's ``alternatives``.
    """
    n = len(sentences)
    if not (len(tgt_tokens) == len(alignments) == len(line_numbers) == n) or (raw is not None and len(raw) != n):
        raise MwemtError("build_aligned_testset: sentences, targets, alignments, line numbers and raw "
                         "lines must have the same length")
    report = BuildReport(pairs=n, not_aligned_pairs=len(unaligned_pairs))
    items: list[TestItem] = []
    for k, (sent, tgt, links, lineno) in enumerate(zip(sentences, tgt_tokens, alignments, line_numbers)):
        mwes, filtered = _sentence_mwes(sent, tgt, links, lineno, tgt_lang, filters, report, rules or SpanRules(),
                                        table, max_alternatives, table_min_count, candidate_min_count)
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
                   filters: ReferenceFilters, report: BuildReport, rules: SpanRules, table, max_alternatives: int,
                   table_min_count: int, candidate_min_count: int) -> tuple[list[TestMwe], list[dict]]:
    if sent.mwes:
        report.sentences_with_mwes += 1
    kept: list[TestMwe] = []
    filtered: list[dict] = []
    for m in sent.mwes:
        report.mwes_found += 1
        known = table.translations(m.lemma, min_count=0) if table is not None else ()
        ref = aligned_reference(m.indices, links, tgt, src_tokens=sent.tokens, rules=rules,
                                candidates=[e.translation for e in known
                                            if e.count >= candidate_min_count or "dictionary" in e.sources])
        surface = " ".join(sent.tokens[i] for i in m.indices)
        reason = filter_reason(ref, m.length, filters, src_tokens=surface.split())
        if reason is not None:
            filtered.append({"indices": list(m.indices), "name": m.lemma, "reason": reason,
                             **({"reference": ref.text} if ref is not None else {})})
            report.note_filtered(reason, {"line": lineno, "mwe": surface, "name": m.lemma,
                                          "reference": ref.text if ref is not None else "",
                                          "source": " ".join(sent.tokens), "target": " ".join(tgt)})
            continue
        assert ref is not None
        lemma = " ".join(sent.lemmas[i] for i in m.indices)
        reference = ref.detokenized(tgt_lang)
        alternatives: list[str] = []
        own = " ".join(t.casefold() for run in ref.runs for t in run)
        for e in known:
            if len(alternatives) >= max_alternatives:
                break
            if (e.count >= table_min_count or "dictionary" in e.sources) and e.text.replace(f" {GAP} ", " ") != own:
                alternatives.append(e.text)
        kept.append(TestMwe(m.indices, lemma, reference, m.category, surface, name=m.lemma,
                            reference_indices=ref.indices, confidence=m.confidence,
                            alternatives=tuple(alternatives)))
        report.mwes_kept += 1
        report.gapped_references += ref.gaps > 0
        report.by_length[m.length] += 1
        report.by_category[m.category or "(none)"] += 1
        report.top_names[m.lemma] += 1
    return kept, filtered
