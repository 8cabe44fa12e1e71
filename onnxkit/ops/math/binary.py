"""Add, Sub, Mul, Div: elementwise, with numpy (multidirectional) broadcasting from opset 7.

C = A op B in A's dtype (integers wrap); integer Div truncates toward zero, as C does.
Opsets 1 and 6 broadcast only with ``broadcast=1`` (B onto A, see ``_common``).
https://onnx.ai/onnx/operators/onnx__Add.html  https://onnx.ai/onnx/operators/onnx__Div.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, check_broadcast, legacy_broadcast, working
from onnxkit.ops.registry import op


def _apply(fn, A, B):
    if A.shape == B.shape and A.dtype == B.dtype and A.dtype.kind in "fiu" and A.ndim:
        return fn(A, B)  # the common case: no bigger than A, numpy's dtype (checks run after)
    check_broadcast(A, B)
    return as_dtype(fn(working(A), working(B)), A.dtype)


def _divide(A, B):
    if not np.issubdtype(A.dtype, np.integer):
        return np.divide(A, B)
    quotient = np.floor_divide(A, B)
    # floor and truncation differ when the signs differ and the division is inexact
    inexact = (np.remainder(A, B) != 0) & ((A < 0) != (B < 0))
    return quotient + inexact.astype(quotient.dtype)


@op("Add", 7, 13, 14)
def add(A, B):
    return _apply(np.add, A, B)


@op("Sub", 7, 13, 14)
def sub(A, B):
    return _apply(np.subtract, A, B)


@op("Mul", 7, 13, 14)
def mul(A, B):
    return _apply(np.multiply, A, B)


@op("Div", 7, 13, 14)
def div(A, B):
    return _apply(_divide, A, B)


@op("Add", 1, 6)
def add_legacy(A, B, *, broadcast=0, axis=None, consumed_inputs=None):
    return add(A, legacy_broadcast(A, B, broadcast, axis))


@op("Sub", 1, 6)
def sub_legacy(A, B, *, broadcast=0, axis=None, consumed_inputs=None):
    return sub(A, legacy_broadcast(A, B, broadcast, axis))


@op("Mul", 1, 6)
def mul_legacy(A, B, *, broadcast=0, axis=None, consumed_inputs=None):
    return mul(A, legacy_broadcast(A, B, broadcast, axis))


@op("Div", 1, 6)
def div_legacy(A, B, *, broadcast=0, axis=None, consumed_inputs=None):
    return div(A, legacy_broadcast(A, B, broadcast, axis))
