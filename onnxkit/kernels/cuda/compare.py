"""Comparisons and logical operators on the GPU: one thread per element, a bool out.

    Equal / Greater / GreaterOrEqual / Less / LessOrEqual:  C[i] = A[off_a(i)] op B[off_b(i)]
    And / Or / Xor (bool inputs):                           C[i] = A[off_a(i)] op B[off_b(i)]
    Not:                                                    Y[i] = not X[i]

numpy broadcasting through stride-0 offsets (``_elementwise.binary``); both inputs must
have the same dtype, as the spec says (mixed ones run on the host, where the reference
explains). The opset-1 forms (the ``broadcast`` attribute) run on the host.
https://onnx.ai/onnx/operators/onnx__Equal.html  https://onnx.ai/onnx/operators/onnx__Less.html
https://onnx.ai/onnx/operators/onnx__And.html  https://onnx.ai/onnx/operators/onnx__Not.html
"""

import numpy as np

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, HostFallback, device, need_dtype
from onnxkit.kernels.cuda._elementwise import binary, unary
from onnxkit.ops.registry import op

BOOL = frozenset({np.dtype(np.bool_)})


def _compare(A, B, formula, allowed=DEVICE_DTYPES):
    A, B = device(A, "A"), device(B, "B")
    need_dtype(A, allowed, "A")
    if A.dtype != B.dtype:
        raise HostFallback(f"A is {A.dtype} and B is {B.dtype}")
    return binary(A, B, formula, out_dtype=np.bool_)


@op("Equal", 7, 11, 13, 19, registry=CUDA)
def equal(A, B):
    return _compare(A, B, s.equal)


@op("Greater", 7, 9, 13, registry=CUDA)
def greater(A, B):
    return _compare(A, B, s.greater)


@op("GreaterOrEqual", 12, 16, registry=CUDA)
def greater_or_equal(A, B):
    return _compare(A, B, s.greater_or_equal)


@op("Less", 7, 9, 13, registry=CUDA)
def less(A, B):
    return _compare(A, B, s.less)


@op("LessOrEqual", 12, 16, registry=CUDA)
def less_or_equal(A, B):
    return _compare(A, B, s.less_or_equal)


@op("And", 7, registry=CUDA)
def and_(A, B):
    return _compare(A, B, s.logical_and, BOOL)


@op("Or", 7, registry=CUDA)
def or_(A, B):
    return _compare(A, B, s.logical_or, BOOL)


@op("Xor", 7, registry=CUDA)
def xor(A, B):
    return _compare(A, B, s.logical_xor, BOOL)


@op("Not", 1, registry=CUDA)
def not_(X):
    X = device(X, "X")
    need_dtype(X, BOOL, "X")
    return unary(X, s.logical_not, out_dtype=np.bool_)
