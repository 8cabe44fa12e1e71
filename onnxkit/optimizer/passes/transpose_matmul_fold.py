"""A Transpose that swaps the last two axes of a MatMul's operand becomes transA / transB.

    before:  kt = Transpose <perm = [0, 1, 3, 2]> (k)        # k: float[2, 4, 9, 16]
             y = MatMul (q, kt)                             # or FusedMatMul, Gemm
    after:   y = onnxkit.FusedMatMul <transB = 1> (q, k)

    before:  y = Gemm <transA = 0> (Transpose <perm = [1, 0]> (a), B, C)
    after:   y = Gemm <transA = 1> (a, B, C)

Attention's scores ``Q @ K^T`` are written this way by the dynamo exporter (onnxruntime's
``FusedMatMul`` takes the same transB). The Transpose must keep the batch axes in place
(perm = [0, 1, ..., r-1, r-2]). The pass runs once, after the other fusions (attention
matches the Transpose first). A MatMul of two matrices becomes a standard ``Gemm``; an
existing FusedMatMul or (Fused)Gemm flips its flag, keeping its other inputs and
attributes. https://onnx.ai/onnx/operators/onnx__MatMul.html
"""

from __future__ import annotations

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import is_float, swaps_last_two
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of

# op type -> its domain; the matrix products whose operands can be read transposed
PRODUCTS = {"MatMul": "", "FusedMatMul": "onnxkit", "Gemm": "", "FusedGemm": "onnxkit"}


def _perm(g, t):
    perm = attr(t, "perm")
    if perm is None:  # the default reverses every axis: a swap only for matrices
        rank = g.rank(t.input[0])
        return None if rank is None else list(range(rank))[::-1]
    return list(perm)


def _rule(product: str, which: tuple[int, ...]) -> RewriteRule:
    """The rule for ``product`` whose operands ``which`` (0: A, 1: B) are Transposes."""
    domain = PRODUCTS[product]

    def pattern(op, a, b):
        ins = [op.Transpose(x, _name=f"t{i}") if i in which else x for i, x in enumerate((a, b))]
        return getattr(op, product)(*ins, _domain=domain, _allow_other_inputs=True, _name="mm")

    def check(g, a, b, mm, **ts):
        for t in ts.values():
            perm = _perm(g, t)
            if perm is None:
                return f"the rank of {t.input[0]!r} is unknown"
            if not swaps_last_two(perm):
                return f"Transpose {t.name!r} perm {perm} does not swap just the last two axes"
            if a in t.output or b in t.output:  # one Transpose read twice: it must stay
                return f"Transpose {t.name!r} feeds both operands"
        if product == "MatMul" and not is_float(g, mm.output[0]):
            return "not a floating-point MatMul (FusedMatMul is float only)"
        return None

    def rewrite(op, a, b, mm, **ts):
        g = op.graph
        flags = {"transA": 0 in which, "transB": 1 in which}
        if product == "MatMul":
            if g.rank(a) == 2 and g.rank(b) == 2 and g.opsets.get("", 0) >= 11:
                return op.Gemm(a, b, **{k: int(v) for k, v in flags.items()})
            return op.FusedMatMul(a, b, _domain="onnxkit", **{k: int(v) for k, v in flags.items()})
        attrs = attrs_of(mm)
        for k, v in flags.items():
            attrs[k] = int(bool(attr(mm, k, 0)) != v)
        return getattr(op, product)(a, b, *mm.input[2:], _domain=domain, **attrs)

    def detail(g, a, b, mm, **ts):
        names = " and ".join("trans" + "AB"[i] for i in which)
        return f"{len(ts)} Transpose{'s' if len(ts) > 1 else ''} into {product} {mm.name!r} ({names})"

    name = f"Transpose into {product} " + "+".join("AB"[i] for i in which)
    return RewriteRule(name, pattern, rewrite, check, detail)


RULES = tuple(_rule(p, w) for p in PRODUCTS for w in ((0, 1), (0,), (1,)))
PASS = RulePass("transpose_matmul_fold", RULES, __doc__)
# once, after level 2's fixed point: attention_fusion matches MatMul (q, Transpose (k)) first
PASS.repeat = False
