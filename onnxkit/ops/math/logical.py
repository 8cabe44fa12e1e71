"""And, Or, Xor (boolean, broadcasting; opset 1 only with ``broadcast=1``) and Not.

https://onnx.ai/onnx/operators/onnx__And.html  https://onnx.ai/onnx/operators/onnx__Or.html
https://onnx.ai/onnx/operators/onnx__Xor.html  https://onnx.ai/onnx/operators/onnx__Not.html
"""

import numpy as np

from onnxkit.ops.math._common import check_broadcast, legacy_broadcast
from onnxkit.ops.registry import op


@op("And", 7)
def and_(A, B):
    check_broadcast(A, B)
    return np.asarray(np.logical_and(A, B))


@op("Or", 7)
def or_(A, B):
    check_broadcast(A, B)
    return np.asarray(np.logical_or(A, B))


@op("Xor", 7)
def xor(A, B):
    check_broadcast(A, B)
    return np.asarray(np.logical_xor(A, B))


@op("Not", 1)
def not_(X):
    return np.asarray(np.logical_not(X))


@op("And", 1)
def and_legacy(A, B, *, broadcast=0, axis=None):
    return and_(A, legacy_broadcast(A, B, broadcast, axis))


@op("Or", 1)
def or_legacy(A, B, *, broadcast=0, axis=None):
    return or_(A, legacy_broadcast(A, B, broadcast, axis))


@op("Xor", 1)
def xor_legacy(A, B, *, broadcast=0, axis=None):
    return xor(A, legacy_broadcast(A, B, broadcast, axis))
