"""Softplus, Softsign and Mish, elementwise in X's dtype.

Softplus: y = ln(exp(x) + 1)
Softsign: y = x / (1 + |x|)
Mish:     y = x * tanh(Softplus(x))
https://onnx.ai/onnx/operators/onnx__Softplus.html  https://onnx.ai/onnx/operators/onnx__Softsign.html
https://onnx.ai/onnx/operators/onnx__Mish.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, precise
from onnxkit.ops.registry import op


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x, x.dtype.type(0))  # ln(exp(x) + exp(0)), without overflow


@op("Softplus", 1, 22)
def softplus(X):
    return as_dtype(_softplus(precise(X)), X.dtype)


@op("Softsign", 1, 22)
def softsign(X):
    x = precise(X)
    return as_dtype(x / (1 + np.abs(x)), X.dtype)


@op("Mish", 18, 22)
def mish(X):
    x = precise(X)
    return as_dtype(x * np.tanh(_softplus(x)), X.dtype)
