"""The rectifier family, elementwise in X's dtype.

Relu:            y = max(0, x)
LeakyRelu:       y = x if x >= 0 else alpha * x
PRelu:           y = x if x >= 0 else slope * x   (slope broadcasts onto X)
ThresholdedRelu: y = x if x > alpha else 0
https://onnx.ai/onnx/operators/onnx__Relu.html  https://onnx.ai/onnx/operators/onnx__LeakyRelu.html
https://onnx.ai/onnx/operators/onnx__PRelu.html  https://onnx.ai/onnx/operators/onnx__ThresholdedRelu.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.math._common import as_dtype, working
from onnxkit.ops.registry import op


@op("Relu", 1, 6, 13, 14)
def relu(X, *, consumed_inputs=None):
    if X.dtype.kind == "f" and X.ndim:  # numpy's own floats: no conversion either way
        return np.maximum(X, X.dtype.type(0))
    x = working(X)
    return as_dtype(np.maximum(x, x.dtype.type(0)), X.dtype)


@op("LeakyRelu", 1, 6, 16)
def leaky_relu(X, *, alpha=0.01, consumed_inputs=None):
    x = working(X)
    return as_dtype(np.where(x >= 0, x, x * alpha), X.dtype)


@op("PRelu", 7, 9, 16)
def prelu(X, slope):
    """Opset 7 on: slope broadcasts onto X the numpy way (unidirectionally)."""
    if np.broadcast_shapes(X.shape, slope.shape) != X.shape:
        raise KernelInputError(f"PRelu: slope {list(slope.shape)} does not broadcast to X "
                               f"{list(X.shape)}")
    x = working(X)
    return as_dtype(np.where(x >= 0, x, x * working(slope)), X.dtype)


@op("PRelu", 1, 6)
def prelu_legacy(X, slope, *, consumed_inputs=None):
    """Opsets 1 and 6: one slope for all, or one per channel (axis 1)."""
    if slope.size != 1 and slope.ndim == 1 and X.ndim >= 2 and slope.shape[0] == X.shape[1]:
        slope = slope.reshape((-1,) + (1,) * (X.ndim - 2))
    elif slope.size == 1:
        slope = slope.reshape(())
    return prelu(X, slope)


@op("ThresholdedRelu", 10, 22)
def thresholded_relu(X, *, alpha=1.0):
    x = working(X)
    return as_dtype(np.where(x > alpha, x, 0), X.dtype)
