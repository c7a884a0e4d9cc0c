"""Vector spaces in which an MWE is one token: a lemmatised, MWE-collapsed corpus, word2vec and PPMI.

Both models read the same token stream, written once by `write_collapsed_corpus`: every sentence is
tokenised and lemmatised by the core `Annotator`, and each contiguous lexicon MWE becomes one token
through the words-with-spaces encoder (``ivory_tower``; a literal ``_`` or ``&`` inside a lemma is
escaped as the encoder does everywhere else). Comparing the MWE token with its parts is then a lookup.

Output directory layout (everything written atomically; ``manifest.json`` is written last, so its
presence means the directory is complete):

- ``corpus.txt``: the collapsed corpus, one sentence per line;
- ``vocab.tsv``: ``token<TAB>count`` by descending count (ties by token), the frequency ranks used
  for PPMI contexts and for function words;
- ``w2v.npy`` + ``w2v.tokens.txt``: word2vec CBOW vectors, one row per token;
- ``ppmi.npz`` + ``ppmi.rows.txt`` + ``ppmi.contexts.txt``: the sparse PPMI matrix;
- ``manifest.json``: config, seed, input hashes, versions, corpus and MWE counts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

import numpy as np

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import atomic_write, iter_lines, write_lines
from mwemt.preprocess.annotate import (
    AnnotationReport,
    Annotator,
    AnnotatorConfig,
    build_annotator,
    encode_sentence,
)
from mwemt.preprocess.encode import escape, escape_lemma
from mwemt.records import AnnotatedSentence, LexiconEntry

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
MODELS = ("w2v", "ppmi")      # word2vec (CBOW) and PPMI vectors
CORPUS = "corpus.txt"
VOCAB = "vocab.tsv"


# ---------------------------------------------------------------- configuration


@dataclass
class VectorsConfig:
    """Everything that decides the vectors; stored in the manifest so a run can be repeated."""

    lang: str = "en"
    lemmatizer: str = "simplemma"
    max_gap: int = 0
    dedupe: bool = True
    min_count: int = 3
    dim: int = 300
    w2v_window: int = 5
    epochs: int = 5
    negative: int = 5
    sample: float = 1e-3
    ppmi_window: int = 5
    context_first_rank: int = 51
    context_last_rank: int = 1050
    seed: int = 1
    max_sentences: int | None = None

    def check(self) -> None:
        if self.dim < 1 or self.epochs < 1 or self.min_count < 1:
            raise MwemtError("dim, epochs and min_count must be at least 1")
        if self.w2v_window < 1 or self.ppmi_window < 1:
            raise MwemtError("window sizes must be at least 1")
        if not 1 <= self.context_first_rank <= self.context_last_rank:
            raise MwemtError("context ranks must satisfy 1 <= first <= last")


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

    def lines(self) -> Iterator[str]:
        for lineno, line in enumerate(iter_lines(self.path), 1):
            if self.column is None:
                yield line
                continue
            cols = line.split("\t")
            if len(cols) < self.column:
                raise InputError(f"{len(cols)} TAB column(s)", self.path, lineno,
                                 expected=f"at least {self.column} columns (corpus spec {self})")
            yield cols[self.column - 1]


def iter_corpus_lines(sources: Sequence[CorpusSource], dedupe: bool = True,
                      stats: Counter | None = None) -> Iterator[str]:
    """Non-empty lines of all sources in order; with ``dedupe`` each distinct line only once.

    Deduplication matters for sentence-aligned data such as Tatoeba, which repeats an English
    sentence once per translation and would otherwise count its contexts several times.
    """
    seen: set[bytes] = set()
    for src in sources:
        for line in src.lines():
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


def mwe_token(normalised: Sequence[str]) -> str:
    """The single token an MWE with these normalised lemmas becomes in the collapsed corpus."""
    return escape_lemma(" ".join(normalised))


def word_token(lemma: str) -> str:
    """The token a single lemma is in the collapsed corpus (escaped like every other token)."""
    return escape(lemma)


def collapse_sentence(sent: AnnotatedSentence) -> list[str]:
    """Lemmas of an annotated sentence with each contiguous MWE joined into one token."""
    on_lemmas = AnnotatedSentence(list(sent.lemmas), list(sent.lemmas), sent.mwes)
    line, _ = encode_sentence(on_lemmas, "wws")
    return line.split(" ") if line else []


def collapsed_stream(lines: Iterable[str], annotator: Annotator,
                     report: AnnotationReport | None = None) -> Iterator[list[str]]:
    """The lemmatised, MWE-collapsed token stream both vector models are trained on."""
    for line in lines:
        sent = annotator.annotate_text(line)
        if report is not None:
            report.add(sent, sum(1 for m in sent.mwes if not m.contiguous))
        tokens = collapse_sentence(sent)
        if tokens:
            yield tokens


def write_collapsed_corpus(lines: Iterable[str], annotator: Annotator, path: str | Path,
                           report: AnnotationReport | None = None) -> tuple[Counter, int]:
    """Write the collapsed corpus (one sentence a line); return the token counts and the line count."""
    counts: Counter = Counter()
    n = write_lines(path, (" ".join(toks) for toks in _counted(collapsed_stream(lines, annotator, report),
                                                                 counts)))
    return counts, n


def _counted(stream: Iterable[list[str]], counts: Counter) -> Iterator[list[str]]:
    for toks in stream:
        counts.update(toks)
        yield toks


class CollapsedCorpus:
    """A re-iterable view of ``corpus.txt`` (gensim iterates several times)."""

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


# ---------------------------------------------------------------- word2vec


def stable_hash(text: str) -> int:
    """A process-independent string hash for gensim (Python's own hash() depends on PYTHONHASHSEED)."""
    return zlib.crc32(text.encode("utf-8"))


def train_word2vec(corpus: CollapsedCorpus, config: VectorsConfig, progress: bool = True):
    """word2vec CBOW with one worker thread and a fixed seed, so the vectors are reproducible."""
    from gensim.models import Word2Vec
    from gensim.models.callbacks import CallbackAny2Vec
    from tqdm import tqdm

    if not log.isEnabledFor(logging.DEBUG):
        logging.getLogger("gensim").setLevel(logging.WARNING)  # its per-epoch INFO lines drown the progress bar
    bar = tqdm(total=config.epochs, desc="word2vec epochs", unit="epoch", disable=not progress)

    class _Progress(CallbackAny2Vec):
        def on_epoch_end(self, model):
            bar.update(1)

    try:
        model = Word2Vec(sentences=corpus, vector_size=config.dim, window=config.w2v_window,
                         min_count=config.min_count, sg=0, negative=config.negative, sample=config.sample,
                         epochs=config.epochs, seed=config.seed, workers=1, hashfxn=stable_hash,
                         callbacks=[_Progress()])
    finally:
        bar.close()
    return model.wv


# ---------------------------------------------------------------- spaces


class Space:
    """Token -> dense vector lookup over a dense (word2vec) or sparse (PPMI) matrix."""

    def __init__(self, name: str, tokens: Sequence[str], matrix):
        if matrix.shape[0] != len(tokens):
            raise MwemtError(f"{name}: {matrix.shape[0]} rows for {len(tokens)} tokens")
        self.name = name
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.matrix = matrix

    def __contains__(self, token: str) -> bool:
        return token in self.index

    def get(self, token: str) -> np.ndarray | None:
        i = self.index.get(token)
        if i is None:
            return None
        row = self.matrix[i]
        if hasattr(row, "toarray"):
            return np.asarray(row.toarray()).ravel().astype(np.float64)
        return np.asarray(row, dtype=np.float64)


@dataclass
class VectorStore:
    """A loaded vectors directory: the spaces, token counts and the manifest that made them."""

    path: Path
    spaces: dict[str, Space]
    counts: dict[str, int]
    ranks: dict[str, int]
    manifest: dict = field(default_factory=dict)

    @property
    def config(self) -> VectorsConfig:
        return VectorsConfig(**self.manifest["config"])

    def function_words(self) -> set[str]:
        """Tokens ranked above the PPMI contexts (the 50 most frequent by default): treated as function words."""
        first = self.config.context_first_rank
        return {t for t, r in self.ranks.items() if r < first}


def save_dense(out_dir: Path, name: str, tokens: Sequence[str], matrix: np.ndarray) -> None:
    with atomic_write(out_dir / f"{name}.npy", "wb") as fh:
        np.save(fh, np.asarray(matrix, dtype=np.float32))
    write_lines(out_dir / f"{name}.tokens.txt", tokens)


def load_store(path: str | Path) -> VectorStore:
    """Open a directory written by `build_vectors`."""
    import scipy.sparse

    d = Path(path)
    man_path = d / MANIFEST
    if not man_path.is_file():
        raise MwemtError(f"{d} is not a complete vectors directory (no {MANIFEST}); "
                         "build it with 'mwemt compositionality vectors'")
    manifest = json.loads(man_path.read_text(encoding="utf-8"))
    vocab = read_vocab(d / VOCAB)
    counts = dict(vocab)
    ranks = {t: r for r, (t, _) in enumerate(vocab, 1)}
    spaces: dict[str, Space] = {}
    if (d / "w2v.npy").is_file():
        spaces["w2v"] = Space("w2v", list(iter_lines(d / "w2v.tokens.txt")), np.load(d / "w2v.npy"))
    if (d / "ppmi.npz").is_file():
        spaces["ppmi"] = Space("ppmi", list(iter_lines(d / "ppmi.rows.txt")),
                               scipy.sparse.load_npz(d / "ppmi.npz").tocsr())
    if not spaces:
        raise MwemtError(f"{d} holds no vectors (neither w2v.npy nor ppmi.npz)")
    return VectorStore(d, spaces, counts, ranks, manifest)


# ---------------------------------------------------------------- the whole build


def build_vectors(sources: Sequence[CorpusSource], entries: Sequence[LexiconEntry], out_dir: str | Path,
                  config: VectorsConfig, models: Sequence[str] = MODELS, progress: bool = True,
                  lexicon_path: str | Path | None = None, lexicon_format: str = "auto") -> dict:
    """Collapse the corpus, train the requested models, write everything and return the manifest.

    ``entries`` are the lexicon's MWEs (read from ``lexicon_path`` in ``lexicon_format``, which
    decides whether entries are tokenized like the text: not those of a .cupt file).
    """
    from tqdm import tqdm

    from mwemt.compositionality import ppmi as ppmi_mod
    from mwemt.provenance import manifest as make_manifest
    from mwemt.provenance import write_json

    config.check()
    unknown = set(models) - set(MODELS)
    if unknown or not models:
        raise MwemtError(f"unknown model(s) {sorted(unknown)}; choose from w2v, ppmi")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST).unlink(missing_ok=True)  # the directory is incomplete until the new manifest lands

    annotator = build_annotator(AnnotatorConfig(config.lang, lexicon_format=lexicon_format,
                                                lemmatizer=config.lemmatizer, max_gap=config.max_gap), entries=entries)
    lexicon = annotator.lexicon
    line_stats: Counter = Counter()
    report = AnnotationReport()
    lines = islice(iter_corpus_lines(sources, dedupe=config.dedupe, stats=line_stats), config.max_sentences)
    lines = tqdm(lines, desc="lemmatise + collapse", unit=" sent", disable=not progress, mininterval=1.0)
    counts, n_written = write_collapsed_corpus(lines, annotator, out / CORPUS, report)
    if not counts:
        (out / CORPUS).unlink(missing_ok=True)
        raise MwemtError(f"the corpus ({', '.join(str(s) for s in sources)}) is empty after lemmatisation "
                         "(expected at least one non-empty line)")
    vocab = ranked_vocab(counts)
    write_lines(out / VOCAB, (f"{t}\t{n}" for t, n in vocab))
    corpus = CollapsedCorpus(out / CORPUS)

    results: dict = {}
    if "ppmi" in models:
        matrix, rows, contexts = ppmi_mod.build_ppmi(corpus, vocab, config, progress=progress)
        ppmi_mod.save_ppmi(out, matrix, rows, contexts)
        results["ppmi"] = {"rows": len(rows), "contexts": len(contexts), "nonzero": int(matrix.nnz),
                           "window": config.ppmi_window,
                           "context_ranks": [config.context_first_rank, config.context_last_rank]}
    if "w2v" in models:
        wv = train_word2vec(corpus, config, progress=progress)
        save_dense(out, "w2v", list(wv.index_to_key), wv.vectors)
        results["w2v"] = {"tokens": len(wv.index_to_key), "dim": config.dim, "architecture": "CBOW",
                          "workers": 1}

    mwe_counts = {lex_key: n for lex_key, n in report.by_entry.most_common()}
    inputs = {str(s): s.path for s in sources if s.path != "-"}
    if lexicon_path is not None:
        inputs["lexicon"] = lexicon_path
    man = make_manifest(
        "compositionality-vectors", inputs=inputs, config=asdict(config), seed=config.seed,
        corpus={"sources": [str(s) for s in sources], "sentences": report.sentences,
                "sentences_written": n_written,
                "tokens_before_collapse": report.tokens, "tokens": sum(counts.values()),
                "types": len(counts), **dict(line_stats)},
        lexicon={"entries": len(lexicon) if lexicon is not None else 0,
                 "fingerprint": lexicon.fingerprint() if lexicon is not None else None,
                 "occurrences": report.mwes, "entries_seen": len(mwe_counts),
                 "discontinuous_not_collapsed": report.discontinuous},
        models=results,
        reproducibility="word2vec runs with workers=1, a fixed seed and a process-independent hashfxn; "
                        "the PPMI counts are exact",
        mwe_occurrences=mwe_counts)
    write_json(out / MANIFEST, man)
    return man
