"""Size: the number of elements of the input, as an int64 scalar.
https://onnx.ai/onnx/operators/onnx__Size.html"""

import numpy as np

from onnxkit.ops.registry import op


@op("Size", 1, 13, 19, 21, 23, 24, 25)
def size(data):
    return np.array(data.size, dtype=np.int64)
