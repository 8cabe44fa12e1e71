"""Scalar math the Numba kernels inline: activations by code, and a vectorizable erf.

Numba has no SIMD ``math.erf`` (it calls libm once per element), so ``erf`` here is a
rational function fitted to erf on [0, 4] (odd numerator, even denominator in t = x^2,
absolute error below 4e-7 in float32); beyond 4, erf(x) is +-1 in float32.

    erf(x) = x * P(t) / Q(t),  t = min(x^2, 16)

Sigmoid, Tanh and Gelu's tanh approximation (``gelu_tanh``: x * sigmoid(u), nothing
cancels) are built on a vectorizable exp, in ``_exp``; this module re-exports them.

Activations (the ``activation`` attribute of the onnxkit fused operators, see
``onnxkit.ops.fused._common``) are passed to kernels as a code and two float
parameters. A code is a one-field named tuple whose class names the activation
(``Relu(1)``): its Numba type differs per activation, so ``activate`` picks the formula
while compiling, and a kernel is compiled only for the activations it is called with,
each specialization holding one formula (not a switch over all of them at every call
site). The formulas are those shared with the cuda kernels
(``onnxkit.kernels.activation_formulas``), on float32 constants and the primitives here
and in ``_exp``, but for GeluTanh: the shared one (0.5 x (1 + tanh ...), float64 on
cuda) loses every digit to 1 + tanh ~ 0 in float32, so the cpu's is ``gelu_tanh``.
``activation_code`` maps names to the codes a kernel applies inside its own loops
(``finish``); ``separate_code`` to those applied in one pass of their own after it
(Sigmoid, Tanh, Swish: ``activations.activate_in_place``); both return None for the
ones left to the reference (Elu).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from onnxkit.kernels.activation_formulas import formulas
# exp and what is built on it, used here and re-exported for the kernels
from onnxkit.kernels.cpu._exp import (F1, FASTMATH, exp_parts, gelu_tanh,  # noqa: F401
                                      sigmoid, tanh)


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
F4 = np.float32(4)




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
def rms_inv(src, eps):
    """1 / sqrt(mean(src^2) + eps) of the 1-D ``src``, the sum in float64 (any order):
    RMSNormalization's rows."""
    squares = 0.0
    for i in range(src.size):
        v = float(src[i])
        squares += v * v
    return 1.0 / math.sqrt(squares / src.size + eps)


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
