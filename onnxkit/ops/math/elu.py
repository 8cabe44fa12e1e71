"""The exponential linear units, elementwise in X's dtype.

Elu:  y = x if x >= 0 else alpha * (exp(x) - 1)
Selu: y = gamma * (x if x > 0 else alpha * (exp(x) - 1))
Celu: y = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
https://onnx.ai/onnx/operators/onnx__Elu.html  https://onnx.ai/onnx/operators/onnx__Selu.html
https://onnx.ai/onnx/operators/onnx__Celu.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, precise
from onnxkit.ops.registry import op


@op("Elu", 1, 6, 22)
def elu(X, *, alpha=1.0, consumed_inputs=None):
    x = precise(X)
    return as_dtype(np.where(x >= 0, x, alpha * np.expm1(np.minimum(x, 0))), X.dtype)


@op("Selu", 1, 6, 22)
def selu(X, *, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875,
         consumed_inputs=None):
    x = precise(X)
    y = np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))
    return as_dtype(gamma * y, X.dtype)


@op("Celu", 12, 28)
def celu(X, *, alpha=1.0):
    x = precise(X)
    y = np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(np.minimum(x, 0) / alpha))
    return as_dtype(y, X.dtype)
