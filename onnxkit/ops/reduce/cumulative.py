"""CumSum / CumProd: running sum / product along ``axis`` (a scalar input tensor).

    y[i] = x[0] + ... + x[i]            (exclusive=1: up to x[i-1]; y[0] = 0, or 1 for CumProd)
    reverse=1: run from the end of the axis towards its start

https://onnx.ai/onnx/operators/onnx__CumSum.html
https://onnx.ai/onnx/operators/onnx__CumProd.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.reduce._reduce import finish, working
from onnxkit.ops.registry import op


def _scan(ufunc, x, axis, exclusive, reverse):
    values = np.asarray(axis).reshape(-1)
    if values.size != 1:
        raise KernelError(f"'axis' must hold exactly one value, got shape {list(np.shape(axis))}")
    a = int(values[0])
    if not -x.ndim <= a < x.ndim:
        raise KernelError(f"axis {a} is out of range for an input of rank {x.ndim}")
    a %= x.ndim
    w = working(x)
    if reverse:
        w = np.flip(w, a)
    out = ufunc.accumulate(w, axis=a, dtype=w.dtype)
    if exclusive and out.shape[a] > 0:
        first = np.full_like(np.take(out, [0], axis=a), ufunc.identity)
        out = np.concatenate([first, np.take(out, np.arange(out.shape[a] - 1), axis=a)], axis=a)
    if reverse:
        out = np.flip(out, a)
    return finish(np.ascontiguousarray(out), x.dtype)


@op("CumSum", 11, 14)
def cumsum(x, axis, *, exclusive=0, reverse=0):
    return _scan(np.add, x, axis, exclusive, reverse)


@op("CumProd", 26)
def cumprod(x, axis, *, exclusive=0, reverse=0):
    return _scan(np.multiply, x, axis, exclusive, reverse)
