"""ReduceSum and ReduceSumSquare: sum of X (or of X*X) over ``axes``; the empty sum is 0.

Axes are an attribute up to ReduceSum-11 / ReduceSumSquare-13, an input afterwards.
https://onnx.ai/onnx/operators/onnx__ReduceSum.html
https://onnx.ai/onnx/operators/onnx__ReduceSumSquare.html
"""

import numpy as np

from onnxkit.ops.reduce._reduce import finish, reduction_axes, working
from onnxkit.ops.registry import op


def _sum(data, axes, keepdims):
    x = working(data)
    return finish(np.add.reduce(x, axis=axes, keepdims=bool(keepdims), dtype=x.dtype), data.dtype)


def _sum_square(data, axes, keepdims):
    x = working(data)
    return finish(np.add.reduce(x * x, axis=axes, keepdims=bool(keepdims), dtype=x.dtype), data.dtype)


@op("ReduceSum", 1, 11)
def reduce_sum_v1(data, *, axes=None, keepdims=1):
    return _sum(data, reduction_axes(data, axes), keepdims)


@op("ReduceSum", 13)
def reduce_sum(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _sum(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)


@op("ReduceSumSquare", 1, 11, 13)
def reduce_sum_square_v1(data, *, axes=None, keepdims=1):
    return _sum_square(data, reduction_axes(data, axes), keepdims)


@op("ReduceSumSquare", 18)
def reduce_sum_square(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _sum_square(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)
