"""numpy's own BLAS (its bundled OpenBLAS): its thread pool read and set through ctypes.

    token = one_thread()     # numpy's products on one thread ...
    restore_threads(token)   # ... and back, once no other run needs one thread

The ``cpu`` executor runs numpy's BLAS on one thread during a run: its products and
kernels share numba's threads instead (``kernels.cpu._blas``). (The ``reference`` leaves
BLAS alone: its products round the same in any summing order, ``ops.linalg._precision``.)
The setting is the process's, so runs in several Python threads share it: the first run
to begin sets one thread and the last to end restores what it found (a count under a
lock), never a run while another is still under way.

``LIBRARY`` is None where numpy's OpenBLAS is not found; ``SET`` and ``GET`` are None (and
``one_thread`` does nothing) where it or its ``openblas_set/get_num_threads`` is missing.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading

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


_LOCK = threading.Lock()
_RUNS = [0, None]  # runs under way, numpy's thread count before the first of them


def one_thread():
    """numpy's BLAS set to one thread; returns what ``restore_threads`` needs."""
    if GET is None:
        return None
    with _LOCK:
        if _RUNS[0] == 0:
            before = GET()
            if before != 1:
                SET(1)
            _RUNS[1] = before
        _RUNS[0] += 1
    return True


def restore_threads(token) -> None:
    """The end of a run begun by ``one_thread``: the last one running restores the count."""
    if token is None:
        return
    with _LOCK:
        _RUNS[0] -= 1
        if _RUNS[0] == 0 and _RUNS[1] not in (None, 1):
            SET(_RUNS[1])
