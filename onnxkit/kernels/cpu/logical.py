"""And, Or, Xor, Not, IsNaN and Where on the ``cpu`` executor: numpy's own ufunc, no more.

    And / Or / Xor:  np.logical_and / _or / _xor (A, B)     (bool, broadcasting)
    Not:             np.logical_not (X)
    IsNaN:           np.isnan (X)                             (float32 / float64 / float16)
    Where:           np.where (condition, X, Y)               (X, Y of one plain dtype)

These build attention masks from a model's inputs on every run (transformers write
``Where (And (causal, Cast (mask)), 0, -inf)``), on tensors of a few hundred values:
the reference kernels' checks (``np.broadcast_shapes`` and a limit check, dtypes
widened) cost several times the operation. Here a result that is small whatever the
broadcast (under ``CHECKED`` bytes for the product of the operands' sizes) is numpy's
call alone; for others the broadcast shape is a short loop,
a result of ``CHECKED`` bytes or more is held to ``max_tensor_bytes`` before numpy
allocates it, and the ufunc runs on plain numpy types. Anything else, and shapes that
do not broadcast, go to the reference kernel, which says what is wrong.
https://onnx.ai/onnx/operators/onnx__Where.html  https://onnx.ai/onnx/operators/onnx__And.html
"""

from __future__ import annotations

import math

import numpy as np

from onnxkit.core.limits import check_allocation
from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.math import isnan_isinf as ref_isnan
from onnxkit.ops.math import logical as ref_logical
from onnxkit.ops.math import where as ref_where
from onnxkit.ops.registry import op

CHECKED = 1 << 12  # bytes from which a result is checked against max_tensor_bytes first
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))
_BOOL = np.dtype(np.bool_)


def broadcast_shape(*shapes) -> tuple | None:
    """numpy's broadcast of ``shapes``, or None where they do not broadcast (a loop over
    a few axes: cheaper than ``np.broadcast_shapes`` on the small tensors here)."""
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for shape in shapes:
        offset = rank - len(shape)
        for i, d in enumerate(shape):
            o = out[offset + i]
            if d != o:
                if o == 1:
                    out[offset + i] = d
                elif d != 1:
                    return None
    return tuple(out)


def _fits(shape, dtype, what) -> bool:
    """Whether the result of ``shape`` may be computed here: it broadcasts, and from
    ``CHECKED`` bytes on it is within max_tensor_bytes (else the limit's error)."""
    if shape is None:
        return False
    if math.prod(shape) * dtype.itemsize >= CHECKED:
        check_allocation(shape, dtype, what)
    return True


def _logical(ufunc, reference, A, B):
    if A.dtype == _BOOL and B.dtype == _BOOL and A.size * B.size < CHECKED:
        try:  # the result is at most A.size * B.size values: no shape work first
            return np.asarray(ufunc(A, B))
        except ValueError:  # shapes that do not broadcast: the reference says so
            return fall_back(reference, A, B)
    if A.dtype != _BOOL or B.dtype != _BOOL \
            or not _fits(broadcast_shape(A.shape, B.shape), _BOOL, "broadcast result"):
        return fall_back(reference, A, B)
    return np.asarray(ufunc(A, B))  # 0-D: an array


@op("And", 7, registry=CPU)
def and_(A, B):
    return _logical(np.logical_and, ref_logical.and_, A, B)


@op("Or", 7, registry=CPU)
def or_(A, B):
    return _logical(np.logical_or, ref_logical.or_, A, B)


@op("Xor", 7, registry=CPU)
def xor(A, B):
    return _logical(np.logical_xor, ref_logical.xor, A, B)


@op("Not", 1, registry=CPU)
def not_(X):
    if X.dtype != _BOOL:
        return fall_back(ref_logical.not_, X)
    return np.asarray(np.logical_not(X))


@op("IsNaN", 9, 13, 20, registry=CPU)
def isnan(X):
    if X.dtype not in _FLOATS:  # bfloat16, float8 ...: the reference widens them
        return fall_back(ref_isnan.isnan, X)
    return np.asarray(np.isnan(X))


@op("Where", 9, 16, registry=CPU)
def where(condition, X, Y):
    if condition.dtype == _BOOL and X.dtype == Y.dtype and X.dtype.kind in "biuf" \
            and condition.size * X.size * Y.size * X.itemsize < CHECKED:
        try:  # a small result (at most the product of the sizes): no shape work first
            return np.where(condition, X, Y)
        except ValueError:
            return fall_back(ref_where.where, condition, X, Y)
    if condition.dtype != _BOOL or X.dtype != Y.dtype or X.dtype.kind not in "biuf" \
            or not _fits(broadcast_shape(condition.shape, X.shape, Y.shape), X.dtype,
                         "broadcast result"):
        return fall_back(ref_where.where, condition, X, Y)
    return np.where(condition, X, Y)
