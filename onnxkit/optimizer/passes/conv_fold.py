"""Fold a BatchNormalization, or a per-channel Mul or Add, into the Conv before it.

    before:  c = Conv (x, W, B)
             y = BatchNormalization <epsilon = 1e-5> (c, scale, bias, mean, var)
    after:   y = Conv (x, W', B')      with s = scale / sqrt(var + epsilon),
                                       W' = W * s[m], B' = (B - mean) * s + bias

    before:  y = Mul (Conv (x, W, B), s)     # s: one value per output channel (or one)
    after:   y = Conv (x, W * s[m], B * s)
    before:  y = Add (Conv (x, W, B), c)     # c: one value per output channel
    after:   y = Conv (x, W, B + c)

W, B and the folded operands must be constants; the arithmetic is done in float64.
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import channel_vector, is_float
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of


def conv_constants(g, conv) -> tuple | str:
    """(W, B) of a Conv as float64 arrays (B zeros when absent), or why not."""
    w = g.constant(conv.input[1])
    if w is None:
        return "the Conv weights are not a constant"
    if not is_float(g, conv.input[1]):
        return "the Conv is not a floating-point one"
    b = None
    if len(conv.input) > 2 and conv.input[2]:
        b = g.constant(conv.input[2])
        if b is None:
            return "the Conv bias is not a constant"
    b = np.zeros(w.shape[0]) if b is None else b.astype(np.float64)
    return w.astype(np.float64), b


def bn_scale_shift(g, bn) -> tuple | str:
    """Inference BatchNormalization as y = x * s + t (per channel), or why not."""
    values = [g.constant(i) for i in bn.input[1:5]]
    if any(v is None for v in values) or len(bn.input) < 5:
        return "the BatchNormalization statistics are not constants"
    if attr(bn, "training_mode", 0) or attr(bn, "spatial", 1) != 1 or attr(bn, "is_test", 1) == 0:
        return "the BatchNormalization is not in inference mode (or not spatial)"
    scale, bias, mean, var = (v.astype(np.float64).reshape(-1) for v in values)
    s = scale / np.sqrt(var + attr(bn, "epsilon", 1e-5))
    return s, bias - mean * s


def _folded_conv(op, x, conv, w, b):
    dtype = op.graph.constant(conv.input[1]).dtype
    return op.Conv(x, op.constant(w.astype(dtype), "W"), op.constant(b.astype(dtype), "B"),
                   **attrs_of(conv))


# --- BatchNormalization ----------------------------------------------------------------

def _bn_pattern(op, x, scale, bias, mean, var):
    return op.BatchNormalization(op.Conv(x, _allow_other_inputs=True, _name="conv"),
                                 scale, bias, mean, var, _name="bn")


def _bn_check(g, conv, bn, **_):
    wb = conv_constants(g, conv)
    st = bn_scale_shift(g, bn)
    return wb if isinstance(wb, str) else (st if isinstance(st, str) else None)


def _bn_rewrite(op, x, conv, bn, **_):
    w, b = conv_constants(op.graph, conv)
    s, t = bn_scale_shift(op.graph, bn)
    return _folded_conv(op, x, conv, w * s.reshape((-1,) + (1,) * (w.ndim - 1)), b * s + t)


# --- Mul / Add -------------------------------------------------------------------------

def _mul_pattern(op, x, s):
    return op.Mul(op.Conv(x, _allow_other_inputs=True, _name="conv"), s)


def _add_pattern(op, x, c):
    return op.Add(op.Conv(x, _allow_other_inputs=True, _name="conv"), c)


def _per_channel(g, conv, value):
    arr = g.constant(value)
    w = g.constant(conv.input[1])
    if arr is None or w is None:
        return None
    return channel_vector(arr, w.shape[0], w.ndim, axis=1)


def _affine_check(g, x, conv, **operand):
    (value,) = operand.values()
    wb = conv_constants(g, conv)
    if isinstance(wb, str):
        return wb
    if g.constant(value) is None:
        return f"{value!r} is not a constant"
    if _per_channel(g, conv, value) is None:
        return f"{value!r} is not one value per output channel"
    return None


def _mul_rewrite(op, x, s, conv):
    w, b = conv_constants(op.graph, conv)
    v = _per_channel(op.graph, conv, s)
    return _folded_conv(op, x, conv, w * v.reshape((-1,) + (1,) * (w.ndim - 1)), b * v)


def _add_rewrite(op, x, c, conv):
    w, b = conv_constants(op.graph, conv)
    return _folded_conv(op, x, conv, w, b + _per_channel(op.graph, conv, c))


RULES = (
    RewriteRule("BatchNormalization", _bn_pattern, _bn_rewrite, _bn_check),
    RewriteRule("Mul", _mul_pattern, _mul_rewrite, _affine_check),
    RewriteRule("Add", _add_pattern, _add_rewrite, _affine_check),
)
PASS = RulePass("conv_fold", RULES, __doc__)
