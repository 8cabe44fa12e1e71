"""Reshape and Slice on the ``cpu`` executor: the reference's views, the index inputs
worked out once.

    Reshape:  data.reshape(target_shape(data.shape, shape, allowzero))
    Slice:    data[index], index = one Python slice per axis (ONNX's clamping rules)

Both cost no arithmetic: the time is the reading of the small index tensors, which the
reference kernels convert to Python ints on every call. Here the target shape and the
index are remembered for constant index tensors (``_recall``), so a node's later runs
go straight to numpy's view. Whatever the reference rejects is rejected the same way:
a miss computes with the reference's own helpers.
https://onnx.ai/onnx/operators/onnx__Reshape.html  https://onnx.ai/onnx/operators/onnx__Slice.html
"""

from __future__ import annotations

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._recall import recalled
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list
from onnxkit.ops.tensor.reshape import target_shape
from onnxkit.ops.tensor.slice import slice_index


@op("Reshape", 5, 13, registry=CPU)
def reshape_v5(data, shape):
    return reshape(data, shape)


@op("Reshape", 14, 19, 21, 23, 24, 25, registry=CPU)
def reshape(data, shape, *, allowzero=0):
    target = recalled((shape,), (data.shape, allowzero),
                      lambda: target_shape(data.shape, int_list(shape), allowzero))
    return data.reshape(target)


@op("Slice", 10, 11, 13, registry=CPU)
def slice_(data, starts, ends, axes=None, steps=None):
    index = recalled((starts, ends, axes, steps), data.shape,
                     lambda: _index(data, starts, ends, axes, steps))
    return data[index]


def _index(data, starts, ends, axes, steps) -> tuple:
    return slice_index(data.shape, int_list(starts), int_list(ends),
                       None if axes is None else int_list(axes),
                       None if steps is None else int_list(steps))
