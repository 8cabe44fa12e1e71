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
read only by its Reshape (or Reshapes in a row), and that by one Transpose (the same for
all) or by anything; the shapes must be static. Without Transposes the pieces' heads
shapes may stack on any axis whose leading axes hold x's leading values ([2, 4, 1, 16]
pieces: x as [2, 12, 1, 16], Split on axis 1). The pass runs after ``attention_fusion``,
which takes an encoder's heads Reshapes and Transposes into a 3-D Attention itself.
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
    lead = int(np.prod(shape[:-1]))
    reshapes, transposes, outs, perm = [], [], [], None
    for piece in split.output:
        chain = [_only_reader(g, piece, "Reshape")]
        if chain[0] is None:
            return "a piece is not read by one Reshape alone"
        while (more := _only_reader(g, chain[-1].output[0], "Reshape")) is not None:
            chain.append(more)  # Reshapes in a row: the last one's shape counts
        transpose = _only_reader(g, chain[-1].output[0], "Transpose")
        out = g.static_shape(chain[-1].output[0])
        p = None if transpose is None else attr(transpose, "perm")
        if out is None or (transpose is not None and p is None):
            return "a piece's heads shape or a Transpose's perm is not known"
        p = None if p is None else [int(i) for i in p]
        if reshapes and (p != perm or (transposes[0] is None) != (transpose is None)):
            return "the pieces are transposed differently"
        perm = p
        outs.append(tuple(out))
        reshapes.append(chain)
        transposes.append(transpose)
    axis = _heads_axis(outs, lead)
    if axis is None:
        return f"the Reshapes {[list(o) for o in outs]} do not cut the pieces the same way"
    if perm is not None and sorted(perm) != list(range(len(outs[0]))):
        return f"perm {perm} is not a permutation of the heads' axes"
    target = list(outs[0])
    target[axis] = sum(o[axis] for o in outs)
    return reshapes, transposes, target, [o[axis] for o in outs], perm, axis


def _heads_axis(outs: list, lead: int) -> int | None:
    """The axis along which the pieces' Reshapes are stacked: the axes before it hold the
    leading values (their product is ``lead``), the axes after it agree, and only it may
    differ between the pieces. Then x as a whole, reshaped with that axis summed, holds
    piece p's rows along it, one piece after another."""
    rank = len(outs[0])
    if any(len(o) != rank for o in outs):
        return None
    differ = [a for a in range(rank) if len({o[a] for o in outs}) > 1]
    if len(differ) > 1:
        return None
    valid = [a for a in (differ or range(rank))
             if int(np.prod(outs[0][:a])) == lead and all(o[:a] == outs[0][:a] for o in outs)]
    longer = [a for a in valid if outs[0][a] > 1]  # equal pieces: stacked on a real axis
    return (longer or valid or [None])[0]


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
            reshapes, transposes, target, counts, perm, axis = found
            x = split.input[0]
            ends = transposes if perm is not None else [c[-1] for c in reshapes]
            name = g.node_name(f"{split.name}:heads")
            shape = g.add_initializer(f"{name}:shape", np.array(target, np.int64))
            sizes = g.add_initializer(f"{name}:sizes", np.array(counts, np.int64))
            merged, moved = g.value_name(f"{name}:reshaped"), g.value_name(f"{name}:transposed")
            new = [make_node("Reshape", [x, shape], [merged], f"{name}:Reshape", "")]
            if perm is not None:
                new.append(make_node("Transpose", [merged], [moved], f"{name}:Transpose", "",
                                     perm=perm))
            new.append(make_node("Split", [moved if perm is not None else merged, sizes],
                                 [e.output[0] for e in ends], f"{name}:Split", "",
                                 axis=axis if perm is None else perm.index(axis)))
            old = [split] + [r for c in reshapes for r in c] + [t for t in transposes if t]
            edits.append(Edit(old, new, {}, max(old, key=g.position)))
            ctx.record(self.name, "Split heads", sorted(old, key=g.position), new,
                       f"pieces of {x!r} cut into {counts} heads of {target[-1]}, perm {perm}")
        g.apply(edits)
        return len(edits)


PASS = SplitHeads()
