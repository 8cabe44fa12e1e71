"""Scalar factors on both operands of a MatMul become one factor on its result.

    before:  y = MatMul (Mul (q, s1), Mul (k, s2))      # s1, s2: constant scalars
    after:   y = Mul (MatMul (q, k), s)                 # s = s1 * s2

Attention in ``transformers`` scales the query and the (transposed) key by the fourth root
of the head size each, as ``torch.nn.functional.scaled_dot_product_attention`` does when
the exporters decompose it; one Mul goes. Both factors must hold one value of the
operands' type, float or double (in float16 the factors keep the product in range, so it
is left alone), and must not raise the operand's rank.
https://onnx.ai/onnx/operators/onnx__MatMul.html
"""

from __future__ import annotations

import numpy as np

from onnx import TensorProto
from onnxkit.optimizer.pattern import RewriteRule, RulePass

_WIDE = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE})


def _pattern(op, a, s1, b, s2):
    return op.MatMul(op.Mul(a, s1), op.Mul(b, s2))


def _check(g, a, s1, b, s2):
    for x, s in ((a, s1), (b, s2)):
        value, rank = g.constant(s), g.rank(x)
        if value is None or value.size != 1:
            return f"{s!r} is not a constant scalar"
        if rank is None or value.ndim > rank:
            return f"{s!r} could raise the rank of {x!r}"
        if g.dtype(x) not in _WIDE or g.dtype(s) != g.dtype(x):
            return f"{s!r} and {x!r} are not both float or both double"
    return None


def _rewrite(op, a, s1, b, s2):
    g = op.graph
    v1, v2 = g.constant(s1), g.constant(s2)
    scale = np.asarray(v1.reshape(()) * v2.reshape(()), dtype=v1.dtype)
    return op.Mul(op.MatMul(a, b), op.constant(scale, "scale"))


def _detail(g, a, s1, b, s2):
    return f"scale {float(g.constant(s1).reshape(())) * float(g.constant(s2).reshape(())):g}"


RULES = (RewriteRule("MatMul of two scaled operands", _pattern, _rewrite, _check, _detail),)
PASS = RulePass("matmul_scale_fold", RULES, __doc__)
