"""GlobalAveragePool, GlobalMaxPool, GlobalLpPool: one window covering all spatial axes.

    Y[n, c, 1, ..., 1] = mean / max / (sum |x|^p)^(1/p) of X[n, c, ...]

https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html
https://onnx.ai/onnx/operators/onnx__GlobalMaxPool.html
https://onnx.ai/onnx/operators/onnx__GlobalLpPool.html
"""

import numpy as np

from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


def _spatial(X) -> tuple:
    return tuple(range(2, X.ndim))


@op("GlobalAveragePool", 1, 22)
def global_average_pool(X):
    work = compute_dtype(X.dtype)
    return X.astype(work, copy=False).mean(axis=_spatial(X), keepdims=True).astype(X.dtype)


@op("GlobalMaxPool", 1, 22)
def global_max_pool(X):
    return X.max(axis=_spatial(X), keepdims=True)


@op("GlobalLpPool", 1, 2, 22)
def global_lp_pool(X, *, p=2):
    work = compute_dtype(X.dtype)
    total = (np.abs(X.astype(work, copy=False)) ** p).sum(axis=_spatial(X), keepdims=True)
    return (total ** (1.0 / p)).astype(X.dtype)
