"""Parallel corpora as prefixes (``PREFIX.en`` + ``PREFIX.it``) and a deterministic train/valid/test split.

The split groups pairs by their source sentence before assigning them, because Tatoeba lists
one English sentence with several Italian translations ("Hi." -> "Ciao!", "Ciao."): splitting pair
by pair would put the same source in train and test and inflate test scores.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import iter_lines, iter_parallel, write_lines
from mwemt.provenance import file_record, manifest, write_json

SPLITS = ("train", "valid", "test")


def corpus_path(prefix: str | Path, lang: str) -> Path:
    return Path(f"{prefix}.{lang}")


def read_corpus(prefix: str | Path, src_lang: str = "en", tgt_lang: str = "it") -> list[tuple[str, str]]:
    """The aligned pairs of a corpus prefix; misaligned or empty lines are located errors."""
    src, tgt = corpus_path(prefix, src_lang), corpus_path(prefix, tgt_lang)
    for p in (src, tgt):
        if not p.is_file():
            raise InputError("corpus file not found", p, expected=f"PREFIX.{src_lang} and PREFIX.{tgt_lang}")
    return [(s, t) for s, t in iter_parallel(src, tgt, allow_empty=False)]


def write_corpus(prefix: str | Path, pairs: Sequence[tuple[str, str]], src_lang: str = "en",
                 tgt_lang: str = "it") -> dict[str, dict]:
    """Write both sides (each atomically) and return their file records for a manifest."""
    for k, (s, t) in enumerate(pairs, 1):
        if not s.strip() or not t.strip() or "\n" in s + t:
            raise MwemtError(f"pair {k} of {prefix} is empty or spans lines: {s!r} / {t!r}")
    paths = {src_lang: corpus_path(prefix, src_lang), tgt_lang: corpus_path(prefix, tgt_lang)}
    write_lines(paths[src_lang], (s for s, _ in pairs))
    write_lines(paths[tgt_lang], (t for _, t in pairs))
    return {lang: file_record(p) for lang, p in paths.items()}


def check_new_prefix(out: str | Path, inputs: Iterable[str | Path], src_lang: str, tgt_lang: str) -> None:
    """Refuse an output prefix that would overwrite one of the inputs: augmentation never works in place."""
    targets = {corpus_path(out, lang).resolve() for lang in (src_lang, tgt_lang)}
    for p in inputs:
        if Path(p).resolve() in targets:
            raise MwemtError(f"the output prefix {out} would overwrite the input {p}; choose a new corpus prefix")


def iter_tsv_pairs(path: str | Path) -> Iterator[tuple[int, str, str]]:
    """(line number, source, target) for each ``source<TAB>target`` row."""
    for lineno, line in enumerate(iter_lines(path), 1):
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0].strip() or not cols[1].strip():
            raise InputError(f"{len(cols)} column(s) or an empty side", path, lineno,
                             expected="source<TAB>target with both sides non-empty")
        yield lineno, cols[0].strip(), cols[1].strip()


@dataclass(frozen=True)
class SplitPlan:
    """Row indices (0-based, in file order) of each split."""

    train: list[int]
    valid: list[int]
    test: list[int]

    def sizes(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in SPLITS}


def plan_split(sources: Sequence[str], valid_size: int, test_size: int, seed: int) -> SplitPlan:
    """Assign whole source groups to test, then valid, until each holds at least its size; rest is train.

    Groups are keyed by the case-folded, whitespace-collapsed source and visited in a seeded shuffle,
    so the same input and seed always give the same split.
    """
    if valid_size < 0 or test_size < 0:
        raise MwemtError("split sizes must be 0 or more")
    if valid_size + test_size >= len(sources):
        raise MwemtError(f"valid ({valid_size}) + test ({test_size}) leave no training pairs out of "
                         f"{len(sources)}")
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(sources):
        groups.setdefault(" ".join(s.casefold().split()), []).append(i)
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    test: list[int] = []
    valid: list[int] = []
    train: list[int] = []
    for key in keys:
        members = groups[key]
        if len(test) < test_size:
            test.extend(members)
        elif len(valid) < valid_size:
            valid.extend(members)
        else:
            train.extend(members)
    return SplitPlan(sorted(train), sorted(valid), sorted(test))


def split_tsv(tsv: str | Path, out_dir: str | Path, *, valid_size: int = 2000, test_size: int = 2000,
              seed: int = 1, src_lang: str = "en", tgt_lang: str = "it") -> dict:
    """Split a ``source<TAB>target`` file into ``OUT/{train,valid,test}.{src,tgt}`` with a manifest."""
    rows = list(iter_tsv_pairs(tsv))
    if not rows:
        raise InputError("file is empty", tsv, expected="source<TAB>target rows")
    plan = plan_split([s for _, s, _ in rows], valid_size, test_size, seed)
    out_dir = Path(out_dir)
    outputs = {}
    for name in SPLITS:
        pairs = [(rows[i][1], rows[i][2]) for i in getattr(plan, name)]
        outputs[name] = write_corpus(out_dir / name, pairs, src_lang, tgt_lang)
    m = manifest("augment.split", inputs={"tsv": tsv}, seed=seed,
                 config={"valid_size": valid_size, "test_size": test_size, "src_lang": src_lang,
                         "tgt_lang": tgt_lang, "grouping": "casefolded source sentence"},
                 counts={"rows": len(rows), **plan.sizes(),
                         "distinct_sources": len({" ".join(s.casefold().split()) for _, s, _ in rows})},
                 outputs=outputs)
    write_json(out_dir / "split.manifest.json", m)
    return m
