"""mwemt's fairseq plugin: pass this directory to ``--user-dir``.

Registers the task ``factored_translation``, the models ``factored_transformer`` (presets
``factored_transformer_tiny``, ``factored_transformer_paper_small``) and ``factored_lstm``, and the
criteria ``label_smoothed_cross_entropy_fused`` and ``mwe_weighted_label_smoothed_cross_entropy`` (the
MWE-weighted loss: training sentences flagged in the data directory weigh ``--mwe-loss-weight``),
and the task's stopping options ``--stop-min-improvement`` and ``--stop-patience-updates``
(`mwemt.nmt.fairseq_plugin.stopping`, installed into fairseq_cli.train when it runs).

It also makes fairseq checkpoints loadable under torch >= 2.6, whose ``torch.load`` defaults
to ``weights_only=True`` and refuses the ``argparse.Namespace`` and numpy scalars/arrays that
fairseq stores (args, BLEU statistics): we allow-list exactly those types once, here.

fairseq imports a user dir under its directory name (``fairseq_plugin``); all imports below
are absolute so the task and models register once even when mwemt imports them too.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch


def allow_fairseq_checkpoint_globals() -> None:
    """Allow-list the non-tensor types fairseq pickles into checkpoints."""
    add = getattr(torch.serialization, "add_safe_globals", None)
    if add is None:  # torch < 2.4 loads everything anyway
        return
    safe: list = [argparse.Namespace, np.dtype, np.ndarray]
    try:
        from numpy._core.multiarray import _reconstruct, scalar
        safe += [_reconstruct, scalar]
    except ImportError:  # numpy < 2
        from numpy.core.multiarray import _reconstruct, scalar
        safe += [_reconstruct, scalar]
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        safe += [getattr(dtypes, n) for n in dir(dtypes) if n.endswith("DType")]
    safe += [np.float64, np.float32, np.int64, np.int32, np.bool_]
    add([s for s in safe if s is not None])


allow_fairseq_checkpoint_globals()

from mwemt.nmt.fairseq_plugin import criterion, models, stopping, task  # noqa: E402,F401  (registers with fairseq)

stopping.install()   # a no-op unless this process runs fairseq_cli.train
