"""Binary and variadic elementwise operators on the GPU, with numpy broadcasting.

    C[i] = f(A[off_a(i)], B[off_b(i)])          off: broadcast offsets (indexing.py)
    Sum / Max / Min (x1, ..., xn) = f(...f(f(x1, x2), x3)..., xn);  Mean = Sum / n
    Where: Y[i] = X[i] if C[i] else Y[i]

Integer Div truncates toward zero, as C does. Both inputs must have the same dtype (the
spec's rule); a node given mixed dtypes runs on the host where the reference explains.
https://onnx.ai/onnx/operators/onnx__Add.html  https://onnx.ai/onnx/operators/onnx__Where.html
"""

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, FLOAT_DTYPES, HostFallback, device,
                                          need_dtype)
from onnxkit.kernels.cuda._elementwise import binary, broadcast_shape, unary, where as where_
from onnxkit.ops.registry import op

NUMERIC = frozenset(d for d in DEVICE_DTYPES if d.kind in "iuf")


def _same(A, B, allowed=NUMERIC):
    A, B = device(A, "A"), device(B, "B")
    need_dtype(A, allowed, "A")
    if A.dtype != B.dtype:
        raise HostFallback(f"A is {A.dtype} and B is {B.dtype}")
    return A, B


@op("Add", 7, 13, 14, registry=CUDA)
def add(A, B):
    return binary(*_same(A, B), s.add)


@op("Sub", 7, 13, 14, registry=CUDA)
def sub(A, B):
    return binary(*_same(A, B), s.sub)


@op("Mul", 7, 13, 14, registry=CUDA)
def mul(A, B):
    return binary(*_same(A, B), s.mul)


@op("Div", 7, 13, 14, registry=CUDA)
def div(A, B):
    A, B = _same(A, B)
    return binary(A, B, s.int_div if A.dtype.kind in "iu" else s.div)


@op("Pow", 7, 12, 13, 15, registry=CUDA)
def pow_(X, Y):
    X, Y = device(X, "X"), device(Y, "Y")
    need_dtype(X, FLOAT_DTYPES, "X")
    need_dtype(Y, NUMERIC, "Y")
    return binary(X, Y, s.power)


@op("PRelu", 7, 9, 16, registry=CUDA)
def prelu(X, slope):
    X, slope = _same(X, slope, FLOAT_DTYPES)
    if broadcast_shape(X.shape, slope.shape) != X.shape:
        raise KernelInputError(f"PRelu: slope {list(slope.shape)} does not broadcast to X {list(X.shape)}")
    return binary(X, slope, s.prelu)


def _fold(formula, data):
    tensors = [device(x, f"data_{i}") for i, x in enumerate(data)]
    need_dtype(tensors[0], NUMERIC, "data_0")
    if any(t.dtype != tensors[0].dtype for t in tensors):
        raise HostFallback("the inputs have different dtypes")
    if len(tensors) == 1:
        return unary(tensors[0], s.identity)
    total = tensors[0]
    for t in tensors[1:]:
        total = binary(total, t, formula)
    return total


@op("Sum", 8, 13, registry=CUDA)
def sum_(*data):
    return _fold(s.add, data)


@op("Mean", 8, 13, registry=CUDA)
def mean(*data):
    total = _fold(s.add, data)
    need_dtype(total, FLOAT_DTYPES, "data_0")
    return unary(total, s.divide_by, float(len(data)))


@op("Max", 8, 12, 13, registry=CUDA)
def max_(*data):
    return _fold(s.maximum, data)


@op("Min", 8, 12, 13, registry=CUDA)
def min_(*data):
    return _fold(s.minimum, data)


@op("Where", 9, 16, registry=CUDA)
def where(condition, X, Y):
    C, X, Y = device(condition, "condition"), device(X, "X"), device(Y, "Y")
    need_dtype(X, DEVICE_DTYPES, "X")
    if X.dtype != Y.dtype or C.dtype.kind != "b":
        raise HostFallback(f"condition {C.dtype}, X {X.dtype}, Y {Y.dtype}")
    return where_(C, X, Y)
