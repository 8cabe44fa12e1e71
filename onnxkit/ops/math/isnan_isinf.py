"""IsNaN and IsInf: boolean masks of special float values.

IsInf: (X == +inf and detect_positive) or (X == -inf and detect_negative).
https://onnx.ai/onnx/operators/onnx__IsNaN.html  https://onnx.ai/onnx/operators/onnx__IsInf.html
"""

import numpy as np

from onnxkit.ops.math._common import working
from onnxkit.ops.registry import op


@op("IsNaN", 9, 13, 20)
def isnan(X):
    return np.asarray(np.isnan(working(X)))


@op("IsInf", 10, 20)
def isinf(X, *, detect_negative=1, detect_positive=1):
    x = working(X)
    return np.asarray((np.isposinf(x) & bool(detect_positive)) | (np.isneginf(x) & bool(detect_negative)))
