"""In-place plan (level 3): which nodes may write their output over an input's buffer.

    y = Relu (x)           # x read by nobody after this node, same shape and type as y
    -> onnxkit.inplace = {"relu_node": 0}      (output 0 may reuse input 0's buffer)

Safe when the input is an intermediate value (not a graph input, initializer or output),
this node is its last reader, the operator is elementwise (or the fused Z / skip input
is added elementwise), and the output has exactly the input's static shape and type.
The graph is unchanged; executors that do not read ``onnxkit.inplace`` ignore it.
"""

from __future__ import annotations

import json

from onnxkit.ops.registry import normalize_domain
from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Graph
from onnxkit.optimizer.nodes import node_reads

KEY = "onnxkit.inplace"
ELEMENTWISE = frozenset({
    "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
    "Erf", "Clip", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softplus", "Gelu", "Floor", "Ceil",
    "Round", "Sign", "Sin", "Cos", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum",
    "Where", "Softmax", "Dropout", "Identity",
})
# onnxkit operators: which input an output may overwrite
FUSED = {"FusedConv": (3,), "SkipLayerNormalization": (0, 1), "Gelu": (0,)}


def last_readers(g: Graph) -> dict[str, int]:
    """Value -> position of the last node reading it."""
    last = {}
    for i, node in enumerate(g.nodes):
        for name in node_reads(node):
            last[name] = i
    return last


def candidates(node) -> tuple[int, ...]:
    domain = normalize_domain(node.domain)
    if domain == "" and node.op_type in ELEMENTWISE:
        return tuple(range(len(node.input)))
    if domain == "onnxkit":
        return FUSED.get(node.op_type, ())
    return ()


def plan_inplace(g: Graph) -> dict[str, int]:
    last = last_readers(g)
    fixed = g.input_names | g.output_names | set(g.initializers)
    plan, taken = {}, set()
    for pos, node in enumerate(g.nodes):
        out = node.output[0] if node.output else ""
        shape, dtype = g.static_shape(out), g.dtype(out)
        if not out or shape is None or dtype is None:
            continue
        for i in candidates(node):
            name = node.input[i] if i < len(node.input) else ""
            if (name and name not in fixed and name not in taken and last.get(name) == pos
                    and list(node.input).count(name) == 1 and g.static_shape(name) == shape
                    and g.dtype(name) == dtype and not g.is_constant(name)):
                plan[node.name] = i
                taken.add(name)
                break
    return plan


class InplacePlan(Pass):
    """Mark nodes that may compute in place (a plan for the executors)."""

    name = "inplace_plan"
    repeat = False

    def run(self, g: Graph, ctx: PassContext) -> int:
        plan = plan_inplace(g)
        g.metadata[KEY] = json.dumps(plan, sort_keys=True)
        ctx.report.plans["inplace"] = {"summary": f"{len(plan)} of {len(g.nodes)} nodes may write "
                                                  f"over an input", "nodes": plan}
        return 0


PASS = InplacePlan()
