"""OneHot: output[..., j, ...] = on_value if j == indices[...] else off_value, with the new
axis of size ``depth`` inserted at ``axis``.

    values = [off_value, on_value]; indices may be any numeric type (truncated to int)
    OneHot-9: indices outside [0, depth) give all off_value
    OneHot-11+: negative indices in [-depth, -1] count from the back

https://onnx.ai/onnx/operators/onnx__OneHot.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis
from onnxkit.core.limits import check_allocation


def one_hot_impl(indices, depth, values, axis: int, wrap_negative: bool) -> np.ndarray:
    depth = np.asarray(depth).reshape(-1)
    if depth.size != 1:
        raise KernelInputError(f"OneHot: depth must be a scalar, got {depth.size} values")
    n = int(depth[0])
    if n < 1:
        raise KernelInputError(f"OneHot: depth must be positive, got {n}")
    if values.size != 2:
        raise KernelInputError(f"OneHot: values must be [off_value, on_value], got {values.size} "
                               "elements")
    axis = normalize_axis(axis, indices.ndim + 1)
    check_allocation(indices.shape + (n,), values.dtype, "OneHot output")
    idx = indices.astype(np.int64)
    if wrap_negative:
        idx = np.where(idx < 0, idx + n, idx)
    hot = idx[..., np.newaxis] == np.arange(n)  # out-of-range rows stay all False
    off, on = values.reshape(-1)
    out = np.where(hot, on, off).astype(values.dtype)
    return np.moveaxis(out, -1, axis)


@op("OneHot", 9)
def one_hot_v9(indices, depth, values, *, axis=-1):
    return one_hot_impl(indices, depth, values, axis, wrap_negative=False)


@op("OneHot", 11, 28)
def one_hot(indices, depth, values, *, axis=-1):
    return one_hot_impl(indices, depth, values, axis, wrap_negative=True)
