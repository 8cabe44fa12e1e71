"""Scalar formulas the elementwise kernels apply, one plain function per operator.

Every unary formula takes ``(x, p0, p1)``: the element and up to two float attributes
(alpha, beta, min, max), so one kernel template serves them all. They are compiled as
CUDA device functions by ``onnxkit.kernels.indexing.for_cuda``; under the simulator they
run as Python on numpy scalars, so domain edges (log of 0, sqrt of -1, exp overflow)
are spelled out rather than left to ``math`` (which raises in Python, not in CUDA).

The activations (identity, relu, clip, sigmoid, gelu, ...) are the formulas shared with
the cpu kernels (``onnxkit.kernels.activation_formulas``), built here on ``math``'s exp,
tanh and erf and an overflow-free sigmoid. ``ACTIVATIONS`` maps the ``activation``
attribute of the onnxkit fused operators (see ``onnxkit.ops.fused._common``) to a
formula and the defaults of its two parameters.
"""

from __future__ import annotations

import math

from onnxkit.kernels import activation_formulas
from onnxkit.kernels.indexing import for_cuda

INF = math.inf
NAN = math.nan
_EXACT = 4503599627370496.0  # 2**52: every float this large is an integer


def _sigmoid(x):
    """1 / (1 + exp(-x)), exp overflowing for neither sign."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


FORMULAS = activation_formulas.formulas(exp=math.exp, sigmoid=for_cuda(_sigmoid),
                                        tanh=math.tanh, erf=math.erf)
(identity, relu, leaky_relu, clip, hard_sigmoid, hard_swish, elu, sigmoid, tanh, erf, swish,
 gelu, gelu_tanh) = FORMULAS
# name -> (formula, default p0, default p1); the onnxkit fused operators' epilogues
ACTIVATIONS = activation_formulas.activation_table(FORMULAS)


def nonzero(x, p0, p1):
    """x != 0 (NaN counts as true, as numpy's astype(bool) says)."""
    return x != 0


def divide_by(x, p0, p1):
    return x / p0


def softplus(x, p0, p1):
    """log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|))."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def neg(x, p0, p1):
    return -x


def abs_(x, p0, p1):
    return -x if x < 0 else x


def exp(x, p0, p1):
    if x > 709.0:
        return INF
    return math.exp(x)


def log(x, p0, p1):
    if x < 0 or x != x:
        return NAN
    if x == 0:
        return -INF
    return math.log(x)


def sqrt(x, p0, p1):
    if x < 0 or x != x:
        return NAN
    return math.sqrt(x)


def reciprocal(x, p0, p1):
    if x == 0:
        return INF if math.copysign(1.0, x) > 0 else -INF
    return 1.0 / x


def floor(x, p0, p1):
    if x != x or abs(x) >= _EXACT:
        return x
    return math.floor(x)


def ceil(x, p0, p1):
    if x != x or abs(x) >= _EXACT:
        return x
    return math.ceil(x)


def sin(x, p0, p1):
    return math.sin(x) if abs(x) != INF else NAN


def cos(x, p0, p1):
    return math.cos(x) if abs(x) != INF else NAN


def selu(x, p0, p1):
    """gamma (p1) * (x if x > 0 else alpha (p0) * (exp(x) - 1))."""
    return p1 * x if x > 0 else p1 * (p0 * math.expm1(x))


def sign(x, p0, p1):
    """-1, 0 or 1 by the sign of x; NaN stays NaN."""
    if x > 0:
        return 1
    if x < 0:
        return -1
    return x  # 0 (or NaN)


def shrink(x, p0, p1):
    """x + bias (p1) below -lambd (p0), x - bias above lambd, else 0."""
    if x < -p0:
        return x + p1
    if x > p0:
        return x - p1
    return 0


def logical_not(x, p0, p1):
    return not x


# ---------------------------------------------------------------- binary formulas


def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    """Float division (a / 0 is +-inf or NaN, as IEEE says)."""
    if b == 0:
        if a == 0 or a != a:
            return NAN
        return INF if (a > 0) == (math.copysign(1.0, b) > 0) else -INF
    return a / b


def int_div(a, b):
    """Integer division truncating toward zero, as C does; a / 0 gives 0 (numpy's choice)."""
    if b == 0:
        return 0
    q = a // b  # floors
    if q < 0 and q * b != a:
        q += 1
    return q


def power(a, b):
    if a == 0 and b < 0:
        return INF
    if a < 0 and b != math.floor(b):
        return NAN
    return math.pow(a, b)


def maximum(a, b):
    """Larger of a and b; NaN wins, like numpy.maximum."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a >= b else b


def minimum(a, b):
    if a != a:
        return a
    if b != b:
        return b
    return a if a <= b else b


def equal(a, b):
    return a == b


def greater(a, b):
    return a > b


def greater_or_equal(a, b):
    return a >= b


def less(a, b):
    return a < b


def less_or_equal(a, b):
    return a <= b


def logical_and(a, b):
    return a and b


def logical_or(a, b):
    return a or b


def logical_xor(a, b):
    return a != b


def prelu(x, slope):
    return x if x >= 0 else x * slope


def activation(name: str, params) -> tuple:
    """``(formula, p0, p1)`` for an ``activation`` attribute and its ``activation_params``."""
    from onnxkit.kernels.cuda._device import HostFallback

    entry = ACTIVATIONS.get(name or "")
    if entry is None:
        raise HostFallback(f"activation {name!r} has no cuda formula")
    fn, p0, p1 = entry
    params = [float(p) for p in (params or ())]
    if len(params) > 2:
        raise HostFallback(f"activation {name!r} got {len(params)} parameters")
    if params:
        p0 = params[0]
    if len(params) > 1:
        p1 = params[1]
    return fn, p0, p1
