"""Executors: which registries a plan draws kernels from, and how a kernel is called.

The backends sit above this layer, so the one table of them, ``BACKENDS``, names each
one's factory (``"module:function"``) instead of importing it; ``get_executor`` imports
the one asked for, the first time it is asked for.

| name      | kernels                                               | factory in           |
|-----------|-------------------------------------------------------|----------------------|
| reference | readable numpy                                        | ``onnxkit.ops``      |
| cpu       | Numba kernels for the hot ops, reference for the rest | ``kernels.cpu``      |
| cuda      | Numba CUDA kernels, tensors kept on the GPU           | ``kernels.cuda``     |
"""

from __future__ import annotations

import importlib
from typing import Callable

from onnxkit.core.executor import Executor
from onnxkit.errors import ExecutorUnavailableError

__all__ = ["BACKENDS", "Executor", "executor_names", "get_executor", "register_executor"]


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
