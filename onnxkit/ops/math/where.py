"""Where: output = X where condition is true, else Y (all three broadcast together).

https://onnx.ai/onnx/operators/onnx__Where.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, check_broadcast
from onnxkit.ops.registry import op


@op("Where", 9, 16)
def where(condition, X, Y):
    check_broadcast(condition, X, Y)
    return as_dtype(np.where(condition, X, Y), X.dtype)
