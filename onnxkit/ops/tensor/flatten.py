"""Flatten: to 2-D, (d_0 * ... * d_{axis-1}, d_axis * ... * d_n); axis in [-r, r].
https://onnx.ai/onnx/operators/onnx__Flatten.html"""

import math

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op


@op("Flatten", 1, 9, 11, 13, 21, 23, 24, 25)
def flatten(data, *, axis=1):
    rank = data.ndim
    if not -rank <= axis <= rank:
        raise KernelInputError(f"Flatten: axis {axis} is out of range for rank {rank} "
                               f"(accepted: [{-rank}, {rank}])")
    if axis < 0:
        axis += rank
    outer = math.prod(data.shape[:axis])
    inner = math.prod(data.shape[axis:])
    return data.reshape(outer, inner)
