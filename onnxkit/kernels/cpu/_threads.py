"""Threads: Numba's parallel regions and OpenBLAS must not fight over the cores.

Both keep worker threads. After a BLAS call OpenBLAS's workers spin for a while before
they sleep; a Numba parallel region started then finds its cores busy, and on a small
machine a run becomes 20-100x slower. The ``cpu`` executor therefore sets up one
discipline before the first parallel region runs:

- Numba uses the OpenMP threading layer with ``OMP_WAIT_POLICY=passive`` (its workers
  sleep at once when a region ends) unless the user chose otherwise;
- BLAS keeps its own threads for the matrix products, and the Numba kernels that run
  between two products are memory-bound loops that gain little from a second thread.

``blas_info()`` says which BLAS and which kernel core (``OPENBLAS_CORETYPE``) are in use:
a machine that forces an older core (e.g. Haswell on an AVX-512 CPU) runs sgemm at half
speed.
"""

from __future__ import annotations

import os

_CONFIGURED = False


def configure() -> None:
    """Environment defaults for Numba's threads; call before the first parallel kernel."""
    global _CONFIGURED
    if _CONFIGURED:
        return
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    os.environ.setdefault("KMP_BLOCKTIME", "0")
    import numba

    if "NUMBA_THREADING_LAYER" not in os.environ:
        numba.config.THREADING_LAYER_PRIORITY = ["omp", "workqueue", "tbb"]
    _CONFIGURED = True


def blas_info() -> list[dict]:
    """One entry per BLAS library loaded in this process (name, version, core, threads)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return []
    rows = []
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        rows.append({"library": os.path.basename(info.get("filepath", "")),
                     "api": info.get("internal_api"), "version": info.get("version"),
                     "core": info.get("architecture"), "threads": info.get("num_threads"),
                     "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "")})
    return rows
