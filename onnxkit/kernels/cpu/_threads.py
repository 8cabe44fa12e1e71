"""Threads: one pool, ours; the compiled kernels are serial and release the GIL.

A kernel that shares work among threads is a serial ``@njit(nogil=True)`` function over a
range [lo, hi) of its rows, planes or channels; ``run_parts`` splits the range into one
part per thread and runs the parts at once, the first in the calling thread and the others
on a pool of worker threads. The hand-over is compiled code (``_launch``): the workers
poll for parts with the GIL released and call the kernel's compiled entry point, so no
thread waits on the GIL to start or end a part. (No Numba ``prange``: a parallel region
is compiled again, with the kernel in it, for every kernel that holds one, and those
compilations were most of a cold start; Numba's OpenMP pool also kills a forked child.)
Small work (fewer values than ``min_parallel()``) is one call in the calling thread.

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

import ctypes
import os
import threading

import numpy as np
from numba import config, get_num_threads, types
from numba.core.registry import CPUDispatcher as Dispatcher
from numba.np.ufunc import parallel as _numba_parallel

from onnxkit.kernels.cpu._blas_libraries import AVAILABLE
from onnxkit.kernels.cpu._launch import (ASLEEP, HAND_OVER_SYMBOL, HAND_OVER_TYPES, IDLE,
                                         MISSING, STRIDE, hand_over, launch, serve, type_key)

DEFAULT_MIN_PARALLEL = 1 << 17  # values: handing work to another thread costs more below
_MIN_PARALLEL = [int(os.environ.get("ONNXKIT_CPU_MIN_PARALLEL", DEFAULT_MIN_PARALLEL))]
if not AVAILABLE:  # numpy's matmul keeps its own threads: the kernels stay on one
    _MIN_PARALLEL[0] = 1 << 62
_POOL: list = [None, None]  # [the pool, the process that made it]
_BUSY = threading.Lock()  # held by the Python thread whose parts the workers run


def min_parallel() -> int:
    return _MIN_PARALLEL[0]


def set_min_parallel(values: int) -> None:
    """Kernels touching fewer than ``values`` values run on one thread from now on."""
    if AVAILABLE:
        _MIN_PARALLEL[0] = max(0, int(values))


def threads() -> int:
    """The threads a kernel called from this Python thread splits its work into: Numba's
    count, read without ``get_num_threads``' two locks once its threading layer is up."""
    if not AVAILABLE:
        return 1
    read = getattr(_numba_parallel, "_get_num_threads", None)  # private: may go
    if read is not None and getattr(_numba_parallel, "_is_initialized", False):
        count = read()
        if count > 0:
            return count
    return get_num_threads()


# polls (then yields of the processor) a worker makes for a next part before it sleeps;
# with more threads than cores (ours alone) a polling thread takes a core another needs
SPINS = 1 << 16 if config.NUMBA_NUM_THREADS <= len(os.sched_getaffinity(0)) else 1 << 8
YIELDS = 1 << 12


class _Pool:
    """The worker threads, each a Python thread running ``_launch.serve`` (compiled, the
    GIL released) until it has waited long enough, then sleeping on a lock until a split
    finds it asleep (``launch``'s status) and wakes it."""

    def __init__(self, count: int):
        self.count = count
        self.state = np.zeros(max(1, count) * STRIDE, np.int64)
        self.tasks = np.zeros(max(1, count) * STRIDE, np.int64)
        self.state[::STRIDE] = -1
        serve(self.state, self.tasks, 0, 0, 0)  # compiled here, where the notice is
        self.state[::STRIDE] = IDLE
        _publish_hand_over()
        self.wake = [threading.Lock() for _ in range(count)]
        for w in range(count):
            self.wake[w].acquire()
            threading.Thread(target=self._loop, args=(w,), name="onnxkit-cpu",
                             daemon=True).start()

    def _loop(self, w: int) -> None:
        while not serve(self.state, self.tasks, w, SPINS, YIELDS):
            self.wake[w].acquire()

    def wake_up(self, asleep: int) -> None:
        """Wake the workers whose bits ``asleep`` sets (bit w: worker w)."""
        for w in range(self.count):
            if (asleep >> w) & 1 and self.state[w * STRIDE] == ASLEEP:
                self.state[w * STRIDE] = IDLE
                self.wake[w].release()


_HAND_OVER_CELL = ctypes.c_int64(0)  # ``_launch.hand_over``'s address, read by the launchers


def _publish_hand_over() -> None:
    """Compile (or load) ``_launch.hand_over`` and give LLVM the cell holding its
    address, under ``HAND_OVER_SYMBOL``, before any launcher is linked."""
    if _HAND_OVER_CELL.value:
        return
    import llvmlite.binding as llvm

    hand_over.compile(HAND_OVER_TYPES)
    result = hand_over.overloads[HAND_OVER_TYPES]
    _HAND_OVER_CELL.value = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    llvm.add_symbol(HAND_OVER_SYMBOL, ctypes.addressof(_HAND_OVER_CELL))


def _pool() -> _Pool:
    """The workers (made on first use, made again in a forked child)."""
    if _POOL[0] is None or _POOL[1] != os.getpid():
        _POOL[0] = _Pool(max(1, config.NUMBA_NUM_THREADS - 1))
        _POOL[1] = os.getpid()
    return _POOL[0]


def _entries(kernel):
    """The (type key, address) rows of the kernel's compiled entry points ``launch``
    calls, kept on the dispatcher (one row per argument types seen splitting)."""
    table = getattr(kernel, "_onnxkit_entries", None)
    if table is None:
        table = np.zeros((0, 2), np.int64)
        kernel._onnxkit_entries = table
    return table


def _add_entry(kernel, args) -> bool:
    """Record the compiled entry point of ``kernel`` for the types of ``args`` (+ lo, hi);
    False where it has none (not compiled for them)."""
    arg_types = tuple(kernel.typeof_pyval(a) for a in args)
    result = kernel.overloads.get(arg_types + (types.int64, types.int64))
    if result is None or result.signature.return_type != types.none:
        return False  # the trampolines call kernels that return nothing
    address = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    if not address:
        return False
    row = np.array([[type_key(arg_types), address]], np.int64)
    kernel._onnxkit_entries = np.concatenate([_entries(kernel), row])
    return True


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
    once; ``kernel`` is a compiled serial function that releases the GIL (``nogil``).
    Small work is the one call ``run_split`` would make, made here (no thread count read)."""
    if elements < _MIN_PARALLEL[0] or items <= 1:
        kernel(*args, 0, items)
        return
    parts, per = parts_of(items, elements)
    run_split(kernel, items, parts, per, *args)


def run_split(kernel, items: int, parts: int, per: int, *args) -> None:
    """``kernel(*args, lo, hi)`` for part p = [p * per, min(items, (p + 1) * per)),
    p < parts, at once: part 0 in the calling thread, the others on the pool, handed over
    in compiled code (``_launch``). While another Python thread holds the pool, the
    caller runs every part itself; so it does where the kernel is no compiled function."""
    parts = min(parts, -(-items // per)) if per > 0 else 1
    if parts <= 1 or not isinstance(kernel, Dispatcher) or not _BUSY.acquire(blocking=False):
        for p in range(max(parts, 1)):
            kernel(*args, p * per, min(items, (p + 1) * per) if parts > 1 else items)
        return
    try:
        pool, first = _pool(), 0
        status = launch(pool.state, pool.tasks, pool.count, _entries(kernel), items, 0, parts,
                        per, args)
        if status == MISSING:
            # first split with these types: part 0 by the dispatcher (which compiles the
            # kernel, in this thread, where the compile notice finds the node it serves)
            kernel(*args, 0, min(items, per))
            first = 1
            if not _add_entry(kernel, args):
                for p in range(1, parts):
                    kernel(*args, p * per, min(items, (p + 1) * per))
                return
            status = launch(pool.state, pool.tasks, pool.count, _entries(kernel), items, 1,
                            parts, per, args)
        if status >> 1:
            pool.wake_up(status >> 1)
        if status & 1:  # a part raised: the dispatcher raises it again, here
            for p in range(first, parts):
                kernel(*args, p * per, min(items, (p + 1) * per))
    finally:
        _BUSY.release()


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
