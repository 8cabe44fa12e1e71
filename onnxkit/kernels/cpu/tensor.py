"""Gather, GatherND, Expand, Transpose and Concat on the ``cpu`` executor: numpy's copies into
reused buffers.

    Gather:    out = take(data, indices (negatives wrapped), axis)
    GatherND:  out = data[indices[..., 0], ..., indices[..., k - 1]]   (batch_dims 0)
    Expand:    out = broadcast_to(data, broadcast(data.shape, shape)), copied
    Transpose: out = data.transpose(perm)          (a view)
    Concat:    out = concatenate(inputs, axis)

All are pure data movement that numpy already does at memory speed (and at a decoder
step, on a few values each, where the reference kernels' checks cost more than the
copy: an index out of range is left to numpy to find, then to the reference kernel to
name). What the executor adds is the output buffer from the session's pool (no page faults on every
run), and for a Concat whose inputs lie one after another in its output (the concat
axis is the outermost one of size > 1), growth in place: the output is built in the
first input's buffer when that has room, so a chain of Concats copies each piece once.
An output too small for the pool (``_buffers.SMALL``) is numpy's own concatenate.
Transpose is numpy's view, as the reference's, without its check of the permutation
(numpy's own serves, or the plan's: a node's ``perm`` is checked once, ``prepare``).
Small outputs (a decoder step's KV cache, an embedding row) skip the pool and the checks
numpy makes anyway: one numpy call.
https://onnx.ai/onnx/operators/onnx__Gather.html  https://onnx.ai/onnx/operators/onnx__Concat.html
"""

from __future__ import annotations

import math

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import SMALL, empty, grown
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.registry import op
from onnxkit.ops.tensor import concat as ref_concat
from onnxkit.ops.tensor import expand as ref_expand
from onnxkit.ops.tensor import gather as ref_gather
from onnxkit.ops.tensor import gather_nd as ref_gather_nd
from onnxkit.ops.tensor import transpose as ref_transpose
from onnxkit.ops.tensor._util import normalize_axis
from onnxkit.runtime.limits import check_allocation

_PLAIN = "biuf"  # numeric dtypes numpy copies natively
MAX_ROOM = 64 << 20  # bytes a Concat output reserves past its end, to grow in place
CHECKED = 1 << 12  # output bytes from which max_tensor_bytes is checked before numpy runs


@op("Gather", 1, 11, 13, registry=CPU)
def gather(data, indices, *, axis=0):
    if data.dtype.kind not in _PLAIN or indices.dtype.kind not in "iu" or data.ndim == 0 \
            or not -data.ndim <= axis < data.ndim:
        return fall_back(ref_gather.gather, data, indices, axis=axis)
    axis %= data.ndim
    if indices.ndim and indices.size * data.itemsize * (data.size // max(data.shape[axis], 1)) \
            < CHECKED:
        try:  # a small output (a decoder step's embedding row): numpy's own buffer
            return data.take(indices, axis=axis)
        except (IndexError, TypeError):
            return fall_back(ref_gather.gather, data, indices, axis=axis)
    shape = data.shape[:axis] + indices.shape + data.shape[axis + 1:]
    if math.prod(shape) * data.itemsize >= CHECKED:
        check_allocation(shape, data.dtype, "Gather output")
    out = empty(shape, data.dtype)
    try:  # numpy wraps negative indices as Gather does, and raises past either end
        np.take(data, indices, axis=axis, out=out)
    except (IndexError, TypeError):  # the reference names the index out of range
        return fall_back(ref_gather.gather, data, indices, axis=axis)
    return out


@op("GatherND", 11, 12, 13, registry=CPU)
def gather_nd(data, indices, *, batch_dims=0):
    """batch_dims 0: one numpy fancy index, data[indices[..., 0], ..., indices[..., k-1]]."""
    k = indices.shape[-1] if indices.ndim else 0
    if batch_dims != 0 or data.dtype.kind not in _PLAIN or indices.dtype.kind not in "iu" \
            or not 0 < k <= data.ndim:
        return fall_back(ref_gather_nd.gather_nd, data, indices, batch_dims=batch_dims)
    shape = indices.shape[:-1] + data.shape[k:]
    if math.prod(shape) * data.itemsize >= CHECKED:
        check_allocation(shape, data.dtype, "GatherND output")
    try:
        return data[tuple(indices[..., j] for j in range(k))]
    except IndexError:
        return fall_back(ref_gather_nd.gather_nd, data, indices, batch_dims=batch_dims)


@op("Expand", 8, 13, registry=CPU)
def expand(data, shape):
    """A copy of numpy's broadcast view (the multidirectional rule: the result may be
    larger than ``shape``)."""
    if shape.dtype != np.int64 or shape.ndim != 1:
        return fall_back(ref_expand.expand, data, shape)
    try:
        view = np.broadcast_to(data, np.broadcast_shapes(data.shape, tuple(shape.tolist())))
    except ValueError:
        return fall_back(ref_expand.expand, data, shape)
    if view.nbytes >= CHECKED:
        check_allocation(view.shape, data.dtype, "Expand output")
    out = empty(view.shape, data.dtype)
    np.copyto(out, view)
    return out


@op("Transpose", 1, 13, 21, 23, 24, 25, registry=CPU)
def transpose(data, *, perm=None):
    """numpy's view, the permutation checked by numpy (a negative axis, which numpy takes
    and ONNX does not, goes to the reference kernel's error)."""
    if perm is None:
        return data.transpose()
    if len(perm) != data.ndim or min(perm, default=0) < 0:
        return fall_back(ref_transpose.transpose, data, perm=perm)
    try:
        return data.transpose(perm)
    except ValueError:  # a repeated axis
        return fall_back(ref_transpose.transpose, data, perm=perm)


class _PreparedTranspose:
    """A Transpose whose ``perm`` was checked with the plan (a permutation of 0..n-1):
    a tensor of rank n is numpy's view at once; any other goes to ``transpose``."""

    __slots__ = ("perm", "rank")
    op_type = "Transpose"

    def __init__(self, perm: tuple):
        self.perm, self.rank = perm, len(perm)

    def __call__(self, data, **attributes):
        if data.ndim == self.rank:
            return data.transpose(self.perm)
        return transpose(data, **attributes)


def _prepare_transpose(node, attrs: dict, constants: dict, shapes: dict):
    """Transpose's plan-time hook: the permutation checked once, kept as a tuple."""
    perm = attrs.get("perm")
    if perm is None:
        return None
    perm = tuple(int(p) for p in perm)
    return _PreparedTranspose(perm) if sorted(perm) == list(range(len(perm))) else None


transpose.prepare = _prepare_transpose


@op("Concat", 4, 11, 13, registry=CPU)
def concat(*inputs, axis):
    if inputs:  # small pieces of one dtype (a decoder step's KV cache): numpy's own
        first, nbytes = inputs[0], 0
        dtype = first.dtype
        for t in inputs:
            if t.dtype != dtype:
                break
            nbytes += t.nbytes
        else:
            if nbytes < SMALL and dtype.kind in _PLAIN and -first.ndim <= axis < first.ndim:
                try:  # numpy checks the shapes as ONNX does (ranks, the other axes)
                    return np.concatenate(inputs, axis=axis)
                except ValueError:
                    pass  # the checks below send it to the reference, which says why
    dtype = inputs[0].dtype if inputs else None
    if dtype is None or dtype.kind not in _PLAIN or inputs[0].ndim == 0:
        return fall_back(ref_concat.concat, *inputs, axis=axis)
    rank = inputs[0].ndim
    axis = normalize_axis(axis, rank)
    head, tail = inputs[0].shape[:axis], inputs[0].shape[axis + 1:]
    total = 0
    for t in inputs:  # one loop: a Concat of small pieces costs its checks, not its copy
        s = t.shape
        if t.dtype != dtype or len(s) != rank or s[:axis] != head or s[axis + 1:] != tail:
            return fall_back(ref_concat.concat, *inputs, axis=axis)
        total += s[axis]
    shape = head + (total,) + tail
    if math.prod(shape) * inputs[0].itemsize < SMALL:  # not pooled: numpy's own is quickest
        return np.concatenate(inputs, axis=axis)
    if all(d == 1 for d in head):  # the inputs lie one after another in the output
        return _append(inputs, shape)
    out = empty(shape, inputs[0].dtype)
    np.concatenate(inputs, axis=axis, out=out)
    return out


def _append(inputs, shape):
    """Concat along the outermost axis of size > 1: the output is the inputs' bytes one
    after another. Built in the first input's own buffer when it has room past it
    (``grown``: DenseNet's chain, x_k+1 = Concat(x_k, f(x_k)), copies only f(x_k)),
    else in a new buffer with room to grow to twice the output (up to ``MAX_ROOM``)."""
    first = inputs[0]
    out = grown(first, shape)
    if out is not None:  # first's values are in place already
        pieces, offset = inputs[1:], first.size
    else:
        check_allocation(shape, first.dtype, "Concat output")
        nbytes = math.prod(shape) * first.dtype.itemsize
        out = empty(shape, first.dtype, capacity=nbytes + min(nbytes, MAX_ROOM))
        pieces, offset = inputs, 0
    flat = out.reshape(-1)
    for t in pieces:
        np.copyto(flat[offset:offset + t.size], t.reshape(-1))
        offset += t.size
    return out
