"""Relu: y = max(0, x).  https://onnx.ai/onnx/operators/onnx__Relu.html"""

import numpy as np

from onnxkit.ops.registry import op


@op("Relu", 1, 6, 13, 14)
def relu(X):
    return np.maximum(X, X.dtype.type(0))
