"""A residual Add feeding a LayerNormalization becomes onnxkit.SkipLayerNormalization.

    before:  s = Add (x, skip)                  # x, skip: the same shape
             y = LayerNormalization <epsilon = 1e-12> (s, scale, bias)
    after:   y = onnxkit.SkipLayerNormalization <epsilon = 1e-12> (x, skip, scale, bias)

The sum must not be read elsewhere, and the LayerNormalization's Mean / InvStdDev outputs
must be unused. See docs/onnxkit-domain.md.
"""

from __future__ import annotations

from onnxkit.optimizer.nodes import attr
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
PASS = RulePass("skip_layer_norm_fusion", RULES, __doc__)
