"""Exp from arithmetic alone, and the activations built on it: Sigmoid, Tanh, tanh-Gelu.

Numba has no SIMD ``math.exp`` (a loop calling it runs one element at a time).
``exp_parts`` splits exp(y) = 2**n * (1 + q): n = round(y / ln 2), r = y - n ln 2 (ln 2
in two parts, so r keeps its low bits), q = exp(r) - 1 by its Taylor series
(|r| <= ln 2 / 2: degree 7 for float32, 13 for float64), and 2**n is built by setting the
exponent bits (``_pow2``, a bit cast). Every step is plain arithmetic, so a loop over it
vectorizes.

    sigmoid(x)   = 1 / (1 + e)  (x >= 0),  e / (1 + e)  (x < 0),  e = exp(-|x|)
    tanh(x)      = sign(x) * m / (m + 2),  m = exp(2|x|) - 1 = 2**n * q + (2**n - 1)
    gelu_tanh(x) = x * sigmoid(u),  u = 2 sqrt(2/pi) (x + 0.044715 x^3)

(m from q, not from exp - 1: no cancellation for small x.) Sigmoid and Tanh are within 3
float32 ulps of the float64 functions, float64 within 20 (``tests/test_cpu_activations.py``).
gelu_tanh is Gelu's tanh approximation, 0.5 x (1 + tanh(u / 2)), without 1 + tanh
cancelling for negative x; for float32, u and its exp's range reduction are float64:
within 2 float32 ulps of float64 math (``tests/test_cpu_gelu_tanh.py``).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

# fast-math without nnan/ninf: reductions may reassociate, NaN and inf stay honest
FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}

F0, F1, F2 = np.float32(0), np.float32(1), np.float32(2)
TANH_LIMIT = np.float32(20)  # tanh(20) is 1 in float64 too


@intrinsic
def _pow2(typingctx, n):
    """2.0 ** n, in n's float type, for an integer-valued n in the normal exponent range:
    the exponent bits set directly (a bit cast, which vectorizes)."""
    if not isinstance(n, types.Float):
        return None
    bits, bias, shift = (32, 127, 23) if n.bitwidth == 32 else (64, 1023, 52)

    def codegen(context, builder, sig, args):
        width = ir.IntType(bits)
        k = builder.fptosi(args[0], width)
        e = builder.shl(builder.add(k, ir.Constant(width, bias)), ir.Constant(width, shift))
        return builder.bitcast(e, context.get_value_type(n))

    return n(n), codegen


def exp_parts(y):
    """(2**n, q) with exp(y) = 2**n * (1 + q), for y <= 88 (float32) / 709 (float64).
    Below the normal range (y < -87.7 / -708.8) n reaches the all-zero exponent, so
    2**n is 0. Numba only (``_exp_parts``)."""
    raise NotImplementedError("exp_parts runs inside Numba kernels")


def _expm1_series(t, degree):
    """exp(r) - 1 for |r| <= ln 2 / 2 by Horner's rule, in dtype ``t`` (degree 7 or 13)."""
    c = [t(1 / math.factorial(k)) for k in range(1, degree + 1)]

    if degree == 7:
        c1, c2, c3, c4, c5, c6, c7 = c

        def expm1_series(r):
            return r * (c1 + r * (c2 + r * (c3 + r * (c4 + r * (c5 + r * (c6 + r * c7))))))
    else:
        c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13 = c

        def expm1_series(r):
            inner = c8 + r * (c9 + r * (c10 + r * (c11 + r * (c12 + r * c13))))
            return r * (c1 + r * (c2 + r * (c3 + r * (c4 + r * (c5 + r * (c6 + r * (
                c7 + r * inner)))))))

    return njit(inline="always", fastmath=FASTMATH)(expm1_series)


def _series(dtype, low, log2e, ln2_high, ln2_low, degree):
    """exp_parts for one dtype: its constants, and exp(r) - 1 by Horner's rule."""
    t = dtype
    low, log2e, ln2_high, ln2_low, half = t(low), t(log2e), t(ln2_high), t(ln2_low), t(0.5)
    series = _expm1_series(t, degree)

    def impl(y):
        v = max(y, low)
        n = np.floor(v * log2e + half)
        return _pow2(n), series((v - n * ln2_high) - n * ln2_low)

    return impl


@overload(exp_parts, inline="always", fastmath=FASTMATH)
def _exp_parts(y):
    if y == types.float32:  # ln 2 split with 9 bits in its high part: n * high is exact
        return _series(np.float32, -88.3, 1.4426950408889634, 0.693359375, -2.12194440e-4, 7)
    if y == types.float64:
        return _series(np.float64, -709.0, 1.4426950408889634, 6.93147180369123816490e-01,
                       1.90821492927058770002e-10, 13)
    return None


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def sigmoid(x):
    """1 / (1 + exp(-x)); exp only ever sees -|x|. NaN stays NaN."""
    p, q = exp_parts(-x if x > F0 else x)
    e = p + p * q  # exp(-|x|)
    s = F1 / (F1 + e)
    y = s if x >= F0 else e * s
    return x if x != x else y


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def tanh(x):
    """tanh(x) = sign(x) * m / (m + 2), m = expm1(2|x|). NaN stays NaN."""
    a = min(x if x > F0 else -x, TANH_LIMIT)
    p, q = exp_parts(a + a)
    m = p * q + (p - F1)
    t = m / (m + F2)
    y = t if x >= F0 else -t
    return x if x != x else y


# GeluTanh(x) = x * sigmoid(u), u = x (G1 + G3 x^2) = 2 sqrt(2/pi) (x + 0.044715 x^3)
G1 = 2.0 * math.sqrt(2.0 / math.pi)
G3 = G1 * 0.044715
_EXPM1_32 = _expm1_series(np.float32, 7)
_LOW, _LOG2E, _LN2 = -88.3, 1.4426950408889634, math.log(2.0)


def gelu_tanh(x):
    """x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) = x * sigmoid(u), u as above: no
    1 + tanh to cancel for negative x. Numba only (``_gelu_tanh``)."""
    raise NotImplementedError("gelu_tanh runs inside Numba kernels")


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def _gelu_tanh32(x):
    """float32: u and exp's reduction n = round(-|u| / ln 2), r = -|u| - n ln 2 in float64
    (x^3 cannot overflow there; u rounded to float32 would be off by |u| ulps, which
    exp(-|u|) multiplies); the series of r and the rest in float32. NaN stays NaN,
    +inf stays +inf, -inf gives NaN (-inf * 0, as onnxruntime and the reference)."""
    d = np.float64(x)
    u = d * (G1 + G3 * d * d)
    a = max(-abs(u), _LOW)
    n = np.floor(a * _LOG2E + 0.5)
    p = _pow2(np.float32(n))
    e = p + p * _EXPM1_32(np.float32(a - n * _LN2))  # exp(-|u|)
    y = (x if u >= 0.0 else x * e) / (F1 + e)  # x / (1 + exp(-u)), exp never overflows
    return x if x != x else y


@overload(gelu_tanh, inline="always", fastmath=FASTMATH)
def _gelu_tanh(x):
    if x == types.float32:
        return lambda x: _gelu_tanh32(x)
    if x == types.float64:  # u in float64 as it is: within |u| float64 ulps
        def impl(x):
            u = x * (G1 + G3 * x * x)
            return x * sigmoid(u)
        return impl
    return None
