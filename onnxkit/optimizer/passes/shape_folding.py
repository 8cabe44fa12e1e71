"""Static shapes: ``Shape`` and ``Size`` of a tensor whose shape is known become constants.

    before:  s = Shape (x)                  # x: float[1,128,256]
             n = Gather <axis = 0> (s, one)
    after:   s = int64[3] {1, 128, 256}     # an initializer; constant folding does the Gather

Shapes come from onnx shape inference on the model; a dimension that is symbolic or
unknown leaves the node in place (its value is only known at run time).
https://onnx.ai/onnx/operators/onnx__Shape.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import attr


def shape_slice(dims: tuple, start: int, end: int | None) -> tuple:
    """Shape-15's ``start`` / ``end``: Python slicing with clamping."""
    rank = len(dims)
    start = max(0, min(rank, start + rank if start < 0 else start))
    end = rank if end is None else max(0, min(rank, end + rank if end < 0 else end))
    return dims[start:end]


class ShapeFolding(Pass):
    """Fold Shape and Size of statically shaped tensors."""

    name = "shape_folding"

    def run(self, g: Graph, ctx: PassContext) -> int:
        edits = []
        for node in g.nodes:
            if node.domain not in ("", "ai.onnx") or node.op_type not in ("Shape", "Size"):
                continue
            if node.output[0] in g.output_names:
                continue
            dims = g.static_shape(node.input[0])
            if dims is None:
                ctx.reject(self.name, node.op_type, node, f"the shape of {node.input[0]!r} is not "
                           f"static ({g.shape(node.input[0])})")
                continue
            if not ctx.may_rewrite():
                break
            if node.op_type == "Shape":
                value = np.array(shape_slice(tuple(dims), attr(node, "start", 0), attr(node, "end")),
                                 dtype=np.int64)
            else:
                value = np.array(int(np.prod(dims)), dtype=np.int64)
            g.set_initializer(node.output[0], value)
            edits.append(Edit([node]))
            ctx.record(self.name, node.op_type, [node], [],
                       f"{node.input[0]!r} has shape {list(dims)}: the value is {value.tolist()}")
        g.apply(edits)
        return len(edits)


PASS = ShapeFolding()
