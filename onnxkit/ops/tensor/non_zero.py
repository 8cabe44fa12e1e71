"""NonZero: the indices of the non-zero elements, shape (rank, count), in row-major order.
https://onnx.ai/onnx/operators/onnx__NonZero.html"""

import numpy as np

from onnxkit.ops.registry import op


@op("NonZero", 9, 13)
def non_zero(data):
    if data.ndim == 0:  # numpy refuses nonzero on 0-d arrays; the result has rank 0 rows
        return np.zeros((0, int(bool(data))), dtype=np.int64)
    return np.array(np.nonzero(data), dtype=np.int64).reshape(data.ndim, -1)
