"""Reshape and Slice on the ``cpu`` executor: the reference's views, the index inputs
worked out once.

    Reshape:  data.reshape(target_shape(data.shape, shape, allowzero))
    Slice:    data[index], index = one Python slice per axis (ONNX's clamping rules)

Both cost no arithmetic: the time is the reading of the small index tensors, which the
reference kernels convert to Python ints on every call. Where those are initializers
(nearly every model), the node's kernel is prepared with the plan (``prepare``): it
keeps the target shape or the index per data shape it meets, so a node's later runs go
straight to numpy's view. Whatever the reference rejects is rejected the same way: a
new data shape computes with the reference's own helpers.
https://onnx.ai/onnx/operators/onnx__Reshape.html  https://onnx.ai/onnx/operators/onnx__Slice.html
"""

from __future__ import annotations

from onnxkit.kernels.cpu import CPU
from onnxkit.ops.registry import op
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


reshape.prepare = _prepare_reshape
reshape_v5.prepare = _prepare_reshape
slice_.prepare = _prepare_slice
