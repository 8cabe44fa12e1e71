"""numpy's own BLAS (its bundled OpenBLAS): its thread pool read and set through ctypes.

    with OneThread():        # numpy's products on one thread, restored after
        ...

Both executors on the host run numpy's BLAS on one thread during a run:

- ``reference``: so that each product sums in one order whatever the machine. A threaded
  OpenBLAS splits a product's columns among its threads, and a split can start at an
  address its kernel handles with another summation order: equal columns then differ in
  their last bits. The light model-zoo nets of the spec suite (ResNet-50's logits near
  1e19, where one unit in the last place is about 1e12) failed on a 16-core machine that
  way, their softmax a different class for 32 columns of 1000; on one thread they pass.
- ``cpu``: its products and kernels share numba's threads instead (``kernels.cpu._blas``).

``LIBRARY`` is None where numpy's OpenBLAS is not found; ``SET`` and ``GET`` are None (and
``OneThread`` does nothing) where it or its ``openblas_set/get_num_threads`` is missing.
"""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np


def _numpy_blas():
    """numpy's bundled BLAS as a ctypes library and its file name."""
    here = os.path.dirname(np.__file__)
    for pattern in ("libscipy_openblas*.so*", "libopenblas*.so*"):
        for path in sorted(glob.glob(os.path.join(here, "..", "numpy.libs", pattern))):
            try:
                return ctypes.CDLL(path), os.path.basename(path)
            except OSError:
                continue
    return None, ""


def entry_point(lib, names):
    """``(name, function)`` of the first of ``names`` that ``lib`` exports, else (None, None)."""
    for name in names:
        fn = getattr(lib, name, None) if lib is not None else None
        if fn is not None:
            return name, fn
    return None, None


LIBRARY, LIBRARY_NAME = _numpy_blas()
_, SET = entry_point(LIBRARY, ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_",
                               "scipy_openblas_set_num_threads", "openblas_set_num_threads"))
_, GET = entry_point(LIBRARY, ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                               "scipy_openblas_get_num_threads", "openblas_get_num_threads"))
if SET is None or GET is None:
    SET, GET = None, None
else:
    SET.argtypes, SET.restype = [ctypes.c_int], None
    GET.argtypes, GET.restype = [], ctypes.c_int


def one_thread():
    """numpy's BLAS set to one thread; returns what ``restore_threads`` needs."""
    if GET is None:
        return None
    before = GET()
    if before != 1:
        SET(1)
    return before


def restore_threads(before) -> None:
    if before is not None and before != 1:
        SET(before)


class OneThread:
    """The context of a run: numpy's BLAS on one thread, restored after (a class, not a
    generator: cheaper per run)."""

    __slots__ = ("before",)

    def __enter__(self):
        self.before = one_thread()

    def __exit__(self, *exc) -> bool:
        restore_threads(self.before)
        return False
