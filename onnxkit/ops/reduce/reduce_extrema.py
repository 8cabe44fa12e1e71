"""ReduceMax and ReduceMin over ``axes`` (NaN propagates; bool: False < True, version 20).

The empty max is -inf (the type's minimum for integers, False for bool); the empty min
is +inf (the type's maximum, True). Axes became an input in version 18.
https://onnx.ai/onnx/operators/onnx__ReduceMax.html
https://onnx.ai/onnx/operators/onnx__ReduceMin.html
"""

import numpy as np

from onnxkit.ops.reduce._reduce import finish, reduction_axes, working
from onnxkit.ops.registry import op


def _lowest(dtype):
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def _highest(dtype):
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max if dtype.kind in "iu" else np.inf


def _max(data, axes, keepdims):
    x = working(data)
    out = np.maximum.reduce(x, axis=axes, keepdims=bool(keepdims), initial=_lowest(x.dtype))
    return finish(out, data.dtype)


def _min(data, axes, keepdims):
    x = working(data)
    out = np.minimum.reduce(x, axis=axes, keepdims=bool(keepdims), initial=_highest(x.dtype))
    return finish(out, data.dtype)


@op("ReduceMax", 1, 11, 12, 13)
def reduce_max_v1(data, *, axes=None, keepdims=1):
    return _max(data, reduction_axes(data, axes), keepdims)


@op("ReduceMax", 18, 20)
def reduce_max(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _max(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)


@op("ReduceMin", 1, 11, 12, 13)
def reduce_min_v1(data, *, axes=None, keepdims=1):
    return _min(data, reduction_axes(data, axes), keepdims)


@op("ReduceMin", 18, 20)
def reduce_min(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _min(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)
