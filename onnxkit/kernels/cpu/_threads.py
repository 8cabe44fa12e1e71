"""Threads: one pool only, Numba's; the matrix products run on it too.

- during a run numpy's OpenBLAS is set to one thread, and the products (Conv's GEMM,
  Winograd's batches, Gemm, MatMul, Attention) call oneMKL's sequential sgemm (or that
  OpenBLAS) from a ``prange`` over row, column or batch parts (``_blas``);
- the memory-bound kernels (im2col, depthwise, epilogues, Winograd transforms,
  BatchNorm, pools, normalizations, softmax) share their planes, channels or rows
  among the threads: a serial function over a range [lo, hi) and a driver that splits
  the range (``split``) in a ``prange``, or calls the serial function directly for
  small work (no parallel region).

The thread count and the small-work threshold are read when a kernel runs, not compiled
in, so one kernel cache serves every setting: ``threads()`` is Numba's count for the
calling thread (``numba.set_num_threads``, ``NUMBA_NUM_THREADS``), read inside a kernel
through the same C entry point Numba's own parallel loops call; ``min_parallel()`` is
``ONNXKIT_CPU_MIN_PARALLEL`` (values below which a kernel runs on one thread; the
thread tests set 1, so that every split runs), a C global the kernels read.
``set_min_parallel`` changes it. Where no BLAS was found (``_blas.AVAILABLE``), the
products keep numpy's own matmul and its threads, and the kernels stay on one thread
rather than fight them. ``blas_info()`` says which BLAS libraries are loaded.
"""

from __future__ import annotations

import ctypes
import os

import llvmlite.binding as llvm
from llvmlite import ir
from numba import get_num_threads, njit, types
from numba.extending import intrinsic

from onnxkit.kernels.cpu._blas import AVAILABLE

DEFAULT_MIN_PARALLEL = 1 << 15  # values: a parallel region costs more below this
_MIN_PARALLEL = ctypes.c_int64(int(os.environ.get("ONNXKIT_CPU_MIN_PARALLEL",
                                                  DEFAULT_MIN_PARALLEL)))
_SYMBOL = "onnxkit_cpu_min_parallel"
llvm.add_symbol(_SYMBOL, ctypes.addressof(_MIN_PARALLEL))
if not AVAILABLE:  # numpy's matmul keeps its own threads: the kernels stay on one
    _MIN_PARALLEL.value = 1 << 62
get_num_threads()  # starts Numba's pool: its entry points are linked by name


def min_parallel() -> int:
    return _MIN_PARALLEL.value


def set_min_parallel(values: int) -> None:
    """Kernels touching fewer than ``values`` values run on one thread from now on."""
    if AVAILABLE:
        _MIN_PARALLEL.value = max(0, int(values))


def threads() -> int:
    """The threads a kernel called from this Python thread splits its work into."""
    return get_num_threads() if AVAILABLE else 1


@intrinsic
def _kernel_threads(typingctx):
    """Numba's thread count for the calling thread (its ``get_num_threads`` entry point,
    linked by name as Numba's parallel loops link it: the kernel stays cacheable)."""
    def codegen(context, builder, signature, args):
        fn = builder.module.globals.get("get_num_threads")
        if fn is None:  # declared as Numba declares it; the C function returns an int
            fn = ir.Function(builder.module, ir.FunctionType(ir.IntType(64), []),
                             "get_num_threads")
        count = builder.trunc(builder.call(fn, []), ir.IntType(32))
        return builder.sext(count, ir.IntType(64))
    return types.int64(), codegen


@intrinsic
def _kernel_min_parallel(typingctx):
    """``min_parallel()`` inside a kernel: the C global, linked by name."""
    def codegen(context, builder, signature, args):
        cell = builder.module.globals.get(_SYMBOL)
        if cell is None:
            cell = ir.GlobalVariable(builder.module, ir.IntType(64), _SYMBOL)
            cell.linkage = "external"
        return builder.load(cell)
    return types.int64(), codegen


@njit(inline="always")
def split(items, elements):
    """(parts, items per part) for a loop over ``items`` touching ``elements`` values:
    one part per thread of the caller, or one part for small work. Part p covers
    [p * per, min(items, (p + 1) * per)). A driver's serial call for small work starts at
    ``parts - 1`` (0, a run-time integer): a literal 0 is typed ``Literal[int](0)``, and
    the serial function would be compiled a second time for it."""
    if elements < _kernel_min_parallel():
        parts = 1
    else:
        parts = max(1, min(_kernel_threads(), items))
    return parts, (items + parts - 1) // parts


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
