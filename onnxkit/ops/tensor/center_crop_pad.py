"""CenterCropPad: crop or zero-pad the selected axes to ``shape``, centred.

    crop:  start = (dim - target) // 2         (odd excess: one more cut on the right)
    pad:   before = (target - dim) // 2        (odd excess: one more pad on the right)
https://onnx.ai/onnx/operators/onnx__CenterCropPad.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axes
from onnxkit.core.limits import check_allocation


@op("CenterCropPad", 18)
def center_crop_pad(input_data, shape, *, axes=None):
    axes = list(range(input_data.ndim)) if axes is None else normalize_axes(axes, input_data.ndim)
    targets = int_list(shape)
    if len(targets) != len(axes):
        raise KernelInputError(f"CenterCropPad: shape {targets} must have one entry per axis "
                               f"{axes}")
    out_shape = list(input_data.shape)
    src = [slice(None)] * input_data.ndim
    dst = [slice(None)] * input_data.ndim
    for axis, target in zip(axes, targets):
        if target < 0:
            raise KernelInputError(f"CenterCropPad: target size {target} is negative")
        dim = input_data.shape[axis]
        out_shape[axis] = target
        if dim >= target:
            start = (dim - target) // 2
            src[axis] = slice(start, start + target)
        else:
            start = (target - dim) // 2
            dst[axis] = slice(start, start + dim)
    check_allocation(out_shape, input_data.dtype, "CenterCropPad output")
    out = np.zeros(out_shape, dtype=input_data.dtype)
    out[tuple(dst)] = input_data[tuple(src)]
    return out
