"""One block per row: the threads of a block share a row's work and combine in shared memory.

    partial = fold of the row elements t, t + nt, t + 2 nt, ...      (nt threads, t = own id)
    buf[t] = partial
    for step = nt/2, nt/4, ..., 1:        (tree: nt is a power of two)
        sync; if t < step: buf[t] = combine(buf[t], buf[t + step])
    sync; result = buf[0]; sync           (everyone reads it before buf is reused)

Softmax, LayerNormalization, InstanceNormalization and the Reduce operators are built on
this; ``row_moments`` is the mean and variance of a row the two normalizations share.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.kernels.cuda._device import simulated
from onnxkit.kernels.cuda._scalar import add
from onnxkit.kernels.indexing import for_cuda

#: threads per row block, at most (the shared buffers are this long)
MAX_ROW_THREADS = 256


@lru_cache(maxsize=None)
def block_reduce(combine):
    """A device function ``reduce(buf, t, nt, partial)`` folding the block's partials."""
    f = for_cuda(combine)

    @cuda.jit(device=True)
    def reduce(buf, t, nt, partial):
        buf[t] = partial
        step = nt // 2
        while step > 0:
            cuda.syncthreads()
            if t < step:
                buf[t] = f(buf[t], buf[t + step])
            step //= 2
        cuda.syncthreads()
        result = buf[0]
        cuda.syncthreads()
        return result

    return reduce


def row_threads(length: int) -> int:
    """A power of two covering ``length`` elements, at most MAX_ROW_THREADS (32 simulated)."""
    most = 32 if simulated() else MAX_ROW_THREADS
    threads = 1
    while threads < length and threads < most:
        threads *= 2
    return threads


@lru_cache(maxsize=None)
def row_moments(work):
    """A device function ``moments(x, base, length, buf, t, nt) -> (mean, var)`` of the row
    ``x[base : base + length]``, computed in the dtype ``work`` (two passes: mean, then the
    mean of the squared deviations, the population variance)."""
    total_of = block_reduce(add)
    cast = np.dtype(work).type
    zero = cast(0)

    @cuda.jit(device=True)
    def moments(x, base, length, buf, t, nt):
        total = zero
        for k in range(t, length, nt):
            total += cast(x[base + k])
        mean = cast(total_of(buf, t, nt, total) / length)
        total = zero
        for k in range(t, length, nt):
            d = cast(x[base + k]) - mean
            total += d * d
        return mean, cast(total_of(buf, t, nt, total) / length)

    return moments
