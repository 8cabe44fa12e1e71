"""Squeeze / Unsqueeze: remove / insert dimensions of size 1.

    Squeeze: without axes, drop every dimension of size 1; a listed axis must have size 1.
    Unsqueeze: axes index the OUTPUT (rank r + len(axes)); a 1 is inserted at each.
    Up to version 11 ``axes`` is an attribute; from version 13 it is an input.

https://onnx.ai/onnx/operators/onnx__Squeeze.html
https://onnx.ai/onnx/operators/onnx__Unsqueeze.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axes


def squeeze_axes(data: np.ndarray, axes) -> np.ndarray:
    if axes is None:
        return data.reshape([d for d in data.shape if d != 1])
    wanted = normalize_axes(axes, data.ndim)
    for a in wanted:
        if data.shape[a] != 1:
            raise KernelInputError(f"cannot squeeze axis {a} of shape {list(data.shape)}: "
                                   f"its size is not 1")
    return data.reshape([d for i, d in enumerate(data.shape) if i not in wanted])


def unsqueeze_axes(data: np.ndarray, axes) -> np.ndarray:
    out_rank = data.ndim + len(axes)
    wanted = set(normalize_axes(axes, out_rank))
    dims = iter(data.shape)
    return data.reshape([1 if i in wanted else next(dims) for i in range(out_rank)])


@op("Squeeze", 1, 11)
def squeeze_v1(data, *, axes=None):
    return squeeze_axes(data, axes)


@op("Squeeze", 13, 21, 23, 24, 25)
def squeeze(data, axes=None):
    return squeeze_axes(data, None if axes is None else int_list(axes))


@op("Unsqueeze", 1, 11)
def unsqueeze_v1(data, *, axes):
    return unsqueeze_axes(data, axes)


@op("Unsqueeze", 13, 21, 23, 24, 25)
def unsqueeze(data, axes):
    return unsqueeze_axes(data, int_list(axes))
