"""Concat on the GPU: each input copied into its slab of the output (one launch per input).

Seen as (outer, length_k * inner) blocks, input k lands at column start_k * inner of the
output rows, which are (sum of lengths) * inner long::

    Y[(i // block) * row + start * inner + i % block] = X_k[i]       block = length_k * inner

https://onnx.ai/onnx/operators/onnx__Concat.html
"""

import numpy as np
from numba import cuda

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, HostFallback, device, empty, launch_1d,
                                          need_dtype)
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis


@cuda.jit
def _place_kernel(x, block, row, start, out):
    i = cuda.grid(1)
    if i < x.size:
        out[(i // block) * row + start + i % block] = x[i]


def _concat(inputs, axis):
    if not inputs:
        raise KernelInputError("Concat needs at least one input")
    tensors = [device(x, f"inputs {i}") for i, x in enumerate(inputs)]
    first = tensors[0]
    need_dtype(first, DEVICE_DTYPES, "inputs 0")
    axis = normalize_axis(axis, first.ndim)
    shapes = [list(x.shape) for x in tensors]
    for t in tensors:
        if t.ndim != first.ndim:
            raise KernelInputError(f"Concat inputs have different ranks: {shapes}")
        if t.shape[:axis] + t.shape[axis + 1:] != first.shape[:axis] + first.shape[axis + 1:]:
            raise KernelInputError(f"Concat inputs differ off axis {axis}: {shapes}")
        if t.dtype != first.dtype:
            raise HostFallback(f"inputs mix {first.dtype} and {t.dtype}")
    total = sum(t.shape[axis] for t in tensors)
    out = empty(first.shape[:axis] + (total,) + first.shape[axis + 1:], first.dtype)
    inner = int(np.prod(first.shape[axis + 1:], dtype=np.int64))
    start = 0
    for t in tensors:
        length = t.shape[axis]
        if t.size:
            launch_1d(_place_kernel, t.size, t.flat, length * inner, total * inner,
                      start * inner, out.flat)
        start += length
    return out


@op("Concat", 1, registry=CUDA)
def concat_v1(*inputs, axis=1):
    return _concat(inputs, axis)


@op("Concat", 4, 11, 13, registry=CUDA)
def concat(*inputs, axis):
    return _concat(inputs, axis)
