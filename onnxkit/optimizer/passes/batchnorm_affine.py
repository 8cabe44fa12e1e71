"""Fold a per-channel Mul or Add after a BatchNormalization into its scale and bias.

    before:  b = BatchNormalization (x, scale, bias, mean, var)
             m = Mul (b, s)                       # s: one value per channel
             y = Add (m, c)                       # c: one value per channel
    after:   y = BatchNormalization (x, scale * s, bias * s + c, mean, var)

(The light DenseNet-121 of the onnx test data has this shape: BN, Mul, Add, Relu.)
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.passes._util import channel_vector
from onnxkit.optimizer.passes.conv_fold import bn_scale_shift
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of


def _bn_mul(op, x, k):
    return op.Mul(op.BatchNormalization(x, _allow_other_inputs=True, _name="bn"), k)


def _bn_add(op, x, k):
    return op.Add(op.BatchNormalization(x, _allow_other_inputs=True, _name="bn"), k)


def _vector(g, bn, k):
    arr, scale, rank = g.constant(k), g.constant(bn.input[1]), g.rank(bn.input[0])
    if arr is None or scale is None or rank is None:
        return None
    return channel_vector(arr, scale.size, rank, axis=1)


def _check(g, x, k, bn):
    st = bn_scale_shift(g, bn)
    if isinstance(st, str):
        return st
    if _vector(g, bn, k) is None:
        return f"{k!r} is not a constant with one value per channel (or the rank is unknown)"
    return None


def _rewrite(op, x, k, bn, mul: bool):
    g = op.graph
    v = _vector(g, bn, k).astype(np.float64)
    scale, bias = (g.constant(i) for i in bn.input[1:3])
    dtype = scale.dtype
    new_scale = scale.astype(np.float64) * v if mul else scale
    new_bias = bias.astype(np.float64) * v if mul else bias.astype(np.float64) + v
    return op.BatchNormalization(x, op.constant(np.asarray(new_scale).astype(dtype), "scale"),
                                 op.constant(new_bias.astype(dtype), "bias"), *bn.input[3:5],
                                 **attrs_of(bn))


RULES = (
    RewriteRule("BatchNormalization+Mul", _bn_mul, lambda op, **b: _rewrite(op, **b, mul=True), _check),
    RewriteRule("BatchNormalization+Add", _bn_add, lambda op, **b: _rewrite(op, **b, mul=False), _check),
)
PASS = RulePass("batchnorm_affine", RULES, __doc__)
