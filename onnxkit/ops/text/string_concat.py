"""StringConcat: Z = X + Y elementwise on strings, with numpy broadcasting.
https://onnx.ai/onnx/operators/onnx__StringConcat.html
"""

import operator

import numpy as np

from onnxkit.ops.math._common import check_broadcast
from onnxkit.ops.registry import op

_concat = np.frompyfunc(operator.add, 2, 1)


@op("StringConcat", 20)
def string_concat(X, Y):
    check_broadcast(X, Y)  # [N, 1] + [N] makes N * N new strings
    return np.asarray(_concat(X, Y), dtype=object)
