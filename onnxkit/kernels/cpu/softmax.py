"""Softmax on the ``cpu`` executor: rows of a contiguous matrix, numpy's SIMD exp.

    for each row (the last axis for version 13, X coerced to 2-D at ``axis`` for 1/11):
        top = max(row)  (0 when it is not finite);  e = exp(row - top);  Y = e / sum(e)

Numba has no SIMD exp, numpy does: the max-shift and the normalization are Numba
loops around one ``numpy.exp`` over the whole buffer. float32 only (``COMPILED``);
other dtypes, and version 13 with an axis other than the last, run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Softmax.html
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._math import FASTMATH
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.registry import op
from onnxkit.ops.softmax import softmax as ref_softmax


def shift_rows(x, y):
    """y[r] = x[r] - max(x[r]) (the max taken as 0 when it is inf or NaN): ``run_parts``
    splits the rows into one range per thread and runs ``_shift`` on each at once."""
    run_parts(_shift, x.shape[0], x.size, x, y)


@njit(cache=True, nogil=True, error_model="numpy")
def _shift(x, y, lo, hi):
    cols = x.shape[1]
    for r in range(lo, hi):
        top = x[r, 0]
        for i in range(1, cols):
            v = x[r, i]
            top = v if (v > top or v != v) else top
        if not math.isfinite(top):
            top = 0.0
        for i in range(cols):
            y[r, i] = x[r, i] - top


def normalize_rows(y):
    """y[r] /= sum(y[r]) (the sum in any order: vectorized), the rows shared among the
    threads."""
    run_parts(_normalize, y.shape[0], y.size, y)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _normalize(y, lo, hi):
    cols = y.shape[1]
    for r in range(lo, hi):
        total = 0.0
        for i in range(cols):
            total += y[r, i]
        for i in range(cols):
            y[r, i] = y[r, i] / total


def softmax_matrix(x2d):
    y = empty(x2d.shape, x2d.dtype)
    shift_rows(x2d, y)
    np.exp(y, out=y)
    normalize_rows(y)
    return y


def _fast(X, rows_at):
    if X.dtype not in COMPILED or X.ndim == 0 or X.size == 0:
        return None
    rows = math.prod(X.shape[:rows_at])
    # read-only, whatever X's flags: one compiled signature (``_buffers.read_only``)
    return softmax_matrix(read_only(np.ascontiguousarray(X).reshape(rows, -1))).reshape(X.shape)


@op("Softmax", 1, 11, registry=CPU)
def softmax_v1(input, *, axis=1):  # noqa: A002 (the spec's input name)
    Y = _fast(input, axis % input.ndim) if -input.ndim <= axis < max(input.ndim, 1) else None
    return fall_back(ref_softmax.softmax_v1, input, axis=axis) if Y is None else Y


@op("Softmax", 13, registry=CPU)
def softmax(input, *, axis=-1):  # noqa: A002
    last = input.ndim and axis in (-1, input.ndim - 1)
    Y = _fast(input, input.ndim - 1) if last else None
    return fall_back(ref_softmax.softmax, input, axis=axis) if Y is None else Y
