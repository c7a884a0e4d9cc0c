"""The MWE compositionality table that `tesla-comp` weighs MWEs with, and `mwemt score
--compositionality` reads: a ``mwe<TAB>score`` file (`mwemt.formats.read_compositionality`) or
values given in code. Its own module so that the score inputs (`mwemt.evaluate.inputs`) can read
one without importing the metric.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mwemt.errors import MwemtError
from mwemt.fileio import sha256_file
from mwemt.formats import normalize_mwe, read_compositionality


@dataclass(frozen=True)
class CompositionalityTable:
    """MWE -> compositionality in [0, 1] (1 = compositional), with the ``source`` that the
    signature names: ``FILE@sha256[:12]`` for a file, ``dict@digest`` for values given in code."""

    values: Mapping[str, float]
    source: str
    unscored: frozenset[str] = frozenset()  # MWEs listed without a prediction (``NA``): they get the default

    @classmethod
    def from_file(cls, path: str | Path) -> CompositionalityTable:
        """Read a ``mwe<TAB>score`` file (`mwemt.formats.read_compositionality`; ``NA`` = no prediction)."""
        table = read_compositionality(path, keep_missing=True)
        return cls({k: v for k, v in table.items() if v is not None}, f"{Path(path).name}@{sha256_file(path)[:12]}",
                   frozenset(k for k, v in table.items() if v is None))

    @classmethod
    def from_mapping(cls, values: Mapping[str, float | None]) -> CompositionalityTable:
        """Normalize the MWE keys, check the range and name the table by a digest of its content
        (a None value: an MWE without a prediction)."""
        comp = {normalize_mwe(k): None if v is None else float(v) for k, v in values.items()}
        bad = [k for k, v in comp.items() if v is not None and not 0.0 <= v <= 1.0]
        if bad:
            raise MwemtError(f"compositionality of {bad[0]!r} is outside [0, 1]")
        digest = hashlib.sha256("".join(f"{k}\t{v!r}\n" for k, v in sorted(comp.items())).encode())
        return cls({k: v for k, v in comp.items() if v is not None}, f"dict@{digest.hexdigest()[:12]}",
                   frozenset(k for k, v in comp.items() if v is None))

    @property
    def mwes(self) -> list[str]:
        """Every MWE the table lists, with or without a prediction."""
        return sorted(set(self.values) | self.unscored)

    def median(self) -> float:
        if not self.values:
            raise MwemtError(f"{self.source}: no predictions to take the median of")
        return float(np.median(list(self.values.values())))
