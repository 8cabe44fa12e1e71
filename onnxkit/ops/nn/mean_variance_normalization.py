"""MeanVarianceNormalization: zero mean, unit variance over ``axes``.

    Y = (X - mean(X, axes)) / (sqrt(var(X, axes)) + 1e-9)      (the spec's function body)

https://onnx.ai/onnx/operators/onnx__MeanVarianceNormalization.html
"""

import numpy as np

from onnxkit.ops.nn._stats import moments, normalize_axis
from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


@op("MeanVarianceNormalization", 9, 13)
def mean_variance_normalization(X, *, axes=(0, 2, 3)):
    x = X.astype(compute_dtype(X.dtype), copy=False)
    axes = tuple(sorted({normalize_axis(a, X.ndim, "axes entry") for a in axes}))
    mean, var = moments(x, axes)
    return ((x - mean) / (np.sqrt(var) + 1e-9)).astype(X.dtype)
