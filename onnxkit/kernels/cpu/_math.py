"""Scalar math the Numba kernels inline: activations by code, and a vectorizable erf.

Numba has no SIMD ``math.erf`` (it calls libm once per element), so ``erf`` here is a
rational function fitted to erf on [0, 4] (odd numerator, even denominator in t = x^2,
absolute error below 4e-7 in float32); beyond 4, erf(x) is +-1 in float32.

    erf(x) = x * P(t) / Q(t),  t = min(x^2, 16)

Numba has no SIMD ``math.exp`` either. ``exp_parts`` splits exp(y) = 2**n * (1 + q):
n = round(y / ln 2), r = y - n ln 2 (ln 2 in two parts, so r keeps its low bits),
q = exp(r) - 1 by its Taylor series (|r| <= ln 2 / 2: degree 7 for float32, 13 for
float64), and 2**n is built by setting the exponent bits (``_pow2``, a bit cast). Every
step is plain arithmetic, so a loop over it vectorizes. Sigmoid and Tanh use it:

    sigmoid(x) = 1 / (1 + e)  (x >= 0),  e / (1 + e)  (x < 0),  e = exp(-|x|)
    tanh(x)    = sign(x) * m / (m + 2),  m = exp(2|x|) - 1 = 2**n * q + (2**n - 1)

(m from q, not from exp - 1: no cancellation for small x). Both within 3 float32 ulps
of the float64 functions, float64 within 20 ulps (``tests/test_cpu_activations.py``).
Gelu's tanh approximation is rewritten so that nothing cancels (1 + tanh(z) =
2 sigmoid(2z)), its exponent reduced in float64 (``gelu_tanh``):

    gelu_tanh(x) = x * sigmoid(u),  u = x (2 sqrt(2/pi) + 2 sqrt(2/pi) 0.044715 x^2)

Activations (the ``activation`` attribute of the onnxkit fused operators, see
``onnxkit.ops.fused._common``) are passed to kernels as a code and two float
parameters. A code is a one-field named tuple whose class names the activation
(``Relu(1)``): its Numba type differs per activation, so ``activate`` picks the formula
while compiling, and a kernel is compiled only for the activations it is called with,
each specialization holding one formula (not a switch over all of them at every call
site). The formulas are those shared with the cuda kernels
(``onnxkit.kernels.activation_formulas``), on float32 constants and the primitives here,
but for GeluTanh: the shared one (0.5 x (1 + tanh ...), in float64 on cuda) loses every
digit to 1 + tanh ~ 0 in float32, so the cpu's is ``gelu_tanh``.
``activation_code`` maps names to the codes a kernel applies inside its own loops
(``finish``); ``separate_code`` to those applied in one pass of their own after it
(Sigmoid, Tanh, Swish: ``activations.activate_in_place``); both return None for the
ones left to the reference (Elu).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from onnxkit.kernels.activation_formulas import formulas

# fast-math without nnan/ninf: reductions may reassociate, NaN and inf stay honest
FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}


# The activation codes: one class per activation, so that each is a Numba type of its own.
class NoActivation(NamedTuple):
    code: int


class Relu(NamedTuple):
    code: int


class Clip(NamedTuple):
    code: int


class LeakyRelu(NamedTuple):
    code: int


class HardSigmoid(NamedTuple):
    code: int


class HardSwish(NamedTuple):
    code: int


class Gelu(NamedTuple):
    code: int


class Erf(NamedTuple):
    code: int


class Sigmoid(NamedTuple):
    code: int


class Tanh(NamedTuple):
    code: int


class Swish(NamedTuple):
    code: int


class GeluTanh(NamedTuple):
    code: int


NONE, RELU, CLIP, LEAKY_RELU = NoActivation(0), Relu(1), Clip(2), LeakyRelu(3)
HARD_SIGMOID, HARD_SWISH, GELU, ERF = HardSigmoid(4), HardSwish(5), Gelu(6), Erf(7)
GELU_TANH = GeluTanh(11)
# applied in a pass of their own after a fused kernel (``separate_code``)
SIGMOID, TANH, SWISH = Sigmoid(8), Tanh(9), Swish(10)

_ERF_P = (1.1283791792444762, 0.18471938419709039, 0.05436675285234385,
          0.00384440027594924, 0.00038415619641478, 4.818248656796376e-06,
          -1.3858302861155739e-08)
_ERF_Q = (1.0, 0.4970368198545376, 0.11385927299238227, 0.015468011572308467,
          0.0013125799768338967, 6.437150660389838e-05)
P0, P1, P2, P3, P4, P5, P6 = (np.float32(c) for c in _ERF_P)
Q0, Q1, Q2, Q3, Q4, Q5 = (np.float32(c) for c in _ERF_Q)
F0, F1, F4 = np.float32(0), np.float32(1), np.float32(4)
F2 = np.float32(2)
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


@njit(fastmath=FASTMATH, error_model="numpy")
def erf(x):
    """erf(x) in the precision of x (NaN stays NaN); exactly +-1 from |x| = 4 on, where the
    fit gives 1 - 2**-24: Gelu's 1 + erf(x / sqrt 2) must reach 0 for large negative x."""
    c = x
    if c > F4:
        c = F4
    if c < -F4:
        c = -F4
    t = c * c
    p = P0 + t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * (P5 + t * P6)))))
    q = Q0 + t * (Q1 + t * (Q2 + t * (Q3 + t * (Q4 + t * Q5))))
    r = c * p / q
    if x >= F4:
        r = F1
    if x <= -F4:
        r = -F1
    return r


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
    s = F1 / (F1 + e)
    y = x * s if u >= 0.0 else x * (e * s)
    return x if x != x else y


@overload(gelu_tanh, inline="always", fastmath=FASTMATH)
def _gelu_tanh(x):
    if x == types.float32:
        return lambda x: _gelu_tanh32(x)
    if x == types.float64:
        def impl(x):
            u = x * (G1 + G3 * x * x)
            return x * sigmoid(u)
        return impl
    return None


def activate(v, code, p0, p1):
    """One value through the activation ``code`` (see the module docstring); the formula
    is chosen by the code's class when the kernel compiles. Numba only."""
    raise NotImplementedError("activate runs inside Numba kernels")


# the shared formulas (``onnxkit.kernels.activation_formulas``) on float32 constants and the
# vectorizable primitives above; exp (Elu's, no code here) is math's
FORMULAS = formulas(number=np.float32, exp=math.exp, sigmoid=sigmoid, tanh=tanh, erf=erf)
_FORMULA_OF = {NoActivation: FORMULAS.identity, Relu: FORMULAS.relu, Clip: FORMULAS.clip,
               LeakyRelu: FORMULAS.leaky_relu, HardSigmoid: FORMULAS.hard_sigmoid,
               HardSwish: FORMULAS.hard_swish, Gelu: FORMULAS.gelu, Erf: FORMULAS.erf,
               Sigmoid: FORMULAS.sigmoid, Tanh: FORMULAS.tanh, Swish: FORMULAS.swish,
               GeluTanh: lambda v, p0, p1: gelu_tanh(v)}


def _formula(kind):
    """The scalar function of activation class ``kind`` (v, p0, p1) -> value."""
    return _FORMULA_OF.get(kind)


_SCALARS: dict = {}


@overload(activate, inline="always", fastmath=FASTMATH)
def _activate(v, code, p0, p1):
    kind = getattr(code, "instance_class", None)
    if kind not in _SCALARS:
        formula = _formula(kind)
        # not inlined in Numba's IR (LLVM inlines it): an IR-inlined formula with a
        # conditional made Numba warn (NumbaIRAssumptionWarning, "not in scope")
        _SCALARS[kind] = None if formula is None else njit(
            fastmath=FASTMATH, error_model="numpy")(formula)
    scalar = _SCALARS[kind]
    if scalar is None:
        return None

    def impl(v, code, p0, p1):
        return scalar(v, p0, p1)

    return impl


def applies(code):
    """Whether ``code`` changes values (False for ``NONE``): a constant when the kernel
    compiles, so a kernel skips its activation pass for ``NONE``. Numba only."""
    raise NotImplementedError("applies runs inside Numba kernels")


@overload(applies, inline="always")
def _applies(code):
    active = getattr(code, "instance_class", None) is not NoActivation
    return lambda code: active


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def mean_inv_std(src, eps):
    """(mean, 1 / sqrt(variance + eps)) of the 1-D ``src``: two passes, the sums in
    float64 (any order: they vectorize). LayerNormalization's rows, InstanceNormalization's
    planes."""
    d = src.size
    total = 0.0
    for i in range(d):
        total += src[i]
    mean = total / d
    squares = 0.0
    for i in range(d):
        c = src[i] - mean
        squares += c * c
    return mean, 1.0 / math.sqrt(squares / d + eps)


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def _add_bias(dst, b, z, with_z, code, p0, p1):
    n = dst.size
    if with_z:
        for i in range(n):
            dst[i] = activate(dst[i] + b + z[i], code, p0, p1)
    else:
        for i in range(n):
            dst[i] = activate(dst[i] + b, code, p0, p1)


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def _add_vector(dst, vec, z, with_z, code, p0, p1):
    n = dst.size
    if with_z:
        for i in range(n):
            dst[i] = activate(dst[i] + vec[i] + z[i], code, p0, p1)
    else:
        for i in range(n):
            dst[i] = activate(dst[i] + vec[i], code, p0, p1)


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def finish(dst, b, z, with_z, code, p0, p1):
    """In place: dst[i] = activate(dst[i] + b (+ z[i])), the epilogue of one row or plane.

    Pass ``with_z`` as a literal (``if has_z: finish(d, b, z_row, True, ...) else:
    finish(d, b, d, False, ...)``): a choice made at run time inside costs a kernel that
    calls it per plane or row on every one (timings: docs/cpu.md, Convolutions).
    """
    _add_bias(dst, b, z, with_z, code, p0, p1)


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def finish_rows_bias(y, bias, z, has_z, lo, hi, code, p0, p1):
    """The epilogue of the rows lo .. hi - 1 of the 2-D ``y``: row r gets
    ``bias[r % len(bias)]`` (Conv: a row per output channel) and z[r] when ``has_z``.
    The residual is switched on once, not once per row: short rows (a 7x7 plane, a 1x1
    one) cost ~3 ns each instead of ~30."""
    m = len(bias)
    if has_z:
        for r in range(lo, hi):
            _add_bias(y[r], bias[r % m], z[r], True, code, p0, p1)
    else:
        for r in range(lo, hi):
            _add_bias(y[r], bias[r % m], y[r], False, code, p0, p1)


@njit(inline="always", fastmath=FASTMATH, error_model="numpy")
def finish_rows_vector(y, vec, z, has_z, lo, hi, code, p0, p1):
    """``finish_rows_bias`` with ``vec`` added along every row (Gemm, MatMul: a bias
    per column)."""
    if has_z:
        for r in range(lo, hi):
            _add_vector(y[r], vec, z[r], True, code, p0, p1)
    else:
        for r in range(lo, hi):
            _add_vector(y[r], vec, y[r], False, code, p0, p1)


def activation_code(activation: str, params) -> tuple[int, float, float] | None:
    """(code, p0, p1) for a fused operator's activation, or None if not done here."""
    params = list(params or ())
    if not activation:
        return NONE, 0.0, 0.0
    if activation == "Relu" and not params:
        return RELU, 0.0, 0.0
    if activation == "Clip" and len(params) <= 2:
        low = params[0] if params else -math.inf
        high = params[1] if len(params) > 1 else math.inf
        return CLIP, float(low), float(high)
    if activation == "LeakyRelu" and len(params) == 1:
        return LEAKY_RELU, float(params[0]), 0.0
    if activation == "HardSigmoid" and len(params) == 2:
        return HARD_SIGMOID, float(params[0]), float(params[1])
    if activation == "HardSwish" and not params:
        return HARD_SWISH, 0.0, 0.0
    if activation == "Gelu" and not params:
        return GELU, 0.0, 0.0
    if activation == "GeluTanh" and not params:
        return GELU_TANH, 0.0, 0.0
    return None


def separate_code(activation: str, params) -> tuple[int, float, float] | None:
    """(code, p0, p1) for an activation applied in a pass of its own after the kernel
    (``activations.activate_in_place``), or None."""
    params = list(params or ())
    if activation == "Sigmoid" and not params:
        return SIGMOID, 0.0, 0.0
    if activation == "Tanh" and not params:
        return TANH, 0.0, 0.0
    if activation == "Swish" and len(params) == 1:
        return SWISH, float(params[0]), 0.0
    return None


def split_activation(activation: str, params):
    """(the code a kernel applies in its loops, or None for the reference; the code
    applied after it in a pass of its own, or None)."""
    code = activation_code(activation, params)
    if code is not None:
        return code, None
    after = separate_code(activation, params)
    return (None, None) if after is None else ((NONE, 0.0, 0.0), after)


@njit(cache=True, error_model="numpy", inline="always")
def add_product(gates, h, rT):
    """gates += h @ rT (rT [h.size, gates.size]), four rows of rT at a time: one load and
    one store of ``gates`` per four multiply-adds. The loops index slices from 0, so that
    Numba knows no index is negative and LLVM vectorizes them."""
    n, m = h.size, gates.size
    q = 0
    while q + 4 <= n:
        h0, h1, h2, h3 = h[q], h[q + 1], h[q + 2], h[q + 3]
        r0, r1, r2, r3 = rT[q], rT[q + 1], rT[q + 2], rT[q + 3]
        for j in range(m):
            gates[j] += (h0 * r0[j] + h1 * r1[j]) + (h2 * r2[j] + h3 * r3[j])
        q += 4
    while q < n:
        hq, r = h[q], rT[q]
        for j in range(m):
            gates[j] += hq * r[j]
        q += 1
