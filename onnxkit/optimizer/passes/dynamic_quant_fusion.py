"""The dynamic-quantization chain of a MatMul becomes one onnxkit node.

    before:  xq, xs, xz = DynamicQuantizeLinear (x)                # what quantize_dynamic
             p = MatMulInteger (xq, Wq, xz, Wz)                    # writes for y = x @ W
             y = Mul (Cast <to = FLOAT> (p), Mul (xs, Ws))
             y = Add (y, bias)                                     # when the MatMul had one
    after:   y = onnxkit.MatMulIntegerToFloat (xq, Wq, xs, Ws, xz, Wz, bias)
    and, when the DynamicQuantizeLinear feeds only that node:
             y = onnxkit.DynamicQuantizeMatMul (x, Wq, Ws, Wz, bias)

This is ``onnxruntime.quantization.quantize_dynamic``'s output; onnxruntime fuses it into
its com.microsoft operators of the same names. The fused kernels run the same standard
operators in the same order (``onnxkit/ops/fused/quant_matmul.py``), so the result is the
same to the bit. The scales must be of the Cast's float type and hold one value or one per
column (rank <= 1), the bias one value per column.
https://onnx.ai/onnx/operators/onnx__MatMulInteger.html
"""

from __future__ import annotations

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import FLOAT_TYPES
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _inputs(*names) -> list[str]:
    """Input names with absent ones as "", trailing absent ones dropped."""
    out = [n or "" for n in names]
    while out and not out[-1]:
        out.pop()
    return out


def _optional(node, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


def _vector_reason(g, value: str, what: str, dtype) -> str | None:
    shape = g.shape(value)
    if shape is None or len(shape) > 1:
        return f"the {what} {value!r} is not a scalar or a vector of known shape"
    if g.dtype(value) != dtype:
        return f"the {what} {value!r} is not of the Cast's type"
    return None


# --- 1. MatMulInteger, Cast, Mul (scale * scale) [, Add bias] -> MatMulIntegerToFloat ---

def _chain(biased: bool):
    def pattern(op, a, b, s1, s2, bias=None):
        product = op.MatMulInteger(a, b, _allow_other_inputs=True, _name="mmi")
        y = op.Mul(op.Cast(product, _name="cast"), op.Mul(s1, s2, _name="scales"))
        return op.Add(y, bias) if biased else y

    return pattern


def _chain_check(g, a, b, s1, s2, mmi, cast, scales, bias=None):
    to = attr(cast, "to")
    if to not in FLOAT_TYPES:
        return f"the Cast's type {to} is not a float type"
    for value, what in ((s1, "scale"), (s2, "scale"), (bias, "bias")):
        reason = value and _vector_reason(g, value, what, to)
        if reason:
            return reason
    return None


def _a_scale_first(g, a, s1, s2) -> tuple[str, str]:
    """(A's scale, B's scale): A's is the one its DynamicQuantizeLinear wrote, if any (the
    product is the same either way; the order lets the next rule see the quantizer)."""
    dql = g.producer(a)
    if dql is not None and dql.op_type == "DynamicQuantizeLinear" and dql.output[0] == a:
        if s2 == dql.output[1]:
            return s2, s1
    return s1, s2


def _chain_rewrite(op, a, b, s1, s2, mmi, cast, scales, bias=None):
    a_scale, b_scale = _a_scale_first(op.graph, a, s1, s2)
    ins = _inputs(a, b, a_scale, b_scale, _optional(mmi, 2), _optional(mmi, 3), bias)
    return op.MatMulIntegerToFloat(*ins, _domain="onnxkit")


def _chain_detail(g, a, b, s1, s2, mmi, cast, scales, bias=None):
    return f"MatMulInteger {mmi.name!r}" + (" with its bias" if bias else "")


# --- 2. DynamicQuantizeLinear + MatMulIntegerToFloat -> DynamicQuantizeMatMul ----------

def _quantized(op, x, b, a_scale, b_scale, a_zero):
    q = op.DynamicQuantizeLinear(x, _name="dql")
    return op.MatMulIntegerToFloat(q, b, a_scale, b_scale, a_zero, _domain="onnxkit",
                                   _allow_other_inputs=True, _name="mm")


def _quantized_check(g, x, b, a_scale, b_scale, a_zero, dql, mm):
    if list(dql.output[1:3]) != [a_scale, a_zero]:
        return "A's scale and zero point are not those of its DynamicQuantizeLinear"
    return None


def _quantized_rewrite(op, x, b, a_scale, b_scale, a_zero, dql, mm):
    ins = _inputs(x, b, b_scale, _optional(mm, 5), _optional(mm, 6))
    return op.DynamicQuantizeMatMul(*ins, _domain="onnxkit")


def _quantized_detail(g, x, b, a_scale, b_scale, a_zero, dql, mm):
    return f"DynamicQuantizeLinear {dql.name!r} feeds only {mm.name!r}"


RULES = (
    RewriteRule("MatMulInteger chain+bias", _chain(True), _chain_rewrite, _chain_check,
                _chain_detail, ("a", "b", "s1", "s2", "bias")),
    RewriteRule("MatMulInteger chain", _chain(False), _chain_rewrite, _chain_check,
                _chain_detail, ("a", "b", "s1", "s2")),
    RewriteRule("DynamicQuantizeLinear+MatMulIntegerToFloat", _quantized, _quantized_rewrite,
                _quantized_check, _quantized_detail),
)
PASS = RulePass("dynamic_quant_fusion", RULES, __doc__)
