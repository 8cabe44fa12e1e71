"""The reference kernels: readable numpy, one operator (or tight family) per module.

Each module registers its kernels with ``@op(...)`` from ``onnxkit.ops.registry``.
``load_reference_kernels()`` imports every module below this package once; the
decorators are the only place an operator is named.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from onnxkit.ops.registry import REFERENCE, Registry


@lru_cache(maxsize=None)
def load_reference_kernels() -> Registry:
    """Import every kernel module of ``onnxkit.ops`` (sorted, so errors are repeatable)."""
    names = sorted(m.name for m in pkgutil.walk_packages(__path__, prefix=__name__ + "."))
    for name in names:
        if name.rsplit(".", 1)[-1].startswith("_") or name.endswith(".registry"):
            continue
        importlib.import_module(name)
    return REFERENCE
