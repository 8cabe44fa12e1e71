"""LogSoftmax: X - max - log(sum(exp(X - max))) along ``axis``.

Versions 1 and 11 work on X coerced to 2-D at ``axis`` (default 1); version 13 along
the single axis ``axis`` (default -1).
https://onnx.ai/onnx/operators/onnx__LogSoftmax.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.softmax._axis import along_axis, coerced_2d


def log_softmax_along(x: np.ndarray, axis: int) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    shifted = x - np.where(np.isfinite(peak), peak, 0)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@op("LogSoftmax", 1, 11)
def log_softmax_v1(input, *, axis=1):
    return coerced_2d(input, axis, log_softmax_along)


@op("LogSoftmax", 13)
def log_softmax(input, *, axis=-1):
    return along_axis(input, axis, log_softmax_along)
