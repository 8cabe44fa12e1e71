"""Hypothesis strategies for differential testing, in one place: one ``Spec`` per operator
version, drawing its inputs (shapes, dtypes, edge values: NaN, inf, -0.0, empty dimensions,
broadcasting) and attributes (negative axes, flags). ``examples(spec)`` draws (model, feeds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, math.nan, math.inf, -math.inf, 1e-39, 3e38]


@dataclass(frozen=True)
class Spec:
    op: str
    opset: int
    tag: str
    draw: Callable  # draw(data) -> (inputs, constants, attrs, n_outputs)


def floats32(shape):
    elements = st.one_of(st.sampled_from(EDGE_FLOATS),
                         st.floats(-100, 100, width=32, allow_subnormal=False))
    return hnp.arrays(np.float32, shape, elements=elements)


def ints(dtype, shape, lo=-20, hi=20):
    if np.dtype(dtype).kind == "u":
        lo, hi = max(lo, 0), max(hi, 9)
    return hnp.arrays(dtype, shape, elements=st.integers(lo, hi))


SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


def _unary(op, opset):
    def draw(data):
        return {"x": data.draw(floats32(data.draw(SHAPES)))}, {}, {}, 1
    return Spec(op, opset, "float", draw)


def _binary(op, opset, dtype=np.float32, attrs=None):
    def draw(data):
        shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                              min_side=0, max_side=3))
        a, b = shapes.input_shapes
        make = floats32 if dtype == np.float32 else (lambda s: ints(dtype, s))
        return {"a": data.draw(make(a)), "b": data.draw(make(b))}, {}, dict(attrs or {}), 1
    return Spec(op, opset, np.dtype(dtype).name + "".join(f"_{k}{v}" for k, v in (attrs or {}).items()), draw)


def _axis(data, rank):
    return data.draw(st.integers(-rank, rank - 1))


def _softmax(op, opset):
    def draw(data):
        x = data.draw(floats32(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))))
        return {"x": x}, {}, {"axis": _axis(data, x.ndim)}, 1
    return Spec(op, opset, "axis", draw)


def _reduce(op, opset, axes_input):
    def draw(data):
        x = data.draw(floats32(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))))
        axes = data.draw(st.lists(st.integers(-x.ndim, x.ndim - 1), max_size=x.ndim, unique_by=lambda a: a % x.ndim))
        attrs = {"keepdims": data.draw(st.sampled_from([0, 1]))}
        consts = {}
        if axes_input:
            attrs["noop_with_empty_axes"] = data.draw(st.sampled_from([0, 1]))
            if axes or data.draw(st.booleans()):
                consts["axes"] = np.array(axes, np.int64)
        elif axes:
            attrs["axes"] = axes
        return {"x": x}, consts, attrs, 1
    return Spec(op, opset, "axes", draw)


def _argmax(op, opset):
    def draw(data):
        shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
        x = data.draw(hnp.arrays(np.float32, shape, elements=st.sampled_from([0.0, 1.0, 2.0, math.nan])))
        attrs = {"axis": _axis(data, x.ndim), "keepdims": data.draw(st.sampled_from([0, 1])),
                 "select_last_index": data.draw(st.sampled_from([0, 1]))}
        return {"x": x}, {}, attrs, 1
    return Spec(op, opset, "ties_nan", draw)


def _clip(opset):
    def draw(data):
        x = data.draw(floats32(data.draw(SHAPES)))
        lo, hi = data.draw(st.sampled_from(EDGE_FLOATS)), data.draw(st.sampled_from(EDGE_FLOATS))
        return {"x": x}, {"min": np.array(lo, np.float32), "max": np.array(hi, np.float32)}, {}, 1
    return Spec("Clip", opset, "bounds", draw)


def _gather(opset):
    def draw(data):
        x = data.draw(floats32(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))))
        axis = _axis(data, x.ndim)
        n = x.shape[axis]
        idx = data.draw(ints(np.int64, data.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)),
                             -n, n - 1))
        return {"x": x}, {"i": idx}, {"axis": axis}, 1
    return Spec("Gather", opset, "negative_indices", draw)


def _cumsum(opset):
    def draw(data):
        x = data.draw(floats32(data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4))))
        attrs = {"exclusive": data.draw(st.sampled_from([0, 1])), "reverse": data.draw(st.sampled_from([0, 1]))}
        return {"x": x}, {"axis": np.array(_axis(data, x.ndim), np.int64)}, attrs, 1
    return Spec("CumSum", opset, "flags", draw)


def _transpose(opset):
    def draw(data):
        x = data.draw(floats32(data.draw(SHAPES)))
        return {"x": x}, {}, {"perm": data.draw(st.permutations(range(x.ndim)))}, 1
    return Spec("Transpose", opset, "perm", draw)


SPECS = (
    [_unary(op, v) for op, v in [("Relu", 14), ("Abs", 13), ("Neg", 13), ("Sqrt", 13), ("Exp", 13),
                                 ("Log", 13), ("Sigmoid", 13), ("Tanh", 13), ("Floor", 13), ("Ceil", 13),
                                 ("Round", 22), ("Sign", 13), ("Reciprocal", 13), ("Erf", 13),
                                 ("Softplus", 22), ("Elu", 22), ("HardSigmoid", 22), ("Atan", 22),
                                 ("Sin", 22), ("Cos", 22), ("IsNaN", 20), ("IsInf", 20)]]
    + [_binary(op, v) for op, v in [("Add", 14), ("Sub", 14), ("Mul", 14), ("Div", 14), ("Pow", 15),
                                    ("Max", 13), ("Min", 13), ("Equal", 19), ("Less", 13), ("Greater", 13)]]
    + [_binary("Mod", 13, np.int32), _binary("Mod", 13, np.float32, {"fmod": 1}),
       _binary("Div", 14, np.int32), _binary("BitShift", 11, np.uint8, {"direction": "LEFT"})]
    + [_softmax(op, v) for op, v in [("Softmax", 13), ("LogSoftmax", 13), ("Hardmax", 13)]]
    + [_reduce(op, 18, True) for op in ("ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd",
                                        "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare")]
    + [_reduce("ReduceSum", 13, True), _reduce("ReduceSum", 11, False), _reduce("ReduceMax", 13, False)]
    + [_argmax("ArgMax", 13), _argmax("ArgMin", 13), _clip(13), _gather(13), _cumsum(14), _transpose(21)]
)


@st.composite
def examples(draw, spec: Spec):
    """(model, feeds) for one draw of ``spec``; drawing retries shapes the node rejects."""
    from hypothesis import assume

    from onnxkit.conformance.differential import single_node_model

    inputs, consts, attrs, n_out = spec.draw(_Data(draw))
    try:
        model = single_node_model(spec.op, spec.opset, inputs, attrs, n_out, consts)
    except Exception:  # shape inference refuses this combination: not a valid model
        assume(False)
    return model, inputs


class _Data:
    """``data.draw`` inside a composite strategy."""

    def __init__(self, draw):
        self.draw = draw


__all__ = ["SPECS", "Spec", "examples", "EDGE_FLOATS"]
