"""Signatures: the short string that says exactly how a score was computed, after sacrebleu.

A score without its settings cannot be compared with another one, so every score mwemt prints
carries a `Signature`. Its fields always come in the same order, the one sacrebleu uses:

    NAME | nrefs | bs | seed | the metric's own settings, in the metric's order | version

``nrefs`` (number of reference streams), ``bs`` (bootstrap resamples) and ``seed`` are proper
fields, present only when they apply; ``version`` (of the package that computed the score) is
always last. The string form is ``key:value`` pairs joined by ``|``, so BLEU and chrF signatures
are character for character sacrebleu's own, paired test included, and `Signature.parse` reads
any of them back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

SEPARATOR = "|"
RESERVED = ("nrefs", "bs", "seed", "version")


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass(frozen=True)
class Signature:
    """A metric's name, its settings in a fixed order, the resampling fields and the version."""

    name: str
    settings: tuple[tuple[str, str], ...] = ()
    version: str = ""
    nrefs: int | None = None
    bs: int | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        keys = [k for k, _ in self.settings]
        clash = [k for k in keys if k in RESERVED]
        if clash:
            raise ValueError(f"setting {clash[0]!r} is a reserved signature field; pass it as an argument")
        if len(set(keys)) != len(keys):
            raise ValueError(f"a setting is given twice in {keys}")

    @classmethod
    def of(cls, name: str, settings: Mapping[str, object] | Iterable[tuple[str, object]] = (), *,
           version: str | None = None, nrefs: int | None = None) -> Signature:
        """Build from a mapping of settings (values become strings; booleans yes/no).

        ``version`` defaults to mwemt's, for metrics implemented here."""
        if version is None:
            from mwemt import __version__ as version
        items = settings.items() if isinstance(settings, Mapping) else settings
        return cls(name, tuple((str(k), _text(v)) for k, v in items), str(version), nrefs)

    def with_bootstrap(self, samples: int, seed: int) -> Signature:
        """The same signature for a score tested with a seeded paired bootstrap."""
        return replace(self, bs=int(samples), seed=int(seed))

    def get(self, key: str) -> str | None:
        """A field's value as it is printed, or None when the signature has no such field."""
        return dict(self.fields()).get(key)

    def fields(self) -> list[tuple[str, str]]:
        """Every ``(key, value)`` after the name, in the printed order."""
        head = [(k, str(v)) for k, v in (("nrefs", self.nrefs), ("bs", self.bs), ("seed", self.seed))
                if v is not None]
        return [*head, *self.settings, ("version", self.version)]

    def format(self) -> str:
        return SEPARATOR.join([self.name, *(f"{k}:{v}" for k, v in self.fields())])

    def __str__(self) -> str:
        return self.format()

    @classmethod
    def parse(cls, text: str) -> Signature:
        """Read a formatted signature back (ours or sacrebleu's ``format()``, prefixed by the name)."""
        name, *parts = text.strip().split(SEPARATOR)
        if not name or ":" in name:
            raise ValueError(f"a signature starts with the metric name, not {name!r}")
        values: dict[str, str] = {}
        settings = []
        for part in parts:
            key, sep, value = part.partition(":")
            if not sep or not key:
                raise ValueError(f"signature field {part!r} is not key:value")
            if key in RESERVED:
                values[key] = value
            else:
                settings.append((key, value))
        if "version" not in values:
            raise ValueError(f"signature {text!r} has no version field")
        ints = {k: int(values[k]) for k in ("nrefs", "bs", "seed") if k in values}
        return cls(name, tuple(settings), values["version"], **ints)


def format_signature(name: str, fields: Mapping[str, object], version: str | None = None) -> str:
    """The string form of ``Signature.of(name, fields)``, for results that are not metric scores."""
    return Signature.of(name, fields, version=version).format()
