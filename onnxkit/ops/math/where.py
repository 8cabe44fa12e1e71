"""Where: output = X where condition is true, else Y (all three broadcast together).

https://onnx.ai/onnx/operators/onnx__Where.html
"""

import numpy as np

from onnxkit.ops.registry import op


@op("Where", 9, 16)
def where(condition, X, Y):
    return np.asarray(np.where(condition, X, Y)).astype(X.dtype, copy=False)
