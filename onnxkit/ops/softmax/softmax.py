"""Softmax: exp(X) / sum(exp(X)) along ``axis``, computed as exp(X - max) for stability.

Versions 1 and 11 normalize each row of X coerced to 2-D at ``axis`` (default 1);
version 13 normalizes along the one axis ``axis`` (default -1).
https://onnx.ai/onnx/operators/onnx__Softmax.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.softmax._axis import along_axis, coerced_2d


def softmax_along(x: np.ndarray, axis: int) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(peak), peak, 0))
    return e / np.sum(e, axis=axis, keepdims=True)


@op("Softmax", 1, 11)
def softmax_v1(input, *, axis=1):
    return coerced_2d(input, axis, softmax_along)


@op("Softmax", 13)
def softmax(input, *, axis=-1):
    return along_axis(input, axis, softmax_along)
