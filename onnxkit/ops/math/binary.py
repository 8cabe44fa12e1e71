"""Add, Sub, Mul, Div: elementwise with numpy (multidirectional) broadcasting.

Integer Div truncates toward zero, as C does.  https://onnx.ai/onnx/operators/onnx__Div.html
"""

import numpy as np

from onnxkit.ops.registry import op


@op("Add", 7, 13, 14)
def add(A, B):
    return np.add(A, B).astype(A.dtype, copy=False)


@op("Sub", 7, 13, 14)
def sub(A, B):
    return np.subtract(A, B).astype(A.dtype, copy=False)


@op("Mul", 7, 13, 14)
def mul(A, B):
    return np.multiply(A, B).astype(A.dtype, copy=False)


@op("Div", 7, 13, 14)
def div(A, B):
    if np.issubdtype(A.dtype, np.integer):
        return np.trunc(A / B).astype(A.dtype)
    return np.divide(A, B).astype(A.dtype, copy=False)
