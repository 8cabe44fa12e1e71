"""Expand: broadcast the input to ``shape`` (numpy's multidirectional rule, so the result
is broadcast(input.shape, shape) and may be larger than ``shape``).
https://onnx.ai/onnx/operators/onnx__Expand.html"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list
from onnxkit.core.limits import check_allocation


@op("Expand", 8, 13)
def expand(data, shape):
    try:
        out_shape = np.broadcast_shapes(data.shape, tuple(int_list(shape)))
    except ValueError:
        raise KernelInputError(f"Expand: cannot broadcast input {list(data.shape)} to shape "
                               f"{int_list(shape)}") from None
    check_allocation(out_shape, data.dtype, "Expand output")
    return np.array(np.broadcast_to(data, out_shape))
