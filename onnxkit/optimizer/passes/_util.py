"""Small helpers the passes share: operands that moved from attribute to input, shapes."""

from __future__ import annotations

import numpy as np
from onnx import NodeProto

from onnxkit.optimizer.graph import Graph
from onnxkit.optimizer.nodes import attr

UNKNOWN = object()  # an operand that is not a constant
FLOAT_TYPES = frozenset({1, 10, 11, 16})  # float, float16, double, bfloat16


def operand(g: Graph, node: NodeProto, index: int, attr_name: str):
    """An operand given as input ``index`` (newer opsets) or attribute ``attr_name``.

    Returns a list (or array), None when absent, or ``UNKNOWN`` when not a constant."""
    if len(node.input) > index and node.input[index]:
        value = g.constant(node.input[index])
        return UNKNOWN if value is None else value.tolist()
    return attr(node, attr_name)



def normalize_axes(axes, rank: int | None) -> tuple | None:
    """Non-negative sorted axes; None if a negative axis meets an unknown rank."""
    out = []
    for a in axes:
        a = int(a)
        if a < 0:
            if rank is None:
                return None
            a += rank
        out.append(a)
    return tuple(sorted(out))


def channel_vector(value: np.ndarray, channels: int, rank: int, axis: int = 1) -> np.ndarray | None:
    """A constant that broadcasts against a rank-``rank`` tensor along ``axis`` only, as a
    vector of length ``channels``; None if it varies along any other axis (or is too big)."""
    if value.ndim > rank:
        return None
    shape = (1,) * (rank - value.ndim) + value.shape
    for i, d in enumerate(shape):
        if i != axis and d != 1:
            return None
    if shape[axis] not in (1, channels):
        return None
    return np.broadcast_to(value.reshape(-1), (channels,)).copy()


def is_float(g: Graph, value: str) -> bool:
    return g.dtype(value) in FLOAT_TYPES


def swaps_last_two(perm) -> bool:
    """True for a Transpose perm [0, 1, ..., r-1, r-2] (r >= 2): batch axes stay, matrices flip."""
    r = len(perm)
    return r >= 2 and list(perm) == list(range(r - 2)) + [r - 1, r - 2]
