"""ReduceProd: product over ``axes``; the empty product is 1. Axes became an input in 18.
https://onnx.ai/onnx/operators/onnx__ReduceProd.html
"""

import numpy as np

from onnxkit.ops.reduce._reduce import finish, reduction_axes, working
from onnxkit.ops.registry import op


def _prod(data, axes, keepdims):
    x = working(data)
    return finish(np.multiply.reduce(x, axis=axes, keepdims=bool(keepdims), dtype=x.dtype), data.dtype)


@op("ReduceProd", 1, 11, 13)
def reduce_prod_v1(data, *, axes=None, keepdims=1):
    return _prod(data, reduction_axes(data, axes), keepdims)


@op("ReduceProd", 18)
def reduce_prod(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _prod(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)
