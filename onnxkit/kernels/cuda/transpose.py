"""Transpose on the GPU: one thread per output element, reading X through permuted strides.

    Y[i] = X[broadcast_offset(i, Y.shape, strides_of_X[perm])]

https://onnx.ai/onnx/operators/onnx__Transpose.html
"""

from numba import cuda

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, device, empty, launch_1d, need_dtype,
                                          shape_tuple)
from onnxkit.kernels.indexing import broadcast_offset, for_cuda, transpose_strides
from onnxkit.ops.registry import op

_offset = for_cuda(broadcast_offset)


@cuda.jit
def _transpose_kernel(x, shape, strides, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[_offset(i, shape, strides)]


@op("Transpose", 1, 13, 21, 23, 24, 25, registry=CUDA)
def transpose(data, *, perm=None):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    perm = list(range(X.ndim))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(X.ndim)):
        raise ValueError(f"perm {perm} is not a permutation of the {X.ndim} axes")
    shape = tuple(X.shape[p] for p in perm)
    if perm == sorted(perm):
        return X  # nothing moves: share the buffer
    out = empty(shape, X.dtype)
    launch_1d(_transpose_kernel, out.size, X.flat, shape_tuple(shape),
              shape_tuple(transpose_strides(X.shape, perm)), out.flat)
    return out
