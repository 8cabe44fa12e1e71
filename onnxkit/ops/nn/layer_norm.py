"""LayerNormalization: normalize over the trailing axes ``axis..rank-1`` of each slice.

    mean = mean(X, axes); inv_std = 1 / sqrt(var(X, axes) + epsilon)   (in stash_type)
    Y = (X - mean) * inv_std * Scale + B
    optional outputs Mean, InvStdDev keep the reduced axes as size 1

https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
"""

import numpy as np

from onnxkit.ops.nn._stats import check_unidirectional, moments, normalize_axis, stash_dtype
from onnxkit.ops.registry import op


@op("LayerNormalization", 17)
def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    work = stash_dtype(stash_type, X.dtype)
    check_unidirectional(X.shape, Scale, "LayerNormalization Scale")
    check_unidirectional(X.shape, B, "LayerNormalization B")
    start = normalize_axis(axis, X.ndim)
    x = X.astype(work, copy=False)
    mean, var = moments(x, tuple(range(start, X.ndim)))
    inv_std = 1 / np.sqrt(var + epsilon)
    Y = (x - mean) * inv_std * Scale.astype(work)
    if B is not None:
        Y = Y + B.astype(work)
    return Y.astype(X.dtype), mean.astype(work), inv_std.astype(work)
