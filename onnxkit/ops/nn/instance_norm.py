"""InstanceNormalization: normalize each (sample, channel) slice over its spatial axes.

    Y[n, c] = scale[c] * (X[n, c] - mean(X[n, c])) / sqrt(var(X[n, c]) + epsilon) + B[c]

https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._stats import moments
from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


@op("InstanceNormalization", 1, 6, 22)
def instance_normalization(X, scale, B, *, consumed_inputs=None, epsilon=1e-5):
    if X.ndim < 2 or scale.size != X.shape[1] or B.size != X.shape[1]:
        raise KernelError(f"InstanceNormalization: scale {list(scale.shape)} and B {list(B.shape)} "
                          f"need one value per channel of X {list(X.shape)}")
    work = compute_dtype(X.dtype)
    x = X.astype(work, copy=False)
    mean, var = moments(x, tuple(range(2, X.ndim)))
    shape = (-1,) + (1,) * (X.ndim - 2)
    Y = (x - mean) / np.sqrt(var + epsilon) * scale.astype(work).reshape(shape)
    return (Y + B.astype(work).reshape(shape)).astype(X.dtype)
