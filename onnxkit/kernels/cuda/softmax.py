"""Softmax and LogSoftmax on the GPU: one block per row (``_rows``).

    m = max(row); s = sum(exp(row - m))
    Softmax:    y = exp(x - m) / s
    LogSoftmax: y = x - m - log(s)

Version 13 normalizes along ``axis`` alone (a row is strided by the product of the later
dimensions); versions 1 and 11 flatten to 2-D at ``axis`` (a row is everything after it).
https://onnx.ai/onnx/operators/onnx__Softmax.html
"""

import math
from functools import lru_cache

import numba
import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import FLOAT_DTYPES, device, empty, launch, need_dtype
from onnxkit.kernels.cuda._rows import MAX_ROW_THREADS, block_reduce, row_threads
from onnxkit.ops.registry import op

_sum = block_reduce(s.add)
_max = block_reduce(s.maximum)


@lru_cache(maxsize=None)
def softmax_kernel(dtype, log):
    elem = numba.from_dtype(dtype)
    lowest = np.dtype(dtype).type(-np.inf)
    zero = np.dtype(dtype).type(0)

    @cuda.jit
    def kernel(x, length, inner, out):
        buf = cuda.shared.array(MAX_ROW_THREADS, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        r = cuda.blockIdx.x
        base = (r // inner) * length * inner + r % inner
        m = lowest
        for k in range(t, length, nt):
            v = x[base + k * inner]
            if v > m or v != v:
                m = v
        m = _max(buf, t, nt, m)
        total = zero
        for k in range(t, length, nt):
            total += math.exp(x[base + k * inner] - m)
        total = _sum(buf, t, nt, total)
        for k in range(t, length, nt):
            i = base + k * inner
            if log:
                out[i] = x[i] - m - math.log(total)
            else:
                out[i] = math.exp(x[i] - m) / total

    return kernel


def softmax_rows(X, length: int, inner: int, log: bool):
    X = device(X, "input")
    need_dtype(X, FLOAT_DTYPES, "input")
    out = empty(X.shape, X.dtype)
    if out.size == 0:
        return out
    rows = out.size // length
    launch(softmax_kernel(X.dtype, log), rows, row_threads(length), X.flat, length, inner, out.flat)
    return out


def _axis(X, axis: int) -> int:
    if not -X.ndim <= axis < max(X.ndim, 1):
        raise KernelError(f"axis {axis} is out of range for an input of rank {X.ndim}")
    return axis % X.ndim if X.ndim else 0


def _along(X, axis, log):
    X = device(X, "input")
    axis = _axis(X, axis)
    inner = int(np.prod(X.shape[axis + 1:], dtype=np.int64))
    return softmax_rows(X, X.shape[axis] if X.ndim else 1, inner, log)


def _coerced(X, axis, log):
    X = device(X, "input")
    axis = _axis(X, axis)
    return softmax_rows(X, int(np.prod(X.shape[axis:], dtype=np.int64)), 1, log)


@op("Softmax", 13, registry=CUDA)
def softmax(input, *, axis=-1):  # noqa: A002 (the spec's name)
    return _along(input, axis, False)


@op("Softmax", 1, 11, registry=CUDA)
def softmax_v1(input, *, axis=1):  # noqa: A002
    return _coerced(input, axis, False)


@op("LogSoftmax", 13, registry=CUDA)
def log_softmax(input, *, axis=-1):  # noqa: A002
    return _along(input, axis, True)


@op("LogSoftmax", 1, 11, registry=CUDA)
def log_softmax_v1(input, *, axis=1):  # noqa: A002
    return _coerced(input, axis, True)
