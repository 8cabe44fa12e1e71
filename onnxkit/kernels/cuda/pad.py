"""Pad and Tile on the GPU: one thread per output element.

    for each axis d of output element i (o_d its position, begin_d the pad in front):
        q_d = pad_source(o_d, begin_d, size_d, mode)    (indexing.py: constant, reflect,
                                                         edge or wrap; -1 for the constant)
    Y[i] = value if some q_d == -1 else X[base + sum_d q_d * stride_d]

Negative pads crop first (``base`` skips what they remove), as the reference does. Tile
is a wrap pad: begin 0, ``(repeats - 1) * dim`` after. The pads, axes, constant and
repeats inputs are read on the host.
https://onnx.ai/onnx/operators/onnx__Pad.html  https://onnx.ai/onnx/operators/onnx__Tile.html
"""

import numpy as np
from numba import cuda

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (DEVICE_DTYPES, HostFallback, device, empty, host,
                                          launch_1d, need_dtype, shape_tuple)
from onnxkit.kernels.indexing import contiguous_strides, for_cuda, pad_source
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axes, normalize_axis, scalar_int
from onnxkit.ops.tensor.pad import _fill_value
from onnxkit.runtime.limits import check_allocation

_source = for_cuda(pad_source)
MODES = {"constant": 0, "reflect": 1, "edge": 2, "wrap": 3}


@cuda.jit
def _pad_kernel(x, base, sizes, strides, begins, mode, shape, value, out):
    i = cuda.grid(1)
    if i < out.size:
        offset = base
        rest = i
        for axis in range(len(shape) - 1, -1, -1):
            q = _source(rest % shape[axis], begins[axis], sizes[axis], mode)
            rest //= shape[axis]
            if q < 0:
                offset = -1
                break
            offset += q * strides[axis]
        out[i] = value if offset < 0 else x[offset]


def _launch(X, base, sizes, begins, mode, shape, value=0):
    """Output of ``shape`` reading the ``sizes`` block of X at ``base`` from ``begins`` on."""
    check_allocation(shape, X.dtype, "output")
    out = empty(shape, X.dtype)
    launch_1d(_pad_kernel, out.size, X.flat, int(base), shape_tuple(sizes),
              shape_tuple(contiguous_strides(X.shape)), shape_tuple(begins), mode,
              shape_tuple(shape), X.dtype.type(value), out.flat)
    return out


def _pad(data, pads, mode, value, axes=None, modes=("constant", "reflect", "edge")):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    if mode not in modes:
        raise KernelInputError(f"unsupported pad mode {mode!r} (accepted: {', '.join(modes)})")
    axes = list(range(X.ndim)) if axes is None else normalize_axes(axes, X.ndim)
    if len(pads) != 2 * len(axes):
        raise KernelInputError(f"pads {pads} must hold 2 values per padded axis ({len(axes)} axes)")
    width = [(0, 0)] * X.ndim
    for i, axis in enumerate(axes):
        width[axis] = (pads[i], pads[i + len(axes)])
    own = contiguous_strides(X.shape)
    base, sizes, begins, shape = 0, [], [], []
    for axis, (dim, (b, e)) in enumerate(zip(X.shape, width)):
        kept = range(dim)[max(-b, 0):dim - max(-e, 0)]  # negative pads crop (as the reference)
        if len(kept):
            base += kept.start * own[axis]
        sizes.append(len(kept))
        begins.append(max(b, 0))
        shape.append(len(kept) + max(b, 0) + max(e, 0))
    grown = [n != size for n, size in zip(shape, sizes)]
    if mode != "constant" and any(grown) and (0 in sizes or (mode == "reflect" and any(
            g and size < 2 for g, size in zip(grown, sizes)))):
        raise HostFallback(f"{mode} padding of {sizes} elements: the reference says why not")
    value = None if value is None else host(value, "constant_value")
    fill = np.asarray(_fill_value(value, X.dtype)).astype(X.dtype)
    return _launch(X, base, sizes, begins, MODES[mode], shape, fill)


@op("Pad", 1, registry=CUDA)
def pad_v1(data, *, paddings, mode="constant", value=0.0):
    return _pad(data, paddings, mode, value)


@op("Pad", 2, registry=CUDA)
def pad_v2(data, *, pads, mode="constant", value=0.0):
    return _pad(data, pads, mode, value)


@op("Pad", 11, 13, registry=CUDA)
def pad_v11(data, pads, constant_value=None, *, mode="constant"):
    return _pad(data, int_list(host(pads, "pads")), mode, constant_value)


@op("Pad", 18, registry=CUDA)
def pad_v18(data, pads, constant_value=None, axes=None, *, mode="constant"):
    return _pad(data, int_list(host(pads, "pads")), mode, constant_value,
                None if axes is None else int_list(host(axes, "axes")))


@op("Pad", 19, 21, 23, 24, 25, registry=CUDA)
def pad(data, pads, constant_value=None, axes=None, *, mode="constant"):
    return _pad(data, int_list(host(pads, "pads")), mode, constant_value,
                None if axes is None else int_list(host(axes, "axes")), tuple(MODES))


def _tile(X, repeats):
    if len(repeats) != X.ndim or any(r < 0 for r in repeats):
        raise KernelInputError(f"repeats {repeats} must be {X.ndim} non-negative counts "
                         f"(one per axis of {list(X.shape)})")
    return _launch(X, 0, X.shape, (0,) * X.ndim, MODES["wrap"],
                   [d * r for d, r in zip(X.shape, repeats)])


@op("Tile", 1, registry=CUDA)
def tile_v1(data, tiles, axis):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    repeats = [1] * X.ndim
    repeats[normalize_axis(scalar_int(host(axis, "axis"), "axis"), X.ndim)] = scalar_int(
        host(tiles, "tiles"), "tiles")
    return _tile(X, repeats)


@op("Tile", 6, 13, registry=CUDA)
def tile(data, repeats):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    return _tile(X, int_list(host(repeats, "repeats")))
