"""Gather on the GPU: one thread per output element.

    Y[o, j, k] = data[o, idx, k],  idx = indices.flat[j] (+ dim when negative)
        o over data.shape[:axis], j over indices, k over data.shape[axis+1:]

Out-of-range indices are an error. Host indices (constants) are checked on the host;
device indices are checked by the kernel, which raises a flag the executor then reads
back (a counted 8-byte copy).
https://onnx.ai/onnx/operators/onnx__Gather.html
"""

import numpy as np
from numba import cuda

from onnxkit.kernels.cuda import CUDA
from onnxkit.errors import KernelError
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, DeviceTensor, check_later, device,
                                          download, empty, launch_1d, need_dtype)
from onnxkit.kernels.cuda._elementwise import full
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import normalize_axis
from onnxkit.ops.tensor.gather import checked_indices

INDEX_DTYPES = frozenset((np.dtype(np.int32), np.dtype(np.int64)))


@cuda.jit
def _gather_kernel(data, indices, dim, inner, n_indices, out, bad):
    i = cuda.grid(1)
    if i < out.size:
        k = i % inner
        j = (i // inner) % n_indices
        o = i // (inner * n_indices)
        idx = indices[j]
        if idx < 0:
            idx += dim
        if idx < 0 or idx >= dim:
            bad[0] = 1
        else:
            out[i] = data[(o * dim + idx) * inner + k]


@op("Gather", 1, 11, 13, registry=CUDA)
def gather(data, indices, *, axis=0):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    axis = normalize_axis(axis, X.ndim)
    dim = X.shape[axis]
    on_device = isinstance(indices, DeviceTensor)
    if not on_device:
        checked_indices(np.asarray(indices), dim)  # raises IndexError naming the bad index
    idx = device(indices, "indices")
    need_dtype(idx, INDEX_DTYPES, "indices")
    out = empty(X.shape[:axis] + idx.shape + X.shape[axis + 1:], X.dtype)
    if out.size == 0:
        return out
    bad = full((1,), np.int64, 0) if on_device else empty((1,), np.int64)  # the error flag
    inner = int(np.prod(X.shape[axis + 1:], dtype=np.int64))
    launch_1d(_gather_kernel, out.size, X.flat, idx.flat, dim, inner, max(idx.size, 1),
              out.flat, bad.flat)
    if on_device and not check_later(bad, lambda: _out_of_range(idx, dim), "Gather"):
        if download(bad, "index check").reshape(-1)[0]:
            _out_of_range(idx, dim)
    return out


def _out_of_range(idx: DeviceTensor, dim: int):
    """Raise the error naming the bad index (read from a fresh view: replays reuse buffers)."""
    checked_indices(download(DeviceTensor(idx.flat, idx.shape, idx.dtype), "indices"), dim)
    raise KernelError(f"an index is out of range for a dimension of size {dim}")
