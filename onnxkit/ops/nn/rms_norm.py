"""RMSNormalization: scale by the root mean square over the trailing axes ``axis..``.

    Y = X / sqrt(mean(X^2, axes) + epsilon) * scale           (computed in stash_type)

https://onnx.ai/onnx/operators/onnx__RMSNormalization.html
"""

import numpy as np

from onnxkit.ops.nn._stats import check_unidirectional, normalize_axis, stash_dtype
from onnxkit.ops.registry import op


@op("RMSNormalization", 23)
def rms_normalization(X, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    work = stash_dtype(stash_type, X.dtype)
    check_unidirectional(X.shape, scale, "RMSNormalization scale")
    start = normalize_axis(axis, X.ndim)
    x = X.astype(work, copy=False)
    mean_square = (x * x).mean(axis=tuple(range(start, X.ndim)), keepdims=True)
    return (x / np.sqrt(mean_square + epsilon) * scale.astype(work)).astype(X.dtype)
