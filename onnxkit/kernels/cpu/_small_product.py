"""A product too small to split and its epilogue in one compiled call.

    y (m, n) = activation(alpha * op(a) @ op(b) + bias)      bias (n,) optional

At a decoder step (a few rows) the product itself costs a couple of microseconds; the
Python around a BLAS call, a separate epilogue call and its checks cost several times
that. Here one dispatcher call reads the shapes and strides, makes one ``cblas_?gemm``
call (``cblas_?gemv`` for one row) and finishes the rows while they are in cache, as
``_blas.matmul``'s one-call path and ``_epilogue.epilogue_cols`` would, one after the
other. It takes only the products ``_blas.matmul`` would run as one call (fewer than
``_blas.MIN_SPLIT_MACS`` multiply-adds, right operand under ``MIN_SPLIT_WEIGHTS``),
with tuning off; the caller asks ``rows_limit`` once, when the plan is built.

    product_finish(a, b, y, bias, alpha, act) -> bool      (False: nothing written)
    prepared_product(general, given, b, ...)               a Gemm / MatMul node's callable

``act``: ``activation_args``'s (code, p0, p1) for the activation, applied inside the
loop (Sigmoid, Tanh and Swish too: one short row costs nothing to finish in place).
The kernel is compiled for a-and-b of any layout BLAS reads in place (typed "A",
read-only) and a C-contiguous ``y``: one variant per dtype and activation, compiled on
first use (``_compile``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, typeof, types
from numba.core.compiler_lock import global_compiler_lock

from onnxkit.kernels.cpu._blas import (AVAILABLE, DEFAULT, MIN_SPLIT_MACS, MIN_SPLIT_WEIGHTS,
                                       _strided, gemm_call, gemv_call)
from onnxkit.kernels.cpu._buffers import empty_known
from onnxkit.kernels.cpu._math import FASTMATH, activate, activation_code, applies, separate_code
from onnxkit.kernels.cpu._tuning import tuning


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
    one = alpha == 1
    if has_bias:
        for r in range(m):
            row = y[r]
            if one:
                for j in range(n):
                    row[j] = activate(row[j] + bias[j], code, p0, p1)
            else:
                for j in range(n):
                    row[j] = activate(row[j] * alpha + bias[j], code, p0, p1)
    elif not one or applies(code):
        for r in range(m):
            row = y[r]
            for j in range(n):
                row[j] = activate(row[j] * alpha, code, p0, p1)
    return True


# Compiled only for the signatures ``_compile`` gives it; arrays of any layout convert
_product_finish._can_compile = False
_NO_BIAS = {}


def _compile(dtype, code) -> None:
    real = typeof(dtype.type(0))
    sig = (types.Array(real, 2, "A", readonly=True), types.Array(real, 2, "A", readonly=True),
           types.Array(real, 2, "C"), types.Array(real, 1, "A", readonly=True), types.boolean,
           real, typeof(code), real, real, types.int64)
    with global_compiler_lock:
        _product_finish._can_compile = True
        try:
            _product_finish.compile(sig)
        finally:
            _product_finish._can_compile = False


def product_finish(a, b, y, bias, alpha, act) -> bool:
    """y = act(alpha * a @ b + bias) as one compiled call (see the module docstring);
    False, with nothing written, where the caller must compute it another way. ``a``,
    ``b``: 2-D of y's dtype; ``y``: C-contiguous; ``bias``: None or 1-D of n values;
    ``alpha``: a scalar of y's dtype."""
    code, p0, p1 = act
    has_bias = bias is not None
    if not has_bias:
        bias = _NO_BIAS.get(y.dtype)
        if bias is None:
            bias = _NO_BIAS.setdefault(y.dtype, np.zeros(1, y.dtype))
    try:
        return _product_finish(a, b, y, bias, has_bias, alpha, code, p0, p1, DEFAULT)
    except TypeError:  # no variant for this activation yet, or arrays it cannot take
        if not (a.flags.aligned and b.flags.aligned and bias.flags.aligned):
            return False
        _compile(y.dtype, code)
    try:
        return _product_finish(a, b, y, bias, has_bias, alpha, code, p0, p1, DEFAULT)
    except TypeError:
        return False


class PreparedProduct:
    """A Gemm or MatMul node whose right operand (and bias) are the plan's initializers
    (``given``): a product of at most ``rows`` rows of ``a`` runs as ``product_finish``;
    anything else (other arrays, more rows, a dtype or layout it does not take, tuning on)
    runs ``general``, the node's kernel, as it would unprepared.

    ``b``: op(B), (k, n), a view of B as it lies; ``rank``: 2 for Gemm (A is 2-D,
    ``trans_a`` says whether transposed), 0 for MatMul (A of any rank from 2, its leading
    axes the rows)."""

    __slots__ = ("general", "given", "b", "bias", "alpha", "act", "trans_a", "rank", "rows",
                 "k", "n", "dtype", "op_type")

    def __init__(self, general, given, b, bias, alpha, act, trans_a, rank, op_type=""):
        self.op_type = op_type  # (the compile notice names the operator: ``_notice``)
        self.general, self.given, self.b, self.bias = general, given, b, bias
        self.alpha, self.act, self.trans_a, self.rank = alpha, act, trans_a, rank
        self.k, self.n = b.shape
        self.rows = rows_limit(self.n, self.k)
        self.dtype = b.dtype

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
        if m > self.rows or a.shape[1] != self.k:
            return None
        y = empty_known((m, n), self.dtype, m * n * self.dtype.itemsize)
        if not product_finish(a, self.b, y, self.bias, self.alpha, self.act):
            return None
        return y if len(lead) == 1 else y.reshape(lead + (n,))


def prepared_product(general, given, b, bias, alpha, act, trans_a, rank, op_type):
    """A ``PreparedProduct``, or None where no product of the node could take the small
    path (the weights alone call for the split one)."""
    if rows_limit(b.shape[1], b.shape[0]) == 0:
        return None
    return PreparedProduct(general, given, b, bias, alpha, act, trans_a, rank, op_type)
