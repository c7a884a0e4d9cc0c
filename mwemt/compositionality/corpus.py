"""The corpus side of the vectors: reading sources, and the lemmatized, MWE-collapsed token stream.

Why a module of its own: at corpus scale (65M tokens of Wikipedia) tokenizing and lemmatizing is the
expensive stage, so it runs in worker processes, streams (what grows with the corpus is only the
vocabulary and the set of line hashes used for deduplication), and its output is cached: a stage
directory holds ``corpus.txt`` (one collapsed sentence a line), ``vocab.tsv`` (``token<TAB>count``
by descending count) and ``collapse.json``, whose ``key`` is a hash of the input files' contents and
of every setting that decides the tokens. Models are trained from it without redoing it, and
smaller corpora for a size curve are drawn from it (`sample_corpus`).

Every contiguous lexicon MWE becomes one token through the words-with-spaces encoder applied to the
lemmas (``ivory_tower``; a literal ``_`` or ``&`` inside a lemma is escaped as the encoder does
everywhere else). Gapped MWEs are left apart.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import resource
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import atomic_write, decode_lines, iter_lines, release_inputs, sha256_file, write_lines
from mwemt.preprocess.annotate import AnnotationReport, Annotator, encode_sentence
from mwemt.preprocess.encode import JOIN, escape, escape_lemma
from mwemt.processes import worker_context
from mwemt.records import AnnotatedSentence

CORPUS = "corpus.txt"
VOCAB = "vocab.tsv"
COLLAPSE = "collapse.json"
CHUNK_LINES = 256  # lines per task sent to a worker: ~15k Wikipedia tokens, ~0.1-0.2 s of work


# ---------------------------------------------------------------- corpus sources


@dataclass(frozen=True)
class CorpusSource:
    """A text file, optionally one TAB column of it (``PATH::N``, N 1-based)."""

    path: str
    column: int | None = None

    @classmethod
    def parse(cls, spec: str) -> CorpusSource:
        if "::" in spec:
            path, _, col = spec.rpartition("::")
            if not col.isdigit() or int(col) < 1:
                raise MwemtError(f"corpus {spec!r}: the column after '::' must be a number >= 1")
            return cls(path, int(col))
        return cls(spec)

    def __str__(self) -> str:
        return self.path if self.column is None else f"{self.path}::{self.column}"

    def size(self) -> int:
        """Bytes on disk (compressed for .gz): the unit of the reading progress bar."""
        try:
            return os.path.getsize(self.path)
        except OSError:
            raise InputError("file not found", self.path) from None

    def lines(self, on_bytes: Callable[[int], None] | None = None) -> Iterator[str]:
        """The lines (or the chosen column); ``on_bytes`` is told how many file bytes were consumed."""
        raw = None
        if on_bytes is not None and self.path != "-":
            raw = open(self.path, "rb")  # noqa: SIM115 - closed below; read through gzip when compressed
        source = _text_of(raw, self.path) if raw is not None else iter_lines(self.path)
        done = 0
        try:
            for lineno, line in enumerate(source, 1):
                if raw is not None and lineno % 1024 == 0:
                    pos = raw.tell()
                    on_bytes(pos - done)
                    done = pos
                if self.column is None:
                    yield line
                    continue
                cols = line.split("\t")
                if len(cols) < self.column:
                    raise InputError(f"{len(cols)} TAB column(s)", self.path, lineno,
                                     expected=f"at least {self.column} columns (corpus spec {self})")
                yield cols[self.column - 1]
            if raw is not None:
                on_bytes(raw.tell() - done)
        finally:
            if raw is not None:
                raw.close()


def _text_of(raw, path: str) -> Iterator[str]:
    """Lines of an open binary file (gunzipped for .gz), decoded strictly with the failing line named."""
    fh = gzip.GzipFile(fileobj=raw) if path.endswith(".gz") else raw
    yield from decode_lines(fh, path)   # the same decoding, normalization and errors as every reader


def iter_corpus_lines(sources: Sequence[CorpusSource], dedupe: bool = True, stats: Counter | None = None,
                      on_bytes: Callable[[int], None] | None = None) -> Iterator[str]:
    """Non-empty lines of all sources in order; with ``dedupe`` each distinct line only once.

    Deduplication matters for sentence-aligned data such as Tatoeba, which repeats an English
    sentence once per translation and would otherwise count its contexts several times.
    """
    seen: set[bytes] = set()
    for src in sources:
        for line in src.lines(on_bytes):
            text = line.strip()
            if not text:
                if stats is not None:
                    stats["empty_lines"] += 1
                continue
            if dedupe:
                key = hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()
                if key in seen:
                    if stats is not None:
                        stats["duplicate_lines"] += 1
                    continue
                seen.add(key)
            yield text


# ---------------------------------------------------------------- the collapsed token stream


def mwe_token(normalized: Sequence[str]) -> str:
    """The single token an MWE with these normalized lemmas becomes in the collapsed corpus."""
    return escape_lemma(" ".join(normalized))


def word_token(lemma: str) -> str:
    """The token a single lemma is in the collapsed corpus (escaped like every other token)."""
    return escape(lemma)


def is_mwe_token(token: str) -> bool:
    """MWE tokens are the only ones with a bare ``_`` (a literal underscore is escaped)."""
    return JOIN in token


def collapse_sentence(sent: AnnotatedSentence) -> list[str]:
    """Lemmas of an annotated sentence with each contiguous MWE joined into one token."""
    on_lemmas = AnnotatedSentence(list(sent.lemmas), list(sent.lemmas), sent.mwes)
    line, _ = encode_sentence(on_lemmas, "wws")
    return line.split(" ") if line else []


def collapsed_stream(lines: Iterable[str], annotator: Annotator,
                     report: AnnotationReport | None = None) -> Iterator[list[str]]:
    """The lemmatized, MWE-collapsed token stream both vector models are trained on."""
    for line in lines:
        sent = annotator.annotate_text(line)
        if report is not None:
            report.add(sent, sum(1 for m in sent.mwes if not m.contiguous))
        tokens = collapse_sentence(sent)
        if tokens:
            yield tokens


class CollapsedCorpus:
    """A re-iterable view of a collapsed ``corpus.txt`` (models iterate it several times)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __iter__(self) -> Iterator[list[str]]:
        for line in iter_lines(self.path):
            if line:
                yield line.split(" ")


def ranked_vocab(counts: Counter) -> list[tuple[str, int]]:
    """Tokens by descending count, ties broken by the token, so ranks are reproducible."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def read_vocab(path: str | Path) -> list[tuple[str, int]]:
    out = []
    for lineno, line in enumerate(iter_lines(path), 1):
        tok, sep, n = line.rpartition("\t")
        if not sep or not n.isdigit():
            raise InputError("bad vocabulary line", path, lineno, expected="token<TAB>count")
        out.append((tok, int(n)))
    return out


# ---------------------------------------------------------------- worker processes


def resolve_workers(n: int) -> int:
    """``n`` worker processes, or one per available core when ``n`` is 0."""
    if n > 0:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def ordered_map(fn: Callable, tasks: Iterable, workers: int, state: object = None) -> Iterator:
    """``fn(state, task)`` for every task, in order, on ``workers`` forked processes.

    At most ``2 * workers`` tasks are in flight, so memory stays bounded however long the input.
    ``state`` (an annotator, a token index) is inherited by the forked workers, never pickled.
    """
    if workers <= 1:
        for task in tasks:
            yield fn(state, task)
        return
    global _STATE
    _STATE = (fn, state)
    try:
        with worker_context("cpu").Pool(workers) as pool:
            pending: deque = deque()
            for task in tasks:
                pending.append(pool.apply_async(_run_task, (task,)))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().get()
            while pending:
                yield pending.popleft().get()
            pool.close()
            pool.join()  # reaped workers: their CPU time and peak memory reach RUSAGE_CHILDREN
    finally:
        _STATE = None


_STATE: tuple | None = None


def _run_task(task):
    assert _STATE is not None
    fn, state = _STATE
    return fn(state, task)


def chunked(items: Iterable, size: int) -> Iterator[list]:
    """Lists of ``size`` consecutive items (the last one shorter)."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _collapse_chunk(annotator: Annotator, lines: list[str]) -> tuple[str, Counter, AnnotationReport, int]:
    report = AnnotationReport()
    counts: Counter = Counter()
    out = []
    for toks in collapsed_stream(lines, annotator, report):
        counts.update(toks)
        out.append(" ".join(toks))
    return "".join(s + "\n" for s in out), counts, report, len(out)


# ---------------------------------------------------------------- the cached collapse stage


def stage_key(**parts) -> str:
    """A short hash of everything that decides a stage's output."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


def read_stage(directory: Path, name: str, key: str, outputs: Sequence[str]) -> dict | None:
    """The record of a finished stage with this key whose outputs all exist, else None. On None the
    stage will be rebuilt: its old outputs, which this process may have read as an earlier stage's
    cache, may be replaced (`release_inputs`)."""
    path = Path(directory) / name
    rec = None
    if path.is_file():
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            rec = None
    if rec is None or rec.get("key") != key or not all((Path(directory) / o).is_file() for o in outputs):
        release_inputs(*(Path(directory) / o for o in outputs))
        return None
    return rec


def write_stage(directory: Path, name: str, record: dict) -> None:
    from mwemt.provenance import write_json

    write_json(Path(directory) / name, record)


def peak_rss_mib() -> dict[str, float]:
    """Peak resident memory so far of this process and of its largest finished child (MiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"self": round(own, 1), "largest_child": round(child, 1)}


def source_hashes(sources: Sequence[CorpusSource]) -> list[list]:
    """Content hash and column of each source: the same file under another path is the same input.

    Standard input cannot be hashed before it is read: it gets a key of its own every time (never reused).
    """
    return [[sha256_file(s.path) if s.path != "-" else f"stdin@{time.time_ns()}", s.column] for s in sources]


def collapse_key(sources: Sequence[CorpusSource], annotator: Annotator, dedupe: bool,
                 max_sentences: int | None) -> str:
    """Input contents and settings; not the lexicon's file name (the signature has it): its content counts."""
    lex = annotator.lexicon.fingerprint() if annotator.lexicon is not None else None
    return stage_key(stage="collapse", sources=source_hashes(sources), lang=annotator.lang,
                     lemmatizer=annotator.lemmatizer.signature, lexicon=lex, max_gap=annotator.max_gap,
                     tokenizer="moses", pretokenized=annotator.pretokenized, dedupe=dedupe,
                     max_sentences=max_sentences)


def collapse_corpus(sources: Sequence[CorpusSource], annotator: Annotator, out_dir: str | Path, *,
                    dedupe: bool = True, max_sentences: int | None = None, workers: int = 0,
                    progress: bool = True) -> dict:
    """Write ``corpus.txt`` and ``vocab.tsv`` into ``out_dir`` (or reuse them) and return the stage record."""
    from tqdm import tqdm

    out = Path(out_dir)
    key = collapse_key(sources, annotator, dedupe, max_sentences)
    rec = read_stage(out, COLLAPSE, key, (CORPUS, VOCAB))
    if rec is not None:
        return rec | {"cached": True}
    out.mkdir(parents=True, exist_ok=True)
    (out / COLLAPSE).unlink(missing_ok=True)
    n_workers = resolve_workers(workers)
    total_bytes = sum(s.size() for s in sources if s.path != "-")
    bar = tqdm(total=total_bytes or None, desc="lemmatize + collapse", unit="B", unit_scale=True,
               disable=not progress, mininterval=1.0)
    line_stats: Counter = Counter()
    report = AnnotationReport()
    counts: Counter = Counter()
    n_written = 0
    start, cpu0 = time.perf_counter(), _cpu_seconds()
    limit = None if max_sentences is None or max_sentences >= sys.maxsize else max_sentences   # above: all of them
    lines = islice(iter_corpus_lines(sources, dedupe=dedupe, stats=line_stats, on_bytes=bar.update), limit)
    try:
        with atomic_write(out / CORPUS) as fh:
            for block, chunk_counts, chunk_report, n in ordered_map(_collapse_chunk, chunked(lines, CHUNK_LINES),
                                                                      n_workers, annotator):
                fh.write(block)
                counts.update(chunk_counts)
                report.merge(chunk_report)
                n_written += n
                bar.set_postfix_str(f"{report.tokens / max(time.perf_counter() - start, 1e-9):,.0f} tok/s",
                                    refresh=False)
            if not counts:
                raise MwemtError(f"the corpus ({', '.join(str(s) for s in sources)}) is empty after "
                                 "lemmatization (expected at least one non-empty line)")
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    write_lines(out / VOCAB, (f"{t}\t{n}" for t, n in ranked_vocab(counts)))
    rec = {
        "key": key, "stage": "collapse", "sources": [str(s) for s in sources], "annotator": annotator.signature,
        "dedupe": dedupe, "max_sentences": max_sentences, "workers": n_workers,
        "sentences": report.sentences, "sentences_written": n_written,
        "tokens_before_collapse": report.tokens, "tokens": sum(counts.values()), "types": len(counts),
        **dict(line_stats),
        "mwe_occurrences": report.mwes, "mwe_entries_seen": len(report.by_entry),
        "discontinuous_not_collapsed": report.discontinuous,
        "by_entry": dict(report.by_entry.most_common()),
        "seconds": round(seconds, 1), "cpu_seconds": round(_cpu_seconds() - cpu0, 1),
        "tokens_per_second": round(report.tokens / seconds) if seconds else None,
        "peak_rss_mib": peak_rss_mib(),
    }
    write_stage(out, COLLAPSE, rec)
    return rec


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


# ---------------------------------------------------------------- nested random samples


def line_position(line: str) -> float:
    """A reproducible pseudo-random number in [0, 1) for a line: a line is in every sample above it."""
    return int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest(), "big") / 2.0 ** 64


def sample_corpus(parent_dir: str | Path, out_dir: str | Path, target_tokens: int) -> dict:
    """A random sample of about ``target_tokens`` tokens of a collapsed corpus, as a stage of its own.

    A line is kept when `line_position` is below target / total, so samples are nested (the 2M-token
    sample is inside the 8M one) and spread over the whole corpus rather than its first articles.
    Collapsing is per line, so a sample of the collapsed corpus is the collapsed sample.
    """
    parent, out = Path(parent_dir), Path(out_dir)
    prec = json.loads((parent / COLLAPSE).read_text(encoding="utf-8"))
    key = stage_key(stage="sample", parent=prec["key"], target_tokens=target_tokens)
    rec = read_stage(out, COLLAPSE, key, (CORPUS, VOCAB))
    if rec is not None:
        return rec | {"cached": True}
    out.mkdir(parents=True, exist_ok=True)
    (out / COLLAPSE).unlink(missing_ok=True)
    fraction = min(1.0, target_tokens / prec["tokens"])
    counts: Counter = Counter()
    n_lines = 0

    def kept() -> Iterator[str]:
        nonlocal n_lines
        for line in iter_lines(parent / CORPUS):
            if line and line_position(line) < fraction:
                counts.update(line.split(" "))
                n_lines += 1
                yield line

    start = time.perf_counter()
    write_lines(out / CORPUS, kept())
    write_lines(out / VOCAB, (f"{t}\t{n}" for t, n in ranked_vocab(counts)))
    tokens = sum(counts.values())
    share = tokens / prec["tokens"]
    rec = {k: prec[k] for k in ("sources", "annotator", "dedupe", "max_sentences")} | {
        "key": key, "stage": "sample", "parent": str(parent), "parent_key": prec["key"],
        "target_tokens": target_tokens, "fraction": fraction, "sentences_written": n_lines,
        "sentences": n_lines, "tokens": tokens, "types": len(counts),
        "tokens_before_collapse": round(prec["tokens_before_collapse"] * share),
        "mwe_occurrences": None, "mwe_entries_seen": None,
        "by_entry": {}, "seconds": round(time.perf_counter() - start, 1),
    }
    write_stage(out, COLLAPSE, rec)
    return rec
