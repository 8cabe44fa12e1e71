"""Threads: one pool only, Numba's; the matrix products run on it too.

Numba's parallel regions and OpenBLAS each keep worker threads. After a BLAS call the
OpenBLAS workers spin for a while before they sleep; a Numba parallel region started
then finds its cores busy, and on a 2-core machine a run became 20-100x slower. Until
2026-11-25 the executor therefore kept BLAS's pool and ran every Numba kernel on one
thread, at one core's memory bandwidth. Now it keeps Numba's pool instead:

- during a run numpy's OpenBLAS is set to one thread, and the products (Conv's GEMM,
  Winograd's batches, Gemm, MatMul, Attention) call oneMKL's sequential sgemm (or that
  OpenBLAS, where oneMKL is missing) from a ``prange`` over row, column or batch parts
  (``_blas``): as fast as BLAS's own two threads, and nothing spins afterwards;
- the memory-bound kernels (im2col, depthwise, epilogues, Winograd transforms,
  BatchNorm, pools, normalizations, softmax) share their planes, channels or rows
  among the threads: a serial function over a range [lo, hi) and a driver that splits
  the range (``split``) in a ``prange``, or calls the serial function directly for
  small work (no parallel region).

``blas_info()`` says which BLAS libraries are loaded (``_blas.LIBRARY`` is the one the
products call) and OpenBLAS's kernel core (``OPENBLAS_CORETYPE``): a machine that forces
an older core (e.g. Haswell on an AVX-512 CPU) runs OpenBLAS's sgemm at half speed.
"""

from __future__ import annotations

import os

from numba import config, njit

from onnxkit.kernels.cpu._blas import AVAILABLE

# Below this many values a kernel runs on one thread: a parallel region costs more.
# ``ONNXKIT_CPU_MIN_PARALLEL`` changes it (the tests set 1, so that every split runs).
MIN_PARALLEL_ELEMENTS = int(os.environ.get("ONNXKIT_CPU_MIN_PARALLEL", 1 << 15))
# Numba's thread count. Both are compile-time constants (``get_num_threads()`` inside a
# kernel would make it uncacheable, a "dynamic global"), so the kernel cache directory
# is named after them too (``onnxkit.kernels.cpu.cache_dir``). Where no BLAS was found
# (``_blas.AVAILABLE``), the products keep numpy's own matmul and its threads, and
# the kernels stay on one thread rather than fight them.
THREADS = config.NUMBA_NUM_THREADS if AVAILABLE else 1


@njit(inline="always")
def split(items, elements):
    """(parts, items per part) for a loop over ``items`` touching ``elements`` values:
    one part per Numba thread, or one part for small work. Part p covers
    [p * per, min(items, (p + 1) * per))."""
    parts = 1 if elements < MIN_PARALLEL_ELEMENTS else max(1, min(THREADS, items))
    return parts, (items + parts - 1) // parts


def blas_info() -> list[dict]:
    """One entry per BLAS library loaded in this process (name, version, core, threads);
    ``numpy`` marks numpy's own (the products call ``_blas.LIBRARY``: oneMKL where
    installed)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return []
    rows = []
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        path = info.get("filepath", "")
        rows.append({"library": os.path.basename(path), "numpy": "numpy" in path,
                     "api": info.get("internal_api"), "version": info.get("version"),
                     "core": info.get("architecture"), "threads": info.get("num_threads"),
                     "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "")})
    return rows
