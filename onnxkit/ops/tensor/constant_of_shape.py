"""ConstantOfShape: a tensor of the given shape filled with ``value`` (a one-element
tensor; float32 0 by default).  https://onnx.ai/onnx/operators/onnx__ConstantOfShape.html"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list
from onnxkit.core.limits import check_allocation


@op("ConstantOfShape", 9, 20, 21, 23, 24, 25)
def constant_of_shape(input_shape, *, value=None):
    if value is None:
        value = np.zeros(1, dtype=np.float32)
    if value.size != 1:
        raise KernelInputError("ConstantOfShape: 'value' must hold one element, got shape "
                               f"{list(value.shape)}")
    shape = int_list(input_shape)
    if any(d < 0 for d in shape):
        raise KernelInputError(f"ConstantOfShape: shape {shape} has a negative dimension")
    check_allocation(shape, value.dtype, "ConstantOfShape output")
    return np.full(shape, value.reshape(-1)[0], dtype=value.dtype)
