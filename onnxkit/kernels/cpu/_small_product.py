"""A product too small to split and its epilogue in one compiled call.

    y (m, n) = activation(alpha * op(a) @ op(b) + bias)      bias (n,) optional

    prepared_product(general, given, b, ...)   a Gemm / MatMul node's callable

At a decoder step (a few rows) the product itself costs a couple of microseconds; the
Python around a BLAS call, a separate epilogue call and its checks cost several times
that. Here a node whose weights are initializers makes one compiled call, which
computes the product and finishes each row (bias, alpha, activation) while it is in
cache. It takes only the products ``_blas.matmul`` would run as one call (fewer than
``_blas.MIN_SPLIT_MACS`` multiply-adds, right operand under ``MIN_SPLIT_WEIGHTS``),
with tuning off; ``rows_limit`` is asked once, when the plan is built.

    up to OWN_ROWS rows of a C-contiguous a, weights of up to OWN_VALUES values in C
    order as (k, n) or (n, k) (a Linear's transB):   ``_rows_finish``, this module's
        loops (a row of a against four rows of w, or four rows of w added into the
        output row at a time): at two rows the libraries' small-matrix paths cost 1.2
        to 2 times as much (at one row and at four, about as much)
    else:   ``_product_finish``, one ``cblas_?gemm`` call (``?gemv`` for one row)

Which path a product takes depends on its shape alone: the same bits in every process.
``act``: ``activation_args``'s (code, p0, p1), applied inside the loop (Sigmoid, Tanh
and Swish too: one short row costs nothing to finish in place). Each kernel has one
variant per dtype and activation (read-only operands, any layout for the library's),
compiled on a node's first call and called through its entry point (``entry``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof, types

from onnxkit.kernels.cpu._blas import (AVAILABLE, DEFAULT, MIN_SPLIT_MACS, MIN_SPLIT_WEIGHTS,
                                       _strided, gemm_call, gemv_call)
from onnxkit.kernels.cpu._buffers import empty_known
from onnxkit.kernels.cpu._entry import compiled_entry
from onnxkit.kernels.cpu._math import FASTMATH, activate, activation_code, applies, separate_code
from onnxkit.kernels.cpu._tuning import tuning


OWN_ROWS = 2  # products of at most this many rows of A ...
OWN_VALUES = 1 << 16  # ... by weights of at most this many values run ``_rows_finish``


def rows_limit(n: int, k: int) -> int:
    """How many rows a product with ``n`` columns over ``k`` terms may have to be taken
    here (0: none, the weights alone call for the split path)."""
    if not AVAILABLE or n * k >= MIN_SPLIT_WEIGHTS or n * k == 0:
        return 0
    return (MIN_SPLIT_MACS - 1) // (n * k)


def activation_args(activation: str, params, dtype):
    """(code, p0, p1) of ``activation`` as the kernel takes it, or None when the
    reference must apply it (Elu, unknown names)."""
    act = activation_code(activation, params) or separate_code(activation, params)
    if act is None:
        return None
    code, p0, p1 = act
    return code, dtype.type(p0), dtype.type(p1)


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def _finish_row(y, r, bias, has_bias, alpha, code, p0, p1):
    """y[r, :] = act(alpha * y[r, :] + bias)."""
    n = y.shape[1]
    if has_bias:
        if alpha == 1:
            for j in range(n):
                y[r, j] = activate(y[r, j] + bias[j], code, p0, p1)
        else:
            for j in range(n):
                y[r, j] = activate(y[r, j] * alpha + bias[j], code, p0, p1)
    elif alpha != 1 or applies(code):
        for j in range(n):
            y[r, j] = activate(y[r, j] * alpha, code, p0, p1)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _rows_finish(a, w, w_nk, y, bias, has_bias, alpha, code, p0, p1):
    """y = act(alpha * a @ op(w) + bias), op(w) = w (k, n), or w^T for w (n, k) (``w_nk``):
    a row of a against four rows of w at a time (``w_nk``), or four rows of w added into
    the output row at a time. Indexed [row, column] with the column from 0: the inner
    loops vectorize. False where the shapes do not fit."""
    m, n, k = y.shape[0], y.shape[1], a.shape[1]
    if a.shape[0] != m or (w.shape[0], w.shape[1]) != ((n, k) if w_nk else (k, n)) \
            or has_bias and bias.shape[0] != n:
        return False
    for i in range(m):
        if w_nk:
            j = 0
            while j + 4 <= n:
                s0 = s1 = s2 = s3 = np.float32(0)  # (float64 for float64 operands: unified)
                for q in range(k):
                    x = a[i, q]
                    s0 += x * w[j, q]
                    s1 += x * w[j + 1, q]
                    s2 += x * w[j + 2, q]
                    s3 += x * w[j + 3, q]
                y[i, j], y[i, j + 1], y[i, j + 2], y[i, j + 3] = s0, s1, s2, s3
                j += 4
            while j < n:
                s = np.float32(0)
                for q in range(k):
                    s += a[i, q] * w[j, q]
                y[i, j] = s
                j += 1
        else:
            for j in range(n):
                y[i, j] = 0
            q = 0
            while q + 4 <= k:
                a0, a1, a2, a3 = a[i, q], a[i, q + 1], a[i, q + 2], a[i, q + 3]
                for j in range(n):
                    y[i, j] += (a0 * w[q, j] + a1 * w[q + 1, j]) + (a2 * w[q + 2, j]
                                                                    + a3 * w[q + 3, j])
                q += 4
            while q < k:
                aq = a[i, q]
                for j in range(n):
                    y[i, j] += aq * w[q, j]
                q += 1
        _finish_row(y, i, bias, has_bias, alpha, code, p0, p1)
    return True


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _product_finish(a, b, y, bias, has_bias, alpha, code, p0, p1, lib):
    size = y.itemsize
    m, n, k = y.shape[0], y.shape[1], a.shape[1]
    if m == 0 or n == 0 or k == 0 or a.shape[0] != m or b.shape[0] != k or b.shape[1] != n:
        return False
    if has_bias and bias.shape[0] != n:
        return False
    if m * n * k >= MIN_SPLIT_MACS or n * k >= MIN_SPLIT_WEIGHTS:
        return False
    ta, lda = _strided(m, k, a.strides[0], a.strides[1], size)
    tb, ldb = _strided(k, n, b.strides[0], b.strides[1], size)
    if ta == 0 or tb == 0:
        return False
    pa, pb, pc = np.int64(a.ctypes.data), np.int64(b.ctypes.data), np.int64(y.ctypes.data)
    if m == 1:
        gemv_call(ta, tb, n, k, pa, lda, pb, ldb, pc, size == 4, lib)
    else:
        gemm_call(ta, tb, m, n, k, pa, lda, pb, ldb, pc, n, size == 4, lib)
    for r in range(m):
        _finish_row(y, r, bias, has_bias, alpha, code, p0, p1)
    return True


# Compiled only for the signatures ``_signature`` gives them (``entry``)
_product_finish._can_compile = False
_rows_finish._can_compile = False


def _signature(kernel, dtype, code) -> tuple:
    """``kernel``'s argument types for ``dtype`` and the activation ``code``: operands of
    any layout (``_product_finish``) or C order (``_rows_finish``), read-only."""
    real = typeof(dtype.type(0))
    bias = types.Array(real, 1, "A", readonly=True)
    tail = (bias, types.boolean, real, typeof(code), real, real)
    if kernel is _product_finish:
        read = types.Array(real, 2, "A", readonly=True)
        return (read, read, types.Array(real, 2, "C")) + tail + (types.int64,)
    read = types.Array(real, 2, "C", readonly=True)
    return (read, read, types.boolean, types.Array(real, 2, "C")) + tail


def entry(kernel, dtype, code):
    """The compiled variant of ``kernel`` for ``dtype`` and ``code``, called without the
    dispatcher (``_entry``): the caller passes float arrays of ``dtype``, 2-D,
    C-contiguous where the signature says C."""
    return compiled_entry(kernel, _signature(kernel, dtype, code))


class PreparedProduct:
    """A Gemm or MatMul node whose right operand (and bias) are the plan's initializers
    (``given``): a product of at most ``rows`` rows of ``a`` is one compiled call,
    ``_rows_finish`` (up to ``OWN_ROWS`` rows of a C-contiguous ``a``, weights of up to
    ``OWN_VALUES``) or ``_product_finish``; anything else (other arrays, more rows, a
    dtype it does not take, tuning on) runs ``general``, the node's kernel, as it would
    unprepared.

    ``b``: op(B), (k, n), a view of B as it lies; ``rank``: 2 for Gemm (A is 2-D,
    ``trans_a`` says whether transposed), 0 for MatMul (A of any rank from 2, its leading
    axes the rows). The compiled variants are looked up on the node's first call."""

    __slots__ = ("general", "given", "b", "alpha", "trans_a", "rank", "rows", "k", "n",
                 "dtype", "op_type", "w", "w_nk", "own", "tail", "code", "calls")

    def __init__(self, general, given, b, bias, alpha, act, trans_a, rank, op_type=""):
        self.op_type = op_type  # (the compile notice names the operator: ``_notice``)
        self.general, self.given, self.b = general, given, b
        self.alpha, self.trans_a, self.rank = alpha, trans_a, rank
        self.k, self.n = b.shape
        self.rows = rows_limit(self.n, self.k)
        self.dtype = b.dtype
        # the weights as they lie in C order, for ``_rows_finish``: (k, n), or (n, k)
        self.w, self.w_nk = (b, False) if b.flags.c_contiguous else (b.T, True)
        self.own = self.w.flags.c_contiguous and self.n * self.k <= OWN_VALUES
        code, p0, p1 = act
        no_bias = bias is None
        bias = np.zeros(1, self.dtype) if no_bias else np.ascontiguousarray(bias, self.dtype)
        self.tail = (bias, not no_bias, alpha, code, p0, p1)  # the kernels' last arguments
        self.code = code
        self.calls = None  # (``_rows_finish``'s entry, ``_product_finish``'s)

    def __call__(self, A, B, C=None, **attributes):
        given = self.given
        if B is given[0] and C is given[1] and A.dtype is self.dtype and not tuning():
            y = self._small(A)
            if y is not None:
                return y
        if C is None:  # (MatMul takes two inputs)
            return self.general(A, B, **attributes)
        return self.general(A, B, C, **attributes)

    def _small(self, A):
        if self.rank:
            if A.ndim != 2:
                return None
            a = A.T if self.trans_a else A
            lead = a.shape[:1]
        else:
            if A.ndim < 2:
                return None
            lead = A.shape[:-1]
            a = A if A.ndim == 2 else A.reshape(-1, A.shape[-1])
        m, n = a.shape[0], self.n
        if m > self.rows or a.shape[1] != self.k or m == 0 or n == 0 or self.k == 0:
            return None
        calls = self.calls
        if calls is None:
            calls = self.calls = (entry(_rows_finish, self.dtype, self.code),
                                  entry(_product_finish, self.dtype, self.code))
        y = empty_known((m, n), self.dtype, m * n * self.dtype.itemsize)
        if m <= OWN_ROWS and self.own and a.flags.c_contiguous:
            done = calls[0](a, self.w, self.w_nk, y, *self.tail)
        else:
            done = calls[1](a, self.b, y, *self.tail, DEFAULT)
        if not done:
            return None
        return y if len(lead) == 1 else y.reshape(lead + (n,))


def prepared_product(general, given, b, bias, alpha, act, trans_a, rank, op_type):
    """A ``PreparedProduct``, or None where no product of the node could take the small
    path (the weights alone call for the split one)."""
    if rows_limit(b.shape[1], b.shape[0]) == 0:
        return None
    return PreparedProduct(general, given, b, bias, alpha, act, trans_a, rank, op_type)
