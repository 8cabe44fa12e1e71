"""A residual Add feeding a LayerNormalization becomes onnxkit.SkipLayerNormalization.

    before:  s = Add (x, skip)                  # x, skip: the same shape
             y = LayerNormalization <epsilon = 1e-12> (s, scale, bias)
    after:   y = onnxkit.SkipLayerNormalization <epsilon = 1e-12> (x, skip, scale, bias)

The LayerNormalization's Mean / InvStdDev outputs must be unused. Where the sum is read
elsewhere too (GPT-2's and BERT's residual stream: the next layer adds to it again), the
fused node gives it as its second output:

    before:  s = Add (x, skip)                  # s also read by a later Add
             y = LayerNormalization (s, scale, bias)
    after:   y, s = onnxkit.SkipLayerNormalization (x, skip, scale, bias)

See docs/onnxkit-domain.md.
"""

from __future__ import annotations

from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import attr, make_node
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _standard(op, x, skip):
    return op.LayerNormalization(op.Add(x, skip), _allow_other_inputs=True, _name="ln")


def _onnxkit(op, x, skip):
    return op.LayerNormalization(op.Add(x, skip), _allow_other_inputs=True, _domain="onnxkit",
                                 _name="ln")


def _check(g, x, skip, ln):
    sx, ss = g.static_shape(x), g.static_shape(skip)
    if sx is None or ss is None:
        return "the shapes are not known (the Add could broadcast)"
    if sx != ss:
        return f"the Add broadcasts ({list(sx)} + {list(ss)})"
    if attr(ln, "stash_type", 1) != 1:
        return "stash_type is not float"
    return None


def _rewrite(op, x, skip, ln):
    return op.SkipLayerNormalization(x, skip, *ln.input[1:], _domain="onnxkit",
                                     axis=attr(ln, "axis", -1), epsilon=attr(ln, "epsilon", 1e-5))


RULES = (
    RewriteRule("Add+LayerNormalization", _standard, _rewrite, _check),
    RewriteRule("Add+onnxkit.LayerNormalization", _onnxkit, _rewrite, _check),
)
SHARED = "Add+LayerNormalization, the sum read elsewhere"


class SkipLayerNormFusion(Pass):
    """The rules above (a private sum), then the Adds whose sum other nodes read too."""

    name = "skip_layer_norm_fusion"

    def __init__(self):
        self.rules = RulePass(self.name, RULES, __doc__)

    def run(self, g: Graph, ctx: PassContext) -> int:
        done = self.rules.run(g, ctx)
        edits, taken = [], set()
        for ln in g.nodes:
            if ln.op_type != "LayerNormalization" or ln.domain not in ("", "ai.onnx", "onnxkit"):
                continue
            add = g.producer(ln.input[0])
            if add is None or add.op_type != "Add" or add.domain not in ("", "ai.onnx") \
                    or id(add) in taken or len(g.consumers(add.output[0])) < 2:
                continue  # a private sum is the rules' (a later sweep's) to take
            if any(o and g.is_used(o) for o in ln.output[1:]):
                ctx.reject(self.name, SHARED, ln, "its Mean / InvStdDev outputs are read")
                continue
            reason = _check(g, add.input[0], add.input[1], ln)
            if reason is not None:
                ctx.reject(self.name, SHARED, ln, reason)
                continue
            if not ctx.may_rewrite():
                break
            g.opsets.setdefault("onnxkit", 1)
            fused = make_node("SkipLayerNormalization", [add.input[0], add.input[1], *ln.input[1:]],
                              [ln.output[0], add.output[0]],
                              g.node_name(f"{add.name or ln.name}:SkipLayerNormalization"),
                              "onnxkit", axis=attr(ln, "axis", -1),
                              epsilon=attr(ln, "epsilon", 1e-5))
            # where the Add was: the sum's other readers may come before the LayerNorm
            edits.append(Edit([add, ln], [fused], {}, add))
            taken.add(id(add))
            ctx.record(self.name, SHARED, [add, ln], [fused], "the sum is its second output")
        g.apply(edits)
        return done + len(edits)


PASS = SkipLayerNormFusion()
