"""Degenerate outputs: loops, outputs far longer than the source predicts, and fragments appended after a
sentence end. A corpus-level gain can be made of such lines (an MWE score rises when a loop happens to repeat
the right word; BLEU's brevity penalty rises when garbage is appended), so reports count them per system.

Every flag of a line depends on that line alone: its source, its hypothesis and one number fixed per test set
before any system is read (the expected target/source length ratio, estimated from the references). Nothing
is learned from the systems' outputs, so a system that changes k lines changes at most k lines' flags.

The flags (`degenerate_flags`; the names are `FLAGS`):

- ``loop``: the hypothesis repeats a span back to back, more often than its source does: a span of 1 to
  ``loop_max_short`` (4) tokens three or more times in a row ("molto molto molto"; "è un , è un , è un ,"), or a
  longer span twice in a row ("se ne andò via . se ne andò via ."), or, inside one token, 1 to 4 letters
  ``char_loop_repeats`` (4) or more times in a row (the subword loop "riveveveveve"). A span counts only when it
  holds a word (a token with a letter or digit), so "..." is no loop; tokens compare case-insensitively. A
  repetition the source has as often ("very very very good", "hmmmm") is not flagged.
- ``long``: the hypothesis has more than ``long_factor`` x ``expected_ratio`` x (source tokens) +
  ``long_slack`` tokens; ``expected_ratio`` is the median reference/source token ratio of the test set's lines
  (`expected_ratio`; 1.0 when none is given). With the defaults, 2 x the median ratio plus 5 tokens: a line of
  10 source tokens and a median ratio of 1.1 is long from 28 target tokens on.
- ``appended``: the hypothesis has more sentences than its source: text after a sentence end (a token of
  ``.``, ``!``, ``?``, ``…`` and closing quotes or brackets only, then any closing quotes or brackets, then a token
  with a word) that the source has no further sentence for. "Se ne andò. Via via." for "He walked away." is appended; "3.5" and
  "Mr. Smith" / "Sig. Rossi" on both sides are not.

Tokens: `tokenize` splits text into words (letters and digits, with inner ``.``, ``,``, ``'`` or ``’``, so
"3.5" and "l'uomo" stay whole) and runs of other non-space characters; callers that already have tokens (any
reasonable tokenization) pass them to `degenerate_flags` directly.

`DegenerateCounter` is the per-test report component after the metric classes' shape: per-sentence
statistics (one 0/1 column per flag and ``any``), their sums, and a signature that names every setting and
the test's expected ratio. Without source sentences only ``loop`` can be judged (counted against no source
repetition); ``long`` and ``appended`` are then undefined (None).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mwemt.evaluate.base import SentenceStats
from mwemt.evaluate.signature import Signature

LOOP, LONG, APPENDED = "loop", "long", "appended"
FLAGS = (LOOP, LONG, APPENDED)
ANY = "any"
COLUMNS = (*FLAGS, ANY)
SOURCE_FLAGS = (LONG, APPENDED)   # the flags that need the source sentence

_TOKEN = re.compile(r"[^\W_]+(?:[.,'’][^\W_]+)*|_+|[^\w\s]+")
_SENTENCE_END = frozenset(".!?…")
_CLOSING = frozenset("\"'»”’)]}›")


def tokenize(text: str) -> list[str]:
    """Words (with inner ``.``, ``,``, ``'``, ``’``: "3.5", "l'uomo") and runs of other non-space characters."""
    return _TOKEN.findall(text)


def _is_word(token: str) -> bool:
    return any(ch.isalnum() for ch in token)


@dataclass(frozen=True)
class DegenerateSettings:
    """What counts as degenerate (every field goes into the signature)."""

    loop_max_short: int = 4      # spans of 1..loop_max_short tokens: a loop from loop_short_repeats in a row
    loop_short_repeats: int = 3
    loop_long_repeats: int = 2   # longer spans: a loop from this many in a row
    char_loop_repeats: int = 4   # 1-4 letters inside a token: a loop from this many in a row
    long_factor: float = 2.0     # long: more than long_factor x expected ratio x source tokens + long_slack
    long_slack: int = 5

    def __post_init__(self) -> None:
        if self.loop_max_short < 1:
            raise ValueError(f"loop_max_short must be 1 or more, not {self.loop_max_short}")
        if min(self.loop_short_repeats, self.loop_long_repeats, self.char_loop_repeats) < 2:
            raise ValueError("a loop needs at least 2 repetitions in a row")
        if not self.long_factor > 0:
            raise ValueError(f"long_factor must be positive, not {self.long_factor}")
        if self.long_slack < 0:
            raise ValueError(f"long_slack must be 0 or more, not {self.long_slack}")


DEFAULT_SETTINGS = DegenerateSettings()


def repeat_runs(tokens: Sequence[str]) -> list[tuple[int, int, int]]:
    """Every maximal back-to-back repetition of a span that holds a word: (start, span length, times in a row),
    times >= 2; tokens compare case-insensitively."""
    low = [t.casefold() for t in tokens]
    n_tok = len(low)
    runs = []
    for n in range(1, n_tok // 2 + 1):
        j = 0
        while j + n < n_tok:
            if low[j] != low[j + n]:
                j += 1
                continue
            start = j
            while j + n < n_tok and low[j] == low[j + n]:
                j += 1
            length = j - start            # positions where the token equals the one n later
            times = 1 + length // n
            if times >= 2 and any(_is_word(t) for t in low[start:start + n]):
                runs.append((start, n, times))
    return runs


def char_repeats(token: str) -> int:
    """The most times a unit of 1-4 letters repeats back to back inside ``token`` (1 when none does)."""
    low, best = token.casefold(), 1
    for n in range(1, min(4, len(low) // 2) + 1):
        j = 0
        while j + n < len(low):
            if low[j] != low[j + n]:
                j += 1
                continue
            start = j
            while j + n < len(low) and low[j] == low[j + n]:
                j += 1
            if low[start:start + n].isalpha():
                best = max(best, 1 + (j - start) // n)
    return best


def _loop_strength(tokens: Sequence[str], s: DegenerateSettings) -> tuple[int, int, int]:
    """(the most times a short span repeats in a row, the most times a longer one does, the most times letters
    repeat inside a token); 1 when nothing repeats."""
    short = long = 1
    for _, n, times in repeat_runs(tokens):
        if n <= s.loop_max_short:
            short = max(short, times)
        else:
            long = max(long, times)
    return short, long, max((char_repeats(t) for t in tokens), default=1)


def has_loop(src_tokens: Sequence[str] | None, hyp_tokens: Sequence[str],
             settings: DegenerateSettings = DEFAULT_SETTINGS) -> bool:
    """A repeated span run in the hypothesis (`DegenerateSettings`) that its source (if given) lacks."""
    hyp = _loop_strength(hyp_tokens, settings)
    least = (settings.loop_short_repeats, settings.loop_long_repeats, settings.char_loop_repeats)
    if not any(h >= m for h, m in zip(hyp, least)):
        return False
    src = _loop_strength(src_tokens or (), settings)
    return any(h >= m and h > r for h, m, r in zip(hyp, least, src))


def long_bound(n_src: int, expected_ratio: float = 1.0, settings: DegenerateSettings = DEFAULT_SETTINGS) -> float:
    """The most target tokens a line of ``n_src`` source tokens may have before it is ``long``."""
    return settings.long_factor * expected_ratio * n_src + settings.long_slack


def sentence_count(tokens: Sequence[str]) -> int:
    """How many sentences: 1 + the sentence ends (a token of . ! ? … and closing quotes or brackets only, with
    one of . ! ? …, then any closing quotes or brackets) followed by a token with a word; 0 for a text without
    any word."""
    if not any(_is_word(t) for t in tokens):
        return 0
    count, k = 1, 0
    while k < len(tokens):
        chars = set(tokens[k])
        if chars & _SENTENCE_END and chars <= _SENTENCE_END | _CLOSING:   # "." "?!" and '."' alike
            k += 1
            while k < len(tokens) and tokens[k] and set(tokens[k]) <= _CLOSING:
                k += 1
            if k < len(tokens) and _is_word(tokens[k]):
                count += 1
            continue
        k += 1
    return count


def degenerate_flags(src_tokens: Sequence[str] | None, hyp_tokens: Sequence[str], *, expected_ratio: float = 1.0,
                     settings: DegenerateSettings = DEFAULT_SETTINGS) -> frozenset[str]:
    """Is this output line degenerate? The flags (`FLAGS`) of one hypothesis given its source, from the two
    token lists alone (see the module's docstring); an empty set means not degenerate. ``expected_ratio``: the
    test set's median reference/source token ratio (`expected_ratio`). Without a source (None), only
    ``loop`` is judged."""
    flags = set()
    if has_loop(src_tokens, hyp_tokens, settings):
        flags.add(LOOP)
    if src_tokens is not None:
        if len(hyp_tokens) > long_bound(len(src_tokens), expected_ratio, settings):
            flags.add(LONG)
        if sentence_count(hyp_tokens) > max(sentence_count(src_tokens), 1):
            flags.add(APPENDED)
    return frozenset(flags)


def degenerate_line(source: str | None, hypothesis: str, *, expected_ratio: float = 1.0,
                    settings: DegenerateSettings = DEFAULT_SETTINGS) -> frozenset[str]:
    """`degenerate_flags` of two texts, tokenized by `tokenize`."""
    return degenerate_flags(None if source is None else tokenize(source), tokenize(hypothesis),
                            expected_ratio=expected_ratio, settings=settings)


def expected_ratio(sources: Sequence[str], references: Sequence[str]) -> float:
    """The median reference/source token ratio over the lines where both have tokens (1.0 when none has):
    how long a translation of a line this test set's references say to expect."""
    ratios = [len(tokenize(r)) / n for s, r in zip(sources, references) if (n := len(tokenize(s))) and r.strip()]
    return float(statistics.median(ratios)) if ratios else 1.0


class DegenerateCounter:
    """Degenerate lines of one test set: per-sentence 0/1 statistics per flag (`COLUMNS`), counts and a
    signature. ``expected_ratio``: the test's median reference/source ratio (`expected_ratio`); ``sources``
    None (no source text): only loops are judged."""

    name = "Degenerate"

    def __init__(self, expected_ratio: float = 1.0, settings: DegenerateSettings = DEFAULT_SETTINGS) -> None:
        if not expected_ratio > 0:
            raise ValueError(f"the expected ratio must be positive, not {expected_ratio}")
        self.expected_ratio = float(expected_ratio)
        self.settings = settings

    @classmethod
    def for_test(cls, sources: Sequence[str] | None, references: Sequence[str] | None,
                 settings: DegenerateSettings = DEFAULT_SETTINGS) -> DegenerateCounter:
        """The counter of a test set: its expected ratio from its sources and references (1.0 without)."""
        ratio = expected_ratio(sources, references) if sources is not None and references is not None else 1.0
        return cls(ratio, settings)

    def sentence_stats(self, sources: Sequence[str] | None, hyps: Sequence[str]) -> SentenceStats:
        if sources is not None and len(sources) != len(hyps):
            raise ValueError(f"{len(sources)} source lines for {len(hyps)} hypotheses")
        rows = np.zeros((len(hyps), len(COLUMNS)), dtype=np.int64)
        for i, hyp in enumerate(hyps):
            flags = degenerate_line(None if sources is None else sources[i], hyp,
                                    expected_ratio=self.expected_ratio, settings=self.settings)
            for k, flag in enumerate(FLAGS):
                rows[i, k] = flag in flags
            rows[i, -1] = bool(flags)
        return SentenceStats(rows, COLUMNS, {"with_source": sources is not None})

    def signature(self) -> Signature:
        s = self.settings
        return Signature.of(self.name, {
            "tok": "words+punct", "loop": f"n1-{s.loop_max_short}x{s.loop_short_repeats},"
                                          f"n{s.loop_max_short + 1}+x{s.loop_long_repeats},"
                                          f"char1-4x{s.char_loop_repeats},case:lc,vs-src",
            "long": f"{s.long_factor:g}x{self.expected_ratio:.3f}+{s.long_slack}", "appended": "sentences>src"})

    def counts(self, stats: SentenceStats) -> dict:
        """Lines, and per flag (and ``any``) the lines flagged: None for a flag that needs the missing source."""
        totals = stats.totals()
        with_source = stats.info.get("with_source", True)
        out: dict = {"lines": len(stats)}
        for k, col in enumerate(COLUMNS):
            out[col] = None if not with_source and col in SOURCE_FLAGS else int(totals[k])
        return out

    def count(self, sources: Sequence[str] | None, hyps: Sequence[str]) -> dict:
        return self.counts(self.sentence_stats(sources, hyps))


def count_test(sources: Sequence[str] | None, references: Sequence[str] | None,
               systems: dict[str, Sequence[str]], settings: DegenerateSettings = DEFAULT_SETTINGS,
               examples: int = 0) -> dict:
    """One test set's degenerate lines per system (a JSON-able dictionary, the form results.json and the
    comparison report keep): the signature, the expected ratio, whether a source was read, and per system the
    counts (`DegenerateCounter.counts`) and, with ``examples`` > 0, the first lines (1-based) of each flag."""
    counter = DegenerateCounter.for_test(sources, references, settings)
    out: dict = {"signature": str(counter.signature()), "expected_ratio": counter.expected_ratio,
                 "with_source": sources is not None, "systems": {}}
    for name, hyps in systems.items():
        stats = counter.sentence_stats(sources, hyps)
        row = counter.counts(stats)
        if examples:
            row["examples"] = {col: [int(i) + 1 for i in np.flatnonzero(stats.rows[:, k])[:examples]]
                               for k, col in enumerate(FLAGS) if row[col]}
        out["systems"][name] = row
    return out


def flag_note(with_source: bool = True, settings: DegenerateSettings = DEFAULT_SETTINGS) -> str:
    """One sentence that says what the columns count, for the reports."""
    s = settings
    text = (f"loop: a span of 1-{s.loop_max_short} tokens {s.loop_short_repeats}+ times in a row, a longer span "
            f"{s.loop_long_repeats}+ times, or 1-4 letters {s.char_loop_repeats}+ times inside a word, more often than "
            f"in the source; long: more target tokens than {s.long_factor:g} x the test's median reference/source "
            f"token ratio x the source tokens + {s.long_slack}; appended: more sentences than the source (text after "
            "a . ! ? that the source has no sentence for). A line's flags depend on that line alone "
            "(docs/compare.md)")
    if not with_source:
        text += "; no source text was read, so only loops are counted"
    return text + "."
