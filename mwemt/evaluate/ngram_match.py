"""Exact maximum-weight n-gram matching, the core of TESLA.

Hypothesis n-grams (weights ``w_h``) and reference n-grams (weights ``w_r``) are linked with
similarities ``s[i, j]``. We choose link amounts ``x[i, j] >= 0`` maximizing ``sum s * x`` subject to
each n-gram's total link amount being at most its own weight. This is a transportation-type linear
program; `lp_matching` solves it directly with HiGHS.

`max_weight_matching` returns the same optimum faster: the LP separates over the connected
components of the link graph, and most components have a closed-form optimum:

- one link: ``s * min(w_i, w_j)``;
- a star (one n-gram on one side): a fractional knapsack, filled in order of decreasing ``s``, which
  is optimal because the only coupling constraint is the center's weight;
- a complete bipartite component with one similarity value: ``s * min(sum w_h, sum w_r)``, since any
  split of the smaller side's weight can be routed through a complete graph.

Every other component goes to HiGHS. No step is greedy-approximate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog


@dataclass
class Matching:
    """The LP optimum and its link amounts (aligned with ``rows``/``cols``: the linked n-gram pairs)."""

    value: float
    rows: np.ndarray
    cols: np.ndarray
    flow: np.ndarray


def _solve_lp(sim_values: np.ndarray, rows: np.ndarray, cols: np.ndarray,
              w_h: np.ndarray, w_r: np.ndarray) -> tuple[float, np.ndarray]:
    n_edges = len(sim_values)
    h, r = len(w_h), len(w_r)
    edge = np.arange(n_edges)
    a_ub = sparse.csr_matrix(
        (np.ones(2 * n_edges), (np.concatenate([rows, h + cols]), np.concatenate([edge, edge]))),
        shape=(h + r, n_edges))
    res = linprog(-sim_values, A_ub=a_ub, b_ub=np.concatenate([w_h, w_r]), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the n-gram matching LP: {res.message}")
    return float(-res.fun), np.asarray(res.x)


def lp_matching(sim: np.ndarray, w_h: np.ndarray, w_r: np.ndarray) -> Matching:
    """Solve the whole matching LP with HiGHS (the reference the fast path is tested against)."""
    rows, cols = np.nonzero(sim > 0)
    if len(rows) == 0:
        return Matching(0.0, rows, cols, np.zeros(0))
    value, flow = _solve_lp(sim[rows, cols], rows, cols, np.asarray(w_h, float), np.asarray(w_r, float))
    return Matching(value, rows, cols, flow)


def _star(sims: np.ndarray, leaf_weights: np.ndarray, center_weight: float) -> float:
    order = np.argsort(-sims, kind="stable")
    left = center_weight
    total = 0.0
    for k in order:
        if left <= 0:
            break
        take = min(left, leaf_weights[k])
        total += sims[k] * take
        left -= take
    return total


def max_weight_matching(sim: np.ndarray, w_h: np.ndarray, w_r: np.ndarray,
                        stats: dict | None = None) -> float:
    """The optimum of the matching LP (module docstring), exact, by components."""
    rows, cols = np.nonzero(sim > 0)
    if len(rows) == 0:
        return 0.0
    s = sim[rows, cols]
    # links whose two ends have no other link are components of their own: sum them at once
    alone = (np.bincount(rows, minlength=sim.shape[0])[rows] == 1) & \
            (np.bincount(cols, minlength=sim.shape[1])[cols] == 1)
    total = float(np.sum(s[alone] * np.minimum(w_h[rows[alone]], w_r[cols[alone]])))
    if stats is not None and alone.any():
        stats["link"] = stats.get("link", 0) + int(alone.sum())
    if alone.all():
        return total
    rest = ~alone
    rows, cols, s = rows[rest], cols[rest], s[rest]
    for group in _components(rows.tolist(), cols.tolist()):
        total += _component(s[group], rows[group], cols[group], w_h, w_r, stats)
    return total


def _components(rows: list[int], cols: list[int]) -> list[list[int]]:
    """Edge indices grouped by connected component (union-find; the graphs left here are small)."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(x):
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for i, j in zip(rows, cols):
        a, b = find((0, i)), find((1, j))
        if a != b:
            parent[a] = b
    groups: dict[tuple[int, int], list[int]] = {}
    for e, i in enumerate(rows):
        groups.setdefault(find((0, i)), []).append(e)
    return list(groups.values())


def _component(s: np.ndarray, rows: np.ndarray, cols: np.ndarray, w_h: np.ndarray, w_r: np.ndarray,
               stats: dict | None) -> float:
    if len(s) == 1:
        kind, value = "link", float(s[0] * min(w_h[rows[0]], w_r[cols[0]]))
    else:
        hyp_nodes = np.unique(rows)
        ref_nodes = np.unique(cols)
        if len(hyp_nodes) == 1:
            kind, value = "star", _star(s, w_r[cols], float(w_h[hyp_nodes[0]]))
        elif len(ref_nodes) == 1:
            kind, value = "star", _star(s, w_h[rows], float(w_r[ref_nodes[0]]))
        elif len(s) == len(hyp_nodes) * len(ref_nodes) and np.all(s == s[0]):
            kind = "complete"
            value = float(s[0] * min(w_h[hyp_nodes].sum(), w_r[ref_nodes].sum()))
        else:
            kind = "lp"
            hyp_local = np.searchsorted(hyp_nodes, rows)
            ref_local = np.searchsorted(ref_nodes, cols)
            value, _ = _solve_lp(s, hyp_local, ref_local, w_h[hyp_nodes].astype(float),
                                 w_r[ref_nodes].astype(float))
    if stats is not None:
        stats[kind] = stats.get(kind, 0) + 1
    return value
