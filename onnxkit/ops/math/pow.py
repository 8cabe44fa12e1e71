"""Pow: Z = X ** Y elementwise, returned in the dtype of the base X.

From opset 12 the exponent may have another numeric type than the base (an int64 base
with a float exponent gives int64). Opset 1 broadcasts only with ``broadcast=1``.
https://onnx.ai/onnx/operators/onnx__Pow.html
"""

import numpy as np

from onnxkit.ops.math._common import as_dtype, check_broadcast, legacy_broadcast, working
from onnxkit.ops.registry import op


@op("Pow", 7, 12, 13, 15)
def pow_(X, Y):
    check_broadcast(X, Y)
    base, exponent = working(X), working(Y)
    if np.issubdtype(base.dtype, np.integer) and np.issubdtype(exponent.dtype, np.integer) \
            and np.any(exponent < 0):
        base = base.astype(np.float64)  # numpy refuses negative integer powers of integers
    return as_dtype(np.power(base, exponent), X.dtype)


@op("Pow", 1)
def pow_legacy(X, Y, *, broadcast=0, axis=None):
    return pow_(X, legacy_broadcast(X, Y, broadcast, axis))
