"""Slice: take starts[i]:ends[i]:steps[i] along axes[i].

    for each (start, end, axis, step):
        negative start/end count from the back (add dim)
        step > 0: clamp start, end to [0, dim]
        step < 0: clamp start to [0, dim-1], end to [-1, dim-1]  (-1: past the front)
Slice-1 takes starts/ends/axes as attributes (step 1); from Slice-10 they are inputs.

https://onnx.ai/onnx/operators/onnx__Slice.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axes


def axis_slice(dim: int, start: int, end: int, step: int) -> slice:
    """The Python slice that ONNX's clamping rules select on a dimension of size ``dim``."""
    if step == 0:
        raise KernelInputError("Slice: slice step must not be 0")
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        return slice(min(max(start, 0), dim), min(max(end, 0), dim), step)
    start = min(max(start, 0), dim - 1)
    end = min(max(end, -1), dim - 1)
    if start < 0:  # empty dimension
        return slice(0, 0, step)
    return slice(start, None if end < 0 else end, step)


def slice_index(shape: tuple, starts, ends, axes, steps) -> tuple:
    """The index (one Python slice per axis) that a Slice selects on a tensor of ``shape``."""
    if len(starts) != len(ends):
        raise KernelInputError(f"Slice: starts {starts} and ends {ends} differ in length")
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    if not len(axes) == len(steps) == len(starts):
        raise KernelInputError(f"Slice: starts, ends, axes and steps differ in length "
                               f"({len(starts)}, {len(ends)}, {len(axes)}, {len(steps)})")
    index = [slice(None)] * len(shape)
    for start, end, axis, step in zip(starts, ends, normalize_axes(axes, len(shape)), steps):
        index[axis] = axis_slice(shape[axis], start, end, step)
    return tuple(index)


def slice_tensor(data: np.ndarray, starts, ends, axes, steps) -> np.ndarray:
    return data[slice_index(data.shape, starts, ends, axes, steps)]


@op("Slice", 1)
def slice_v1(data, *, starts, ends, axes=None):
    return slice_tensor(data, starts, ends, axes, None)


@op("Slice", 10, 11, 13)
def slice_(data, starts, ends, axes=None, steps=None):
    return slice_tensor(data, int_list(starts), int_list(ends),
                        None if axes is None else int_list(axes),
                        None if steps is None else int_list(steps))
