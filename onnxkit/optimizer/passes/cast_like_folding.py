"""CastLike whose target type is known becomes a constant or goes.

    before:  c = Constant <value = float {0.5}> ()
             y = Mul (CastLike (c, x), x)         # x: float
    after:   y = Mul (c', x)                      # c' = c cast to x's type, an initializer

    before:  y = CastLike (a, x)                  # a and x: the same type
    after:   (y reads as a)

ONNX Script writes a ``CastLike`` for every Python number in a function, since the
function's input types are not known; once the function is inlined they are, so constant
folding alone does not see it (x is no constant). https://onnx.ai/onnx/operators/onnx__CastLike.html
"""

from __future__ import annotations

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.evaluate import NotFoldable, evaluate
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import make_node


class CastLikeFolding(Pass):
    """Fold CastLike of a constant, or drop it where the types already agree."""

    name = "cast_like_folding"

    def run(self, g: Graph, ctx: PassContext) -> int:
        edits = []
        for node in g.nodes:
            if node.op_type != "CastLike" or node.domain not in ("", "ai.onnx"):
                continue
            if len(node.input) < 2 or not node.input[0] or not node.input[1]:
                continue
            src, target, out = node.input[0], node.input[1], node.output[0]
            to = g.dtype(target)
            if to is None:
                ctx.reject(self.name, "CastLike", node, f"the type of {target!r} is not known")
                continue
            if out in g.output_names:
                ctx.reject(self.name, "CastLike", node, "produces a graph output")
                continue
            value = g.constant(src)
            if value is None and g.dtype(src) != to:
                continue  # a real conversion of a computed value
            if not ctx.may_rewrite():
                break
            if value is None:
                edits.append(Edit([node], [], {out: src}))
                ctx.record(self.name, "CastLike", [node], [], f"{src!r} already has {target!r}'s type")
                continue
            cast = make_node("Cast", [src], [out], node.name, to=to)
            try:
                folded, = evaluate(cast, [value], g.opsets)
            except NotFoldable as exc:
                ctx.reject(self.name, "CastLike", node, str(exc))
                continue
            g.set_initializer(out, folded)
            edits.append(Edit([node]))
            ctx.record(self.name, "CastLike", [node], [],
                       f"constant {src!r} cast to {folded.dtype}{list(folded.shape)}")
        g.apply(edits)
        return len(edits)


PASS = CastLikeFolding()
