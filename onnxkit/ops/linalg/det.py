"""Det: determinant of each square matrix in the last two axes, [*, M, M] -> [*].
https://onnx.ai/onnx/operators/onnx__Det.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op


@op("Det", 11, 22)
def det(X):
    if X.ndim < 2 or X.shape[-1] != X.shape[-2]:
        raise KernelError(f"Det needs [*, M, M] input, got shape {list(X.shape)}")
    return np.asarray(np.linalg.det(widened(X))).astype(X.dtype, copy=False)
