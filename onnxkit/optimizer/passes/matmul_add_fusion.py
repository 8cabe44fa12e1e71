"""MatMul + Add: a Gemm for matrices, an onnxkit.FusedMatMul with a bias otherwise.

    before:  m = MatMul (a, W)                  # a: float[64,784], W: float[784,512]
             y = Add (m, b)                     # b: float[512]
    after:   y = Gemm (a, W, b)

    before:  y = Add (MatMul (h, W), b)         # h: float[1,128,256]
    after:   y = onnxkit.FusedMatMul (h, W, b)

The bias must not broadcast the product to a bigger shape, and (for Gemm) must broadcast
to [M, N] one way, as Gemm's C does. https://onnx.ai/onnx/operators/onnx__Gemm.html
"""

from __future__ import annotations

from onnxkit.optimizer.passes._util import is_float
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _matmul_add(op, a, w, b):
    return op.Add(op.MatMul(a, w, _name="mm"), b)


def _shapes(g, a, w, b, mm):
    return g.static_shape(a), g.static_shape(w), g.static_shape(b), g.static_shape(mm.output[0])


def _check(g, a, w, b, mm):
    sa, sw, sb, sy = _shapes(g, a, w, b, mm)
    if None in (sa, sw, sb, sy):
        return "the shapes are not known"
    if not is_float(g, a):
        return "not a floating-point MatMul"
    if len(sw) != 2 or len(sa) < 2:
        return "the second input is not a matrix (or the first is a vector)"
    if len(sb) > len(sy) or any(d not in (1, sy[len(sy) - len(sb) + i]) for i, d in enumerate(sb)):
        return f"the bias {list(sb)} broadcasts the product {list(sy)} to a bigger shape"
    if len(sa) > 2 and any(d != 1 for d in sb[:-1]):
        return "the bias varies along more than the last axis"
    return None


def _use_gemm(g, a) -> bool:
    return g.rank(a) == 2 and g.opsets.get("", 0) >= 7  # Gemm-7 broadcasts C without asking


def _rewrite(op, a, w, b, mm):
    if _use_gemm(op.graph, a):
        return op.Gemm(a, w, b)
    return op.FusedMatMul(a, w, b, _domain="onnxkit")


def _detail(g, a, w, b, mm):
    return "Gemm" if _use_gemm(g, a) else "onnxkit.FusedMatMul (the input is not a matrix)"


RULES = (RewriteRule("MatMul+Add", _matmul_add, _rewrite, _check, _detail),)
PASS = RulePass("matmul_add_fusion", RULES, __doc__)
