"""Threads: one pool only, OpenBLAS's; the Numba kernels run on the calling thread.

Numba's parallel regions and OpenBLAS each keep worker threads. After a BLAS call the
OpenBLAS workers spin for a while before they sleep; a Numba parallel region started
then finds its cores busy, and on a 2-core machine a run becomes 20-100x slower. With
OMP_WAIT_POLICY=passive the Numba workers no longer spin, but (measured on the 2-core
development machine) they then rarely get a core in time and the regions gain
nothing. So the executor keeps a single pool:

- the matrix products (Conv's im2col GEMM, Gemm, MatMul, Attention) go to BLAS, which
  uses its own threads (numpy's OpenBLAS: all cores by default; ``threadpoolctl``
  changes it);
- the Numba kernels between two products (im2col, depthwise, pools, epilogues,
  normalizations) are compiled without ``parallel`` and run on the calling thread;
  they are memory-bound loops, and the core they run on is the one BLAS's main thread
  just left, so nothing waits on a spinning worker.

``blas_info()`` says which BLAS and which kernel core (``OPENBLAS_CORETYPE``) are in use:
a machine that forces an older core (e.g. Haswell on an AVX-512 CPU) runs sgemm at half
speed.
"""

from __future__ import annotations

import os

from numba import config, njit

MIN_PARALLEL_ELEMENTS = 1 << 15  # below this, one thread: a parallel region costs more
# Numba's thread count, a compile-time constant: ``get_num_threads()`` inside a kernel
# would make it uncacheable (a "dynamic global"). The kernel cache directory is named
# after it too (``onnxkit.kernels.cpu.cache_dir``).
THREADS = config.NUMBA_NUM_THREADS


@njit(inline="always")
def split(items, elements):
    """(parts, items per part) for a loop over ``items`` touching ``elements`` values:
    one part per Numba thread, or one part for small work. Part p covers
    [p * per, min(items, (p + 1) * per))."""
    parts = 1 if elements < MIN_PARALLEL_ELEMENTS else max(1, min(THREADS, items))
    return parts, (items + parts - 1) // parts


def blas_info() -> list[dict]:
    """One entry per BLAS library loaded in this process (name, version, core, threads);
    ``numpy`` marks numpy's own, the one the matrix products call."""
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
