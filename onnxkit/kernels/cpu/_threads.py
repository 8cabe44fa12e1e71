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
import threading

import numpy as np
from numba import config, get_num_threads, njit, types
from numba.extending import intrinsic

from onnxkit.kernels.cpu._blas_libraries import AVAILABLE

DEFAULT_MIN_PARALLEL = 1 << 17  # values: handing work to another thread costs more below
_MIN_PARALLEL = [int(os.environ.get("ONNXKIT_CPU_MIN_PARALLEL", DEFAULT_MIN_PARALLEL))]
if not AVAILABLE:  # numpy's matmul keeps its own threads: the kernels stay on one
    _MIN_PARALLEL[0] = 1 << 62
_POOL: list = [None, None]  # [workers, the process that made them]
_BUSY = threading.Lock()  # held by the Python thread whose parts the workers run


def min_parallel() -> int:
    return _MIN_PARALLEL[0]


def set_min_parallel(values: int) -> None:
    """Kernels touching fewer than ``values`` values run on one thread from now on."""
    if AVAILABLE:
        _MIN_PARALLEL[0] = max(0, int(values))


def threads() -> int:
    """The threads a kernel called from this Python thread splits its work into."""
    return get_num_threads() if AVAILABLE else 1


@intrinsic
def _load_acquire(typingctx, flags, i):
    """``flags[i]`` read from memory on every call (an atomic load): a loop polling it
    sees another thread's store."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load_atomic(builder.gep(array.data, [args[1]]), "acquire", 8)
    return types.int64(flags, types.intp), codegen


@njit(cache=True, nogil=True)
def _spin(flags, i, old, rounds, grace):
    """Whether ``flags[i]`` moved off ``old`` within ``rounds`` reads, the GIL released
    meanwhile: a hand-over caught this way skips the wake-up of a sleeping thread. Seen,
    ``grace`` more reads let the other thread finish its Python and drop the GIL first."""
    for _ in range(rounds):
        if _load_acquire(flags, i) != old:
            for _ in range(grace):
                _load_acquire(flags, i)
            return True
    return False


# reads a thread polls for a hand-over before it sleeps (docs/cpu.md, "One thread pool,
# ours"); with more threads than cores (ours alone) a polling thread takes a core another
# needs: a short poll
SPIN = 1 << 20 if config.NUMBA_NUM_THREADS <= len(os.sched_getaffinity(0)) else 1 << 10
GRACE = 1 << 12  # reads after the hand-over is seen (``_spin``)
_STRIDE = 16  # int64s between two counters: each on a cache line of its own


class _Worker:
    """One pool thread. A hand-over bumps a counter and releases a lock; the waiting side
    polls the counter for a while (``_spin``, the GIL released), then takes the lock,
    which it would otherwise sleep on, as Numba's own pool waits: a thread woken from
    sleep starts tens of microseconds late. Having seen the counter move, the poller
    reads it a little longer (``GRACE``) so that the other thread drops the GIL first."""

    def __init__(self, flags, index: int):
        self.flags, self.go_at, self.done_at = flags, 2 * index * _STRIDE, (2 * index + 1) * _STRIDE
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.task = self.error = None
        self.done_seen = 0
        threading.Thread(target=self._loop, name="onnxkit-cpu", daemon=True).start()

    def hand(self, kernel, args) -> None:
        """Start ``kernel(*args)`` on this worker."""
        self.task = (kernel, args)
        self.flags[self.go_at] += 1
        self.go.release()

    def wait(self) -> None:
        """Until the task handed over has finished."""
        _spin(self.flags, self.done_at, self.done_seen, SPIN, GRACE)
        self.done.acquire()
        self.done_seen = int(self.flags[self.done_at])

    def _loop(self) -> None:
        seen = 0
        while True:
            _spin(self.flags, self.go_at, seen, SPIN, GRACE)
            self.go.acquire()
            seen = int(self.flags[self.go_at])
            kernel, args = self.task
            try:
                kernel(*args)
            except BaseException as exc:  # raised again in the caller (``run_split``)
                self.error = exc
            self.task = None
            self.flags[self.done_at] += 1
            self.done.release()


def _pool() -> list:
    """The worker threads (made on first use, made again in a forked child)."""
    if _POOL[0] is None or _POOL[1] != os.getpid():
        count = max(1, config.NUMBA_NUM_THREADS - 1)
        flags = np.zeros(2 * count * _STRIDE, np.int64)
        _POOL[0] = [_Worker(flags, i) for i in range(count)]
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
    p < parts, at once: part 0 in the calling thread, the others on the pool. While
    another Python thread holds the pool, the caller runs every part itself."""
    ranges = [(p * per, min(items, (p + 1) * per)) for p in range(parts) if p * per < items]
    # its first call in this process compiles it (or loads it from the cache): in this
    # thread, before the others start, where the compile notice finds the node it serves
    if len(ranges) <= 1 or not kernel.overloads or not _BUSY.acquire(blocking=False):
        for lo, hi in ranges or [(0, items)]:
            kernel(*args, lo, hi)
        return
    try:
        workers = _pool()
        handed = []
        for worker, (lo, hi) in zip(workers, ranges[1:]):
            worker.hand(kernel, args + (lo, hi))
            handed.append(worker)
        try:
            kernel(*args, *ranges[0])
            for lo, hi in ranges[1 + len(handed):]:  # more parts than workers
                kernel(*args, lo, hi)
        finally:
            for worker in handed:
                worker.wait()
        for worker in handed:
            if worker.error is not None:
                error, worker.error = worker.error, None
                raise error
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
