"""Numba kernels of the `cpu` executor, registered with ``@op(..., registry=CPU)``.

Ops without a kernel here run their reference kernel.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from onnxkit.ops.registry import Registry

CPU = Registry("cpu")


@lru_cache(maxsize=None)
def load_cpu_kernels() -> Registry:
    for mod in sorted(m.name for m in pkgutil.walk_packages(__path__, prefix=__name__ + ".")):
        if not mod.rsplit(".", 1)[-1].startswith("_"):
            importlib.import_module(mod)
    return CPU
