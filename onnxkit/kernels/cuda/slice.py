"""Slice and Split on the GPU: one thread per output element, reading X through strides.

    Slice: per axis, range(dim)[start:end:step] (the reference's clamping) begins at
           first and walks step; Y[i] = X[base + off(i)] with
           base = sum_d first_d * stride_d,  strides = step_d * stride_d  (negative steps too)
    Split: piece k is the slice [offset_k : offset_k + size_k] of ``axis``, one launch each

The starts, ends, axes, steps and split inputs are read on the host. The rules (which
axes, how ends clamp, how a dimension splits) are the reference kernels' own: Slice's
``slice_index``, Split's run on a zero-byte broadcast view.
https://onnx.ai/onnx/operators/onnx__Slice.html  https://onnx.ai/onnx/operators/onnx__Split.html
"""

import numpy as np

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, device, host, need_dtype
from onnxkit.kernels.cuda._elementwise import strided
from onnxkit.kernels.indexing import contiguous_strides
from onnxkit.ops.registry import op
from onnxkit.ops.tensor import split as split_ref
from onnxkit.ops.tensor._util import int_list, normalize_axis
from onnxkit.ops.tensor.slice import slice_index


def _slice(data, starts, ends, axes, steps):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    index = slice_index(X.shape, starts, ends, axes, steps)
    own = contiguous_strides(X.shape)
    shape, strides, base = [], [], 0
    for axis, (dim, part) in enumerate(zip(X.shape, index)):
        picked = range(dim)[part]
        shape.append(len(picked))
        # a stride matters with two elements or more (a lone one may have a step near 2**63)
        strides.append(picked.step * int(own[axis]) if len(picked) > 1 else 0)
        if len(picked):
            base += picked.start * int(own[axis])
    return strided(X, shape, strides, base)


@op("Slice", 1, registry=CUDA)
def slice_v1(data, *, starts, ends, axes=None):
    return _slice(data, starts, ends, axes, None)


@op("Slice", 10, 11, 13, registry=CUDA)
def slice_(data, starts, ends, axes=None, steps=None):
    def read(value, what):
        return None if value is None else int_list(host(value, what))

    return _slice(data, read(starts, "starts"), read(ends, "ends"), read(axes, "axes"),
                  read(steps, "steps"))


def _split(reference, data, split_input, *, ctx, **attrs):
    """The pieces ``reference`` (a reference Split kernel) cuts, copied out on the device."""
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    stand_in = np.broadcast_to(np.zeros((), np.int8), X.shape)
    inputs = () if split_input is None else (host(split_input, "split"),)
    pieces = reference(stand_in, *inputs, ctx=ctx, **attrs)
    axis = normalize_axis(attrs.get("axis", 0), X.ndim)
    own = contiguous_strides(X.shape)
    outputs, offset = [], 0
    for piece in pieces:
        outputs.append(strided(X, piece.shape, own, offset * own[axis]))
        offset += piece.shape[axis]
    return tuple(outputs)


@op("Split", 1, context=True, registry=CUDA)
def split_v1(data, split_input=None, *, axis=0, split=None, ctx):
    return _split(split_ref.split_v1, data, split_input, axis=axis, split=split, ctx=ctx)


@op("Split", 2, 11, context=True, registry=CUDA)
def split_v2(data, *, axis=0, split=None, ctx):
    return _split(split_ref.split_v2, data, None, axis=axis, split=split, ctx=ctx)


@op("Split", 13, context=True, registry=CUDA)
def split_v13(data, split=None, *, axis=0, ctx):
    return _split(split_ref.split_v13, data, split, axis=axis, ctx=ctx)


@op("Split", 18, context=True, registry=CUDA)
def split(data, split=None, *, axis=0, num_outputs=None, ctx):
    return _split(split_ref.split, data, split, axis=axis, num_outputs=num_outputs, ctx=ctx)
