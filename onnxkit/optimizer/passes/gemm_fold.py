"""Fold a per-column Mul or Add, or a BatchNormalization, into Gemm / MatMul weights.

    before:  y = Mul (Gemm (a, B, C), s)          # s: one value per output column
    after:   y = Gemm (a, B * s, C * s)           # (B's rows when transB = 1)
    before:  y = Add (Gemm <beta = b> (a, B, C), c)
    after:   y = Gemm <beta = 1> (a, B, b * C + c)
    before:  y = Mul (MatMul (a, W), s)           # W a constant matrix
    after:   y = MatMul (a, W * s)
    before:  y = BatchNormalization (Gemm (a, B, C), scale, bias, mean, var)
    after:   y = Gemm (a, B * k, (C - mean) * k + bias)     with k = scale / sqrt(var + eps)
    before:  y = BatchNormalization (MatMul (a, W), ...)    # a: a matrix
    after:   y = Gemm (a, W * k, bias - mean * k)

https://onnx.ai/onnx/operators/onnx__Gemm.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import channel_vector, is_float
from onnxkit.optimizer.passes.conv_fold import bn_scale_shift
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of


def _gemm_b(g, gemm):
    b = g.constant(gemm.input[1])
    if b is None or b.ndim != 2 or not is_float(g, gemm.input[1]):
        return None
    return b


def _columns(g, gemm) -> int:
    b = g.constant(gemm.input[1])
    return b.shape[0] if attr(gemm, "transB", 0) else b.shape[1]


def _gemm_c(g, gemm):
    if len(gemm.input) > 2 and gemm.input[2]:
        c = g.constant(gemm.input[2])
        return None if c is None else c.astype(np.float64) * attr(gemm, "beta", 1.0)
    return np.zeros(1)


def _scale_b(b, v, trans_b: int):
    return b * (v[:, None] if trans_b else v[None, :])


def _new_gemm(op, a, gemm, b, c):
    dtype = op.graph.constant(gemm.input[1]).dtype
    attrs = attrs_of(gemm)
    attrs["beta"] = 1.0
    return op.Gemm(a, op.constant(b.astype(dtype), "B"), op.constant(c.astype(dtype), "C"), **attrs)


# --- Gemm + Mul / Add / BatchNormalization ---------------------------------------------

def _gemm_mul(op, a, s):
    return op.Mul(op.Gemm(a, _allow_other_inputs=True, _name="gemm"), s)


def _gemm_add(op, a, c):
    return op.Add(op.Gemm(a, _allow_other_inputs=True, _name="gemm"), c)


def _gemm_bn(op, a, scale, bias, mean, var):
    return op.BatchNormalization(op.Gemm(a, _allow_other_inputs=True, _name="gemm"),
                                 scale, bias, mean, var, _name="bn")


def _gemm_check(g, gemm, **rest):
    if g.opsets.get("", 0) < 7:
        return "Gemm before opset 7 broadcasts C only when told to"
    if _gemm_b(g, gemm) is None:
        return "B is not a constant floating-point matrix"
    if _gemm_c(g, gemm) is None:
        return "C is not a constant"
    if "bn" in rest:
        st = bn_scale_shift(g, rest["bn"])
        return st if isinstance(st, str) else None
    value = rest.get("s", rest.get("c"))
    arr = g.constant(value)
    if arr is None:
        return f"{value!r} is not a constant"
    if channel_vector(arr, _columns(g, gemm), 2) is None:
        return f"{value!r} is not one value per output column"
    return None


def _gemm_mul_rewrite(op, a, s, gemm):
    g = op.graph
    v = channel_vector(g.constant(s), _columns(g, gemm), 2).astype(np.float64)
    b = _scale_b(g.constant(gemm.input[1]).astype(np.float64), v, attr(gemm, "transB", 0))
    return _new_gemm(op, a, gemm, b, _gemm_c(g, gemm) * v)


def _gemm_add_rewrite(op, a, c, gemm):
    g = op.graph
    v = channel_vector(g.constant(c), _columns(g, gemm), 2).astype(np.float64)
    return _new_gemm(op, a, gemm, g.constant(gemm.input[1]).astype(np.float64), _gemm_c(g, gemm) + v)


def _gemm_bn_rewrite(op, a, gemm, bn, **_):
    g = op.graph
    k, t = bn_scale_shift(g, bn)
    b = _scale_b(g.constant(gemm.input[1]).astype(np.float64), k, attr(gemm, "transB", 0))
    return _new_gemm(op, a, gemm, b, _gemm_c(g, gemm) * k + t)


# --- MatMul + Mul / BatchNormalization -------------------------------------------------

def _matmul_mul(op, a, w, s):
    return op.Mul(op.MatMul(a, w), s)


def _matmul_mul_check(g, a, w, s):
    wv, sv = g.constant(w), g.constant(s)
    if wv is None or wv.ndim != 2 or not is_float(g, w):
        return "the MatMul's second input is not a constant floating-point matrix"
    rank = g.rank(a)
    if sv is None:
        return f"{s!r} is not a constant"
    if rank is None or channel_vector(sv, wv.shape[1], max(rank, 2), max(rank, 2) - 1) is None:
        return f"{s!r} is not one value per output column (or the rank is unknown)"
    return None


def _matmul_mul_rewrite(op, a, w, s):
    g = op.graph
    wv = g.constant(w)
    rank = max(g.rank(a), 2)
    v = channel_vector(g.constant(s), wv.shape[1], rank, rank - 1)
    return op.MatMul(a, op.constant((wv.astype(np.float64) * v[None, :]).astype(wv.dtype), "W"))


def _matmul_bn(op, a, w, scale, bias, mean, var):
    return op.BatchNormalization(op.MatMul(a, w), scale, bias, mean, var, _name="bn")


def _matmul_bn_check(g, a, w, bn, **_):
    wv = g.constant(w)
    if wv is None or wv.ndim != 2 or not is_float(g, w):
        return "the MatMul's second input is not a constant floating-point matrix"
    if g.opsets.get("", 0) < 7:
        return "Gemm before opset 7 broadcasts C only when told to"
    if g.rank(a) != 2:
        return "the MatMul's first input is not a matrix (Gemm needs one)"
    st = bn_scale_shift(g, bn)
    return st if isinstance(st, str) else None


def _matmul_bn_rewrite(op, a, w, bn, **_):
    g = op.graph
    wv = g.constant(w)
    k, t = bn_scale_shift(g, bn)
    return op.Gemm(a, op.constant((wv.astype(np.float64) * k[None, :]).astype(wv.dtype), "B"),
                   op.constant(t.astype(wv.dtype), "C"))


RULES = (
    RewriteRule("Gemm+Mul", _gemm_mul, _gemm_mul_rewrite, _gemm_check),
    RewriteRule("Gemm+Add", _gemm_add, _gemm_add_rewrite, _gemm_check),
    RewriteRule("Gemm+BatchNormalization", _gemm_bn, _gemm_bn_rewrite, _gemm_check),
    RewriteRule("MatMul+Mul", _matmul_mul, _matmul_mul_rewrite, _matmul_mul_check),
    RewriteRule("MatMul+BatchNormalization", _matmul_bn, _matmul_bn_rewrite, _matmul_bn_check),
)
PASS = RulePass("gemm_fold", RULES, __doc__)
