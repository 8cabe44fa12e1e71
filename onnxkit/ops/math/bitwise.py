"""BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18) and BitShift.

BitShift, per element (n = bits of T):
    if 0 <= Y < n:  Z = X << Y  (LEFT, bits past the top are lost) or X >> Y (RIGHT,
                    arithmetic: a negative X stays negative)
    else:           Z = -1 for a RIGHT shift of a negative X, 0 otherwise
https://onnx.ai/onnx/operators/onnx__BitShift.html  https://onnx.ai/onnx/operators/onnx__BitwiseAnd.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError
from onnxkit.ops.math._common import as_dtype, check_broadcast
from onnxkit.ops.registry import op


@op("BitwiseAnd", 18)
def bitwise_and(A, B):
    check_broadcast(A, B)
    return as_dtype(np.bitwise_and(A, B), A.dtype)


@op("BitwiseOr", 18)
def bitwise_or(A, B):
    check_broadcast(A, B)
    return as_dtype(np.bitwise_or(A, B), A.dtype)


@op("BitwiseXor", 18)
def bitwise_xor(A, B):
    check_broadcast(A, B)
    return as_dtype(np.bitwise_xor(A, B), A.dtype)


@op("BitwiseNot", 18)
def bitwise_not(X):
    return as_dtype(np.bitwise_not(X), X.dtype)


@op("BitShift", 11, 28)
def bit_shift(X, Y, *, direction):
    if direction not in ("LEFT", "RIGHT"):
        raise AttributeValueError("BitShift: attribute direction must be 'LEFT' or 'RIGHT', got "
                                  f"{direction!r}")
    check_broadcast(X, Y)
    X, Y = np.broadcast_arrays(X, Y)
    in_range = (Y >= 0) & (Y < X.dtype.itemsize * 8)
    amount = np.where(in_range, Y, 0).astype(X.dtype)
    if direction == "LEFT":
        shifted, fill = np.left_shift(X, amount), np.zeros((), X.dtype)
    else:
        shifted, fill = np.right_shift(X, amount), np.where(X < 0, -1, 0).astype(X.dtype)
    return as_dtype(np.where(in_range, shifted, fill), X.dtype)
