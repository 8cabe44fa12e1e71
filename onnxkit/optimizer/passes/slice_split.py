"""Slices of one tensor that cut one axis into consecutive pieces become one Split.

    before:  a = Slice (x, {0}, {8}, {-1})          # x: [2, 4, 1, 16]
             b = Slice (x, {8}, {9223372036854775807}, {-1})
    after:   a, b = Split <axis = -1> (x, {8, 8})

This is RoPE's ``rotate_half`` (``x[..., :d/2]`` and ``x[..., d/2:]``) as both torch
exporters write it, and any other set of Slices (step 1, one axis, constant bounds) whose
ranges tile the whole axis. The axis length must be static. Slices that do not fit a
tiling are left alone. https://onnx.ai/onnx/operators/onnx__Split.html
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import make_node


def _bounds(g: Graph, node: NodeProto):
    """(axis, start, end) of a one-axis, step-1 Slice with constant operands on a tensor of
    static length along that axis (start and end clamped to it), else a reason string."""
    if len(node.input) < 3:
        return "the Slice takes its bounds as attributes (opset < 10)"
    rank = g.rank(node.input[0])
    dims = g.shape(node.input[0])
    ops = [g.constant(v) if v else None for v in list(node.input[1:5]) + [""] * (5 - len(node.input))]
    starts, ends, axes, steps = ops
    if starts is None or ends is None or (len(node.input) > 3 and node.input[3] and axes is None) \
            or (len(node.input) > 4 and node.input[4] and steps is None):
        return "a bound, axis or step is not a constant"
    if starts.size != 1 or ends.size != 1:
        return "slices more than one axis"
    if steps is not None and int(steps.reshape(-1)[0]) != 1:
        return "the step is not 1"
    if rank is None or dims is None:
        return "the input's shape is not known"
    axis = int(axes.reshape(-1)[0]) if axes is not None else 0
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        return f"axis {axis} is out of range"
    length = dims[axis]
    if not isinstance(length, int):
        return "the sliced axis has no static length"

    def clamp(v):
        v = int(v)
        v = v + length if v < 0 else v
        return min(max(v, 0), length)

    start, end = clamp(starts.reshape(-1)[0]), clamp(ends.reshape(-1)[0])
    if end <= start:
        return "the slice is empty"
    return axis, start, end


def _tiling(pieces: list, length: int) -> list | None:
    """The pieces (start, end, node) that cut [0, length) into consecutive ranges, in order."""
    by_start: dict[int, tuple] = {}
    for p in sorted(pieces, key=lambda p: (p[0], -p[1])):
        by_start.setdefault(p[0], p)
    chain, pos = [], 0
    while pos < length and pos in by_start:
        chain.append(by_start[pos])
        pos = by_start[pos][1]
    return chain if pos == length and len(chain) > 1 else None


class SliceSplit(Pass):
    """Consecutive Slices of one tensor along one axis become one Split."""

    name = "slice_split"

    def run(self, g: Graph, ctx: PassContext) -> int:
        groups: dict[tuple, list] = {}
        for node in g.nodes:
            if node.op_type != "Slice" or node.domain not in ("", "ai.onnx"):
                continue
            b = _bounds(g, node)
            if isinstance(b, str):
                continue  # most Slices are no candidates: no rejection for each
            axis, start, end = b
            groups.setdefault((node.input[0], axis), []).append((start, end, node))
        edits = []
        for (x, axis), pieces in groups.items():
            if len(pieces) < 2:
                continue
            length = g.shape(x)[axis]
            chain = _tiling(pieces, length)
            if chain is None:
                ctx.reject(self.name, "Slices -> Split", pieces[0][2],
                           f"{len(pieces)} Slices of {x!r} along axis {axis} do not tile it")
                continue
            if not ctx.may_rewrite():
                break
            slices = [p[2] for p in chain]
            first = min(slices, key=g.position)
            sizes = [e - s for s, e, _ in chain]
            name = g.node_name(f"{first.name}:Split")
            outputs = [n.output[0] for n in slices]
            if g.opsets.get("", 0) >= 13:
                split = g.add_initializer(f"{name}:sizes", np.array(sizes, np.int64))
                node = make_node("Split", [x, split], outputs, name, "", axis=axis)
            else:
                node = make_node("Split", [x], outputs, name, "", axis=axis, split=sizes)
            edits.append(Edit(slices, [node], {}, first))
            ctx.record(self.name, "Slices -> Split", sorted(slices, key=g.position), [node],
                       f"axis {axis} of {x!r} cut into {sizes}")
        g.apply(edits)
        return len(edits)


PASS = SliceSplit()
