"""Reshape, Slice, Split, Squeeze, Unsqueeze and Flatten on the ``cpu`` executor: the
reference's views, the index inputs worked out once.

    Reshape:  data.reshape(target_shape(data.shape, shape, allowzero))
    Slice:    data[index], index = one Python slice per axis (ONNX's clamping rules)
    Split:    data[index_p] for each output p, index_p = the slice of piece p on ``axis``
    Squeeze, Unsqueeze (axes an input, from version 13), Flatten:
              data.reshape(the reference's output shape for data.shape)

All three cost no arithmetic: the time is the reading of the small index tensors, which the
reference kernels convert to Python ints on every call. Where those are initializers
(nearly every model), the node's kernel is prepared with the plan (``prepare``): it
keeps the target shape or the index per data shape it meets, so a node's later runs go
straight to numpy's view. Whatever the reference rejects is rejected the same way: a
new data shape computes with the reference's own helpers. A Split whose sizes do not
fit (or any other bad input) runs the reference kernel, which says what is wrong.
https://onnx.ai/onnx/operators/onnx__Reshape.html  https://onnx.ai/onnx/operators/onnx__Slice.html
https://onnx.ai/onnx/operators/onnx__Split.html
"""

from __future__ import annotations

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.registry import op
from onnxkit.ops.tensor import flatten as ref_flatten
from onnxkit.ops.tensor import split as ref_split
from onnxkit.ops.tensor import squeeze as ref_squeeze
from onnxkit.ops.tensor._util import int_list
from onnxkit.ops.tensor.reshape import target_shape
from onnxkit.ops.tensor.slice import slice_index

MAX_SHAPES = 64  # data shapes one node keeps an answer for; past this it starts again


@op("Reshape", 5, 13, registry=CPU)
def reshape_v5(data, shape):
    return reshape(data, shape)


@op("Reshape", 14, 19, 21, 23, 24, 25, registry=CPU)
def reshape(data, shape, *, allowzero=0):
    return data.reshape(target_shape(data.shape, int_list(shape), allowzero))


@op("Slice", 10, 11, 13, registry=CPU)
def slice_(data, starts, ends, axes=None, steps=None):
    return data[_index(data.shape, starts, ends, axes, steps)]


def _index(shape, starts, ends, axes, steps) -> tuple:
    return slice_index(shape, int_list(starts), int_list(ends),
                       None if axes is None else int_list(axes),
                       None if steps is None else int_list(steps))


class _Kept:
    """A node's answers by data shape, for index inputs that are the plan's initializers
    (``given``: those arrays; a call with other arrays computes as the reference does)."""

    __slots__ = ("given", "by_shape", "extra")

    def __init__(self, given: tuple, extra=None):
        self.given, self.by_shape, self.extra = given, {}, extra

    def same(self, arrays) -> bool:
        return all(a is b for a, b in zip(arrays, self.given))

    def remember(self, shape, value):
        if len(self.by_shape) >= MAX_SHAPES:
            self.by_shape.clear()
        self.by_shape[shape] = value
        return value


class _PreparedReshape(_Kept):
    op_type = "Reshape"

    def __call__(self, data, shape, **_attributes):
        if shape is not self.given[0]:
            return data.reshape(target_shape(data.shape, int_list(shape), self.extra))
        target = self.by_shape.get(data.shape)
        if target is None:
            target = self.remember(data.shape, target_shape(data.shape, int_list(shape),
                                                            self.extra))
        return data.reshape(target)


class _PreparedSlice(_Kept):
    op_type = "Slice"

    def __call__(self, data, starts, ends, axes=None, steps=None):
        arrays = (starts, ends, axes, steps)
        if not self.same(arrays):
            return data[_index(data.shape, *arrays)]
        index = self.by_shape.get(data.shape)
        if index is None:
            index = self.remember(data.shape, _index(data.shape, *arrays))
        return data[index]


def _prepare_reshape(node, attrs: dict, constants: dict, shapes: dict):
    """Reshape's plan-time hook: kept answers when ``shape`` is an initializer."""
    shape = constants.get(1)
    return None if shape is None else _PreparedReshape((shape,), attrs.get("allowzero", 0))


def _prepare_slice(node, attrs: dict, constants: dict, shapes: dict):
    """Slice's plan-time hook: kept answers when every index input the node gives is an
    initializer (absent ones stay None)."""
    given = tuple(constants.get(i) for i in range(1, 5))
    names = list(node.input[1:5]) + [""] * 4
    if any(name and g is None for name, g in zip(names, given)):
        return None
    return _PreparedSlice(given)


def _split_index(shape, axis, sizes, num_outputs, n_outputs):
    """One index tuple per output of a Split of a tensor of ``shape``, or None where the
    reference kernel must decide (and raise)."""
    rank = len(shape)
    if not -rank <= axis < rank:
        return None
    axis %= rank
    dim = shape[axis]
    if sizes is None and num_outputs is not None:  # v18: pieces of ceil(dim / n)
        if num_outputs != n_outputs or num_outputs < 1:
            return None
        chunk = -(-dim // num_outputs)
        sizes = [chunk] * (num_outputs - 1) + [dim - chunk * (num_outputs - 1)]
    elif sizes is None:  # as many equal pieces as outputs
        if n_outputs < 1 or dim % n_outputs:
            return None
        sizes = [dim // n_outputs] * n_outputs
    if len(sizes) != n_outputs or any(s < 0 for s in sizes) or sum(sizes) != dim:
        return None
    lead, start, index = (slice(None),) * axis, 0, []
    for size in sizes:
        index.append(lead + (slice(start, start + size),))
        start += size
    return tuple(index)


def _split(data, split, axis, num_outputs, n_outputs, kept=None):
    if split is not None and num_outputs is not None:
        return None  # both given: the reference's error
    if kept is not None and split is kept.given[0]:
        index = kept.by_shape.get(data.shape)
        if index is None:
            index = _split_index(data.shape, axis, None if split is None else int_list(split),
                                 num_outputs, n_outputs)
            if index is None:
                return None
            kept.remember(data.shape, index)
    else:
        index = _split_index(data.shape, axis, None if split is None else int_list(split),
                             num_outputs, n_outputs)
        if index is None:
            return None
    return tuple(data[i] for i in index)


@op("Split", 13, context=True, registry=CPU)
def split_v13(data, split=None, *, axis=0, ctx):
    pieces = _split(data, split, axis, None, ctx.n_outputs)
    return fall_back(ref_split.split_v13, data, split, axis=axis, ctx=ctx) if pieces is None \
        else pieces


@op("Split", 18, context=True, registry=CPU)
def split(data, split=None, *, axis=0, num_outputs=None, ctx):
    pieces = _split(data, split, axis, num_outputs, ctx.n_outputs)
    if pieces is None:
        return fall_back(ref_split.split, data, split, axis=axis, num_outputs=num_outputs,
                         ctx=ctx)
    return pieces


class _PreparedSplit(_Kept):
    """A Split node's pieces by data shape, its output count taken from the node."""

    op_type = "Split"

    def __call__(self, data, split=None, *, axis=0, num_outputs=None, ctx):
        pieces = _split(data, split, axis, num_outputs, self.extra, self)
        if pieces is not None:
            return pieces
        if num_outputs is None:
            return fall_back(ref_split.split_v13, data, split, axis=axis, ctx=ctx)
        return fall_back(ref_split.split, data, split, axis=axis, num_outputs=num_outputs, ctx=ctx)


def _prepare_split(node, attrs: dict, constants: dict, shapes: dict):
    """Split's plan-time hook: kept pieces per data shape, when ``split`` is absent or an
    initializer."""
    given = constants.get(1)
    if len(node.input) > 1 and node.input[1] and given is None:
        return None
    return _PreparedSplit((given,), len(node.output))


reshape.prepare = _prepare_reshape
reshape_v5.prepare = _prepare_reshape
slice_.prepare = _prepare_slice
split_v13.prepare = _prepare_split
split.prepare = _prepare_split


# Squeeze, Unsqueeze and Flatten: a reshape whose target the reference works out for each
# data shape; prepared, a node keeps the target per data shape (an error, such as a
# squeezed axis whose size is not 1, is the reference's, raised on every call)


@op("Squeeze", 13, 21, 23, 24, 25, registry=CPU)
def squeeze(data, axes=None):
    return ref_squeeze.squeeze(data, axes)


@op("Unsqueeze", 13, 21, 23, 24, 25, registry=CPU)
def unsqueeze(data, axes):
    return ref_squeeze.unsqueeze(data, axes)


@op("Flatten", 1, 9, 11, 13, 21, 23, 24, 25, registry=CPU)
def flatten(data, *, axis=1):
    return ref_flatten.flatten(data, axis=axis)


class _PreparedShape(_Kept):
    """A Squeeze / Unsqueeze with initializer axes, or a Flatten: the output shape per
    data shape, from the reference kernel's own answer (``extra``: it, called with the
    node's index input and attributes)."""

    def __call__(self, data, axes=None, **attributes):
        if axes is not self.given[0]:
            return self.extra(data, axes, **attributes)
        target = self.by_shape.get(data.shape)
        if target is None:
            target = self.remember(data.shape, self.extra(data, axes, **attributes).shape)
        return data.reshape(target)


def _flatten_call(data, axes=None, **attributes):
    return ref_flatten.flatten(data, **attributes)


def _prepare_axes(reference):
    def prepare(node, attrs: dict, constants: dict, shapes: dict):
        """Squeeze's / Unsqueeze's plan-time hook: kept shapes when ``axes`` is absent or
        an initializer."""
        given = constants.get(1)
        if len(node.input) > 1 and node.input[1] and given is None:
            return None
        return _PreparedShape((given,), reference)
    return prepare


def _prepare_flatten(node, attrs: dict, constants: dict, shapes: dict):
    return _PreparedShape((None,), _flatten_call)


squeeze.prepare = _prepare_axes(ref_squeeze.squeeze)
unsqueeze.prepare = _prepare_axes(ref_squeeze.unsqueeze)
flatten.prepare = _prepare_flatten
