"""ReduceMean and GlobalAveragePool on the ``cpu`` executor: means of contiguous rows.

    axes = a trailing block of a contiguous tensor (e.g. [2, 3] of NCHW, or [-1]):
        X seen as (rows, D);  Y[r] = sum(X[r, :]) / D     (accumulated in float64, in any
                                                           order: vectorized)

Other axes, empty reductions and non-float types run the reference kernel.
https://onnx.ai/onnx/operators/onnx__ReduceMean.html
https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html
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
from onnxkit.ops.nn import global_pool as ref_global_pool
from onnxkit.ops.reduce import reduce_mean as ref_reduce_mean
from onnxkit.ops.reduce._reduce import reduction_axes
from onnxkit.ops.registry import op



@njit(cache=True, error_model="numpy", fastmath=FASTMATH)
def row_means(x, y):
    """y[r] = mean(x[r, :])."""
    rows, d = x.shape
    for r in range(rows):
        total = 0.0
        src = x[r]
        for i in range(d):
            total += src[i]
        y[r] = total / d


def trailing_mean(X, axes: tuple, keepdims: bool):
    """The mean over ``axes`` when they are X's last axes, else None."""
    if X.dtype not in COMPILED or not axes or X.size == 0:
        return None
    if tuple(axes) != tuple(range(X.ndim - len(axes), X.ndim)):
        return None
    lead = X.shape[:X.ndim - len(axes)]
    shape = lead + (1,) * len(axes) if keepdims else lead
    Y = empty(shape, X.dtype)
    row_means(read_only(np.ascontiguousarray(X)).reshape(math.prod(lead), -1),
              Y.reshape(-1))
    return Y


@op("ReduceMean", 1, 11, 13, registry=CPU)
def reduce_mean_v1(data, *, axes=None, keepdims=1):
    Y = trailing_mean(data, reduction_axes(data, axes), bool(keepdims))
    if Y is None:
        return fall_back(ref_reduce_mean.reduce_mean_v1, data, axes=axes, keepdims=keepdims)
    return Y


@op("ReduceMean", 18, registry=CPU)
def reduce_mean(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    Y = trailing_mean(data, reduction_axes(data, axes, noop_with_empty_axes), bool(keepdims))
    if Y is None:
        return fall_back(ref_reduce_mean.reduce_mean, data, axes, keepdims=keepdims,
                         noop_with_empty_axes=noop_with_empty_axes)
    return Y


@op("GlobalAveragePool", 1, 22, registry=CPU)
def global_average_pool(X):
    Y = trailing_mean(X, tuple(range(2, X.ndim)), True) if X.ndim > 2 else None
    return fall_back(ref_global_pool.global_average_pool, X) if Y is None else Y
