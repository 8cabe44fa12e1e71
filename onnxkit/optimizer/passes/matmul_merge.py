"""MatMuls of one input by constant matrices become one MatMul and a Split.

    before:  q = MatMul (x, Wq)          # Wq: [64, 64]
             k = MatMul (x, Wk)          # Wk: [64, 32]
             v = MatMul (x, Wv)
    after:   qkv = MatMul (x, [Wq | Wk | Wv])
             q, k, v = Split <axis = -1> (qkv, {64, 32, 32})

The query, key and value projections of an attention layer (and a cross-attention's
keys and values of one encoder output, in every decoder layer) as ``transformers``
writes them: one product of x by the weights side by side instead of one per weight.
Each output column is the same dot product as before; the pieces are views. Only plain
MatMuls whose B is a 2-D float initializer with the same rows and type are merged (a
FusedMatMul keeps its bias and activation). Runs after the fusions that would take a
MatMul into another node (MatMul + Add, + activation), so it merges what they left.
https://onnx.ai/onnx/operators/onnx__MatMul.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import make_node

MAX_WEIGHT_BYTES = 64 << 20  # merged weights larger than this stay separate products


class MatMulMerge(Pass):
    """MatMuls of one input by constant 2-D weights become one MatMul and a Split."""

    name = "matmul_merge"

    def run(self, g: Graph, ctx: PassContext) -> int:
        groups: dict[tuple, list] = {}
        for node in g.nodes:
            if node.op_type != "MatMul" or node.domain not in ("", "ai.onnx") \
                    or len(node.input) != 2 or not node.output[0]:
                continue
            w = g.constant(node.input[1])
            if w is None or w.ndim != 2 or w.dtype.kind != "f" or 0 in w.shape:
                continue
            groups.setdefault((node.input[0], w.shape[0], w.dtype.str), []).append((node, w))
        edits = []
        for (x, _, _), members in groups.items():
            if len(members) < 2:
                continue
            rank = g.rank(x)
            if rank is None or rank < 2:
                ctx.reject(self.name, "MatMuls -> MatMul + Split", members[0][0],
                           f"{x!r} is not known to have rank 2 or more")
                continue
            weights = [w for _, w in members]
            if sum(w.nbytes for w in weights) > MAX_WEIGHT_BYTES:
                continue
            if not ctx.may_rewrite():
                break
            nodes = [n for n, _ in members]
            first = min(nodes, key=g.position)
            name = g.node_name(f"{first.name}:Merged")
            merged = g.add_initializer(f"{name}:W", np.concatenate(weights, axis=1))
            product = g.value_name(f"{name}:out")
            sizes = [w.shape[1] for w in weights]
            outputs = [n.output[0] for n in nodes]
            matmul = make_node("MatMul", [x, merged], [product], name, "")
            if g.opsets.get("", 0) >= 13:
                split_sizes = g.add_initializer(f"{name}:sizes", np.array(sizes, np.int64))
                split = make_node("Split", [product, split_sizes], outputs, f"{name}:Split", "",
                                  axis=-1)
            else:
                split = make_node("Split", [product], outputs, f"{name}:Split", "", axis=-1,
                                  split=sizes)
            edits.append(Edit(nodes, [matmul, split], {}, first))
            ctx.record(self.name, "MatMuls -> MatMul + Split", sorted(nodes, key=g.position),
                       [matmul, split], f"{len(nodes)} products of {x!r} (columns {sizes})")
        g.apply(edits)
        return len(edits)


PASS = MatMulMerge()
