"""Binarize segmented parallel text for fairseq: one stream and one dictionary per source factor.

Input: for each split a source file (pieces, or factored ``piece|lemma|tag`` lines as written by
`mwemt subword apply --factors N`) and a target file (pieces). Output: a fairseq data directory
that the `factored_translation` task reads (layout in `mwemt.nmt.fairseq_plugin.task`), plus
``factors.json`` and ``manifest.json``. Source and target must have the same number of lines and
every source token the same number of factors; both are checked with file and line in the error.

The directory is built beside the destination and renamed into place at the end, so an
interrupted run leaves no half-binarized directory. ``manifest.json`` lists every file prepare
wrote (``outputs``): replacing an existing destination (``overwrite``) removes those files and
nothing else, and a destination that holds an input, or any file prepare did not write, is
refused. An existing destination directory is kept (its mode, owner and links to it), only its
files are replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import count_lines, iter_lines, iter_parallel, make_directory, new_file_mode
from mwemt.formats import parse_factored
from mwemt.provenance import manifest, write_json

DEFAULT_FACTOR_NAMES = {1: ["word"], 2: ["word", "tag"], 3: ["word", "lemma", "tag"]}


def mwe_flags_file(split: str, src_lang: str, tgt_lang: str) -> str:
    """The name of a split's per-sentence MWE flags in a data directory (read by the plugin task)."""
    return f"{split}.{src_lang}-{tgt_lang}.mweflags.npy"


def read_mwe_flags(path: str | Path) -> np.ndarray:
    """A flags file: one ``0`` or ``1`` per line ("this sentence has an (idiomatic) MWE"), as uint8."""
    from mwemt.fileio import iter_lines

    flags = []
    for lineno, line in enumerate(iter_lines(path), 1):
        value = line.strip()
        if value not in ("0", "1"):
            raise InputError(f"bad MWE flag {value!r}", path, lineno, expected="0 or 1, one per sentence")
        flags.append(value == "1")
    return np.array(flags, dtype=np.uint8)
MANIFEST = "manifest.json"
FACTORS = "factors.json"


class DestinationNotEmpty(MwemtError):
    """The destination holds an earlier prepare output and replacing it was not asked for."""

    def __init__(self, destdir: Path):
        self.destdir = destdir
        super().__init__(f"{destdir} exists and is not empty (expected a new or empty directory); pass "
                         "overwrite=True to replace the earlier prepare output there")


@dataclass
class SplitStats:
    sentences: int = 0
    source_tokens: int = 0
    target_tokens: int = 0
    unknown: list[int] = field(default_factory=list)  # per source factor, then target

    def as_dict(self, names: list[str]) -> dict:
        src_unk = {n: self.unknown[k] for k, n in enumerate(names)}
        return {"sentences": self.sentences, "source_tokens": self.source_tokens,
                "target_tokens": self.target_tokens, "unknown_source": src_unk,
                "unknown_target": self.unknown[-1]}


def factor_count(path: str | Path) -> int:
    """Factors per token, read from the first non-empty line (``|``-separated)."""
    from mwemt.fileio import iter_lines

    for lineno, line in enumerate(iter_lines(path), 1):
        if line.strip():
            return len(parse_factored(line, None, path=path, lineno=lineno)[0])
    raise InputError("file has no non-empty line", path, expected="segmented sentences")


def _read_split(src: str | Path, tgt: str | Path, n_factors: int):
    """Yield (source factor columns, target tokens) per line, checked."""
    for lineno, (sline, tline) in enumerate(iter_parallel(src, tgt, allow_empty=False), 1):
        if n_factors == 1:
            cols = [sline.split()]
        else:
            rows = parse_factored(sline, n_factors, path=src, lineno=lineno)
            cols = [list(c) for c in zip(*rows)]
        yield cols, tline.split()


_OVERWRITE = "#fairseq:overwrite"


def load_dictionary(path: str | Path):
    """A fairseq dictionary file (``TOKEN COUNT`` per line, a ``dict.*.txt`` of an earlier prepare), checked
    line by line first: a file of another kind is an `InputError` naming its line (exit 2), not fairseq's
    exception."""
    from fairseq.data import Dictionary

    expected = "'TOKEN COUNT' lines (a dict.LANG.txt written by `mwemt prepare`)"
    seen: set[str] = set()
    for lineno, line in enumerate(iter_lines(path, allow_empty=False, allow_empty_file=False, normalize=False), 1):
        token, sep, count = line.rstrip().rpartition(" ")
        overwrite = count == _OVERWRITE
        if overwrite:
            token, sep, count = token.rpartition(" ")
        if not sep or not token or not count.isdigit():
            raise InputError(f"not a dictionary line: {line[:60]!r}", path, lineno, expected=expected)
        if token in seen and not overwrite:
            raise InputError(f"{token!r} is listed twice", path, lineno, expected=expected)
        seen.add(token)
    return Dictionary.load(str(path))


def build_dictionaries(train_src: str | Path, train_tgt: str | Path, n_factors: int, *, joined: bool,
                       threshold: int = 0, nwords: int = -1):
    """One fairseq `Dictionary` per source factor and one for the target (the word one when joined)."""
    from fairseq.data import Dictionary

    counts = [Counter() for _ in range(n_factors)]
    tgt_counts: Counter = Counter()
    for cols, tgt in _read_split(train_src, train_tgt, n_factors):
        for k, col in enumerate(cols):
            counts[k].update(col)
        tgt_counts.update(tgt)

    def make(counter: Counter, thr: int, n: int) -> Dictionary:
        d = Dictionary()
        for sym, c in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
            d.add_symbol(sym, n=c)
        d.finalize(threshold=thr, nwords=n, padding_factor=8)
        return d

    if joined:
        word = make(counts[0] + tgt_counts, threshold, nwords)
        tgt_dict = word
    else:
        word = make(counts[0], threshold, nwords)
        tgt_dict = make(tgt_counts, threshold, nwords)
    factor_dicts = [word] + [make(c, 0, -1) for c in counts[1:]]
    return factor_dicts, tgt_dict


def _encode(tokens: list[str], d) -> np.ndarray:
    get, unk = d.indices.get, d.unk_index
    return np.array([get(t, unk) for t in tokens] + [d.eos_index], dtype=np.int64)


def binarize_split(src: str | Path, tgt: str | Path, prefix: str, src_lang: str, tgt_lang: str,
                   factor_dicts, tgt_dict, progress: bool = True) -> SplitStats:
    """Write ``prefix.SRC[.factorK].{bin,idx}`` and ``prefix.TGT.{bin,idx}``."""
    import torch
    from fairseq.data import indexed_dataset
    from tqdm import tqdm

    from mwemt.nmt.modeldir import factor_lang

    n = len(factor_dicts)
    langs = [factor_lang(src_lang, k) for k in range(n)]
    builders = [indexed_dataset.make_builder(f"{prefix}.{lang}.bin", "mmap", vocab_size=len(d))
                for lang, d in zip(langs, factor_dicts)]
    tgt_builder = indexed_dataset.make_builder(f"{prefix}.{tgt_lang}.bin", "mmap", vocab_size=len(tgt_dict))
    stats = SplitStats(unknown=[0] * (n + 1))
    total = count_lines(src) if progress else None
    with tqdm(total=total, desc=f"binarize {Path(prefix).name}", unit=" lines", disable=not progress,
              dynamic_ncols=True) as bar:
        for cols, tgt_tokens in _read_split(src, tgt, n):
            stats.sentences += 1
            stats.source_tokens += len(cols[0])
            stats.target_tokens += len(tgt_tokens)
            for k, (col, d, b) in enumerate(zip(cols, factor_dicts, builders)):
                ids = _encode(col, d)
                stats.unknown[k] += int((ids == d.unk_index).sum())
                b.add_item(torch.from_numpy(ids))
            ids = _encode(tgt_tokens, tgt_dict)
            stats.unknown[n] += int((ids == tgt_dict.unk_index).sum())
            tgt_builder.add_item(torch.from_numpy(ids))
            bar.update(1)
    for lang, b in zip(langs + [tgt_lang], builders + [tgt_builder]):
        b.finalize(f"{prefix}.{lang}.idx")
    return stats


def output_names(src_lang: str, tgt_lang: str, factors: int, splits) -> list[str]:
    """The files `prepare` writes for these languages, source factors and split names."""
    from mwemt.nmt.modeldir import factor_lang

    langs = [factor_lang(src_lang, k) for k in range(factors)] + [tgt_lang]
    names = [f"dict.{lang}.txt" for lang in langs]
    names += [f"{split}.{src_lang}-{tgt_lang}.{lang}.{ext}" for split in splits for lang in langs
              for ext in ("bin", "idx")]
    return sorted(names + [FACTORS, MANIFEST])


def prepared_files(destdir: Path) -> set[str] | None:
    """The names of the files an earlier `prepare` wrote into ``destdir``, from its manifest; None
    when ``destdir`` holds no prepare manifest (then nothing in it is prepare's to replace)."""
    try:
        m = json.loads((destdir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("kind") != "prepare":
        return None
    outputs = m.get("outputs")
    if outputs is None:   # written before prepare listed its outputs: the names follow from its settings
        try:
            c = m["config"]
            outputs = output_names(c["src_lang"], c["tgt_lang"], int(c["factors"]), list(m["splits"]))
        except (KeyError, TypeError, ValueError):
            return None
    if not isinstance(outputs, list) or not all(isinstance(x, str) and "/" not in x for x in outputs):
        return None
    return set(outputs)


def check_destination(destdir: Path, inputs: dict[str, str | Path], overwrite: bool) -> set[str] | None:
    """Refuse a destination whose files are not all an earlier prepare output, or that holds an input.

    Returns the names of the earlier output to replace (empty for an empty directory), or None when
    ``destdir`` does not exist. Raises `DestinationNotEmpty` for an earlier output without ``overwrite``.
    """
    if not destdir.exists():
        if destdir.is_symlink():
            raise MwemtError(f"{destdir}: a link to nothing (expected a directory, or a path that does not exist)")
        return None
    if not destdir.is_dir():
        raise MwemtError(f"{destdir}: is a file (expected an output directory)")
    real = destdir.resolve()
    for name, path in inputs.items():
        if path is not None and real in Path(path).resolve().parents:
            raise MwemtError(f"{destdir} holds the input {path} ({name}); prepare does not write where its "
                             "inputs are (expected a --destdir that holds none of the inputs)")
    entries = sorted(destdir.iterdir())
    if not entries:
        return set()
    own = prepared_files(destdir)
    other = [e.name for e in entries if own is None or e.name not in own or (e.is_dir() and not e.is_symlink())]
    if other:
        listed = ", ".join(other[:5]) + (f" and {len(other) - 5} more" if len(other) > 5 else "")
        why = "" if own is not None else f" (it has no {MANIFEST} of an earlier prepare)"
        raise MwemtError(f"{destdir} holds files that prepare did not write{why}: {listed}; prepare only replaces "
                         "its own earlier output (expected a new or empty directory, or one an earlier prepare "
                         "wrote)")
    if not overwrite:
        raise DestinationNotEmpty(destdir)
    return own


def _install(tmp: Path, destdir: Path, old: set[str]) -> None:
    """Move the files built in ``tmp`` into the existing ``destdir`` and remove the earlier output
    ``old`` that the new one does not replace; ``destdir`` itself (its mode, owner, links) stays.

    The manifest goes last. Until then a marker manifest lists both the old and the new files, so an
    interrupted replacement is still recognized as prepare's own and a rerun replaces it."""
    from mwemt.provenance import write_json

    new = sorted(p.name for p in tmp.iterdir())
    write_json(destdir / MANIFEST, {"kind": "prepare", "complete": False, "outputs": sorted(old | set(new))})
    for name in new:
        if name != MANIFEST:
            os.replace(tmp / name, destdir / name)
    for name in sorted(old - set(new)):
        (destdir / name).unlink(missing_ok=True)
    os.replace(tmp / MANIFEST, destdir / MANIFEST)
    tmp.rmdir()


def prepare(splits: dict[str, tuple[str | Path, str | Path]], destdir: str | Path, *, src_lang: str,
            tgt_lang: str, joined: bool = True, factors: int | None = None,
            factor_names: list[str] | None = None, threshold: int = 0, nwords: int = -1,
            src_dict: str | Path | None = None, tgt_dict: str | Path | None = None,
            overwrite: bool = False, progress: bool = True,
            mwe_flags: dict[str, str | Path] | None = None) -> dict:
    """Binarize ``splits`` (name -> (source file, target file); ``train`` required unless
    dictionaries are given) into ``destdir``; returns the manifest written there.

    ``mwe_flags``: split -> a file of one 0/1 flag per sentence pair (`read_mwe_flags`), saved as
    ``SPLIT.SRC-TGT.mweflags.npy`` for the MWE-weighted loss (`mwe_flags_file`).

    ``src_dict``/``tgt_dict``: reuse existing dictionaries (the directory of a previous prepare,
    i.e. its ``dict.SRC.txt``; factor dictionaries are taken from beside it). ``overwrite``: replace
    an earlier prepare output in ``destdir`` (the files its manifest lists, nothing else); a
    destination that holds an input or other files is refused either way (`check_destination`).
    """
    from mwemt.nmt.modeldir import factor_lang

    if src_lang == tgt_lang:
        raise MwemtError(f"source and target language codes must differ (both {src_lang!r})")
    if not splits:
        raise MwemtError("nothing to binarize: give at least a train split")
    destdir = Path(destdir)
    inputs = {f"{split}.{side}": p for split, pair in splits.items() for side, p in zip(("src", "tgt"), pair)}
    # the factor dictionaries are read from beside the source dictionary: the same directory
    old = check_destination(destdir, inputs | {f"{k}.mwe_flags": v for k, v in (mwe_flags or {}).items()}
                            | {"source dictionary": src_dict, "target dictionary": tgt_dict}, overwrite)
    first_src = splits["train"][0] if "train" in splits else next(iter(splits.values()))[0]
    n = factors or factor_count(first_src)
    names = factor_names or DEFAULT_FACTOR_NAMES.get(n, ["word"] + [f"factor{k}" for k in range(1, n)])
    if len(names) != n:
        raise MwemtError(f"{len(names)} factor names for {n} factors")

    if src_dict is not None:
        base = Path(src_dict).parent
        dicts = [load_dictionary(src_dict)]
        for k in range(1, n):
            p = base / f"dict.{factor_lang(src_lang, k)}.txt"
            if not p.exists():
                raise InputError("factor dictionary not found", p, expected=f"dictionaries for {n} factors")
            dicts.append(load_dictionary(p))
        tdict = load_dictionary(tgt_dict) if tgt_dict is not None else dicts[0]
        joined = tgt_dict is None or Path(tgt_dict) == Path(src_dict)
    else:
        if "train" not in splits:
            raise MwemtError("a train split is needed to build dictionaries (or pass existing ones)")
        dicts, tdict = build_dictionaries(*splits["train"], n, joined=joined, threshold=threshold, nwords=nwords)

    # "." has no name and is its own parent; an existing destination (maybe a link) is filled in place,
    # from a temporary directory beside its real path (one file system: the files are renamed in)
    target = destdir.resolve() if old is not None else Path(os.path.abspath(destdir))
    make_directory(destdir.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent))
    try:
        for k, d in enumerate(dicts):
            d.save(str(tmp / f"dict.{factor_lang(src_lang, k)}.txt"))
        tdict.save(str(tmp / f"dict.{tgt_lang}.txt"))
        stats = {}
        for split, (src, tgt) in splits.items():
            prefix = str(tmp / f"{split}.{src_lang}-{tgt_lang}")
            stats[split] = binarize_split(src, tgt, prefix, src_lang, tgt_lang, dicts, tdict,
                                          progress).as_dict(names)
        for split, path in (mwe_flags or {}).items():
            if split not in splits:
                raise MwemtError(f"MWE flags for split {split!r}, which is not binarized")
            flags = read_mwe_flags(path)
            if len(flags) != stats[split]["sentences"]:
                raise InputError(f"{len(flags)} MWE flags for {stats[split]['sentences']} sentence pairs of split "
                                 f"{split!r}", path, expected="one flag per sentence pair, in the same order")
            np.save(tmp / mwe_flags_file(split, src_lang, tgt_lang), flags)
            stats[split]["mwe_flagged"] = int(flags.sum())
        with open(tmp / FACTORS, "w", encoding="utf-8") as fh:
            json.dump({"n": n, "names": names}, fh)
            fh.write("\n")
        m = manifest("prepare", inputs=inputs | {f"{k}.mwe_flags": v for k, v in (mwe_flags or {}).items()},
                     config={"src_lang": src_lang, "tgt_lang": tgt_lang, "joined_dictionary": joined,
                             "factors": n, "factor_names": names, "threshold": threshold, "nwords": nwords},
                     dictionaries={names[k]: len(d) for k, d in enumerate(dicts)} | {"target": len(tdict)},
                     splits=stats, outputs=sorted([p.name for p in tmp.iterdir()] + [MANIFEST]))
        write_json(tmp / MANIFEST, m)
        if old is None:
            os.chmod(tmp, new_file_mode(directory=True))   # mkdtemp makes 0700
            os.replace(tmp, target)
        else:
            _install(tmp, target, old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return m
