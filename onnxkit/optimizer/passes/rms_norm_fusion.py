"""RMSNorm written out with Pow, ReduceMean, Add, Sqrt and a reciprocal becomes one node.

    before:  ms = ReduceMean <axes = [-1]> (Pow (x, 2))       # or Mul (x, x)
             r = Div (1, Sqrt (Add (ms, eps)))                 # or Reciprocal (Sqrt (...))
             y = Mul (Mul (x, r), scale)                       # scale optional
    after:   y = RMSNormalization <axis = -1, epsilon = eps> (x, scale)

This is how ``transformers`` writes Llama's and T5's RMSNorm: the TorchScript exporter
gives ``Div(1, Sqrt)`` for ``torch.rsqrt``, the dynamo exporter ``Reciprocal(Sqrt)``; at
level 1 the weight Mul is usually folded into the next MatMul, so the bare form is common
(it gets a scale of ones). The reduced axes must be the last ones (keepdims=1), eps a
constant, scale of the normalized shape. Opsets before 23 get onnxkit.RMSNormalization.
https://onnx.ai/onnx/operators/onnx__RMSNormalization.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import UNKNOWN, is_float, normalize_axes, operand
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _normalized(op, x, eps, square, inverse):
    sq = op.Pow(x, 2.0) if square == "pow" else op.Mul(x, x)
    ms = op.ReduceMean(sq, _allow_other_inputs=True, _name="mean")
    root = op.Sqrt(op.Add(ms, eps))
    r = op.Div(1.0, root) if inverse == "div" else op.Reciprocal(root)
    return op.Mul(x, r)


def _axes(g, x, node):
    axes = operand(g, node, 1, "axes")
    if axes is UNKNOWN or axes is None:
        return None
    return normalize_axes(axes, g.rank(x))


def _normalized_dims(g, x, axes) -> tuple | None:
    """The static lengths of the normalized (trailing) axes; other axes may be symbolic."""
    shape = g.shape(x)
    if shape is None or not axes:
        return None
    tail = tuple(shape[axes[0]:])
    return tail if all(isinstance(d, int) for d in tail) else None


def _check(g, x, eps, mean, scale=None):
    rank = g.rank(x)
    if rank is None or not is_float(g, x):
        return "the input's rank or element type is unknown"
    a = _axes(g, x, mean)
    if not a:
        return "the ReduceMean's axes are not known constants"
    if a != tuple(range(rank - len(a), rank)):
        return f"reduces axes {list(a)}, not the last ones"
    if attr(mean, "keepdims", 1) != 1:
        return "the ReduceMean drops the reduced axes"
    e = g.constant(eps)
    if e is None or e.size != 1:
        return "epsilon is not a constant scalar"
    if g.dtype(eps) != g.dtype(x):
        return "epsilon's element type differs from the input's"
    dims = _normalized_dims(g, x, a)
    if scale is None:
        if dims is None:
            return "without a scale, the normalized shape must be known"
        return None
    shape = g.static_shape(scale)
    if shape is None or dims is None:
        return "the scale's shape is not known"
    if g.dtype(scale) != g.dtype(x):
        return "the scale's element type differs from the input's"
    if len(shape) > len(a) and any(d != 1 for d in shape[:len(shape) - len(a)]):
        return f"the scale {list(shape)} varies along an axis that is not normalized"
    if tuple(shape[-len(a):]) != dims:  # the product must not broadcast x
        return f"the scale {list(shape)} is not of the normalized shape {list(dims)}"
    return None


def _rewrite(op, x, eps, mean, scale=None):
    g = op.graph
    axes = _axes(g, x, mean)
    rank = g.rank(x)
    dtype = g.constant(eps).dtype
    dims = _normalized_dims(g, x, axes)
    if scale is None:
        scale = op.constant(np.ones(dims, dtype=dtype), "ones")
    elif len(g.static_shape(scale)) > len(axes):
        scale = op.Reshape(scale, op.constant(np.array(dims, np.int64), "shape"))
    epsilon = float(g.constant(eps).reshape(-1)[0])
    domain = "" if g.opsets.get("", 0) >= 23 else "onnxkit"
    return op.RMSNormalization(x, scale, axis=axes[0] - rank, epsilon=epsilon, _domain=domain)


def _detail(g, x, eps, mean, scale=None):
    e = float(g.constant(eps).reshape(-1)[0])
    return f"epsilon {e:g}" + ("" if scale is not None else ", scale of ones")


def _rule(square: str, inverse: str, scaled: bool) -> RewriteRule:
    if scaled:
        def pattern(op, x, eps, scale):
            return op.Mul(_normalized(op, x, eps, square, inverse), scale)
    else:
        def pattern(op, x, eps):
            return _normalized(op, x, eps, square, inverse)
    name = f"RMSNorm {square} {inverse}" + (" scale" if scaled else "")
    return RewriteRule(name, pattern, _rewrite, _check, _detail)


RULES = tuple(_rule(s, i, scaled) for scaled in (True, False) for s in ("pow", "mul")
              for i in ("div", "reciprocal"))
PASS = RulePass("rms_norm_fusion", RULES, __doc__)
