"""Layout plan (level 3): which convolutions the ``cpu`` executor should run channels-last.

    before:  y = Conv <group = 144> (x, W)      # W: float[144,1,3,3], x: float[1,144,56,56]
    after:   the same node; the model's metadata says
             onnxkit.layout = {"y's node": "NHWC"}

A depthwise convolution (one input channel per group, as many groups as channels) reads
one channel plane per output: in NCHW each output pixel gathers a strided window, in NHWC
neighbouring channels are contiguous and the kernel vectorizes over them. The choice is a
plan, not a rewrite: the graph and its outputs are unchanged, and an executor that does
not read ``onnxkit.layout`` ignores it.
"""

from __future__ import annotations

import json

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Graph
from onnxkit.optimizer.nodes import attr

KEY = "onnxkit.layout"


def is_depthwise(g: Graph, node) -> bool:
    if node.op_type not in ("Conv", "FusedConv"):
        return False
    w = g.shape(node.input[1])
    group = attr(node, "group", 1)
    return w is not None and len(w) == 4 and group > 1 and w[1] == 1 and w[0] % group == 0


class LayoutPlan(Pass):
    """Choose NHWC for depthwise convolutions (a plan for the cpu executor)."""

    name = "layout_plan"
    repeat = False

    def run(self, g: Graph, ctx: PassContext) -> int:
        chosen = {n.name: "NHWC" for n in g.nodes if is_depthwise(g, n)}
        convs = sum(1 for n in g.nodes if n.op_type in ("Conv", "FusedConv"))
        g.metadata[KEY] = json.dumps(chosen, sort_keys=True)
        ctx.report.plans["layout"] = {
            "summary": f"{len(chosen)} of {convs} convolutions depthwise -> NHWC, the rest NCHW",
            "nodes": chosen}
        return 0


PASS = LayoutPlan()
