"""ReduceL1 = sum(|X|) and ReduceL2 = sqrt(sum(X*X)) over ``axes``; both are 0 when empty.

Integer results are truncated back to the input type. Axes became an input in version 18.
https://onnx.ai/onnx/operators/onnx__ReduceL1.html
https://onnx.ai/onnx/operators/onnx__ReduceL2.html
"""

import numpy as np

from onnxkit.ops.reduce._reduce import finish, reduction_axes, working
from onnxkit.ops.registry import op


def _l1(data, axes, keepdims):
    x = working(data)
    return finish(np.add.reduce(np.abs(x), axis=axes, keepdims=bool(keepdims), dtype=x.dtype), data.dtype)


def _l2(data, axes, keepdims):
    x = working(data, exact_ints=False)
    return finish(np.sqrt(np.add.reduce(x * x, axis=axes, keepdims=bool(keepdims))), data.dtype)


@op("ReduceL1", 1, 11, 13)
def reduce_l1_v1(data, *, axes=None, keepdims=1):
    return _l1(data, reduction_axes(data, axes), keepdims)


@op("ReduceL1", 18)
def reduce_l1(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _l1(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)


@op("ReduceL2", 1, 11, 13)
def reduce_l2_v1(data, *, axes=None, keepdims=1):
    return _l2(data, reduction_axes(data, axes), keepdims)


@op("ReduceL2", 18)
def reduce_l2(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _l2(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)
