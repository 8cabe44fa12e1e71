"""SplitToSequence: split a tensor along ``axis`` into a sequence of tensors.

    split absent : pieces of length 1 (squeezed away when keepdims = 0)
    split scalar : pieces of that length, the last one shorter if need be
    split 1-D    : pieces of the listed lengths (they must sum to the axis length)

https://onnx.ai/onnx/operators/onnx__SplitToSequence.html
"""

import numpy as np

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("SplitToSequence", 11, 24, context=True)
def split_to_sequence(data, split=None, *, axis=0, keepdims=1, ctx):
    axis = axis + data.ndim if axis < 0 else axis
    length = data.shape[axis]
    check_allocation(data.shape, data.dtype, "SplitToSequence pieces")
    if split is None:
        pieces = [np.take(data, [i], axis=axis) for i in range(length)]
        return pieces if keepdims else [np.squeeze(p, axis=axis) for p in pieces]
    if split.ndim == 0:
        size = int(split)
        if size <= 0:
            raise InputError(f"{describe_node(ctx.node)}: split must be positive, got {size}")
        sizes = [size] * (length // size) + ([length % size] if length % size else [])
    else:
        sizes = [int(s) for s in split]
        if sum(sizes) != length or any(s < 0 for s in sizes):
            raise InputError(
                f"{describe_node(ctx.node)}: split {sizes} must be non-negative and sum to "
                f"the length {length} of axis {axis}"
            )
    bounds = np.cumsum([0] + sizes)
    return [np.take(data, np.arange(lo, hi), axis=axis) for lo, hi in zip(bounds[:-1], bounds[1:])]
