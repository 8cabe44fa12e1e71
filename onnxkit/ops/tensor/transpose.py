"""Transpose: permute the axes; the default perm reverses them.
https://onnx.ai/onnx/operators/onnx__Transpose.html"""

import numpy as np

from onnxkit.errors import AttributeValueError
from onnxkit.ops.registry import op


@op("Transpose", 1, 13, 21, 23, 24, 25)
def transpose(data, *, perm=None):
    if perm is not None and sorted(perm) != list(range(data.ndim)):
        raise AttributeValueError(f"Transpose: perm {perm} is not a permutation of the "
                                  f"{data.ndim} axes")
    return np.transpose(data, perm)
