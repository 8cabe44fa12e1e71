"""Constant folding: a node whose inputs are all constants becomes an initializer.

    before:  two = Constant <value = float {2}> ()
             w2 = Mul (w, two)                       # w an initializer
             y = MatMul (x, w2)
    after:   y = MatMul (x, w2)                      # w2 = w * 2, now an initializer

``Constant`` nodes themselves become initializers. Nodes are evaluated with onnxkit's
reference kernels. Not folded: random generators, nodes with subgraphs, nodes that produce
a graph output, sequences/maps, and results over the folding size limit.
"""

from __future__ import annotations

import numpy as np

from onnxkit.ops.registry import normalize_domain
from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.evaluate import NotFoldable, evaluate
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import subgraphs

NONDETERMINISTIC = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                              "Multinomial", "Bernoulli"})


def why_not_foldable(g: Graph, node) -> str | None:
    if normalize_domain(node.domain) == "" and node.op_type in NONDETERMINISTIC:
        return "random: a new value on every run"
    if subgraphs(node):
        return "has a subgraph"
    if any(o in g.output_names for o in node.output if o):
        return "produces a graph output"
    if node.op_type == "Constant" and normalize_domain(node.domain) == "":
        return None
    inputs = [i for i in node.input if i]
    if not inputs:
        return "has no inputs (not a computation on constants)"
    missing = [i for i in inputs if not g.is_constant(i)]
    if missing:
        return f"input {missing[0]!r} is not a constant"
    return None


class ConstantFolding(Pass):
    """Replace nodes computing only on constants by their result."""

    name = "constant_folding"

    def run(self, g: Graph, ctx: PassContext) -> int:
        removed = []
        for node in list(g.nodes):
            reason = why_not_foldable(g, node)
            if reason is not None:
                continue  # most nodes read activations: not worth a line in the report
            try:
                values = self._values(g, node)
            except NotFoldable as exc:
                ctx.reject(self.name, node.op_type, node, str(exc))
                continue
            if not ctx.may_rewrite():
                break
            for name, value in zip(node.output, values):
                if name:
                    g.set_initializer(name, value)
            removed.append(node)
            shapes = ", ".join(f"{v.dtype}{list(v.shape)}" for v in values if v is not None)
            what = "Constant -> initializer" if node.op_type == "Constant" else f"folded to {shapes}"
            ctx.record(self.name, node.op_type, [node], [], what)
        if removed:
            g.apply([Edit([n]) for n in removed])
        return len(removed)

    @staticmethod
    def _values(g: Graph, node) -> tuple:
        if node.op_type == "Constant" and normalize_domain(node.domain) == "":
            return (g.constant(node.output[0]),)
        args = [g.constant(i) if i else None for i in node.input]
        values = evaluate(node, args, g.opsets)
        if not all(isinstance(v, np.ndarray) for v, o in zip(values, node.output) if o):
            raise NotFoldable("a result is not a tensor")
        return values


PASS = ConstantFolding()
