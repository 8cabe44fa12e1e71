"""Matrix products on the kernels' threads: oneMKL or numpy's OpenBLAS, one
single-threaded call per part.

    matmul(a, b, out)        out = a @ b: 2-D, or 3-D batches (b may be one 2-D matrix)
        2-D:      split along the columns of ``out`` (or its rows, when it is narrow)
                  into one part per thread, each part one ``cblas_?gemm`` call
                  (``cblas_?gemv`` for a product of one row: a classifier at batch 1)
        batches:  the batch's products shared among the threads, one call each
    with_library(key, run)   run(lib) with the library this product shape runs on

Why a pool of our own: BLAS keeps worker threads that spin for a while after each
product, and kernels started then find their cores busy. So during a run BLAS is set
to one thread (``onnxkit.runtime.blas_threads``) and ``matmul`` calls ``cblas_sgemm`` /
``cblas_dgemm`` once per part, the parts on ``_threads.run_split``'s pool, which the
memory-bound kernels use too.

Which BLAS: oneMKL's single dynamic library (``libmkl_rt``, from the ``mkl`` wheel, a
dependency on Linux x86-64), set to its sequential layer, and numpy's own OpenBLAS
(``numpy.libs``: scipy-openblas, 64-bit integers, symbols ``scipy_cblas_sgemm64_`` ...).
Neither wins on every machine, so by default the library of the processor's maker runs
(``DEFAULT``: OpenBLAS on AMD, oneMKL elsewhere where installed), and with tuning on
(``_tuning``) the first product of each shape (sizes, layout, split) times both and the
session's later ones run the faster (``with_library``). Finding the libraries and handing their entry points to LLVM is
``_blas_libraries``'s part. Where neither is found, ``AVAILABLE`` is False and
``matmul`` is ``np.matmul``. The measurements behind these choices: ``docs/cpu.md``
("Matrix products").
"""

from __future__ import annotations

from functools import partial

import numpy as np
from numba import njit, types

from onnxkit.kernels.cpu._blas_libraries import (  # noqa: F401 (CHOICES ... for callers)
    _GET, _SET, AVAILABLE, CHOICES, DEFAULT, ILP64, LIBRARIES, LIBRARY, NO_TRANS, ROW_MAJOR,
    TRANS)
from onnxkit.kernels.cpu._threads import run_parts, run_split, threads
from onnxkit.kernels.cpu._tuning import chosen, pick, tuning

MIN_PART_COLUMNS = 128  # a 2-D product is split by columns only if each part gets this many
ROWS_FIRST = 48  # ... and by rows when each part gets this many rows
MIN_PART_ROWS = 16  # ... or when the columns are too few, if each part gets this many
# A one-row product's parts start on a multiple of this many output values. The
# libraries' ?gemv kernels compute whole blocks of 4-16 values one way and the rest
# another, so a part that started mid-block summed some rows in another order, and
# identical weight rows gave different values (onnx's light AlexNet on OpenBLAS: constant
# weights, logits of 1e11 that differed by 1e7, a softmax of one-hots).
GEMV_ROWS = 16
MIN_SPLIT_MACS = 1 << 21  # a product with fewer multiply-adds runs as one call ...
MIN_SPLIT_WEIGHTS = 1 << 18  # ... unless its right operand is this big (a classifier's
# 1 x 1280 x 1000 product reads 5 MB: bound by memory, it takes both cores)
# From this many multiply-adds up to MIN_SPLIT_MACS, with tuning on, the first product of
# a shape times one call against a split (docs/cpu.md)
MIN_TIMED_SPLIT = 1 << 18


_I = types.int64 if ILP64 else types.int32
_E = types.int32  # the CBLAS enums


def _signature(real):
    return types.void(_E, _E, _E, _I, _I, _I, real, types.intp, _I, types.intp, _I, real,
                      types.intp, _I)


def _gemv_signature(real):
    return types.void(_E, _E, _I, _I, real, types.intp, _I, types.intp, _I, real, types.intp,
                      _I)


_sgemv = types.ExternalFunction("onnxkit_sgemv", _gemv_signature(types.float32))
_dgemv = types.ExternalFunction("onnxkit_dgemv", _gemv_signature(types.float64))
_sgemv2 = types.ExternalFunction("onnxkit_sgemv2", _gemv_signature(types.float32))
_dgemv2 = types.ExternalFunction("onnxkit_dgemv2", _gemv_signature(types.float64))
_sgemm = types.ExternalFunction("onnxkit_sgemm", _signature(types.float32))
_dgemm = types.ExternalFunction("onnxkit_dgemm", _signature(types.float64))
_sgemm2 = types.ExternalFunction("onnxkit_sgemm2", _signature(types.float32))
_dgemm2 = types.ExternalFunction("onnxkit_dgemm2", _signature(types.float64))


@njit(inline="always")
def gemm_call(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, single, lib=0):
    """One product on this thread, by library ``lib`` (an index into ``CHOICES``)."""
    if single and lib == 0:
        _sgemm(ROW_MAJOR, ta, tb, m, n, k, np.float32(1), a, lda, b, ldb, np.float32(0), c, ldc)
    elif single:
        _sgemm2(ROW_MAJOR, ta, tb, m, n, k, np.float32(1), a, lda, b, ldb, np.float32(0), c, ldc)
    elif lib == 0:
        _dgemm(ROW_MAJOR, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)
    else:
        _dgemm2(ROW_MAJOR, ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc)


@njit(inline="always")
def gemv_call(ta, tb, n, k, a, lda, b, ldb, c, single, lib=0):
    """C (1, n) = op(A) (1, k) @ op(B) (k, n) on this thread, as C^T = op(B)^T @ A^T:
    op(B) stored transposed (tb TRANS) is an (n, k) matrix times A's row; stored as it
    is, its transpose. A's k values are ``lda`` apart when A is stored transposed."""
    trans = NO_TRANS if tb == TRANS else TRANS
    rows, cols = (n, k) if tb == TRANS else (k, n)
    inc = lda if ta == TRANS else 1
    if single and lib == 0:
        _sgemv(ROW_MAJOR, trans, rows, cols, np.float32(1), b, ldb, a, inc, np.float32(0), c, 1)
    elif single:
        _sgemv2(ROW_MAJOR, trans, rows, cols, np.float32(1), b, ldb, a, inc, np.float32(0), c,
                1)
    elif lib == 0:
        _dgemv(ROW_MAJOR, trans, rows, cols, 1.0, b, ldb, a, inc, 0.0, c, 1)
    else:
        _dgemv2(ROW_MAJOR, trans, rows, cols, 1.0, b, ldb, a, inc, 0.0, c, 1)


def split_by_columns(m: int, n: int, parts: int) -> bool:
    """How ``gemm_parts`` shares a product of C (m, n): by rows when each part gets
    ``ROWS_FIRST`` of them, else by columns when each gets ``MIN_PART_COLUMNS``, else by
    rows when each gets ``MIN_PART_ROWS``, else by columns.

    Rows first: each thread writes one contiguous block of C, as the epilogue after it
    shares the rows (``_epilogue.finish_rows``); split by columns, every row of C is
    half one thread's and half the other's. Columns win for short C (docs/cpu.md).
    """
    if m >= parts * ROWS_FIRST:
        return False
    return n >= parts * MIN_PART_COLUMNS or m < parts * MIN_PART_ROWS


def gemm_parts(a, ta, lda, b, tb, ldb, c, ldc, m, n, k, size, parts, by_columns, lib):
    """C (m, n) = op(A) @ op(B) in ``parts`` calls at once, by columns or by rows of C
    (``split_by_columns``); one row (m = 1) by matrix-vector products (``gemv_call``).

    ``a``, ``b``, ``c``: addresses of the matrices as they lie (row-major, leading
    dimensions ``lda``, ``ldb``, ``ldc``); ``ta`` / ``tb``: NO_TRANS, or TRANS when the
    stored matrix is op's transpose (``_layout``); ``size``: 4 (float32) or 8. Part p of
    a column split computes columns [p * per, ...) of C from the same columns of op(B);
    of a row split, rows of C from the same rows of op(A). Addresses, not arrays: one
    compiled signature serves every layout. ``lib``: which of ``CHOICES`` computes.
    """
    if parts == 1:  # one call: the columns, all of them
        by_columns = True
    total = n if by_columns else m
    per = (total + parts - 1) // parts
    if m == 1:  # parts of whole blocks of GEMV_ROWS (see there)
        per = (per + GEMV_ROWS - 1) // GEMV_ROWS * GEMV_ROWS
    run_split(_gemm_range, total, parts, per, a, ta, lda, b, tb, ldb, c, ldc, m, n, k, size,
              by_columns, lib)


@njit(cache=True, nogil=True)
def _gemm_range(a, ta, lda, b, tb, ldb, c, ldc, m, n, k, size, by_columns, lib, lo, hi):
    """Columns (or rows) lo .. hi - 1 of ``gemm_parts``'s C, one library call."""
    if hi <= lo:
        return
    if by_columns:  # columns lo.. of op(B): row lo of the stored B^T, or its column lo
        step = ldb * size if tb == TRANS else size
        if m == 1:
            gemv_call(ta, tb, hi - lo, k, a, lda, b + lo * step, ldb, c + lo * size,
                      size == 4, lib)
            return
        gemm_call(ta, tb, m, hi - lo, k, a, lda, b + lo * step, ldb, c + lo * size, ldc,
                  size == 4, lib)
    else:  # rows lo.. of op(A): column lo of the stored A^T, or its row lo
        step = size if ta == TRANS else lda * size
        gemm_call(ta, tb, hi - lo, n, k, a + lo * step, lda, b, ldb, c + lo * ldc * size,
                  ldc, size == 4, lib)


def gemm_batch(a, ta, lda, sa, b, tb, ldb, sb, c, ldc, sc, batch, m, n, k, size, lib):
    """C[i] = op(A[i]) @ op(B[i]) for i < batch, the products shared among the threads;
    ``sa``, ``sb``, ``sc``: the byte steps from one matrix to the next (0: one matrix
    for the whole batch). The work counted for the split is the multiply-adds / 16
    (``MIN_SPLIT_MACS`` is then ``_threads.DEFAULT_MIN_PARALLEL``)."""
    run_parts(_gemm_batch_range, batch, (batch * m * n * k) >> 4, a, ta, lda, sa, b, tb, ldb,
              sb, c, ldc, sc, m, n, k, size, lib)


@njit(cache=True, nogil=True)
def _gemm_batch_range(a, ta, lda, sa, b, tb, ldb, sb, c, ldc, sc, m, n, k, size, lib, lo, hi):
    for i in range(lo, hi):
        gemm_call(ta, tb, m, n, k, a + i * sa, lda, b + i * sb, ldb, c + i * sc, ldc, size == 4,
                  lib)


def with_library(key, run) -> None:
    """``run(lib)`` with the library that computes products of this ``key`` (shapes, layout,
    split) fastest here: with both oneMKL and OpenBLAS loaded and tuning on, the first
    product of a key times both (``_tuning.pick``); else ``CHOICES[DEFAULT]``."""
    if len(CHOICES) == 1 or not tuning():
        run(DEFAULT)
        return
    name = chosen(key)
    if name is not None:
        run(CHOICES.index(name))
        return
    pick(key, {name: partial(run, lib) for lib, name in enumerate(CHOICES)}, CHOICES[DEFAULT])


def _layout(x):
    """(TRANS flag, leading dimension) of a matrix (the last two axes of x) BLAS can read
    as it lies, or None."""
    size = x.itemsize
    s_rows, s_cols = x.strides[-2], x.strides[-1]
    rows, cols = x.shape[-2], x.shape[-1]
    if s_cols == size and s_rows % size == 0 and s_rows // size >= max(cols, 1):
        return NO_TRANS, s_rows // size
    if s_rows == size and s_cols % size == 0 and s_cols // size >= max(rows, 1):
        return TRANS, s_cols // size
    if rows == 1 and s_cols == size:
        return NO_TRANS, max(cols, 1)
    if cols == 1 and s_rows == size:
        return TRANS, max(rows, 1)
    return None


def _blas_ready(a, b, out) -> bool:
    return (AVAILABLE and out.dtype in (np.float32, np.float64) and a.dtype == out.dtype
            and b.dtype == out.dtype and out.size > 0 and a.shape[-1] > 0
            and out.strides[-1] == out.itemsize and out.strides[-2] % out.itemsize == 0
            and out.strides[-2] // out.itemsize >= out.shape[-1])


@njit(cache=True)
def _address(x):
    """The address of x's first element, cheaper than ``__array_interface__`` (a new
    dict each time; a product needs three)."""
    return x.ctypes.data


def matmul(a, b, out):
    """``np.matmul(a, b, out=out)`` with the products on the kernels' threads (see above).
    A batch of one is the 2-D product, which is split among the threads (a one-group
    convolution's (1, M, K) @ (1, K, P))."""
    if out.ndim == 3 and out.shape[0] == 1 and a.ndim in (2, 3) and b.ndim in (2, 3):
        matmul(a if a.ndim == 2 else a[0], b if b.ndim == 2 else b[0], out[0])
        return out
    size = out.itemsize
    if a.ndim == b.ndim == out.ndim == 2 and _blas_ready(a, b, out):
        la, lb = _layout(a), _layout(b)
        if la is not None and lb is not None:
            m, n, k = out.shape[0], out.shape[1], a.shape[1]
            big = m * n * k >= MIN_SPLIT_MACS or n * k >= MIN_SPLIT_WEIGHTS
            count = threads()
            base = (_address(a), la[0], la[1], _address(b), lb[0], lb[1], _address(out),
                    out.strides[0] // size, m, n, k, size)

            def product(parts):
                args = base + (parts, split_by_columns(m, n, parts))
                with_library(("gemm", m, n, k, la[0], lb[0], size) + args[-2:],
                             lambda lib: gemm_parts(*args, lib))

            if big or count == 1 or m * n * k < MIN_TIMED_SPLIT:
                product(count if big else 1)
            else:  # mid-size: one call or a split, whichever ran faster here
                pick(("product split", m, n, k, la[0], lb[0], size),
                     {"one call": partial(product, 1), "split": partial(product, count)},
                     "one call")
            return out
    elif out.ndim == 3 and a.ndim in (2, 3) and b.ndim in (2, 3) and _blas_ready(a, b, out):
        batch = out.shape[0]
        la, lb = _layout(a), _layout(b)
        same = all(x.ndim == 2 or x.shape[0] == batch for x in (a, b))
        if la is not None and lb is not None and same and out.strides[0] % size == 0:
            step = [0 if x.ndim == 2 else x.strides[0] for x in (a, b)]
            args = (_address(a), la[0], la[1], step[0], _address(b), lb[0], lb[1], step[1],
                    _address(out), out.strides[1] // size, out.strides[0], batch,
                    out.shape[1], out.shape[2], a.shape[-1], size)
            with_library(("gemm batch", batch, *out.shape[1:], a.shape[-1], la[0], lb[0],
                          size, not step[0], not step[1]),
                         lambda lib: gemm_batch(*args, lib))
            return out
    return np.matmul(a, b, out=out)
