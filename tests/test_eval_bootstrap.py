"""The shared paired bootstrap: resampling, sums of resampled statistics and p-values on hand-made
statistics, and the identical-system rule (p = 1)."""

from __future__ import annotations

import numpy as np
import pytest

from mwemt.evaluate.bootstrap import (
    BootstrapSettings,
    paired_bootstrap,
    resample_indices,
    resampled_scores,
    resampled_totals,
)


class Ratio:
    """100 x sum(column 0) / sum(column 1): the shape of the MWE and TESLA corpus scores."""

    def scores_from_totals(self, totals):
        totals = np.asarray(totals, dtype=np.float64)
        out = np.zeros(len(totals))
        np.divide(100.0 * totals[:, 0], totals[:, 1], out=out, where=totals[:, 1] > 0)
        return out

    def score_from_totals(self, totals):
        return float(self.scores_from_totals(np.asarray(totals)[None, :])[0])


def test_resampled_scores_by_hand():
    stats = np.array([[1.0, 1.0], [0.0, 0.0], [0.5, 1.0]])
    idxs = np.array([[0, 1, 2], [1, 1, 1], [2, 2, 0]])
    assert resampled_totals(stats, idxs).tolist() == [[1.5, 2.0], [0.0, 0.0], [2.0, 3.0]]
    assert resampled_scores(Ratio(), stats, idxs) == pytest.approx([100 * 1.5 / 2, 0.0, 100 * 2.0 / 3])


def test_resampled_totals_do_not_depend_on_chunking(monkeypatch):
    import mwemt.evaluate.bootstrap as bs

    rng = np.random.default_rng(0)
    stats = rng.uniform(0, 1, (50, 3))
    idxs = resample_indices(50, 40, seed=2)
    whole = resampled_totals(stats, idxs)
    monkeypatch.setattr(bs, "_CHUNK_VALUES", 1)  # one resample per chunk
    assert (resampled_totals(stats, idxs) == whole).all()
    assert whole[0] == pytest.approx(stats[idxs[0]].sum(axis=0))


def test_resample_is_seeded():
    assert (resample_indices(10, 5, seed=1) == resample_indices(10, 5, seed=1)).all()
    assert not (resample_indices(10, 5, seed=1) == resample_indices(10, 5, seed=2)).all()
    with pytest.raises(ValueError):
        resample_indices(0)


def test_clearly_better_system_is_significant():
    rng = np.random.default_rng(0)
    base = np.stack([rng.uniform(0.2, 0.4, 300), np.ones(300)], axis=1)
    better = np.stack([base[:, 0] + 0.3, np.ones(300)], axis=1)
    noisy = np.stack([base[:, 0] + rng.normal(0, 0.01, 300), np.ones(300)], axis=1)
    res = paired_bootstrap(Ratio(), [base, better, noisy], BootstrapSettings(500, 3))
    assert res[1].score - res[0].score == pytest.approx(30.0)
    assert res[1].p_value < 0.01
    assert res[2].p_value > 0.05
    assert 0 < res[0].ci < 5


def test_identical_system_gets_p_one():
    rng = np.random.default_rng(1)
    base = np.stack([rng.uniform(0, 1, 40), np.ones(40)], axis=1)
    res = paired_bootstrap(Ratio(), [base, base.copy()], BootstrapSettings(100, 12345))
    assert res[1].p_value == 1.0 and res[0].p_value is None
    assert (res[0].mean, res[0].ci) == (res[1].mean, res[1].ci)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError):
        paired_bootstrap(Ratio(), [np.zeros((3, 2)), np.zeros((4, 2))])
    with pytest.raises(ValueError):
        BootstrapSettings(samples=0)
