"""Human scores for meta-evaluation: any judgment file -> segment scores pointing the right way.

Why: correlations are only meaningful if humans and metrics agree on which way is better, and
the field's files differ there (raw MQM counts errors, the WMT average files store −MQM). Each
format states its orientation here once, and the result says it in words for the report. For
the plain ``tsv`` format, where only the user knows, `orientation_warnings` catches the usual
mistake: negating a file that is already negated, or forgetting to negate an error count.

MQM error rows become segment scores with a weighting scheme (`MqmWeights`): the per-rater sum
of error weights, averaged over the raters of the item (Freitag et al. 2021). The default is
their scheme; ``marot`` is the Marot viewer's default, which also gives source issues and
"creative reinterpretation" weight 0 and reproduces the MQM scores embedded in Marot exports.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from mwemt.errors import MwemtError
from mwemt.judgements import (
    LOWER_BETTER,
    MQM_FORMATS,
    MqmRating,
    SegmentScore,
    check_human_format,
    read_mqm_ratings,
    read_mqm_weight_rules,
    read_published_mqm,
    read_score_tsv,
    read_wmt_mqm_avg,
)

Rule = tuple[str, str, float]  # (severity pattern, category pattern, weight); '*' matches any text

# Freitag et al. (2021), Table 2: Major 5 (Non-translation 25), Minor 1 (Fluency/Punctuation 0.1);
# anything else (No-error, Neutral) 0.
FREITAG_2021: tuple[Rule, ...] = (
    ("Major", "Non-translation*", 25.0),
    ("Major", "*", 5.0),
    ("Minor", "Fluency/Punctuation", 0.1),
    ("Minor", "*", 1.0),
)
# The Marot viewer's defaults (first match wins): minor punctuation and "trivial" 0.1, creative
# reinterpretation and source issues 0, non-translation 25, minor 1, major and critical 5.
MAROT_DEFAULT: tuple[Rule, ...] = (
    ("Minor", "*punctuation*", 0.1),
    ("Trivial", "*", 0.1),
    ("*", "*reinterpretation*", 0.0),
    ("*", "Source*", 0.0),
    ("*", "Non?translation*", 25.0),
    ("Minor", "*", 1.0),
    ("Major", "*", 5.0),
    ("Critical", "*", 5.0),
)
MQM_WEIGHT_SCHEMES = {"freitag2021": FREITAG_2021, "marot": MAROT_DEFAULT}
DEFAULT_MQM_WEIGHTS = "freitag2021"


@dataclass(frozen=True)
class MqmWeights:
    """Ordered rules; an error takes the weight of the first rule its severity and category match
    (case-insensitive shell patterns), and weight 0 if none does."""

    name: str
    rules: tuple[Rule, ...]

    @classmethod
    def load(cls, spec: str | Path = DEFAULT_MQM_WEIGHTS) -> MqmWeights:
        """A named scheme (``freitag2021``, ``marot``) or a weights file."""
        if str(spec) in MQM_WEIGHT_SCHEMES:
            return cls(str(spec), MQM_WEIGHT_SCHEMES[str(spec)])
        path = Path(spec)
        if not path.exists():
            raise MwemtError(f"MQM weights {str(spec)!r}: neither a scheme ({', '.join(MQM_WEIGHT_SCHEMES)}) "
                             "nor an existing file")
        return cls(f"file:{path.name}", tuple(read_mqm_weight_rules(path)))

    def weight(self, severity: str, category: str) -> float:
        sev, cat = severity.strip().lower(), category.strip().lower()
        for s_pat, c_pat, w in self.rules:
            if fnmatchcase(sev, s_pat.lower()) and fnmatchcase(cat, c_pat.lower()):
                return w
        return 0.0

    def describe(self) -> str:
        return f"{self.name} (" + "; ".join(f"{s} {c} {w:g}" for s, c, w in self.rules) + "; else 0)"


def mqm_segment_scores(ratings: Iterable[MqmRating], weights: MqmWeights) -> list[SegmentScore]:
    """MQM per (system, segment): each rater's summed error weights, averaged over the item's raters."""
    total: dict[tuple[str, str], float] = defaultdict(float)
    raters: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in ratings:
        key = (r.system, r.segment)
        total[key] += weights.weight(r.severity, r.category)
        raters[key].add(r.rater)
    return [SegmentScore(s, g, total[(s, g)] / len(raters[(s, g)]), LOWER_BETTER) for s, g in total]


@dataclass
class HumanScores:
    """What a judgment file says, oriented for correlation, with how it was read."""

    path: str
    format: str
    scores: list[SegmentScore]
    orientation: str  # in words, for reports
    weights: str | None = None
    warnings: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # what was verified, in words (e.g. against published MQM)

    def oriented(self) -> dict[tuple[str, str], float | None]:
        """(system, segment) -> score, higher is better; None = not judged."""
        return {s.key: s.oriented() for s in self.scores}

    def describe(self) -> str:
        return "\n".join([f"human scores: {self.path} ({self.format}): {self.orientation}", *self.checks])


_ORIENTATION = {
    "wmt-mqm-avg": "−MQM as published (0 = no error), higher is better",
    "wmt-mqm-errors": "−MQM recomputed from the error rows, averaged over raters; higher is better",
    "marot-sxs": "−MQM recomputed from the error rows, averaged over raters; higher is better",
}


def load_human_scores(path: str | Path, fmt: str = "auto", *, lower_better: bool = False,
                      weights: MqmWeights | None = None) -> HumanScores:
    """Read human scores in any `mwemt.judgements.HUMAN_FORMATS` format.

    ``lower_better`` says that a ``tsv`` file holds an error score (e.g. MQM) to negate; the other
    formats state their orientation, and asking to negate them is an error.
    """
    fmt = check_human_format(path, fmt)
    if fmt != "tsv" and lower_better:
        raise MwemtError(f"{path}: a {fmt} file states its orientation ({_ORIENTATION[fmt]}); negating it "
                         "as lower-is-better would flip the sign of every correlation")
    if fmt == "tsv":
        scores = read_score_tsv(path, lower_better=lower_better)
        how = ("error scores negated (lower was better), higher is better" if lower_better
               else "as given, higher is better")
        return HumanScores(str(path), fmt, scores, how, warnings=orientation_warnings(scores, lower_better))
    if fmt == "wmt-mqm-avg":
        return HumanScores(str(path), fmt, read_wmt_mqm_avg(path), _ORIENTATION[fmt])
    assert fmt in MQM_FORMATS
    weights = weights or MqmWeights.load()
    ratings = list(read_mqm_ratings(path, fmt))
    scores = mqm_segment_scores(ratings, weights)
    checks = [published_agreement(read_published_mqm(path), scores).describe(weights.name)]
    return HumanScores(str(path), fmt, scores, f"{_ORIENTATION[fmt]}; weights {weights.describe()}",
                       weights=weights.name, checks=[c for c in checks if c])


MQM_MATCH_TOL = 1e-4


@dataclass
class PublishedAgreement:
    """How recomputed segment MQM compares with the MQM an export publishes per item."""

    items: int  # items whose rows carry a published MQM
    agree: int
    differ: list[tuple[str, str, float, float]]  # (system, segment, recomputed, published)

    def describe(self, weights: str) -> str:
        if not self.items:
            return ""
        text = (f"check: MQM recomputed with the {weights} weights equals the MQM published in the file's metadata "
                f"for {self.agree} of {self.items} items")
        if self.differ:
            s, g, mine, theirs = self.differ[0]
            text += f"; {len(self.differ)} differ, e.g. {s} segment {g}: {mine:g} vs {theirs:g}"
            if weights == "freitag2021":
                text += " (--mqm-weights marot scores source issues and creative reinterpretation 0, as the export)"
        return text


def published_agreement(published: dict[tuple[str, str], float],
                        scores: Sequence[SegmentScore]) -> PublishedAgreement:
    """Compare each item's recomputed MQM with the value the file publishes (Marot metadata), if any.

    In the WMT23 side-by-side exports the category of an omission marked on the source while the
    second translation was shown reads ``... (Translation 2)``; the row already names the system of
    that translation, so it counts for the row's system like any other error. The published
    per-item MQM confirms this reading.
    """
    mine = {s.key: s.score for s in scores}
    differ = [(k[0], k[1], mine[k], v) for k, v in sorted(published.items())
              if k in mine and mine[k] is not None and abs(mine[k] - v) > MQM_MATCH_TOL]
    return PublishedAgreement(len(published), len(published) - len(differ), differ)


ZERO_SHARE_OF_ERROR_COUNTS = 0.25  # a share of exact zeros that marks error-free translations


def orientation_warnings(scores: Sequence[SegmentScore], lower_better: bool) -> list[str]:
    """Warn when a score file's values point the other way from what was declared.

    With ``lower_better``, values all <= 0 look like an error score that is already negated (as
    the WMT files store −MQM): negating again flips every correlation. Without it, values all
    >= 0 of which many are exactly 0 look like an error count (0 = no error) left un-negated.
    """
    values = [s.score for s in scores if s.score is not None]
    if not values:
        return []
    if lower_better and max(values) <= 0 < -min(values):
        return [f"all {len(values)} human scores are <= 0, like error scores that are already negated "
                "(such as −MQM, higher is better); negating them as lower-is-better probably flips the "
                "sign of every correlation"]
    zeros = sum(v == 0 for v in values) / len(values)
    if not lower_better and min(values) >= 0 < max(values) and zeros >= ZERO_SHARE_OF_ERROR_COUNTS:
        return [f"all {len(values)} human scores are >= 0 and {zeros:.0%} are exactly 0, like an error count "
                "(such as MQM, lower is better); if that is what they are, the sign of every correlation is "
                "probably flipped: declare them lower-is-better"]
    return []
