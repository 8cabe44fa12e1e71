"""The activation formulas, written once for the cpu and the cuda kernels.

Each formula is plain Python of ``(v, p0, p1)``: the element and up to two float
parameters (alpha, beta, min, max). ``formulas`` builds the set from what differs between
the backends, and only that:

- the constants, through ``number`` (cpu: ``np.float32``, so float32 kernels stay float32;
  cuda: the literals as written, so integers stay integers and floats compute in float64);
- the transcendental primitives ``exp``, ``sigmoid``, ``tanh`` and ``erf`` (cpu: the
  vectorizable ones of ``kernels.cpu._math``; cuda: ``math``'s and one device function).

Numba compiles the closures it returns (``njit``, ``cuda.jit(device=True)``: free
variables are frozen as constants), and the cuda simulator runs them as Python.
NaN stays NaN in every formula, as ONNX says (Relu(NaN) = NaN): comparisons with NaN are
false, so each piecewise formula returns its input, or a product of it, for NaN.

``ACTIVATIONS`` maps the ``activation`` attribute of the onnxkit fused operators (see
``onnxkit.ops.fused._common``) to a formula and the defaults of its two parameters;
``activation_table`` gives it with one backend's formulas.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple


class Formulas(NamedTuple):
    """One backend's activation formulas, each ``f(v, p0, p1)``."""

    identity: Callable
    relu: Callable
    leaky_relu: Callable
    clip: Callable
    hard_sigmoid: Callable
    hard_swish: Callable
    elu: Callable
    sigmoid: Callable
    tanh: Callable
    erf: Callable
    swish: Callable
    gelu: Callable
    gelu_tanh: Callable


def as_written(c):
    """The constant itself: Python's int or float."""
    return c


def formulas(*, exp, sigmoid, tanh, erf, number=as_written) -> Formulas:
    """The formulas with the constants ``number(c)`` and the backend's primitives (each a
    function of one value)."""
    zero, one, six, half = number(0), number(1), number(6), number(0.5)
    inv_sqrt2 = number(1.0 / math.sqrt(2.0))
    sqrt_2_over_pi = number(math.sqrt(2.0 / math.pi))
    cubic = number(0.044715)

    def identity(v, p0, p1):
        return v

    def relu(v, p0, p1):
        """max(v, 0)."""
        return zero if v < zero else v

    def leaky_relu(v, p0, p1):
        """v, or alpha (p0) * v below 0."""
        return v if v >= zero else v * p0

    def clip(v, p0, p1):
        """min(max(v, p0), p1): with p0 > p1 everything becomes p1."""
        low = p0 if v < p0 else v
        return p1 if low > p1 else low

    def hard_sigmoid(v, p0, p1):
        """max(0, min(1, alpha (p0) * v + beta (p1)))."""
        h = p0 * v + p1
        low = zero if h < zero else h
        return one if low > one else low

    def hard_swish(v, p0, p1):
        """v * max(0, min(1, v / 6 + 1/2))."""
        h = v / six + half
        low = zero if h < zero else h
        return v * (one if low > one else low)

    def elu(v, p0, p1):
        """v, or alpha (p0) * (exp(v) - 1) below 0 (exp never sees a positive v)."""
        return v if v >= zero else p0 * (exp(v) - one)

    def sigmoid_(v, p0, p1):
        return sigmoid(v)

    def tanh_(v, p0, p1):
        return tanh(v)

    def erf_(v, p0, p1):
        return erf(v)

    def swish(v, p0, p1):
        """v * sigmoid(alpha (p0) * v) (SiLU for alpha = 1)."""
        return v * sigmoid(p0 * v)

    def gelu(v, p0, p1):
        """v/2 (1 + erf(v / sqrt 2))."""
        return half * v * (one + erf(v * inv_sqrt2))

    def gelu_tanh(v, p0, p1):
        """v/2 (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))."""
        return half * v * (one + tanh(sqrt_2_over_pi * (v + cubic * v * v * v)))

    return Formulas(identity, relu, leaky_relu, clip, hard_sigmoid, hard_swish, elu,
                    sigmoid_, tanh_, erf_, swish, gelu, gelu_tanh)


# activation -> (the name of its formula in ``Formulas``, default p0, default p1)
ACTIVATIONS = {
    "": ("identity", 0.0, 0.0),
    "Relu": ("relu", 0.0, 0.0),
    "LeakyRelu": ("leaky_relu", 0.01, 0.0),
    "Sigmoid": ("sigmoid", 0.0, 0.0),
    "Tanh": ("tanh", 0.0, 0.0),
    "Clip": ("clip", -math.inf, math.inf),
    "HardSigmoid": ("hard_sigmoid", 0.2, 0.5),
    "HardSwish": ("hard_swish", 0.0, 0.0),
    "Swish": ("swish", 1.0, 0.0),
    "Elu": ("elu", 1.0, 0.0),
    "Gelu": ("gelu", 0.0, 0.0),
    "GeluTanh": ("gelu_tanh", 0.0, 0.0),
}


def activation_table(f: Formulas) -> dict:
    """activation -> (formula, default p0, default p1), with the formulas ``f``."""
    return {name: (getattr(f, field), p0, p1) for name, (field, p0, p1) in ACTIVATIONS.items()}
