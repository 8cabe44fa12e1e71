"""Matrix products on the kernels' threads: oneMKL or numpy's OpenBLAS, one
single-threaded call per part.

    matmul(a, b, out)        out = a @ b: 2-D, or 3-D batches (b may be one 2-D matrix)
        2-D:      split along the columns of ``out`` (or its rows, when it is narrow)
                  into one part per thread, each part one ``cblas_?gemm`` call
                  (``cblas_?gemv`` for a product of one row: a classifier at batch 1)
        batches:  the batch's products shared among the threads, one call each
        small:    a product run on one thread (too small to split, tuning off) costs one
                  compiled call that reads the arrays' shapes and strides (``_one_call``)
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
from numba.core.compiler_lock import global_compiler_lock

from onnxkit.kernels.cpu._blas_libraries import (  # noqa: F401 (CHOICES ... for callers)
    _GET, _SET, AVAILABLE, CHOICES, DEFAULT, ILP64, LIBRARIES, LIBRARY, NO_TRANS, ROW_MAJOR,
    TRANS)
from onnxkit.kernels.cpu._threads import min_parallel, run_parts, run_split, threads
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


@njit(inline="always")
def _strided(rows, cols, s_rows, s_cols, size):
    """(TRANS flag, leading dimension) of a rows x cols matrix of ``size``-byte values
    ``s_rows`` / ``s_cols`` bytes apart that BLAS can read as it lies, or (0, 0)."""
    if s_cols == size and s_rows % size == 0 and s_rows // size >= max(cols, 1):
        return NO_TRANS, s_rows // size
    if s_rows == size and s_cols % size == 0 and s_cols // size >= max(rows, 1):
        return TRANS, s_cols // size
    if rows == 1 and s_cols == size:
        return NO_TRANS, max(cols, 1)
    if cols == 1 and s_rows == size:
        return TRANS, max(rows, 1)
    return 0, 0


def _layout(x):
    """(TRANS flag, leading dimension) of a matrix (the last two axes of x) BLAS can read
    as it lies, or None."""
    flag, ld = _strided.py_func(x.shape[-2], x.shape[-1], x.strides[-2], x.strides[-1],
                                x.itemsize)
    return (flag, ld) if flag else None


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


@njit(cache=True, nogil=True)
def _one_call(a, b, out, lib, least):
    """out = a @ b as ``_general`` computes a product it runs on one thread with tuning
    off: one call (``gemv_call`` for one row), or one per matrix of a batch, on library
    ``lib``. False, with nothing written, where ``_general`` would do something else
    (split it among the threads: ``MIN_SPLIT_MACS``, ``MIN_SPLIT_WEIGHTS``, or a batch of
    ``least`` = ``min_parallel()`` values / 16 or more; or leave it to numpy's matmul:
    layouts BLAS cannot read, an empty product). Shapes and strides are read here, so
    a small product costs one dispatcher call; its arrays are typed layout "A" and a, b
    read-only (``_compile_for``): one compiled variant per dtype and dimensions."""
    size = out.itemsize
    batch = out.shape[0] if out.ndim == 3 else 1
    m, n, k = out.shape[-2], out.shape[-1], a.shape[-1]
    if out.size == 0 or k == 0 or a.shape[-2] != m or b.shape[-2] != k or b.shape[-1] != n:
        return False
    if a.ndim == 3 and a.shape[0] != batch or b.ndim == 3 and b.shape[0] != batch:
        return False
    if out.strides[-1] != size or out.strides[-2] % size != 0 or out.strides[-2] < n * size:
        return False
    ta, lda = _strided(m, k, a.strides[-2], a.strides[-1], size)
    tb, ldb = _strided(k, n, b.strides[-2], b.strides[-1], size)
    if ta == 0 or tb == 0:
        return False
    if batch == 1:  # a batch of one is the 2-D product, as in ``_general``
        if m * n * k >= MIN_SPLIT_MACS or n * k >= MIN_SPLIT_WEIGHTS:
            return False
    elif (batch * m * n * k) >> 4 >= least or out.strides[0] % size != 0:
        return False
    pa, pb, pc = np.int64(a.ctypes.data), np.int64(b.ctypes.data), np.int64(out.ctypes.data)
    single = size == 4
    if batch == 1 and m == 1:
        gemv_call(ta, tb, n, k, pa, lda, pb, ldb, pc, single, lib)
        return True
    sa = a.strides[0] if a.ndim == 3 else 0  # one matrix for the whole batch: no step
    sb = b.strides[0] if b.ndim == 3 else 0
    sc = out.strides[0] if out.ndim == 3 else 0
    for i in range(batch):  # one call site: each inlined call site compiles slowly
        gemm_call(ta, tb, m, n, k, pa + i * sa, lda, pb + i * sb, ldb, pc + i * sc,
                  out.strides[-2] // size, single, lib)
    return True


# Compiled only for the signatures ``_compile_for`` gives it; arrays of any layout convert
_one_call._can_compile = False
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _compile_for(a, b, out) -> bool:
    """Compile (or load from the cache) ``_one_call`` for these arrays' dtype and
    dimensions, every layout of them in one variant; False where it does not take them
    (other dimensions, misaligned or read-only ``out``)."""
    nd = (a.ndim, b.ndim, out.ndim)
    if nd not in ((2, 2, 2), (3, 3, 3), (3, 2, 3), (2, 3, 3)) or not out.flags.writeable \
            or not (a.flags.aligned and b.flags.aligned and out.flags.aligned):
        return False
    real = types.float32 if out.dtype == _F32 else types.float64
    sig = (types.Array(real, nd[0], "A", readonly=True),
           types.Array(real, nd[1], "A", readonly=True), types.Array(real, nd[2], "A"),
           types.int64, types.int64)
    with global_compiler_lock:  # no other thread compiles a variant of its own meanwhile
        _one_call._can_compile = True
        try:
            _one_call.compile(sig)
        finally:
            _one_call._can_compile = False
    return True


def matmul(a, b, out):
    """``np.matmul(a, b, out=out)`` with the products on the kernels' threads (see above).
    A product too small to split runs with one dispatcher call (``_one_call``); the
    others, and every product while tuning, take ``_general``."""
    dtype = out.dtype
    if (AVAILABLE and (dtype is _F32 or dtype is _F64) and a.dtype is dtype
            and b.dtype is dtype and out.ndim < 4 and not tuning()):
        # (an array it has no variant for costs a slow TypeError, hence the ndim test)
        try:
            if _one_call(a, b, out, DEFAULT, min_parallel()):
                return out
        except (TypeError, RuntimeError):  # no variant for these yet (or being compiled)
            if _compile_for(a, b, out) and _one_call_again(a, b, out):
                return out
    return _general(a, b, out)


def _one_call_again(a, b, out) -> bool:
    """``_one_call`` once its variant is compiled; False where these arrays still find
    none (``_general`` then computes the product)."""
    try:
        return _one_call(a, b, out, DEFAULT, min_parallel())
    except TypeError:
        return False


def _general(a, b, out):
    """``matmul`` split among the threads, with the library and split timed while tuning.
    A batch of one is the 2-D product, which is split among the threads (a one-group
    convolution's (1, M, K) @ (1, K, P))."""
    if out.ndim == 3 and out.shape[0] == 1 and a.ndim in (2, 3) and b.ndim in (2, 3):
        _general(a if a.ndim == 2 else a[0], b if b.ndim == 2 else b[0], out[0])
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
