"""Hardmax: 1 where X holds the first maximum along ``axis``, 0 elsewhere.

Versions 1 and 11 work on X coerced to 2-D at ``axis`` (default 1); version 13 along
the single axis ``axis`` (default -1).
https://onnx.ai/onnx/operators/onnx__Hardmax.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.softmax._axis import along_axis, coerced_2d


def hardmax_along(x: np.ndarray, axis: int) -> np.ndarray:
    out = np.zeros_like(x)
    if x.shape[axis] == 0:
        return out
    first = np.expand_dims(np.argmax(x, axis=axis), axis)
    np.put_along_axis(out, first, 1, axis=axis)
    return out


@op("Hardmax", 1, 11)
def hardmax_v1(input, *, axis=1):
    return coerced_2d(input, axis, hardmax_along)


@op("Hardmax", 13)
def hardmax(input, *, axis=-1):
    return along_axis(input, axis, hardmax_along)
