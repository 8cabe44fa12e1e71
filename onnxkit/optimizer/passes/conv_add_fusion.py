"""A residual Add after a Conv becomes the Z input of onnxkit.FusedConv.

    before:  c = Conv (x, W, B)
             s = Add (c, skip)                  # skip: same shape as c
             y = Relu (s)
    after:   s = onnxkit.FusedConv (x, W, B, skip)
             y = Relu (s)                       # activation_fusion then folds the Relu:
             y = onnxkit.FusedConv <activation = "Relu"> (x, W, B, skip)

Z must have exactly the convolution's shape (no broadcasting); a FusedConv that already
has a Z or an activation (applied before the Add would be) is left alone.
"""

from __future__ import annotations

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of


def _conv_add(op, x, z):
    return op.Add(op.Conv(x, _allow_other_inputs=True, _name="conv"), z)


def _fused_add(op, x, z):
    return op.Add(op.FusedConv(x, _allow_other_inputs=True, _domain="onnxkit", _name="conv"), z)


def _check(g, x, z, conv):
    if conv.domain == "onnxkit" and (attr(conv, "activation", "") or
                                     (len(conv.input) > 3 and conv.input[3])):
        return "the FusedConv already has an activation or a Z input"
    out, zs = g.static_shape(conv.output[0]), g.static_shape(z)
    if out is None or zs is None:
        return "the shapes are not known (the Add could broadcast)"
    if out != zs:
        return f"Z has shape {list(zs)}, the Conv gives {list(out)}"
    if g.dtype(z) != g.dtype(conv.output[0]):
        return "Z has another element type"
    return None


def _rewrite(op, x, z, conv):
    ins = list(conv.input[:3]) + [""] * (3 - len(conv.input[:3]))
    attrs = {k: v for k, v in attrs_of(conv).items() if k not in ("activation", "activation_params")}
    return op.FusedConv(*ins, z, _domain="onnxkit", **attrs)


RULES = (
    RewriteRule("Conv+Add", _conv_add, _rewrite, _check),
    RewriteRule("FusedConv+Add", _fused_add, _rewrite, _check),
)
PASS = RulePass("conv_add_fusion", RULES, __doc__)
