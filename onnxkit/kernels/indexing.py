"""Index math shared by the Numba CPU and Numba CUDA kernels, written once.

Every helper here is a plain Python function over ints and 1-D int64 arrays: it runs
as is (tests, reading), and compiles for either target::

    from onnxkit.kernels.indexing import broadcast_offset, for_cpu, for_cuda
    offset_cpu = for_cpu(broadcast_offset)     # numba.njit(inline="always")
    offset_gpu = for_cuda(broadcast_offset)    # numba.cuda.jit(device=True)

A helper never calls another helper (a plain function cannot be called from compiled
code), so each one spells out its little formula. Host-side planning (strides, shapes,
window geometry) is plain numpy at the bottom of the module.

Tensors are row-major and contiguous; an element's *offset* is its position in the flat
buffer, its *ordinal* its position in row-major order over some iteration shape.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from onnxkit.errors import KernelInputError

# ---------------------------------------------------------------- compiled helpers


def broadcast_offset(ordinal, shape, strides):
    """Offset of the ``ordinal``-th element of ``shape`` in a tensor with ``strides``.

        offset = sum_d index[d] * strides[d]   where index = unravel(ordinal, shape)

    With ``strides`` 0 on the axes an input is broadcast along (see
    ``broadcast_strides``) this reads the input element numpy broadcasting pairs with
    output element ``ordinal``; with permuted strides it reads a transposed tensor.
    """
    offset = 0
    rest = ordinal
    for axis in range(len(shape) - 1, -1, -1):
        offset += (rest % shape[axis]) * strides[axis]
        rest //= shape[axis]
    return offset


def unravel_index(ordinal, shape, index):
    """Write the row-major multi-index of ``ordinal`` over ``shape`` into ``index``."""
    rest = ordinal
    for axis in range(len(shape) - 1, -1, -1):
        index[axis] = rest % shape[axis]
        rest //= shape[axis]


def ravel_index(index, strides):
    """Offset of a multi-index: ``sum_d index[d] * strides[d]``."""
    offset = 0
    for axis in range(len(index)):
        offset += index[axis] * strides[axis]
    return offset


def window_start(o, stride, pad_begin):
    """First input position (maybe negative, in the padding) read by window ``o``."""
    return o * stride - pad_begin


def window_taps(start, dilation, kernel, size):
    """Taps ``j`` of a window starting at ``start`` that land inside ``[0, size)``.

    Tap ``j`` reads position ``start + j * dilation``; returns ``(first, stop)`` so the
    valid taps are ``range(first, stop)`` (empty when ``first >= stop``)::

        first = max(0, ceil(-start / dilation))
        stop  = min(kernel, ceil((size - start) / dilation))
    """
    first = 0
    if start < 0:
        first = (-start + dilation - 1) // dilation
    stop = kernel
    reach = size - start  # positions left from start to the end of the input
    if reach <= 0:
        stop = 0
    elif (reach + dilation - 1) // dilation < kernel:
        stop = (reach + dilation - 1) // dilation
    return first, stop


def conv_input_coord(o, j, stride, pad_begin, dilation):
    """Input position read by tap ``j`` of output position ``o``: ``o*s - begin + j*d``."""
    return o * stride - pad_begin + j * dilation


def im2col_row(c, kd, kh, kw, kernel_d, kernel_h, kernel_w):
    """Row of the im2col matrix for channel ``c`` and kernel tap ``(kd, kh, kw)``.

    Rows are ordered (channel, kernel depth, kernel height, kernel width), the layout of
    a weight tensor ``W[m, c, kd, kh, kw]`` flattened to ``W[m, row]``; 1-D and 2-D
    convolutions use kernel_d = 1 (and kernel_h = 1).
    """
    return ((c * kernel_d + kd) * kernel_h + kh) * kernel_w + kw


def im2col_row_split(row, kernel_d, kernel_h, kernel_w):
    """Inverse of ``im2col_row``: ``row -> (c, kd, kh, kw)``."""
    kw = row % kernel_w
    rest = row // kernel_w
    kh = rest % kernel_h
    rest //= kernel_h
    kd = rest % kernel_d
    return rest // kernel_d, kd, kh, kw


def im2col_col_split(col, out_d, out_h, out_w):
    """Column of the im2col matrix -> output position ``(od, oh, ow)`` (row-major)."""
    ow = col % out_w
    rest = col // out_w
    oh = rest % out_h
    return rest // out_h, oh, ow


def transposed_source(o, j, stride, pad_begin, dilation, size):
    """Input position whose tap ``j`` lands on output ``o`` of a transposed convolution,
    or -1 when none does (ConvTranspose scatters input ``q`` to ``q*s - begin + j*d``)::

        q = (o + begin - j * d) / s     when that is a whole number in [0, size)
    """
    q = o + pad_begin - j * dilation
    if q < 0 or q % stride != 0:
        return -1
    q //= stride
    if q >= size:
        return -1
    return q


def pad_source(o, begin, size, mode):
    """Input position that output position ``o`` of a padded axis reads, or -1 (a constant).

    ``q = o - begin`` inside ``[0, size)`` is itself; outside it, by ``mode``:
    0 constant: -1;  1 reflect: mirrored about the edges, which are not repeated (period
    ``2 * (size - 1)``, so ``size >= 2``);  2 edge: clamped to ``[0, size - 1]``;
    3 wrap: ``q mod size`` (Tile is a wrap pad with begin 0).
    """
    q = o - begin
    if q >= 0 and q < size:
        return q
    if mode == 0:
        return -1
    if mode == 2:
        return 0 if q < 0 else size - 1
    if mode == 3:
        return q % size
    period = 2 * (size - 1)
    q = q % period
    if q >= size:
        q = period - q
    return q


HELPERS = (broadcast_offset, unravel_index, ravel_index, window_start, window_taps,
           conv_input_coord, im2col_row, im2col_row_split, im2col_col_split, transposed_source,
           pad_source)

# ---------------------------------------------------------------- compiling for a target


@lru_cache(maxsize=None)
def for_cpu(fn):
    """``fn`` compiled for the CPU kernels: ``numba.njit(inline="always")``."""
    import numba

    return numba.njit(inline="always")(fn)


def simulated() -> bool:
    """True when the cuda kernels run in numba's simulator (``NUMBA_ENABLE_CUDASIM=1``); the
    one test of it, which ``onnxkit.kernels.cuda._device`` re-exports for the cuda modules."""
    from numba import config

    return bool(config.ENABLE_CUDASIM)


@lru_cache(maxsize=None)
def for_cuda(fn):
    """``fn`` compiled as a CUDA device function: ``numba.cuda.jit(device=True)``.

    Under ``NUMBA_ENABLE_CUDASIM=1`` it is ``fn`` itself when ``fn`` never names ``cuda``
    (the index helpers, the scalar formulas). The simulator's own device function runs the
    same Python, but first swaps the ``cuda`` module in the globals of ``fn``'s module,
    under a lock shared by every simulated thread. With many threads each calling the
    helpers thousands of times, that lock made a kernel slower with every thread added (a
    1000x1000 MaxPool with 60x80 windows did not end in 2,400 s).
    """
    from numba import cuda

    code = fn.__code__
    if simulated() and "cuda" not in code.co_names + code.co_freevars:
        return fn
    return cuda.jit(device=True)(fn)


def for_both(fn):
    """``(for_cpu(fn), for_cuda(fn))``."""
    return for_cpu(fn), for_cuda(fn)


# ---------------------------------------------------------------- host-side planning


def contiguous_strides(shape) -> np.ndarray:
    """Row-major element strides of ``shape`` (int64)."""
    strides = np.ones(len(shape), dtype=np.int64)
    for axis in range(len(shape) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    return strides


def broadcast_strides(shape, out_shape) -> np.ndarray:
    """Element strides of a contiguous ``shape`` read as ``out_shape`` (numpy broadcasting).

    Axes are right-aligned; an axis of size 1 (or a missing leading axis) gets stride 0.
    """
    shape = tuple(shape)
    out_shape = tuple(out_shape)
    if len(shape) > len(out_shape):
        raise KernelInputError(f"shape {list(shape)} does not broadcast to {list(out_shape)}")
    own = contiguous_strides(shape)
    strides = np.zeros(len(out_shape), dtype=np.int64)
    lead = len(out_shape) - len(shape)
    for axis, size in enumerate(shape):
        if size == out_shape[lead + axis]:
            strides[lead + axis] = own[axis] if size != 1 else 0
        elif size != 1:
            raise KernelInputError(f"shape {list(shape)} does not broadcast to {list(out_shape)}")
    return strides


def transpose_strides(shape, perm) -> np.ndarray:
    """Strides that read a contiguous ``shape`` in the axis order ``perm``.

    Output element ``i`` of ``Transpose(x, perm)`` is ``x.flat[broadcast_offset(i,
    out_shape, transpose_strides(x.shape, perm))]``.
    """
    own = contiguous_strides(shape)
    return np.array([own[p] for p in perm], dtype=np.int64)


def spatial3(values, fill) -> tuple:
    """Per-axis values of a 1-, 2- or 3-D window op, padded in front to three axes.

    1-D and 2-D convolutions and pools run as 3-D ones over leading axes of size 1.
    """
    values = tuple(int(v) for v in values)
    return (fill,) * (3 - len(values)) + values
