"""Dead code: remove nodes no graph output depends on, and initializers nothing reads.

    before:  a = Relu (x)
             b = Sigmoid (x)          # b is read by nobody and is not a graph output
             y = Neg (a)
    after:   a = Relu (x)
             y = Neg (a)

Walks backwards from the graph outputs; a node with no used output goes (ONNX nodes have
no side effects). Initializers that are graph inputs stay: a feed may override them.
"""

from __future__ import annotations

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import node_reads


class DeadCode(Pass):
    """Remove unused nodes and unused initializers."""

    name = "dead_code"

    def run(self, g: Graph, ctx: PassContext) -> int:
        live = set(g.output_names)
        dead = []
        for node in reversed(g.nodes):
            if any(o in live for o in node.output if o):
                live.update(node_reads(node))
            else:
                dead.append(node)
        count = 0
        for node in dead:
            if not ctx.may_rewrite():
                break
            ctx.record(self.name, "unused node", [node], [], "no graph output depends on it")
            count += 1
        g.apply([Edit([n]) for n in dead[:count]])
        unused = [name for name in g.initializers
                  if name not in live and name not in g.input_names and not g.consumers(name)]
        if unused and ctx.may_rewrite():
            size = sum(g.initializers[n].ByteSize() for n in unused)
            for name in unused:
                g.drop_initializer(name)
            shown = ", ".join(unused[:5]) + (", ..." if len(unused) > 5 else "")
            ctx.record(self.name, "unused initializers", [], [],
                       f"removed {len(unused)} initializer(s), {size / 1e6:.2f} MB: {shown}")
            count += 1
        return count


PASS = DeadCode()
