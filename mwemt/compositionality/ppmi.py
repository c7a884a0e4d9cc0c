"""Count-based vector spaces: positive PMI over frequent context words, and its truncated SVD.

Rows are every token of the collapsed corpus seen at least ``min_count`` times, and every MWE
token seen at least ``mwe_min_count`` times; columns are the words ranked ``context_first_rank``..``context_last_rank`` by frequency
(51st to 1050th by default: the top 50 are mostly function words and carry little meaning).
Co-occurrences are counted in a symmetric window of ``ppmi_window`` tokens on each side, inside a
line, unweighted. PPMI(w, c) = max(0, log(n(w,c) / (n(w) · P_cds(c)))) with n(w) the row sum and
P_cds(c) = n(c)^cds / Σ n(c')^cds the smoothed context distribution (Levy, Goldberg and Dagan 2015;
cds = 1 is plain PMI, log(n(w,c)·N / (n(w)·n(c)))).

Why this shape: the counts are sparse, so they are counted in chunks of lines on worker processes
(each chunk vectorized with numpy) and merged pairwise, which keeps memory at a few times the size
of the final matrix however long the corpus. PPMI-SVD (``U·S^p``, p = ``svd_power``, by default
0.5 as Levy et al. recommend) is the standard strong count baseline of the compositionality
literature; the projection ``V·S^(p-1)`` is kept so a new PPMI row (an MWE folded in after the
fact) lands in the same space.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse

from mwemt.errors import InputError, MwemtError
from mwemt.fileio import atomic_write, iter_lines, write_lines

CHUNK_TOKENS = 400_000


def read_saved(path: str | Path, load):
    """``load(path)`` for an array file of a vectors directory (.npy, .npz); a missing, damaged or
    truncated file is an `InputError` that names it."""
    try:
        return load(path)
    except (MwemtError, MemoryError):
        raise
    except FileNotFoundError:
        raise InputError("missing file", path, expected="a complete vectors directory written by "
                         "'mwemt compositionality vectors'") from None
    except Exception as exc:  # noqa: BLE001 - numpy, zipfile and pickle raise many types for a damaged file
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputError(f"cannot read this array file ({type(exc).__name__}: {first[:200]})", path,
                         expected="a file written by 'mwemt compositionality vectors'; truncated or damaged? "
                                  "build the vectors again") from None


def context_words(vocab: Sequence[tuple[str, int]], first_rank: int, last_rank: int) -> list[str]:
    """Tokens at 1-based frequency ranks first..last of a ranked vocabulary."""
    return [t for t, _ in vocab[first_rank - 1:last_rank]]


class TokenIndex:
    """Token -> (row id, context id), -1 where a token is not a row or not a context."""

    def __init__(self, rows: Sequence[str], contexts: Sequence[str]):
        self.shape = (len(rows), len(contexts))
        union = {t: i for i, t in enumerate(rows)}
        for t in contexts:
            union.setdefault(t, len(union))
        self.ids = union
        self.row_of = np.full(len(union) + 1, -1, dtype=np.int64)  # the last slot: unknown tokens
        self.ctx_of = np.full(len(union) + 1, -1, dtype=np.int64)
        self.row_of[:len(rows)] = np.arange(len(rows))
        for j, t in enumerate(contexts):
            self.ctx_of[union[t]] = j

    def lookup(self, sentences: Iterable[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row ids, context ids and sentence numbers of every token of the sentences."""
        get, unknown = self.ids.get, len(self.ids)
        ids: list[int] = []
        lens: list[int] = []
        for toks in sentences:
            if isinstance(toks, str):  # a line of a collapsed corpus file
                toks = toks.split(" ")
            ids.extend([get(t, unknown) for t in toks])
            lens.append(len(toks))
        u = np.fromiter(ids, dtype=np.int64, count=len(ids))
        sent = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
        return self.row_of[u], self.ctx_of[u], sent


def window_pairs(r: np.ndarray, c: np.ndarray, s: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, context) id pairs of tokens at distance 1..window inside the same sentence, both directions."""
    pr: list[np.ndarray] = []
    pc: list[np.ndarray] = []
    for d in range(1, window + 1):
        if d >= len(s):
            break
        same = s[:-d] == s[d:]
        for rr, cc in ((r[:-d], c[d:]), (r[d:], c[:-d])):  # context to the right, then to the left
            keep = same & (rr >= 0) & (cc >= 0)
            pr.append(rr[keep])
            pc.append(cc[keep])
    if not pr:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(pr), np.concatenate(pc)


def _count_chunk(state: tuple[TokenIndex, int], sentences: list[list[str]]) -> tuple[scipy.sparse.csr_matrix, int]:
    index, window = state
    r, c, s = index.lookup(sentences)
    rr, cc = window_pairs(r, c, s, window)
    data = np.ones(len(rr), dtype=np.int32)
    return scipy.sparse.coo_matrix((data, (rr, cc)), shape=index.shape).tocsr(), len(s)


class PairwiseSum:
    """Sum of many sparse matrices, merging equal-sized partial sums (a binary counter): O(nnz log k)."""

    def __init__(self, shape: tuple[int, int]):
        self.shape = shape
        self.stack: list[tuple[int, scipy.sparse.csr_matrix]] = []

    def add(self, m: scipy.sparse.csr_matrix) -> None:
        level = 0
        while self.stack and self.stack[-1][0] == level:
            _, top = self.stack.pop()
            m = top + m
            level += 1
        self.stack.append((level, m))

    def total(self) -> scipy.sparse.csr_matrix:
        out = scipy.sparse.csr_matrix(self.shape, dtype=np.int32)
        while self.stack:
            out = out + self.stack.pop()[1]
        out.sum_duplicates()
        return out


def token_chunks(sentences: Iterable[Sequence[str]], size: int = CHUNK_TOKENS) -> Iterator[list[Sequence[str]]]:
    buf: list[Sequence[str]] = []
    n = 0
    for toks in sentences:
        buf.append(toks)
        n += toks.count(" ") + 1 if isinstance(toks, str) else len(toks)
        if n >= size:
            yield buf
            buf, n = [], 0
    if buf:
        yield buf


def count_cooccurrences(sentences: Iterable[Sequence[str] | str], rows: Sequence[str], contexts: Sequence[str],
                        window: int, workers: int = 1, progress: bool = False,
                        total_tokens: int | None = None) -> scipy.sparse.csr_matrix:
    """Row-token x context-word counts within ``window`` tokens either side, inside each sentence.

    A sentence is a list of tokens or a line of space-separated tokens (cheaper to send to a worker).
    """
    from tqdm import tqdm

    from mwemt.compositionality.corpus import ordered_map

    index = TokenIndex(rows, contexts)
    acc = PairwiseSum(index.shape)
    with tqdm(total=total_tokens, desc="PPMI counts", unit=" tok", unit_scale=True, disable=not progress,
              mininterval=1.0) as bar:
        chunks = token_chunks(sentences)
        for counts, n_tokens in ordered_map(_count_chunk, chunks, workers, (index, window)):
            acc.add(counts)
            bar.update(n_tokens)
    return acc.total()


def ppmi(counts: scipy.sparse.spmatrix, cds: float = 1.0) -> scipy.sparse.csr_matrix:
    """Positive PMI of a count matrix with context distribution smoothing ``cds``, zeros eliminated."""
    coo = scipy.sparse.coo_matrix(counts)
    n = float(coo.sum(dtype=np.float64))
    if n == 0:
        return scipy.sparse.csr_matrix(coo.shape, dtype=np.float32)
    row_sum = np.asarray(coo.sum(axis=1, dtype=np.float64)).ravel()
    col_sum = np.asarray(coo.sum(axis=0, dtype=np.float64)).ravel()
    p_ctx = context_distribution(col_sum, cds)
    with np.errstate(divide="ignore"):
        pmi = np.log(coo.data.astype(np.float64) / (row_sum[coo.row] * p_ctx[coo.col]))
    out = scipy.sparse.coo_matrix((np.maximum(pmi, 0.0).astype(np.float32), (coo.row, coo.col)),
                                  shape=coo.shape).tocsr()
    out.eliminate_zeros()
    return out


def context_distribution(col_sum: np.ndarray, cds: float) -> np.ndarray:
    """P_cds(c) = n(c)^cds / Σ n(c')^cds."""
    smoothed = np.power(col_sum, cds)
    return smoothed / smoothed.sum()


def ppmi_rows(counts: scipy.sparse.spmatrix, col_sum: np.ndarray, cds: float) -> scipy.sparse.csr_matrix:
    """PPMI of extra rows (MWEs folded in later) against the context distribution of a built space."""
    coo = scipy.sparse.coo_matrix(counts, dtype=np.float64)
    row_sum = np.asarray(coo.sum(axis=1)).ravel()
    p_ctx = context_distribution(np.asarray(col_sum, dtype=np.float64), cds)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(coo.data / (row_sum[coo.row] * p_ctx[coo.col]))
    out = scipy.sparse.coo_matrix((np.maximum(np.nan_to_num(pmi, nan=0.0, neginf=0.0), 0.0).astype(np.float32),
                                   (coo.row, coo.col)), shape=coo.shape).tocsr()
    out.eliminate_zeros()
    return out


def build_ppmi(sentences: Iterable[Sequence[str]], vocab: Sequence[tuple[str, int]], config,
               workers: int = 1, progress: bool = True,
               total_tokens: int | None = None) -> tuple[scipy.sparse.csr_matrix, list[str], list[str], np.ndarray]:
    """The PPMI matrix, its row tokens, context words and the raw context sums (for folding in)."""
    from mwemt.compositionality.corpus import is_mwe_token

    rows = [t for t, n in vocab if n >= config.min_count or (n >= config.mwe_min_count and is_mwe_token(t))]
    contexts = context_words(vocab, config.context_first_rank, config.context_last_rank)
    counts = count_cooccurrences(sentences, rows, contexts, config.ppmi_window, workers=workers,
                                 progress=progress, total_tokens=total_tokens)
    col_sum = np.asarray(counts.sum(axis=0, dtype=np.float64)).ravel()
    return ppmi(counts, config.ppmi_cds), rows, contexts, col_sum


def save_ppmi(out_dir: Path, matrix: scipy.sparse.csr_matrix, rows: Sequence[str], contexts: Sequence[str],
              col_sum: np.ndarray) -> None:
    with atomic_write(Path(out_dir) / "ppmi.npz", "wb") as fh:
        scipy.sparse.save_npz(fh, matrix.astype(np.float32))
    with atomic_write(Path(out_dir) / "ppmi.context_counts.npy", "wb") as fh:
        np.save(fh, col_sum)
    write_lines(Path(out_dir) / "ppmi.rows.txt", rows)
    write_lines(Path(out_dir) / "ppmi.contexts.txt", contexts)


def load_ppmi(directory: Path) -> tuple[scipy.sparse.csr_matrix, list[str], list[str]]:
    d = Path(directory)
    return (read_saved(d / "ppmi.npz", scipy.sparse.load_npz).tocsr(), list(iter_lines(d / "ppmi.rows.txt")),
            list(iter_lines(d / "ppmi.contexts.txt")))


# ---------------------------------------------------------------- PPMI-SVD


GRAM_MAX_COLUMNS = 5000


def svd_space(matrix: scipy.sparse.csr_matrix, dim: int, power: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Row vectors ``U·S^power`` of a rank-``dim`` truncated SVD, and the projection ``V·S^(power-1)``.

    With a few thousand context columns the SVD is exact and cheap through the Gram matrix A^T·A
    (its eigenvectors are V, its eigenvalues S^2); wider matrices use a seeded randomized SVD.
    """
    a = matrix.astype(np.float64)
    k = max(1, min(dim, min(a.shape) - 1))
    if a.shape[1] <= GRAM_MAX_COLUMNS:
        gram = (a.T @ a).toarray()
        evals, evecs = np.linalg.eigh(gram)
        order = np.argsort(evals)[::-1][:k]
        s = np.sqrt(np.clip(evals[order], 0.0, None))
        v = evecs[:, order]
        v *= np.where(v[np.abs(v).argmax(axis=0), np.arange(k)] < 0, -1.0, 1.0)  # a fixed sign per vector
    else:
        from sklearn.utils.extmath import randomized_svd

        _, s, vt = randomized_svd(a, n_components=k, n_iter=5, random_state=seed)
        v = vt.T
    inv = np.zeros_like(s)
    np.power(s, power - 1.0, out=inv, where=s > 0)
    projection = v * inv  # U·S^p = A·V·S^(p-1)
    vectors = np.asarray(a @ projection)
    return vectors.astype(np.float32), projection.astype(np.float32)


def save_svd(out_dir: Path, vectors: np.ndarray, projection: np.ndarray) -> None:
    for name, arr in (("svd.npy", vectors), ("svd.projection.npy", projection)):
        with atomic_write(Path(out_dir) / name, "wb") as fh:
            np.save(fh, arr)
