"""EyeLike: a 2-D tensor shaped like the input, ones on diagonal ``k``, zeros elsewhere;
``dtype`` (a TensorProto type) defaults to the input's type.
https://onnx.ai/onnx/operators/onnx__EyeLike.html"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation
from onnxkit.core.values import np_dtype


@op("EyeLike", 9, 22)
def eye_like(data, *, dtype=None, k=0):
    if data.ndim != 2:
        raise KernelInputError(f"EyeLike takes a 2-D input, got shape {list(data.shape)}")
    out_dtype = data.dtype if dtype is None else np_dtype(dtype)
    check_allocation(data.shape, out_dtype, "EyeLike output")
    return np.eye(data.shape[0], data.shape[1], k=k, dtype=out_dtype)
