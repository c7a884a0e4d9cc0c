"""Vector spaces in which an MWE is one token: word2vec, PPMI and PPMI-SVD over a collapsed corpus.

All models read the token stream of `corpus.collapse_corpus` (lemmas, each contiguous lexicon MWE
joined into one token), so comparing an MWE with its parts is a lookup. Building is a chain of
cached stages in one directory; each stage records a key (a hash of its input hashes and of the
settings that decide it), its timing and peak memory, and is skipped when the key matches. So
changing the word2vec epochs retrains word2vec only, and an interrupted build resumes at the stage
it was in.

Directory layout (every file written atomically; ``manifest.json`` is written last, so its presence
means the directory is complete):

- ``corpus.txt``, ``vocab.tsv``, ``collapse.json``: the collapsed corpus (see `corpus`);
- ``w2v.npy`` + ``w2v.tokens.txt`` + ``w2v.json``: word2vec CBOW vectors, one row per token;
- ``ppmi.npz`` + ``ppmi.rows.txt`` + ``ppmi.contexts.txt`` + ``ppmi.context_counts.npy`` + ``ppmi.json``;
- ``svd.npy`` (rows as in ``ppmi.rows.txt``) + ``svd.projection.npy`` + ``svd.json``;
- ``manifest.json``: config, seed, input hashes, versions, corpus and MWE counts, stage records.
"""

from __future__ import annotations

import functools
import json
import logging
import time
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from mwemt.compositionality.corpus import (  # noqa: F401 - re-exported: the public names of this layer
    COLLAPSE,
    CORPUS,
    VOCAB,
    CollapsedCorpus,
    CorpusSource,
    _cpu_seconds,
    collapse_corpus,
    collapse_sentence,
    collapsed_stream,
    is_mwe_token,
    iter_corpus_lines,
    mwe_token,
    peak_rss_mib,
    ranked_vocab,
    read_stage,
    read_vocab,
    resolve_workers,
    stage_key,
    word_token,
    write_stage,
)
from mwemt.errors import InputError, MwemtError
from mwemt.fileio import atomic_write, iter_lines, make_directory, write_lines
from mwemt.preprocess.annotate import Annotator, AnnotatorConfig, build_annotator
from mwemt.records import LexiconEntry

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
MODELS = ("w2v", "ppmi", "svd")


# ---------------------------------------------------------------- configuration


@dataclass
class VectorsConfig:
    """Everything that decides the vectors; stored in the manifest so a run can be repeated.

    ``min_count`` applies to words; an MWE token needs only ``mwe_min_count`` occurrences to get a
    vector (the MWEs are what is measured: a vector from a few contexts is noisy, none at all is a
    gap in coverage).

    ``workers`` (lemmatization and PPMI counting processes) and ``w2v_workers`` (word2vec threads)
    are 0 for one per core. The collapsed corpus and PPMI do not depend on them; word2vec is
    reproducible bit for bit only with ``w2v_workers=1`` (several threads update the vectors in an
    order the scheduler decides).
    """

    lang: str = "en"
    lemmatizer: str = "simplemma"
    max_gap: int = 0
    dedupe: bool = True
    min_count: int = 3
    mwe_min_count: int = 1
    dim: int = 300
    w2v_window: int = 5
    epochs: int = 5
    negative: int = 5
    sample: float = 1e-3
    ppmi_window: int = 5
    context_first_rank: int = 51
    context_last_rank: int = 1050
    ppmi_cds: float = 1.0
    svd_dim: int = 300
    svd_power: float = 0.5
    seed: int = 1
    max_sentences: int | None = None
    workers: int = 0
    w2v_workers: int = 0

    def check(self) -> None:
        if min(self.dim, self.epochs, self.min_count, self.mwe_min_count, self.svd_dim) < 1:
            raise MwemtError("dim, svd_dim, epochs, min_count and mwe_min_count must be at least 1")
        if self.w2v_window < 1 or self.ppmi_window < 1:
            raise MwemtError("window sizes must be at least 1")
        if not 1 <= self.context_first_rank <= self.context_last_rank:
            raise MwemtError("context ranks must satisfy 1 <= first <= last")
        if not 0.0 < self.ppmi_cds <= 1.0:
            raise MwemtError(f"ppmi_cds must be in (0, 1], got {self.ppmi_cds}")
        if self.workers < 0 or self.w2v_workers < 0:
            raise MwemtError("workers and w2v_workers must be 0 (one per core) or more")


def make_annotator(entries: Sequence[LexiconEntry], config: VectorsConfig,
                   lexicon_format: str = "auto") -> Annotator:
    """The one place the vectors build makes its annotator (tokenizer, lemmatizer, lexicon matcher).

    ``lexicon_format`` decides whether entries are tokenized like the text (not those of a .cupt
    file); the rest comes from ``config``, so the corpus and the lexicon are normalized alike.
    """
    return build_annotator(AnnotatorConfig(config.lang, lexicon_format=lexicon_format, lemmatizer=config.lemmatizer,
                                           max_gap=config.max_gap), entries=entries)


# ---------------------------------------------------------------- word2vec


def stable_hash(text: str) -> int:
    """A process-independent string hash for gensim (Python's own hash() depends on PYTHONHASHSEED)."""
    return zlib.crc32(text.encode("utf-8"))


def _keep_mwes(mwe_min_count: int, word: str, count: int, min_count: int) -> int:
    from gensim import utils

    if is_mwe_token(word):
        return utils.RULE_KEEP if count >= mwe_min_count else utils.RULE_DISCARD
    return utils.RULE_DEFAULT


def train_word2vec(corpus_path: str | Path, config: VectorsConfig, progress: bool = True):
    """word2vec CBOW on the collapsed corpus file with a fixed seed, on ``w2v_workers`` threads.

    gensim's ``corpus_file`` mode reads the file in its compiled code, one byte range per thread,
    so the threads are not held back by Python.
    """
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
        model = Word2Vec(corpus_file=str(corpus_path), vector_size=config.dim, window=config.w2v_window,
                         min_count=config.min_count, sg=0, negative=config.negative, sample=config.sample,
                         epochs=config.epochs, seed=config.seed, workers=resolve_workers(config.w2v_workers),
                         hashfxn=stable_hash, callbacks=[_Progress()],
                         trim_rule=functools.partial(_keep_mwes, config.mwe_min_count))
    finally:
        bar.close()
    return model.wv


# ---------------------------------------------------------------- spaces


class Space:
    """Token -> dense vector lookup over a dense (word2vec, SVD) or sparse (PPMI) matrix."""

    def __init__(self, name: str, tokens: Sequence[str], matrix, extra: dict[str, np.ndarray] | None = None):
        if matrix.shape[0] != len(tokens):
            raise MwemtError(f"{name}: {matrix.shape[0]} rows for {len(tokens)} tokens")
        self.name = name
        self.tokens = list(tokens)
        self.index = {t: i for i, t in enumerate(self.tokens)}
        self.matrix = matrix
        self.extra: dict[str, np.ndarray] = dict(extra or {})  # vectors of MWEs folded in after the build

    def __contains__(self, token: str) -> bool:
        return token in self.index or token in self.extra

    def get(self, token: str) -> np.ndarray | None:
        i = self.index.get(token)
        if i is None:
            return self.extra.get(token)
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
    folded_counts: dict[str, int] = field(default_factory=dict)  # occurrences of MWEs folded in later

    @property
    def config(self) -> VectorsConfig:
        known = VectorsConfig.__dataclass_fields__
        return VectorsConfig(**{k: v for k, v in self.manifest["config"].items() if k in known})

    def function_words(self) -> set[str]:
        """Tokens ranked above the PPMI contexts (the 50 most frequent by default): treated as function words."""
        first = self.config.context_first_rank
        return {t for t, r in self.ranks.items() if r < first}


def save_dense(out_dir: Path, name: str, tokens: Sequence[str], matrix: np.ndarray) -> None:
    with atomic_write(out_dir / f"{name}.npy", "wb") as fh:
        np.save(fh, np.asarray(matrix, dtype=np.float32))
    write_lines(out_dir / f"{name}.tokens.txt", tokens)


def load_store(path: str | Path, models: Sequence[str] | None = None) -> VectorStore:
    """Open a directory written by `build_vectors` (all its models, or only ``models``)."""
    from mwemt.compositionality.ppmi import load_ppmi, read_saved

    d = Path(path)
    man_path = d / MANIFEST
    if not man_path.is_file():
        raise MwemtError(f"{d} is not a complete vectors directory (no {MANIFEST}); "
                         "build it with 'mwemt compositionality vectors'")
    manifest = read_manifest(man_path)
    vocab = read_vocab(d / VOCAB)
    counts = dict(vocab)
    ranks = {t: r for r, (t, _) in enumerate(vocab, 1)}
    want = set(models or MODELS)
    spaces: dict[str, Space] = {}
    if "w2v" in want and (d / "w2v.npy").is_file():
        spaces["w2v"] = Space("w2v", list(iter_lines(d / "w2v.tokens.txt")), read_saved(d / "w2v.npy", np.load))
    if want & {"ppmi", "svd"} and (d / "ppmi.npz").is_file():
        matrix, rows, _ = load_ppmi(d)
        if "ppmi" in want:
            spaces["ppmi"] = Space("ppmi", rows, matrix)
        if "svd" in want and (d / "svd.npy").is_file():
            spaces["svd"] = Space("svd", rows, read_saved(d / "svd.npy", np.load))
    if not spaces:
        raise MwemtError(f"{d} holds none of the models {', '.join(sorted(want))}")
    return VectorStore(d, spaces, counts, ranks, manifest)


def read_manifest(path: Path) -> dict:
    """A vectors directory's manifest; damaged JSON, or JSON without the config, is an `InputError`."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}", path, expected="the JSON manifest written by "
                         "'mwemt compositionality vectors'; build the vectors again") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg})", path, exc.lineno, expected="the JSON manifest written "
                         "by 'mwemt compositionality vectors'; truncated or damaged? build the vectors again") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("config"), dict):
        raise InputError("a manifest without a config", path,
                         expected="the JSON manifest written by 'mwemt compositionality vectors'")
    return manifest


# ---------------------------------------------------------------- the whole build


def _model_keys(corpus_key: str, config: VectorsConfig) -> dict[str, str]:
    c = asdict(config)
    ppmi = stage_key(stage="ppmi", corpus=corpus_key,
                     **{k: c[k] for k in ("min_count", "mwe_min_count", "ppmi_window", "context_first_rank",
                                          "context_last_rank", "ppmi_cds")})
    return {
        "ppmi": ppmi,
        "svd": stage_key(stage="svd", ppmi=ppmi, dim=config.svd_dim, power=config.svd_power, seed=config.seed),
        "w2v": stage_key(stage="w2v", corpus=corpus_key, workers=resolve_workers(config.w2v_workers),
                         **{k: c[k] for k in ("min_count", "mwe_min_count", "dim", "w2v_window", "epochs",
                                              "negative", "sample", "seed")}),
    }


def _timed(out: Path, name: str, key: str, outputs: Sequence[str], tokens: int, build) -> dict:
    """Run ``build()`` unless a finished stage with this key exists; record time, throughput, memory."""
    rec = read_stage(out, f"{name}.json", key, outputs)
    if rec is not None:
        return rec | {"cached": True}
    (out / f"{name}.json").unlink(missing_ok=True)
    start, cpu0 = time.perf_counter(), _cpu_seconds()
    info = build()
    seconds = time.perf_counter() - start
    rec = {"key": key, "stage": name, **info, "seconds": round(seconds, 1),
           "cpu_seconds": round(_cpu_seconds() - cpu0, 1),
           "tokens_per_second": round(tokens / seconds) if seconds and tokens else None,
           "peak_rss_mib": peak_rss_mib()}
    write_stage(out, f"{name}.json", rec)
    return rec


def train_models(out_dir: str | Path, config: VectorsConfig, models: Sequence[str] = MODELS,
                 progress: bool = True) -> dict[str, dict]:
    """Train (or reuse) the requested models on the collapsed corpus in ``out_dir``."""
    from mwemt.compositionality import ppmi as ppmi_mod

    config.check()
    unknown = set(models) - set(MODELS)
    if unknown or not models:
        raise MwemtError(f"unknown model(s) {sorted(unknown)}; choose from {', '.join(MODELS)}")
    out = Path(out_dir)
    corpus_rec = json.loads((out / COLLAPSE).read_text(encoding="utf-8"))
    keys = _model_keys(corpus_rec["key"], config)
    tokens = corpus_rec["tokens"]
    results: dict[str, dict] = {}

    def do_ppmi() -> dict:
        vocab = read_vocab(out / VOCAB)
        lines = (line for line in iter_lines(out / CORPUS) if line)
        matrix, rows, contexts, col_sum = ppmi_mod.build_ppmi(
            lines, vocab, config, workers=resolve_workers(config.workers), progress=progress, total_tokens=tokens)
        ppmi_mod.save_ppmi(out, matrix, rows, contexts, col_sum)
        return {"rows": len(rows), "contexts": len(contexts), "nonzero": int(matrix.nnz),
                "window": config.ppmi_window, "cds": config.ppmi_cds,
                "context_ranks": [config.context_first_rank, config.context_last_rank]}

    def do_svd() -> dict:
        matrix, rows, _ = ppmi_mod.load_ppmi(out)
        if progress:
            print(f"PPMI-SVD: rank {config.svd_dim} of a {matrix.shape[0]:,} x {matrix.shape[1]:,} matrix ...",
                  flush=True)
        vectors, projection = ppmi_mod.svd_space(matrix, config.svd_dim, config.svd_power, config.seed)
        ppmi_mod.save_svd(out, vectors, projection)
        return {"rows": len(rows), "dim": int(vectors.shape[1]), "power": config.svd_power}

    def do_w2v() -> dict:
        wv = train_word2vec(out / CORPUS, config, progress=progress)
        save_dense(out, "w2v", list(wv.index_to_key), wv.vectors)
        return {"tokens": len(wv.index_to_key), "dim": config.dim, "architecture": "CBOW",
                "epochs": config.epochs, "workers": resolve_workers(config.w2v_workers),
                "reproducible": resolve_workers(config.w2v_workers) == 1}

    ppmi_files = ("ppmi.npz", "ppmi.rows.txt", "ppmi.contexts.txt", "ppmi.context_counts.npy")
    if "ppmi" in models or "svd" in models:
        results["ppmi"] = _timed(out, "ppmi", keys["ppmi"], ppmi_files, tokens, do_ppmi)
    if "svd" in models:
        results["svd"] = _timed(out, "svd", keys["svd"], ("svd.npy", "svd.projection.npy"), 0, do_svd)
    if "w2v" in models:
        # one token pass per epoch
        results["w2v"] = _timed(out, "w2v", keys["w2v"], ("w2v.npy", "w2v.tokens.txt"), tokens * config.epochs,
                                do_w2v)
    return results


def write_manifest(out_dir: str | Path, config: VectorsConfig, corpus_rec: dict, models: dict[str, dict],
                   lexicon=None, lexicon_path: str | Path | None = None,
                   sources: Sequence[CorpusSource] = ()) -> dict:
    """The manifest that marks the directory complete: config, inputs, counts and every stage record."""
    from mwemt.provenance import manifest as make_manifest
    from mwemt.provenance import write_json

    out = Path(out_dir)
    inputs = {str(s): s.path for s in sources if s.path != "-"}
    if lexicon_path is not None:
        inputs["lexicon"] = lexicon_path
    corpus = {k: corpus_rec.get(k) for k in ("sources", "sentences", "sentences_written", "tokens_before_collapse",
                                              "tokens", "types", "empty_lines", "duplicate_lines", "fraction",
                                              "target_tokens", "parent")
              if corpus_rec.get(k) is not None}
    man = make_manifest(
        "compositionality-vectors", inputs=inputs, config=asdict(config), seed=config.seed, corpus=corpus,
        lexicon={"entries": len(lexicon) if lexicon is not None else None,
                 "fingerprint": lexicon.fingerprint() if lexicon is not None else None,
                 "occurrences": corpus_rec.get("mwe_occurrences"),
                 "entries_seen": corpus_rec.get("mwe_entries_seen"),
                 "discontinuous_not_collapsed": corpus_rec.get("discontinuous_not_collapsed")},
        models={k: {x: v for x, v in rec.items() if x not in ("stage",)} for k, rec in models.items()},
        stages={"collapse": {k: corpus_rec.get(k) for k in ("key", "seconds", "cpu_seconds", "tokens_per_second",
                                                             "peak_rss_mib", "workers", "cached")}},
        reproducibility="the collapsed corpus and the PPMI counts are exact whatever the number of workers; "
                        "word2vec is bit-for-bit reproducible only with w2v_workers=1 (it uses a fixed seed "
                        "and a process-independent hashfxn)",
        mwe_occurrences=corpus_rec.get("by_entry", {}))
    write_json(out / MANIFEST, man)
    return man


def build_vectors(sources: Sequence[CorpusSource], entries: Sequence[LexiconEntry], out_dir: str | Path,
                  config: VectorsConfig, models: Sequence[str] = MODELS, progress: bool = True,
                  lexicon_path: str | Path | None = None, lexicon_format: str = "auto") -> dict:
    """Collapse the corpus, train the requested models (reusing cached stages), return the manifest.

    ``entries`` are the lexicon's MWEs (read from ``lexicon_path`` in ``lexicon_format``, which
    decides whether entries are tokenized like the text: not those of a .cupt file).
    """
    config.check()
    unknown = set(models) - set(MODELS)
    if unknown or not models:
        raise MwemtError(f"unknown model(s) {sorted(unknown)}; choose from {', '.join(MODELS)}")
    out = Path(out_dir)
    created = [d for d in (out, *out.parents) if not d.exists()]   # deepest first
    make_directory(out)
    try:
        (out / MANIFEST).unlink(missing_ok=True)  # the directory is incomplete until the new manifest lands
        annotator = make_annotator(entries, config, lexicon_format)
        corpus_rec = collapse_corpus(sources, annotator, out, dedupe=config.dedupe,
                                     max_sentences=config.max_sentences, workers=config.workers, progress=progress)
        results = train_models(out, config, models, progress=progress)
        return write_manifest(out, config, corpus_rec, results, annotator.lexicon, lexicon_path, sources)
    except BaseException:
        # a failure leaves none of the directories this call created, unless a finished stage is in
        # them: that is the cache a rerun resumes from
        for d in created:
            try:
                d.rmdir()
            except OSError:
                break
        raise
