"""Threads: one pool, ours; the compiled kernels are serial and release the GIL.

A kernel that shares work among threads is a serial ``@njit(nogil=True)`` function over a
range [lo, hi) of its rows, planes or channels; ``run_parts`` splits the range into one
part per thread and runs the parts at once, the first in the calling thread and the others
on a pool of Python threads, each a plain call of the compiled function (no Numba
``prange``: a parallel region is compiled again for every kernel that holds one, and those
compilations were most of a cold start). Small work (fewer values than ``min_parallel()``)
is one call in the calling thread.

- during a run numpy's OpenBLAS is set to one thread, and the products (Conv's GEMM,
  Winograd's batches, Gemm, MatMul, Attention) call oneMKL's sequential sgemm (or that
  OpenBLAS) from the parts (``_blas``);
- the thread count and the small-work threshold are read when a kernel runs, not compiled
  in, so one kernel cache serves every setting: ``threads()`` is Numba's count for the
  calling thread (``numba.set_num_threads``, ``NUMBA_NUM_THREADS``); ``min_parallel()`` is
  ``ONNXKIT_CPU_MIN_PARALLEL`` (the thread tests set 1, so that every split runs),
  changed by ``set_min_parallel``. Where no BLAS was found (``_blas.AVAILABLE``), the
  products keep numpy's own matmul and its threads, and the kernels stay on one thread
  rather than fight them. ``blas_info()`` says which BLAS libraries are loaded.

Parts write disjoint outputs and each computes its values as a single call would: the
result does not depend on the thread count.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from numba import config, get_num_threads

from onnxkit.kernels.cpu._blas_libraries import AVAILABLE

DEFAULT_MIN_PARALLEL = 1 << 15  # values: handing work to another thread costs more below
_MIN_PARALLEL = [int(os.environ.get("ONNXKIT_CPU_MIN_PARALLEL", DEFAULT_MIN_PARALLEL))]
if not AVAILABLE:  # numpy's matmul keeps its own threads: the kernels stay on one
    _MIN_PARALLEL[0] = 1 << 62
_POOL: list = [None, None]  # [executor, the process that made it]


def min_parallel() -> int:
    return _MIN_PARALLEL[0]


def set_min_parallel(values: int) -> None:
    """Kernels touching fewer than ``values`` values run on one thread from now on."""
    if AVAILABLE:
        _MIN_PARALLEL[0] = max(0, int(values))


def threads() -> int:
    """The threads a kernel called from this Python thread splits its work into."""
    return get_num_threads() if AVAILABLE else 1


def _pool() -> ThreadPoolExecutor:
    """The worker threads (made on first use, made again in a forked child)."""
    if _POOL[0] is None or _POOL[1] != os.getpid():
        _POOL[0] = ThreadPoolExecutor(max(1, config.NUMBA_NUM_THREADS - 1),
                                      thread_name_prefix="onnxkit-cpu")
        _POOL[1] = os.getpid()
    return _POOL[0]


def parts_of(items: int, elements: int) -> tuple[int, int]:
    """(parts, items per part) for work over ``items`` touching ``elements`` values: one
    part per thread of the caller, or one for small work. Part p covers
    [p * per, min(items, (p + 1) * per)); no part is empty."""
    if elements < _MIN_PARALLEL[0] or items <= 1:
        return 1, items
    per = -(-items // max(1, min(threads(), items)))
    return -(-items // per), per


def run_parts(kernel, items: int, elements: int, *args) -> None:
    """``kernel(*args, lo, hi)`` over [0, items) in ``parts_of(items, elements)`` parts at
    once; ``kernel`` is a compiled serial function that releases the GIL (``nogil``)."""
    parts, per = parts_of(items, elements)
    run_split(kernel, items, parts, per, *args)


def run_split(kernel, items: int, parts: int, per: int, *args) -> None:
    """``kernel(*args, lo, hi)`` for part p = [p * per, min(items, (p + 1) * per)),
    p < parts, at once: part 0 in the calling thread, the others on the pool."""
    if parts <= 1:
        kernel(*args, 0, items)
        return
    # its first call in this process compiles it (or loads it from the cache): in this
    # thread, before the others start, where the compile notice finds the node it serves
    first = not kernel.overloads
    if first:
        kernel(*args, 0, min(items, per))
    pool = _pool()
    rest = [pool.submit(kernel, *args, p * per, min(items, (p + 1) * per))
            for p in range(1, parts) if p * per < items]
    try:
        if not first:
            kernel(*args, 0, min(items, per))
    finally:
        for future in rest:
            future.result()


def blas_info() -> list[dict]:
    """One entry per BLAS library loaded in this process (name, version, core, threads);
    ``numpy`` marks numpy's own (the products call ``_blas.LIBRARY``: oneMKL where
    installed). A machine that forces an older OpenBLAS core (``OPENBLAS_CORETYPE``, e.g.
    Haswell on an AVX-512 CPU) runs its sgemm at half speed."""
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
