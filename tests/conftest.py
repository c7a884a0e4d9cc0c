"""Shared fixtures. Tests needing ../shared/data skip cleanly when it is absent."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = Path(os.environ.get("MWEMT_SHARED", ROOT.parent / "shared" / "data"))

# eflomal cannot be seeded: a test that aligns must pass whatever the alignment, as on a fresh CI machine. The
# user's alignment cache (~/.cache/mwemt/align) would hide that on a developer's machine, so the suite gets an
# empty cache of its own unless MWEMT_CACHE is set.
if "MWEMT_CACHE" not in os.environ:
    os.environ["MWEMT_CACHE"] = tempfile.mkdtemp(prefix="mwemt-test-cache-")
    atexit.register(shutil.rmtree, os.environ["MWEMT_CACHE"], True)

# Tests send real Ctrl-C (SIGINT) to the commands they start. A suite started in the background (`cmd &`, nohup in
# a script) inherits SIGINT ignored and would hand that on to every child, which then rightly keeps ignoring it
# (`mwemt.processes.signals_unwind`); the children get the terminal's default instead.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


def has_nmt() -> bool:
    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("fairseq") is not None


requires_nmt = pytest.mark.skipif(not has_nmt(), reason="torch and fairseq-fixed are not installed")


# ---------------------------------------------------------------- a toy parallel corpus for the aligner
_TOY_NOUNS = {"cat": "gatto", "dog": "cane", "house": "casa", "man": "uomo", "car": "treno", "bread": "pane"}
_TOY_ADJS = {"big": "grande", "small": "piccolo", "red": "rosso", "green": "verde", "old": "vecchio"}
_TOY_VERBS = {"sees": "vede", "eats": "mangia", "likes": "ama", "finds": "trova"}
_TOY_DETS = {"the": "il", "a": "un", "this": "questo", "my": "mio"}
_TOY_PUNCT = (".", "!", "?")


def toy_parallel(n: int = 400, seed: int = 7) -> tuple[list[str], list[str], list[list[tuple[int, int]]]]:
    """Tokenized EN/IT pairs with their true links: "D ADJ N V D ADJ N ." -> "D N ADJ V D N ADJ .",
    and every fourth pair "D N takes care of D N ." -> "D N accudisce D N ." (takes care of = one
    Italian word). Determiners and final punctuation vary, so that no word is in every pair."""
    import random

    rng = random.Random(seed)
    src, tgt, gold = [], [], []
    for k in range(n):
        n1, n2 = rng.sample(sorted(_TOY_NOUNS), 2)
        d1, d2 = rng.choice(sorted(_TOY_DETS)), rng.choice(sorted(_TOY_DETS))
        p = rng.choice(_TOY_PUNCT)
        D1, D2, N1, N2 = _TOY_DETS[d1], _TOY_DETS[d2], _TOY_NOUNS[n1], _TOY_NOUNS[n2]
        if k % 4 == 3:
            src.append(f"{d1} {n1} takes care of {d2} {n2} {p}")
            tgt.append(f"{D1} {N1} accudisce {D2} {N2} {p}")
            gold.append([(0, 0), (1, 1), (2, 2), (3, 2), (4, 2), (5, 3), (6, 4), (7, 5)])
            continue
        a1, a2 = rng.choice(sorted(_TOY_ADJS)), rng.choice(sorted(_TOY_ADJS))
        v = rng.choice(sorted(_TOY_VERBS))
        src.append(f"{d1} {a1} {n1} {v} {d2} {a2} {n2} {p}")
        tgt.append(f"{D1} {N1} {_TOY_ADJS[a1]} {_TOY_VERBS[v]} {D2} {N2} {_TOY_ADJS[a2]} {p}")
        gold.append([(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 6), (6, 5), (7, 7)])
    return src, tgt, gold


@pytest.fixture(scope="session")
def toy_corpus():
    return toy_parallel()


def pytest_collection_modifyitems(config, items):
    """Test files that hold a test marked ``slow`` run first (their order kept): with ``-n auto --dist
    loadfile`` the longest files start at once on every core instead of ending the run on one core alone."""
    slow_files = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in slow_files)
