"""Concat: join tensors along ``axis`` (all other dimensions must agree).

Concat-1 defaults the axis to 1; from Concat-4 it is required; from Concat-11 it may be
negative.  https://onnx.ai/onnx/operators/onnx__Concat.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis
from onnxkit.core.limits import check_allocation


def _concat(inputs, axis: int) -> np.ndarray:
    if not inputs:
        raise KernelInputError("Concat needs at least one input")
    rank = inputs[0].ndim
    axis = normalize_axis(axis, rank)
    for t in inputs:
        if t.ndim != rank:
            raise KernelInputError(f"Concat inputs have different ranks: "
                                   f"{[list(x.shape) for x in inputs]}")
    shape = list(inputs[0].shape)
    shape[axis] = sum(t.shape[axis] for t in inputs)
    check_allocation(shape, inputs[0].dtype, "Concat output")
    return np.concatenate(inputs, axis=axis).astype(inputs[0].dtype, copy=False)


@op("Concat", 1)
def concat_v1(*inputs, axis=1):
    return _concat(inputs, axis)


@op("Concat", 4, 11, 13)
def concat(*inputs, axis):
    return _concat(inputs, axis)
