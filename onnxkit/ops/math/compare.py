"""Equal, Greater, GreaterOrEqual, Less, LessOrEqual: elementwise, boolean output.

C = A op B with numpy broadcasting (opset 1: only with ``broadcast=1``, B onto A).
Equal also compares strings (opset 19) and booleans.
https://onnx.ai/onnx/operators/onnx__Equal.html  https://onnx.ai/onnx/operators/onnx__Greater.html
https://onnx.ai/onnx/operators/onnx__GreaterOrEqual.html  https://onnx.ai/onnx/operators/onnx__Less.html
https://onnx.ai/onnx/operators/onnx__LessOrEqual.html
"""

import numpy as np

from onnxkit.ops.math._common import check_broadcast, legacy_broadcast, working
from onnxkit.ops.registry import op


def _compare(fn, A, B):
    check_broadcast(A, B)
    return np.asarray(fn(working(A), working(B))).astype(bool, copy=False)


@op("Equal", 7, 11, 13, 19)
def equal(A, B):
    return _compare(np.equal, A, B)


@op("Greater", 7, 9, 13)
def greater(A, B):
    return _compare(np.greater, A, B)


@op("GreaterOrEqual", 12, 16)
def greater_or_equal(A, B):
    return _compare(np.greater_equal, A, B)


@op("Less", 7, 9, 13)
def less(A, B):
    return _compare(np.less, A, B)


@op("LessOrEqual", 12, 16)
def less_or_equal(A, B):
    return _compare(np.less_equal, A, B)


@op("Equal", 1)
def equal_legacy(A, B, *, broadcast=0, axis=None):
    return equal(A, legacy_broadcast(A, B, broadcast, axis))


@op("Greater", 1)
def greater_legacy(A, B, *, broadcast=0, axis=None):
    return greater(A, legacy_broadcast(A, B, broadcast, axis))


@op("Less", 1)
def less_legacy(A, B, *, broadcast=0, axis=None):
    return less(A, legacy_broadcast(A, B, broadcast, axis))
