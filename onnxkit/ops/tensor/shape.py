"""Shape: the input's dimensions as a 1-D int64 tensor.

From Shape-15, ``start``/``end`` slice the dimension list (negative counts from the back,
out-of-range values clamp to [0, rank], start > end gives an empty result).

https://onnx.ai/onnx/operators/onnx__Shape.html
"""

import numpy as np

from onnxkit.ops.registry import op


@op("Shape", 1, 13)
def shape_v1(data):
    return np.array(data.shape, dtype=np.int64)


@op("Shape", 15, 19, 21, 23, 24, 25)
def shape(data, *, start=0, end=None):
    # Python slicing already clamps out-of-range bounds the way the spec asks.
    return np.array(data.shape[start:end], dtype=np.int64)
