"""LpNormalization: divide by the L1 or L2 norm along one axis.

    Y = X / (sum |X|^p along axis) ^ (1/p),   p in {1, 2}   (0 where the norm is 0)

https://onnx.ai/onnx/operators/onnx__LpNormalization.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._stats import normalize_axis
from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


@op("LpNormalization", 1, 22)
def lp_normalization(input_, *, axis=-1, p=2):
    if p not in (1, 2):
        raise KernelError(f"LpNormalization supports p=1 or p=2, got p={p}")
    x = input_.astype(compute_dtype(input_.dtype), copy=False)
    axis = normalize_axis(axis, x.ndim)
    if p == 1:
        norm = np.abs(x).sum(axis=axis, keepdims=True)
    else:
        norm = np.sqrt((x * x).sum(axis=axis, keepdims=True))
    safe = np.where(norm == 0, 1, norm)
    return np.where(norm == 0, 0, x / safe).astype(input_.dtype)
