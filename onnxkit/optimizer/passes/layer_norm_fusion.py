"""LayerNormalization written out with ReduceMean, Sub, Pow, Sqrt, Div becomes one node.

    before:  mu = ReduceMean <axes = [-1]> (x)
             d = Sub (x, mu)
             v = ReduceMean <axes = [-1]> (Pow (d, 2))          # or Mul (d, d)
             n = Div (d, Sqrt (Add (v, eps)))
             y = Add (Mul (n, scale), bias)                     # scale, bias optional
    after:   y = LayerNormalization <axis = -1, epsilon = eps> (x, scale, bias)

The reduced axes must be the last ones (both ReduceMeans alike, keepdims=1), eps a
constant, scale and bias of the normalized shape. Opsets before 17 get
onnxkit.LayerNormalization. https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import UNKNOWN, is_float, normalize_axes, operand
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _normalized(op, x, eps, square):
    mean = op.ReduceMean(x, _allow_other_inputs=True, _name="mean")
    d = op.Sub(x, mean)
    sq = op.Pow(d, 2.0) if square == "pow" else op.Mul(d, d)
    var = op.ReduceMean(sq, _allow_other_inputs=True, _name="var")
    return op.Div(d, op.Sqrt(op.Add(var, eps)))


def _axes(g, x, node):
    axes = operand(g, node, 1, "axes")
    if axes is UNKNOWN or axes is None:
        return None
    return normalize_axes(axes, g.rank(x))


def _check(g, x, eps, mean, var, scale=None, bias=None):
    rank, dims = g.rank(x), g.static_shape(x)
    if rank is None or not is_float(g, x):
        return "the input's rank or element type is unknown"
    a, b = _axes(g, x, mean), _axes(g, x, var)
    if a is None or a != b:
        return "the two ReduceMeans do not reduce the same known axes"
    if a != tuple(range(rank - len(a), rank)) or not a:
        return f"reduces axes {list(a)}, not the last ones"
    if attr(mean, "keepdims", 1) != 1 or attr(var, "keepdims", 1) != 1:
        return "a ReduceMean drops the reduced axes"
    e = g.constant(eps)
    if e is None or e.size != 1:
        return "epsilon is not a constant scalar"
    for name, value in (("scale", scale), ("bias", bias)):
        if value is None:
            continue
        shape = g.static_shape(value)
        if shape is None or dims is None:
            return f"the {name} shape is not known"
        if int(np.prod(shape)) != int(np.prod(dims[a[0]:])) or any(
                d != 1 for d in shape[:max(0, len(shape) - len(a))]):
            return f"the {name} {list(shape)} is not of the normalized shape {list(dims[a[0]:])}"
    if scale is None and dims is None:
        return "without a scale, the normalized shape must be known"
    return None


def _rewrite(op, x, eps, mean, var, scale=None, bias=None):
    g = op.graph
    axes = _axes(g, x, mean)
    rank = g.rank(x)
    dims = g.static_shape(x)
    if scale is None:
        scale = op.constant(np.ones(dims[axes[0]:], dtype=g.constant(eps).dtype), "ones")
    epsilon = float(g.constant(eps).reshape(-1)[0])
    inputs = [x, scale] + ([bias] if bias is not None else [])
    domain = "" if g.opsets.get("", 0) >= 17 else "onnxkit"
    return op.LayerNormalization(*inputs, axis=axes[0] - rank, epsilon=epsilon, _domain=domain)


def _rule(form: str, square: str) -> RewriteRule:
    if form == "scale+bias":
        def pattern(op, x, eps, scale, bias):
            return op.Add(op.Mul(_normalized(op, x, eps, square), scale), bias)
    elif form == "scale":
        def pattern(op, x, eps, scale):
            return op.Mul(_normalized(op, x, eps, square), scale)
    else:
        def pattern(op, x, eps):
            return _normalized(op, x, eps, square)
    return RewriteRule(f"LayerNorm {form} {square}", pattern, _rewrite, _check)


RULES = tuple(_rule(f, s) for f in ("scale+bias", "scale", "bare") for s in ("pow", "mul"))
PASS = RulePass("layer_norm_fusion", RULES, __doc__)
