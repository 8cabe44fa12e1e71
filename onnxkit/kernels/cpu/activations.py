"""Elementwise activations on the ``cpu`` executor: one Numba pass into a reused buffer.

    Y[i] = f(X[i])    f: Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Gelu (both
                         approximations), Erf, Sigmoid, Tanh, Swish

The formulas are ``onnxkit.kernels.cpu._math.activate`` (Gelu and Erf: its float32
rational erf; Sigmoid, Tanh, Swish and tanh-Gelu: its vectorizable exp), for float32
(``COMPILED``; other dtypes run the reference kernel). ``activate_in_place`` applies
Sigmoid, Tanh and Swish after a fused kernel (``_math.separate_code``). The range is
shared among the threads (``_threads.run_parts``).
https://onnx.ai/onnx/operators/onnx__Relu.html  https://onnx.ai/onnx/operators/onnx__Clip.html
https://onnx.ai/onnx/operators/onnx__Gelu.html  https://onnx.ai/onnx/operators/onnx__Erf.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._math import (CLIP, ERF, FASTMATH, GELU, GELU_TANH, HARD_SIGMOID,
                                       HARD_SWISH, LEAKY_RELU, RELU, SIGMOID, SWISH, TANH,
                                       activate)
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import min_parallel, run_parts
from onnxkit.ops.fused.gelu import gelu as reference_onnxkit_gelu
from onnxkit.ops.math import clip as ref_clip
from onnxkit.ops.math import gelu as ref_gelu
from onnxkit.ops.math import relu as ref_relu
from onnxkit.ops.math import sigmoid as ref_sigmoid
from onnxkit.ops.math import trig as ref_trig
from onnxkit.ops.math import unary as ref_unary
from onnxkit.ops.registry import op


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _apply_range(x, code, p0, p1, y, lo, hi):
    """y[i] = activate(x[i]) for lo <= i < hi; compiled per activation (its code's class),
    one loop that vectorizes (over slices: Numba's wraparound check on an index from
    ``range(lo, hi)``, which might be negative, kept the loop scalar; ``docs/cpu.md``)."""
    x, y = x[lo:hi], y[lo:hi]
    for i in range(x.size):
        y[i] = activate(x[i], code, p0, p1)


def apply_flat(x, code, p0, p1, y):
    """y[i] = activate(x[i]), the range shared among the threads."""
    run_parts(_apply_range, x.size, x.size, x, code, p0, p1, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _in_place_range(y, code, p0, p1, lo, hi):
    """y[i] = f(y[i]) for lo <= i < hi, f one of ``_math.separate_code``'s. One array, not
    ``_apply_range(y, ..., y)``: with two that may overlap, LLVM's runtime overlap check
    sent the loop to its scalar version (``docs/cpu.md``)."""
    y = y[lo:hi]
    for i in range(y.size):
        y[i] = activate(y[i], code, p0, p1)


def in_place_flat(y, code, p0, p1):
    """y[i] = f(y[i]), the range shared among the threads."""
    run_parts(_in_place_range, y.size, y.size, y, code, p0, p1)


def elementwise(X, code, p0=0.0, p1=0.0):
    """f(X) into a reused buffer, or None when X's dtype is left to the reference."""
    if not isinstance(X, np.ndarray) or X.dtype not in COMPILED or X.size == 0:
        return None
    Y = empty(X.shape, X.dtype)
    t = X.dtype.type
    apply_flat(read_only(np.ascontiguousarray(X).reshape(-1)), code, t(p0), t(p1), Y.reshape(-1))
    return Y


def activate_in_place(Y, code) -> None:
    """Y = f(Y), in place, for a (code, p0, p1) of ``_math.separate_code``."""
    act, p0, p1 = code
    t = Y.dtype.type
    if Y.flags.c_contiguous:
        in_place_flat(Y.reshape(-1), act, t(p0), t(p1))
        return
    work = np.ascontiguousarray(Y)  # a strided view: on a copy, written back
    in_place_flat(work.reshape(-1), act, t(p0), t(p1))
    Y[...] = work


def _or(Y, fallback):
    return fall_back(fallback) if Y is None else Y


#: below this many values (and the parallel threshold) Relu is numpy's maximum: the
#: Numba call costs more than the work
TINY = 1024
_ZERO = {dtype: np.zeros((), dtype) for dtype in COMPILED}


@op("Relu", 6, 13, 14, registry=CPU)
def relu(X):
    zero = _ZERO.get(X.dtype)
    if zero is not None and 0 < X.size < TINY and X.size < min_parallel():
        return np.maximum(X, zero)  # NaN stays NaN, as ``activate`` keeps it
    return _or(elementwise(X, RELU), lambda: ref_relu.relu(X))


@op("LeakyRelu", 6, 16, registry=CPU)
def leaky_relu(X, *, alpha=0.01):
    return _or(elementwise(X, LEAKY_RELU, alpha), lambda: ref_relu.leaky_relu(X, alpha=alpha))


@op("Clip", 11, 12, 13, registry=CPU)
def clip(input_, min_=None, max_=None):
    bounds_ok = all(b is None or (isinstance(b, np.ndarray) and b.size == 1
                                  and b.dtype == input_.dtype) for b in (min_, max_))
    low = -np.inf if min_ is None else float(min_.reshape(()))
    high = np.inf if max_ is None else float(max_.reshape(()))
    Y = elementwise(input_, CLIP, low, high) if bounds_ok else None
    return _or(Y, lambda: ref_clip.clip(input_, min_, max_))


@op("Clip", 6, registry=CPU)
def clip_attributes(input_, *, min=-3.4028234663852886e38, max=3.4028234663852886e38):  # noqa: A002
    return _or(elementwise(input_, CLIP, min, max),
               lambda: ref_clip.clip_attributes(input_, min=min, max=max))


@op("HardSigmoid", 6, 22, registry=CPU)
def hard_sigmoid(X, *, alpha=0.2, beta=0.5):
    return _or(elementwise(X, HARD_SIGMOID, alpha, beta),
               lambda: ref_sigmoid.hard_sigmoid(X, alpha=alpha, beta=beta))


@op("HardSwish", 14, 22, registry=CPU)
def hard_swish(X):
    return _or(elementwise(X, HARD_SWISH), lambda: ref_sigmoid.hard_swish(X))


#: Gelu's ``approximate`` -> its code (another value: the reference kernel's error)
GELU_CODES = {"none": GELU, "tanh": GELU_TANH}


@op("Gelu", 20, registry=CPU)
def gelu(X, *, approximate="none"):
    code = GELU_CODES.get(approximate)
    Y = None if code is None else elementwise(X, code)
    return _or(Y, lambda: ref_gelu.gelu(X, approximate=approximate))


@op("Gelu", 1, domain="onnxkit", registry=CPU)
def onnxkit_gelu(X, *, approximate="none"):
    code = GELU_CODES.get(approximate)
    Y = None if code is None else elementwise(X, code)
    return _or(Y, lambda: reference_onnxkit_gelu(X, approximate=approximate))


@op("Erf", 9, 13, registry=CPU)
def erf(X):
    return _or(elementwise(X, ERF), lambda: ref_unary.erf(X))


@op("Sigmoid", 6, 13, registry=CPU)
def sigmoid(X):
    return _or(elementwise(X, SIGMOID), lambda: ref_sigmoid.sigmoid(X))


@op("Tanh", 6, 13, registry=CPU)
def tanh(X):
    return _or(elementwise(X, TANH), lambda: ref_trig.tanh(X))


@op("Swish", 24, registry=CPU)
def swish(X, *, alpha=1.0):
    return _or(elementwise(X, SWISH, alpha), lambda: ref_sigmoid.swish(X, alpha=alpha))
