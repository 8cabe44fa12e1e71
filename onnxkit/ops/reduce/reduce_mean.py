"""ReduceMean: sum over ``axes`` divided by the number of elements summed (empty: NaN).

Integers are averaged in float64 and truncated back. Axes became an input in version 18.
https://onnx.ai/onnx/operators/onnx__ReduceMean.html
"""

import numpy as np

from onnxkit.ops.reduce._reduce import count, finish, reduction_axes, working
from onnxkit.ops.registry import op


def _mean(data, axes, keepdims):
    x = working(data, exact_ints=False)
    total = np.add.reduce(x, axis=axes, keepdims=bool(keepdims), dtype=x.dtype)
    n = count(data, axes)
    mean = total / n if n else np.full_like(total, np.nan)
    return finish(mean, data.dtype)


@op("ReduceMean", 1, 11, 13)
def reduce_mean_v1(data, *, axes=None, keepdims=1):
    return _mean(data, reduction_axes(data, axes), keepdims)


@op("ReduceMean", 18)
def reduce_mean(data, axes=None, *, keepdims=1, noop_with_empty_axes=0):
    return _mean(data, reduction_axes(data, axes, noop_with_empty_axes), keepdims)
