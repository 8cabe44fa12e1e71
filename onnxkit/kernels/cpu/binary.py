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
from onnxkit.kernels.cpu._buffers import SMALL, empty
from onnxkit.kernels.cpu._route import fall_back
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


def _kernel(name: str, ufunc, reference):
    """The kernel of one operator: small same-shape floats straight to numpy (one Python
    call: on tiny tensors the calls are the cost), the rest through ``apply``."""

    def kernel(A, B):
        if A.dtype in FLOATS and B.dtype == A.dtype and (
                A.nbytes < SMALL if A.shape == B.shape else A.nbytes * B.size < SMALL):
            try:  # small broadcasts too (rotary cos / sin): at most A.size * B.size values
                return ufunc(A, B)
            except ValueError:  # shapes that do not broadcast: the reference says why
                pass
        C = apply(ufunc, A, B)
        return fall_back(reference, A, B) if C is None else C

    kernel.__name__ = kernel.__qualname__ = name
    return kernel


add = op("Add", 7, 13, 14, registry=CPU)(_kernel("add", np.add, ref_binary.add))
sub = op("Sub", 7, 13, 14, registry=CPU)(_kernel("sub", np.subtract, ref_binary.sub))
mul = op("Mul", 7, 13, 14, registry=CPU)(_kernel("mul", np.multiply, ref_binary.mul))
div = op("Div", 7, 13, 14, registry=CPU)(_kernel("div", np.divide, ref_binary.div))


@op("Sum", 8, 13, registry=CPU)
def sum_(*data):
    if len(data) < 2 or any(d.dtype != data[0].dtype for d in data):
        return fall_back(ref_variadic.sum_, *data)
    C = apply(np.add, data[0], data[1])
    if C is None:
        return fall_back(ref_variadic.sum_, *data)
    for x in data[2:]:
        if broadcast_shape(C.shape, x.shape) != C.shape:
            return fall_back(ref_variadic.sum_, *data)
        np.add(C, x, out=C)
    return C
