"""Sigmoid and the activations built on it, elementwise in the input's dtype.

Sigmoid:     y = 1 / (1 + exp(-x))
HardSigmoid: y = max(0, min(1, alpha * x + beta))
HardSwish:   y = x * max(0, min(1, x / 6 + 1 / 2))
Swish:       y = x * Sigmoid(alpha * x)
SwiGLU:      y = Swish_alpha(A) * B   (A and B of one shape, no broadcasting)
https://onnx.ai/onnx/operators/onnx__Sigmoid.html  https://onnx.ai/onnx/operators/onnx__HardSigmoid.html
https://onnx.ai/onnx/operators/onnx__HardSwish.html  https://onnx.ai/onnx/operators/onnx__Swish.html
https://onnx.ai/onnx/operators/onnx__SwiGLU.html
"""

import numpy as np

from onnxkit.ops.math._common import precise
from onnxkit.ops.registry import op


def logistic(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


@op("Sigmoid", 1, 6, 13)
def sigmoid(X, *, consumed_inputs=None):
    return logistic(precise(X)).astype(X.dtype, copy=False)


@op("HardSigmoid", 1, 6, 22)
def hard_sigmoid(X, *, alpha=0.2, beta=0.5, consumed_inputs=None):
    x = precise(X)
    return np.clip(alpha * x + beta, 0, 1).astype(X.dtype, copy=False)


@op("HardSwish", 14, 22)
def hard_swish(X):
    x = precise(X)
    return (x * np.clip(x / 6 + 0.5, 0, 1)).astype(X.dtype, copy=False)


@op("Swish", 24)
def swish(X, *, alpha=1.0):
    x = precise(X)
    return (x * logistic(alpha * x)).astype(X.dtype, copy=False)


@op("SwiGLU", 28)
def swiglu(A, B, *, alpha=1.0):
    if A.shape != B.shape:
        raise ValueError(f"A {list(A.shape)} and B {list(B.shape)} must have the same shape")
    a = precise(A)
    return (a * logistic(alpha * a) * precise(B)).astype(A.dtype, copy=False)
