"""And, Or, Xor, Not, IsNaN and Where on the ``cpu`` executor: numpy's own ufunc, no more.

    And / Or / Xor:  np.logical_and / _or / _xor (A, B)     (bool, broadcasting)
    Not:             np.logical_not (X)
    IsNaN:           np.isnan (X)                             (float32 / float64 / float16)
    Where:           np.where (condition, X, Y)               (X, Y of one plain dtype)

These build attention masks from a model's inputs on every run (transformers write
``Where (And (causal, Cast (mask)), 0, -inf)``), on tensors of a few hundred values:
the reference kernels' checks (the broadcast shape worked out before numpy does it,
dtypes widened) cost several times the operation. Here the operation runs as soon as
the inputs are plain numpy types and small (the product of their sizes, which bounds
the broadcast result, under ``SMALL``); a result of ``CHECKED`` bytes or more is still
held to ``max_tensor_bytes``. Anything else, and every input numpy rejects, goes to the
reference kernel, which says what is wrong.
https://onnx.ai/onnx/operators/onnx__Where.html  https://onnx.ai/onnx/operators/onnx__And.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.core.limits import check_allocation
from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.math import isnan_isinf as ref_isnan
from onnxkit.ops.math import logical as ref_logical
from onnxkit.ops.math import where as ref_where
from onnxkit.ops.registry import op

SMALL = 1 << 16  # product of the input sizes: the broadcast result has at most this many
CHECKED = 1 << 12  # bytes from which a result is checked against max_tensor_bytes
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16))
_BOOL = np.dtype(np.bool_)


def _checked(result, what):
    if result.nbytes >= CHECKED:
        check_allocation(result.shape, result.dtype, what)
    return result


def _logical(ufunc, reference, A, B):
    if A.dtype != _BOOL or B.dtype != _BOOL or A.size * B.size > SMALL:
        return fall_back(reference, A, B)
    try:
        return _checked(np.asarray(ufunc(A, B)), "broadcast result")  # 0-D: an array
    except ValueError:  # shapes that do not broadcast: the reference's error
        return fall_back(reference, A, B)


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
    if condition.dtype != _BOOL or X.dtype != Y.dtype or X.dtype.kind not in "biuf" \
            or condition.size * X.size * Y.size > SMALL:
        return fall_back(ref_where.where, condition, X, Y)
    try:
        out = np.where(condition, X, Y)
    except ValueError:
        return fall_back(ref_where.where, condition, X, Y)
    return _checked(out, "broadcast result")
