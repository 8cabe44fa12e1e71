"""Ceil, Floor, Round (halves to the nearest even integer), elementwise in X's dtype.

https://onnx.ai/onnx/operators/onnx__Ceil.html  https://onnx.ai/onnx/operators/onnx__Floor.html
https://onnx.ai/onnx/operators/onnx__Round.html
"""

import numpy as np

from onnxkit.ops.math._common import unary_float
from onnxkit.ops.registry import op


@op("Ceil", 1, 6, 13)
def ceil(X, *, consumed_inputs=None):
    return unary_float(np.ceil, X)


@op("Floor", 1, 6, 13)
def floor(X, *, consumed_inputs=None):
    return unary_float(np.floor, X)


@op("Round", 11, 22)
def round_(X):
    return unary_float(np.round, X)  # numpy rounds half to even, as the spec asks
