"""Elementwise activations on the ``cpu`` executor: one Numba pass into a reused buffer.

    Y[i] = f(X[i])    f: Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Gelu, Erf

The formulas are ``onnxkit.kernels.cpu._math.activate``; Gelu and Erf use its float32
rational erf, so they run here for float32 only (float64 and the rest: reference).
https://onnx.ai/onnx/operators/onnx__Relu.html  https://onnx.ai/onnx/operators/onnx__Clip.html
https://onnx.ai/onnx/operators/onnx__Gelu.html  https://onnx.ai/onnx/operators/onnx__Erf.html
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._math import (CLIP, ERF, FASTMATH, GELU, HARD_SIGMOID, HARD_SWISH,
                                       LEAKY_RELU, RELU, activate)
from onnxkit.ops.fused.gelu import gelu as reference_onnxkit_gelu
from onnxkit.ops.math import clip as ref_clip
from onnxkit.ops.math import gelu as ref_gelu
from onnxkit.ops.math import relu as ref_relu
from onnxkit.ops.math import sigmoid as ref_sigmoid
from onnxkit.ops.math import unary as ref_unary
from onnxkit.ops.registry import op

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
FLOAT32 = (np.dtype(np.float32),)


@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def apply_flat(x, code, p0, p1, y):
    """y[i] = activate(x[i]); one loop per code so each one vectorizes."""
    n = x.size
    if code == RELU:
        for i in range(n):
            y[i] = activate(x[i], RELU, p0, p1)
    elif code == CLIP:
        for i in range(n):
            y[i] = activate(x[i], CLIP, p0, p1)
    elif code == LEAKY_RELU:
        for i in range(n):
            y[i] = activate(x[i], LEAKY_RELU, p0, p1)
    elif code == HARD_SIGMOID:
        for i in range(n):
            y[i] = activate(x[i], HARD_SIGMOID, p0, p1)
    elif code == HARD_SWISH:
        for i in range(n):
            y[i] = activate(x[i], HARD_SWISH, p0, p1)
    elif code == GELU:
        for i in range(n):
            y[i] = activate(x[i], GELU, p0, p1)
    elif code == ERF:
        for i in range(n):
            y[i] = activate(x[i], ERF, p0, p1)


def elementwise(X, code, p0=0.0, p1=0.0, dtypes=FLOATS):
    """f(X) into a reused buffer, or None when X's dtype is left to the reference."""
    if not isinstance(X, np.ndarray) or X.dtype not in dtypes or X.size == 0:
        return None
    Y = empty(X.shape, X.dtype)
    t = X.dtype.type
    apply_flat(read_only(np.ascontiguousarray(X).reshape(-1)), code, t(p0), t(p1), Y.reshape(-1))
    return Y


def _or(Y, fallback):
    return fallback() if Y is None else Y


@op("Relu", 6, 13, 14, registry=CPU)
def relu(X):
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
    return _or(elementwise(X, HARD_SIGMOID, alpha, beta, FLOAT32),
               lambda: ref_sigmoid.hard_sigmoid(X, alpha=alpha, beta=beta))


@op("HardSwish", 14, 22, registry=CPU)
def hard_swish(X):
    return _or(elementwise(X, HARD_SWISH, dtypes=FLOAT32), lambda: ref_sigmoid.hard_swish(X))


@op("Gelu", 20, registry=CPU)
def gelu(X, *, approximate="none"):
    Y = elementwise(X, GELU, dtypes=FLOAT32) if approximate == "none" else None
    return _or(Y, lambda: ref_gelu.gelu(X, approximate=approximate))


@op("Gelu", 1, domain="onnxkit", registry=CPU)
def onnxkit_gelu(X, *, approximate="none"):
    Y = elementwise(X, GELU, dtypes=FLOAT32) if approximate == "none" else None
    return _or(Y, lambda: reference_onnxkit_gelu(X, approximate=approximate))


@op("Erf", 9, 13, registry=CPU)
def erf(X):
    return _or(elementwise(X, ERF, dtypes=FLOAT32), lambda: ref_unary.erf(X))
