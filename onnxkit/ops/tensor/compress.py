"""Compress: keep the slices along ``axis`` (or the elements of the flattened input, when
no axis) whose ``condition`` entry is true; condition may be shorter than the axis.
https://onnx.ai/onnx/operators/onnx__Compress.html"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis


@op("Compress", 9, 11, 28)
def compress(data, condition, *, axis=None):
    cond = condition.reshape(-1).astype(bool)
    if axis is None:
        return np.compress(cond, data.reshape(-1))
    axis = normalize_axis(axis, data.ndim)
    if cond.size > data.shape[axis]:
        raise KernelInputError(f"Compress: condition has {cond.size} entries, axis {axis} only "
                               f"{data.shape[axis]}")
    return np.compress(cond, data, axis=axis)
