"""A machine with one CUDA GPU, as torch's CUDA bookkeeping sees it, for a CPU-only test machine.

On the PYTHONPATH of a command (tests/test_gpu_processes.py), every interpreter of that command loads
this module and, when it imports torch, gets a torch whose ``torch.cuda`` behaves like a real one in
the one way that matters for process boundaries: once a process has asked CUDA anything, a process it
*forks* cannot use CUDA ("Cannot re-initialize CUDA in forked subprocess", as torch raises), while a
fresh interpreter (spawn, a subprocess) can. Using the "GPU" (``Module.cuda()``, ``_lazy_init``) leaves
the model where it is, so the command still computes on the CPU. Every CUDA call is appended to the
JSON-lines file named by ``MWEMT_FAKE_CUDA_LOG``: pid, parent pid, whether this process is a fork
child, the call, and whether it failed.

fairseq-train is left alone: it is a fresh interpreter (a subprocess) and, seeing no GPU, trains on the CPU.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys

_STATE = {"asked": False, "bad_fork": False, "forked": False}


def _log(call: str, failed: bool = False) -> None:
    line = json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "forked": _STATE["forked"],
                       "bad_fork": _STATE["bad_fork"], "call": call, "failed": failed,
                       "argv0": sys.argv[0] if sys.argv else ""}) + "\n"
    fd = os.open(os.environ["MWEMT_FAKE_CUDA_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _after_fork_in_child() -> None:
    _STATE["bad_fork"] = _STATE["asked"]
    _STATE["asked"] = False
    _STATE["forked"] = True


def _ask(call: str):
    _log(call)
    _STATE["asked"] = True


def _use(call: str) -> None:
    if _STATE["bad_fork"]:
        _log(call, failed=True)
        raise RuntimeError("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
                           "you must use the 'spawn' start method")
    _ask(call)


def _patch(torch) -> None:
    cuda = torch.cuda

    def is_available() -> bool:
        _ask("is_available")
        return True

    def device_count() -> int:
        _ask("device_count")
        return 1

    def module_cuda(self, device=None):
        _use("Module.cuda")
        return self

    def lazy_init() -> None:
        _use("_lazy_init")

    def rng_state(device="cuda"):
        _use("get_rng_state")
        return torch.get_rng_state()

    def use(call: str, value=None):
        def f(*args, **kwargs):
            _use(call)
            return value
        return f

    cuda.get_rng_state = rng_state
    cuda.set_rng_state = use("set_rng_state")
    cuda.manual_seed = use("manual_seed")
    cuda.manual_seed_all = use("manual_seed_all")
    cuda.current_device = use("current_device", 0)
    cuda.set_device = use("set_device")
    cuda.synchronize = use("synchronize")
    cuda.empty_cache = use("empty_cache")
    cuda.is_available = is_available
    cuda.device_count = device_count
    cuda.is_initialized = lambda: _STATE["asked"] and not _STATE["bad_fork"]
    cuda._lazy_init = lazy_init
    cuda.init = lazy_init
    torch.backends.cuda.is_built = lambda: True
    torch.nn.Module.cuda = module_cuda
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _PatchTorch(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds torch as usual, then patches it right after it has been executed."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "torch" or any("fairseq_cli" in a for a in sys.argv[:1]):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        self._loader = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _patch(module)


if os.environ.get("MWEMT_FAKE_CUDA_LOG"):
    sys.meta_path.insert(0, _PatchTorch())
