"""DynamicQuantizeMatMul and MatMulIntegerToFloat of small products in one compiled call.

A BERT-mini product (32 x 64 @ 64 x 64) is ~130 thousand multiply-adds: the chain's
steps as separate numpy and Numba calls (``fused_quant``) cost several times the
arithmetic. Here the whole chain is one loop nest, each step the same float32 operation
as the chain's kernel, so the bits are the chain's:

    (DynamicQuantizeMatMul only)
    lo, hi = min(0, min(A)), max(0, max(A));  a_scale = (hi - lo) / 255 (1 when hi == lo)
    a_zero = rint(clip(0 - lo / a_scale, 0, 255));  a = clip(rint(A / a_scale) + a_zero, 0, 255)
    q = float32(a) - a_zero                        (exact small integers)
    acc = q @ Bs   (Bs = B - b_zero in float32: every partial sum an integer below 2**24,
                    exact in any order; the caller checks the bound)
    Y = acc * (a_scale * b_scale) [+ bias]         (each rounded once, no fused multiply-add)

``dynamic_product`` / ``integer_product`` return None where this does not apply (NaN in
A, non-float32 scales, shapes), and the caller runs the chain.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._math import add_product
from onnxkit.kernels.cpu.quantized_matmul import EXACT_IN_FLOAT32

F32 = np.dtype(np.float32)
MOST = 1 << 19  # multiply-adds: more, and the chain's BLAS product is the faster
U8_BOUND = 255  # the largest |a - a_zero| of an 8-bit a
_NO_BIAS = read_only(np.zeros(1, F32))


def _fits(rows: int, k: int, n: int, l1: int) -> bool:
    return rows * k * n <= MOST and l1 * U8_BOUND <= EXACT_IN_FLOAT32


def _vector(x, n: int):
    """A float32 scale or bias of one value or n, as (n,) float32; None if it is neither."""
    if x is None or x.dtype != F32 or x.ndim > 1 or x.size not in (1, n):
        return None
    return read_only(np.ascontiguousarray(np.broadcast_to(x.reshape(-1), (n,))))


class Vectors:
    """A node's b_scale and bias as the loops read them ((n,) float32, read-only), kept
    while they are the same arrays and among the node's initializers (``fixed``): worked
    out once per node. Arrays fed at run time may change in place: worked out per call."""

    __slots__ = ("memo", "fixed")

    def __init__(self, fixed: tuple = ()):
        self.memo = None  # (b_scale, bias, n, result): one attribute, replaced whole
        self.fixed = fixed

    def get(self, b_scale, bias, n: int):
        """(scale, bias, has_bias), or None where the one call does not apply."""
        memo = self.memo
        if memo is not None and memo[0] is b_scale and memo[1] is bias and memo[2] == n:
            return memo[3]
        scale, b = _vector(b_scale, n), None if bias is None else _vector(bias, n)
        result = (None if scale is None or (bias is not None and (b is None or bias.ndim != 1))
                  else (scale, _NO_BIAS if b is None else b, b is not None))
        if all(x is None or any(x is c for c in self.fixed) for x in (b_scale, bias)):
            self.memo = (b_scale, bias, n, result)
        return result


def dynamic_product(A, weights, vectors: Vectors, b_scale, bias):
    """DynamicQuantizeMatMul's Y for float32 A and ``weights`` (``ShiftedWeights``, B
    (K, N) minus its zero point), or None."""
    k, n = A.shape[-1], weights.shifted.shape[1]
    if (A.dtype != F32 or A.ndim < 2 or A.size == 0 or k != weights.shifted.shape[0]
            or not _fits(A.size // k, k, n, weights.l1)):
        return None
    terms = vectors.get(b_scale, bias, n)
    if terms is None:
        return None
    Y = empty(A.shape[:-1] + (n,), F32)
    if not _dynamic(read_only(np.ascontiguousarray(A).reshape(-1, k)), weights.get(F32),
                    *terms, Y.reshape(-1, n)):
        return None  # NaN in A: the chain's kernels say what happens
    return Y


def integer_product(a, a_scale, a_zero, weights, vectors: Vectors, b_scale, bias):
    """MatMulIntegerToFloat's Y for 8-bit a, or None."""
    k, n = a.shape[-1], weights.shifted.shape[1]
    if (a.dtype not in (np.uint8, np.int8) or a.ndim < 2 or a.size == 0
            or k != weights.shifted.shape[0] or not _fits(a.size // k, k, n, weights.l1)
            or a_scale.dtype != F32 or a_scale.size != 1
            or (a_zero is not None and (a_zero.dtype != a.dtype or a_zero.size != 1))):
        return None
    terms = vectors.get(b_scale, bias, n)
    if terms is None:
        return None
    zero = np.float32(0 if a_zero is None else a_zero.reshape(()))
    Y = empty(a.shape[:-1] + (n,), F32)
    _integer(read_only(np.ascontiguousarray(a).reshape(-1, k)), zero,
             np.float32(a_scale.reshape(())), weights.get(F32), *terms, Y.reshape(-1, n))
    return Y


@njit(cache=True, error_model="numpy", inline="always")
def _scaled_product(q, w, a_scale, b_scale, bias, has_bias, y):
    """y = (q @ w) * (a_scale * b_scale) [+ bias], q (M, K) exact integers in float32."""
    n = w.shape[1]
    acc = np.empty(n, np.float32)
    mult = np.empty(n, np.float32)
    for j in range(n):
        mult[j] = a_scale * b_scale[j]
    for r in range(q.shape[0]):
        acc[:] = 0
        add_product(acc, q[r], w)  # four rows of w per pass over acc
        out = y[r]
        for j in range(n):
            out[j] = acc[j] * mult[j]
        if has_bias:
            for j in range(n):
                out[j] = out[j] + bias[j]


@njit(cache=True, error_model="numpy")
def _dynamic(x, w, b_scale, bias, has_bias, y):
    low, high, nan = x[0, 0], x[0, 0], False
    for r in range(x.shape[0]):
        row = x[r]
        for i in range(row.size):
            v = row[i]
            nan |= v != v
            low = min(low, v)
            high = max(high, v)
    if nan:
        return False
    f0, f255 = np.float32(0), np.float32(255)
    hi = high if high > f0 else f0
    lo = low if low < f0 else f0
    scale = np.float32(1) if hi == lo else np.float32(hi - lo) / f255
    zero = np.rint(min(max(f0 - lo / scale, f0), f255))
    if zero != zero:  # an infinite A: 0 - inf / inf (the chain's uint8 cast gives 0)
        zero = f0
    q = np.empty(x.shape, np.float32)
    for r in range(x.shape[0]):
        row, out = x[r], q[r]
        for i in range(row.size):
            v = np.rint(row[i] / scale) + zero
            a = min(max(v, f0), f255) if v == v else f0  # NaN -> 0, as the chain's
            out[i] = a - zero
    _scaled_product(q, w, scale, b_scale, bias, has_bias, y)
    return True


@njit(cache=True, error_model="numpy")
def _integer(a, zero, a_scale, w, b_scale, bias, has_bias, y):
    q = np.empty(a.shape, np.float32)
    for r in range(a.shape[0]):
        row, out = a[r], q[r]
        for i in range(row.size):
            out[i] = np.float32(row[i]) - zero
    _scaled_product(q, w, a_scale, b_scale, bias, has_bias, y)
