"""Shrink: y = x + bias if x < -lambd; x - bias if x > lambd; 0 otherwise.

https://onnx.ai/onnx/operators/onnx__Shrink.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, precise
from onnxkit.ops.registry import op


@op("Shrink", 9)
def shrink(input_, *, bias=0.0, lambd=0.5):
    x = precise(input_)
    y = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0))
    return as_dtype(y, input_.dtype)
