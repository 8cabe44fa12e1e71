"""Add, Sub, Mul, Div and Sum on the ``cpu`` executor: numpy's SIMD loops, reused buffers.

    C = A op B with numpy broadcasting, written into a buffer from the session's pool

numpy's ufuncs are already vectorized; what a fresh result costs is the page faults of a
new allocation, which the pool removes. Same-dtype floats only; the rest (integers,
legacy broadcasting of opsets 1 and 6) run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Add.html  https://onnx.ai/onnx/operators/onnx__Sum.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._broadcast import broadcast_shape
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.ops.math import binary as ref_binary
from onnxkit.ops.math import variadic as ref_variadic
from onnxkit.ops.registry import op

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def apply(ufunc, A, B):
    """ufunc(A, B) into a pooled buffer, or None when the dtypes are left to the reference."""
    if A.dtype not in FLOATS or B.dtype != A.dtype:
        return None
    shape = A.shape if A.shape == B.shape else broadcast_shape(A.shape, B.shape)
    if shape is None:
        return None
    out = empty(shape, A.dtype)
    ufunc(A, B, out=out)
    return out


@op("Add", 7, 13, 14, registry=CPU)
def add(A, B):
    C = apply(np.add, A, B)
    return ref_binary.add(A, B) if C is None else C


@op("Sub", 7, 13, 14, registry=CPU)
def sub(A, B):
    C = apply(np.subtract, A, B)
    return ref_binary.sub(A, B) if C is None else C


@op("Mul", 7, 13, 14, registry=CPU)
def mul(A, B):
    C = apply(np.multiply, A, B)
    return ref_binary.mul(A, B) if C is None else C


@op("Div", 7, 13, 14, registry=CPU)
def div(A, B):
    C = apply(np.divide, A, B)
    return ref_binary.div(A, B) if C is None else C


@op("Sum", 8, 13, registry=CPU)
def sum_(*data):
    if len(data) < 2 or any(d.dtype != data[0].dtype for d in data):
        return ref_variadic.sum_(*data)
    C = apply(np.add, data[0], data[1])
    if C is None:
        return ref_variadic.sum_(*data)
    for x in data[2:]:
        if broadcast_shape(C.shape, x.shape) != C.shape:
            return ref_variadic.sum_(*data)
        np.add(C, x, out=C)
    return C
