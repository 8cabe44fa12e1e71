"""Given code of exercise 4 (exercises/ex4_numba.py): how the kernels you write are called.

Read it; don't change it. Every function takes the kernel it runs as its first argument,
so the same code runs your kernels and the reference solutions (exercises/solutions/).

- ``registry``: a kernel registry whose ``Softmax``-13 runs ``softmax_rows`` and whose
  ``LeakyRelu`` launches ``leaky_relu_kernel``, so that the checks can run onnx's test
  cases of both operators through onnxkit with only your kernels (as in exercise 1);
- ``softmax_13``: the Softmax axis moved last, the rows made contiguous, then back;
- ``leaky_relu``: x copied to the GPU, one thread per element, y copied back;
- ``row_sums``: one block per row, a power-of-two number of threads per block.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.ops.registry import Registry, op

#: threads per block of ``leaky_relu`` (one per element)
THREADS = 64
#: threads per block of ``row_sums`` (one block per row), unless told otherwise
ROW_THREADS = 32
#: the most threads a block of ``row_sums`` may have: the length of the shared buffer
MAX_ROW_THREADS = 256
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _need_float(x: np.ndarray, what: str) -> None:
    if x.dtype not in FLOATS:
        raise KernelError(f"{what} takes float32 or float64, not {x.dtype}")


def softmax_13(softmax_rows, x: np.ndarray, axis: int) -> np.ndarray:
    """Softmax-13 along ``axis``, by a kernel over the rows of a matrix:

        last = x with ``axis`` moved last;  rows = last as a contiguous (rows, length) matrix
        softmax_rows(rows, y);  y reshaped like ``last``, the axis moved back
    """
    _need_float(x, "softmax_rows")
    work = x.reshape(1) if x.ndim == 0 else x
    last = np.moveaxis(work, axis, -1)
    rows = np.ascontiguousarray(last).reshape(math.prod(last.shape[:-1]), last.shape[-1])
    y = np.empty_like(rows)
    softmax_rows(rows, y)
    return np.moveaxis(y.reshape(last.shape), -1, axis).reshape(x.shape)


def leaky_relu(leaky_relu_kernel, x: np.ndarray, alpha: float, threads: int = THREADS) -> np.ndarray:
    """``leaky_relu_kernel`` over x on the GPU, one thread per element:

        blocks = ceil(n / threads)     the last block may stick out past the end: its
                                       threads with i >= n must leave the arrays alone
    """
    _need_float(x, "leaky_relu_kernel")
    flat = np.ascontiguousarray(x).reshape(-1)
    if flat.size == 0:
        return flat.reshape(x.shape)
    d_x = cuda.to_device(flat)
    d_y = cuda.device_array_like(d_x)
    blocks = (flat.size + threads - 1) // threads
    leaky_relu_kernel[blocks, threads](d_x, flat.dtype.type(alpha), d_y)
    return d_y.copy_to_host().reshape(x.shape)


def row_sums(row_sums_kernel, x: np.ndarray, threads: int = ROW_THREADS) -> np.ndarray:
    """``out[r]`` = the sum of row r of the 2-D x: one block of ``threads`` threads per row
    (a power of two, at most MAX_ROW_THREADS: the tree halves it down to one)."""
    _need_float(x, "row_sums_kernel")
    if threads < 1 or threads & (threads - 1) or threads > MAX_ROW_THREADS:
        raise ValueError(f"threads must be a power of two up to {MAX_ROW_THREADS}, not {threads}")
    if x.shape[0] == 0:
        return np.zeros(0, x.dtype)
    d_x = cuda.to_device(np.ascontiguousarray(x))
    d_out = cuda.device_array(x.shape[0], x.dtype)
    row_sums_kernel[x.shape[0], threads](d_x, d_out)
    return d_out.copy_to_host()


def registry(name: str, softmax_rows, leaky_relu_kernel) -> Registry:
    """The exercise's own kernels: Softmax-13 on ``softmax_rows``, LeakyRelu on
    ``leaky_relu_kernel`` (never mixed with onnxkit's)."""
    kernels = Registry(name)

    @op("Softmax", 13, registry=kernels)
    def softmax(input, *, axis=-1):  # noqa: A002 (the spec's input name)
        return softmax_13(softmax_rows, input, axis)

    @op("LeakyRelu", 6, 16, registry=kernels)
    def leaky_relu_op(X, *, alpha=0.01):
        return leaky_relu(leaky_relu_kernel, X, alpha)

    return kernels
