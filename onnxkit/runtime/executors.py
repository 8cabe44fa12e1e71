"""Executors: which registries a plan draws kernels from, and how a kernel is called.

The backends sit above this layer, so the one table of them, ``BACKENDS``, names each
one's factory (``"module:function"``) instead of importing it; ``get_executor`` imports
the one asked for, the first time it is asked for.

| name        | kernels                                                    | factory |
|-------------|------------------------------------------------------------|---------|
| reference   | readable numpy (``onnxkit.ops``)                           | ``onnxkit.ops`` |
| cpu         | Numba kernels for the hot ops, reference for the rest      | ``onnxkit.kernels.cpu._executor`` |
| cuda        | Numba CUDA kernels, tensors kept on the GPU                | ``onnxkit.kernels.cuda`` |
"""

from __future__ import annotations

import importlib
from contextlib import nullcontext
from typing import Any, Callable

from onnxkit.core.registry import Kernel, Registry
from onnxkit.errors import ExecutorUnavailableError


class Executor:
    """Calls kernels on host numpy arrays; subclasses may keep values elsewhere."""

    name = "reference"

    def __init__(self, registries: tuple[Registry, ...]):
        self.registries = registries

    def invoke(self, kernel: Kernel, args: list, attrs: dict, ctx) -> Any:
        if ctx is None:
            return kernel.fn(*args, **attrs)
        return kernel.fn(*args, ctx=ctx, **attrs)

    def execute(self, feeds: dict, run, replayable: bool = True) -> list:
        """One run: ``run(feeds moved to this executor)`` gives the graph's outputs.
        ``replayable``: nothing watches the nodes one by one (no trace), so an executor may
        replay a recorded run instead (the cuda executor's CUDA graphs)."""
        return run({name: self.to_executor(value) for name, value in feeds.items()})

    def to_executor(self, value):
        """A feed, moved to where this executor keeps values."""
        return value

    def to_host(self, value):
        """An output, moved back to host numpy."""
        return value

    def owns(self, value) -> bool:
        """True for values this executor keeps in its own form (e.g. device tensors)."""
        return False

    def trace_extra(self):
        """Executor-specific data about the node just run, for ``TraceEvent.extra``."""
        return None

    def running(self):
        """The context a whole run happens in (nothing here: numpy's BLAS keeps its threads;
        the reference's products round the same whatever order they sum in,
        ``onnxkit.ops.linalg._precision``)."""
        return nullcontext()


#: Every executor: its name and the factory (``"module:function"``) that makes one.
BACKENDS: dict[str, str] = {
    "reference": "onnxkit.ops:make_executor",
    "cpu": "onnxkit.kernels.cpu._executor:make_executor",
    "cuda": "onnxkit.kernels.cuda:make_executor",
}

_FACTORIES: dict[str, Callable[[], Executor]] = {}  # the factories imported so far


def register_executor(name: str, factory: Callable[[], Executor]) -> None:
    """Add (or replace) an executor by its factory, e.g. one a course or a test defines."""
    _FACTORIES[name] = factory


def _factory(name: str) -> Callable[[], Executor]:
    if name not in _FACTORIES:
        module, _, function = BACKENDS[name].partition(":")
        try:
            _FACTORIES[name] = getattr(importlib.import_module(module), function)
        except ImportError as exc:
            raise ExecutorUnavailableError(f"the {name!r} executor cannot load: {exc}") from exc
    return _FACTORIES[name]


def get_executor(name: str) -> Executor:
    if isinstance(name, Executor):
        return name
    if name not in _FACTORIES and name not in BACKENDS:
        raise ExecutorUnavailableError(
            f"unknown executor {name!r}; available: {', '.join(executor_names())}"
        )
    return _factory(name)()


def executor_names() -> list[str]:
    return sorted(set(BACKENDS) | set(_FACTORIES))
