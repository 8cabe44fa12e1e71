"""Range: output[i] = start + i * delta for i < max(ceil((limit - start) / delta), 0).

Range-27 adds ``stash_type`` (a TensorProto type, float by default): float16/bfloat16
inputs are computed in that type and cast back.
https://onnx.ai/onnx/operators/onnx__Range.html
"""

import math

import ml_dtypes
import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation
from onnxkit.core.values import np_dtype

LOW_PRECISION = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def range_impl(start, limit, delta, compute_dtype=None) -> np.ndarray:
    dtype = start.dtype
    compute = dtype if compute_dtype is None else compute_dtype
    first, last, step = (np.asarray(v).reshape(-1)[0] for v in (start, limit, delta))
    if np.issubdtype(compute, np.integer):
        first, last, step = int(first), int(last), int(step)
        if step == 0:
            raise KernelInputError("Range delta must not be 0")
        count = max(-((first - last) // step), 0)  # ceil((last - first) / step)
    else:
        first, last, step = (compute.type(v) for v in (first, last, step))
        if step == 0:
            raise KernelInputError("Range delta must not be 0")
        count = max(math.ceil((float(last) - float(first)) / float(step)), 0)
    check_allocation((count,), dtype, "Range output")
    values = first + np.arange(count, dtype=np.int64 if np.issubdtype(compute, np.integer)
                               else compute) * step
    return np.asarray(values).astype(dtype)


@op("Range", 11)
def range_v11(start, limit, delta):
    return range_impl(start, limit, delta)


@op("Range", 27)
def range_(start, limit, delta, *, stash_type=1):
    compute = np_dtype(stash_type) if start.dtype in LOW_PRECISION else None
    return range_impl(start, limit, delta, compute)
