"""A Split of q, k, v whose pieces are each cut into heads and transposed the same way
becomes one Reshape, one Transpose and a Split of the heads.

    before:  q, k, v = Split <axis = -1> (x)               # x: [2, 1, 192], 3 x 64
             q1 = Reshape (q, {2, 1, 4, 16})                # each piece: [.., 64] -> [.., 4, 16]
             qt = Transpose <perm = [0, 2, 1, 3]> (q1)      # the same for k and v
             ...
    after:   r = Reshape (x, {2, 1, 12, 16})                # the heads of all pieces
             t = Transpose <perm = [0, 2, 1, 3]> (r)        # [2, 12, 1, 16]
             qt, kt, vt = Split <axis = 1> (t, {4, 4, 4})

Piece p of the last axis, cut into (h_p, d), is h_p consecutive rows of the whole axis
cut into (h_0 + ... + h_n-1, d) (grouped-query k and v have fewer heads than q; the head
size d must be one): the same values, in 3 nodes instead of 1 + 2n (and the Reshape before x,
a GPT-2 Gemm's, then joins this one: ``chains``). This is the attention block of GPT-2
and Llama exports (c_attn's, or the merged q/k/v MatMul's, output). Every piece must be
read only by its Reshape, and that only by its Transpose; the shapes must be static.
https://onnx.ai/onnx/operators/onnx__Split.html
"""

from __future__ import annotations

import numpy as np
from onnx import NodeProto

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import attr, make_node

_STANDARD = ("", "ai.onnx")


def _only_reader(g: Graph, value: str, op_type: str) -> NodeProto | None:
    """The one node reading ``value`` (not a graph output) if it is an ``op_type``."""
    readers = g.consumers(value)
    if len(readers) != 1 or value in g.output_names:
        return None
    node = readers[0]
    if node.op_type != op_type or node.domain not in _STANDARD or node.input[0] != value:
        return None
    return node


def _chain(g: Graph, split: NodeProto):
    """(reshapes, transposes, the heads' shape, heads per piece, perm) when ``split``
    fits, else a reason."""
    if len(split.output) < 2 or any(not o for o in split.output):
        return "fewer than two pieces, or an unnamed one"
    shape = g.static_shape(split.input[0])
    if shape is None or 0 in shape:
        return "the input's shape is not static"
    rank = len(shape)
    axis = attr(split, "axis")
    axis = 0 if axis is None else int(axis)
    if axis % rank != rank - 1:
        return "the Split is not along the last axis"
    reshapes, transposes, counts, size, perm = [], [], [], None, None
    for piece in split.output:
        reshape = _only_reader(g, piece, "Reshape")
        if reshape is None:
            return "a piece is not read by one Reshape alone"
        transpose = _only_reader(g, reshape.output[0], "Transpose")
        if transpose is None:
            return "a Reshape is not read by one Transpose alone"
        piece_shape = g.static_shape(piece)
        out = g.static_shape(reshape.output[0])
        p = attr(transpose, "perm")
        if piece_shape is None or out is None or p is None:
            return "a piece's shape or a Transpose's perm is not known"
        if len(out) != rank + 1 or tuple(out[:-2]) != tuple(shape[:-1]) \
                or out[-2] * out[-1] != piece_shape[-1]:
            return f"a Reshape {list(piece_shape)} -> {list(out)} does not cut the last axis"
        if perm is None:
            size, perm = out[-1], [int(i) for i in p]
        elif out[-1] != size or [int(i) for i in p] != perm:
            return "the pieces' heads differ in size, or are transposed differently"
        counts.append(out[-2])
        reshapes.append(reshape)
        transposes.append(transpose)
    if sorted(perm) != list(range(rank + 1)):
        return f"perm {perm} is not a permutation of the heads' axes"
    return reshapes, transposes, list(shape[:-1]) + [sum(counts), size], counts, perm


class SplitHeads(Pass):
    """Split -> (Reshape -> Transpose) per piece becomes Reshape -> Transpose -> Split."""

    name = "split_heads"

    def run(self, g: Graph, ctx: PassContext) -> int:
        if g.opsets.get("", 0) < 13:
            return 0  # the Split's sizes as an input (opset 13 on)
        edits = []
        for split in list(g.nodes):
            if split.op_type != "Split" or split.domain not in _STANDARD:
                continue
            found = _chain(g, split)
            if isinstance(found, str):
                continue  # most Splits are no candidates: no rejection for each
            if not ctx.may_rewrite():
                break
            reshapes, transposes, target, counts, perm = found
            x = split.input[0]
            name = g.node_name(f"{split.name}:heads")
            shape = g.add_initializer(f"{name}:shape", np.array(target, np.int64))
            sizes = g.add_initializer(f"{name}:sizes", np.array(counts, np.int64))
            merged, moved = g.value_name(f"{name}:reshaped"), g.value_name(f"{name}:transposed")
            new = [make_node("Reshape", [x, shape], [merged], f"{name}:Reshape", ""),
                   make_node("Transpose", [merged], [moved], f"{name}:Transpose", "", perm=perm),
                   make_node("Split", [moved, sizes], [t.output[0] for t in transposes],
                             f"{name}:Split", "", axis=perm.index(len(target) - 2))]
            old = [split] + reshapes + transposes
            edits.append(Edit(old, new, {}, max(transposes, key=g.position)))
            ctx.record(self.name, "Split heads", sorted(old, key=g.position), new,
                       f"pieces of {x!r} cut into {counts} heads of {target[-1]}, perm {perm}")
        g.apply(edits)
        return len(edits)


PASS = SplitHeads()
