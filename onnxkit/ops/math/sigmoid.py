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

from onnxkit.errors import KernelInputError
from onnxkit.ops.math._common import as_dtype, precise
from onnxkit.ops.registry import op


def logistic(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) without overflow: exp only ever sees -|x|."""
    e = np.exp(-np.abs(x))
    return as_dtype(np.where(x >= 0, 1 / (1 + e), e / (1 + e)), x.dtype)


@op("Sigmoid", 1, 6, 13)
def sigmoid(X, *, consumed_inputs=None):
    return as_dtype(logistic(precise(X)), X.dtype)


@op("HardSigmoid", 1, 6, 22)
def hard_sigmoid(X, *, alpha=0.2, beta=0.5, consumed_inputs=None):
    x = precise(X)
    return as_dtype(np.clip(alpha * x + beta, 0, 1), X.dtype)


@op("HardSwish", 14, 22)
def hard_swish(X):
    x = precise(X)
    return as_dtype(x * np.clip(x / 6 + 0.5, 0, 1), X.dtype)


@op("Swish", 24)
def swish(X, *, alpha=1.0):
    x = precise(X)
    return as_dtype(x * logistic(alpha * x), X.dtype)


@op("SwiGLU", 28)
def swiglu(A, B, *, alpha=1.0):
    if A.shape != B.shape:
        raise KernelInputError(f"SwiGLU: A {list(A.shape)} and B {list(B.shape)} must have the "
                               "same shape")
    a = precise(A)
    return as_dtype(a * logistic(alpha * a) * precise(B), A.dtype)
