"""What the cpu kernels have compiled (or loaded from the cache) in this process."""

from __future__ import annotations

import importlib
import pkgutil


def kernel_signatures() -> dict[str, set[str]]:
    """{"module.function": its signatures} for every Numba dispatcher of the cpu kernels
    (every module of ``onnxkit.kernels.cpu`` imported first), the pool's hand-over
    (``_launch.launch``: one signature per kernel argument types that split) included."""
    from numba.core.registry import CPUDispatcher

    import onnxkit.kernels.cpu as package

    found = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for attr, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                found[f"{info.name}.{attr}"] = {str(s) for s in value.signatures}
    return found


def added_since(before: dict[str, set[str]]) -> dict[str, list[str]]:
    """The signatures compiled or loaded since ``before`` (``kernel_signatures()``)."""
    added = {k: v - before.get(k, set()) for k, v in kernel_signatures().items()}
    return {k: sorted(v) for k, v in added.items() if v}
