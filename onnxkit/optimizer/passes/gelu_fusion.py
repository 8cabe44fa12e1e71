"""GELU written out with Erf (or Tanh) becomes one Gelu node.

    before:  d = Div (x, 1.4142135)             # or Mul (x, 0.70710678)
             e = Erf (d)
             p = Add (e, 1)
             m = Mul (x, p)
             y = Mul (m, 0.5)                   # or 0.5 * x first, or (p * 0.5) * x
    after:   y = Gelu (x)                       # opset >= 20; else onnxkit.Gelu

    tanh form:  y = 0.5 * x * (1 + Tanh (0.7978845608 * (x + 0.044715 * x^3)))
    after:      y = Gelu <approximate = "tanh"> (x)

https://onnx.ai/onnx/operators/onnx__Gelu.html
"""

from __future__ import annotations

import math

from onnxkit.optimizer.passes._util import is_float
from onnxkit.optimizer.pattern import RewriteRule, RulePass

SQRT2 = math.sqrt(2.0)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _erf_div(op, x):
    return op.Add(op.Erf(op.Div(x, SQRT2)), 1.0)


def _erf_mul(op, x):
    return op.Add(op.Erf(op.Mul(x, 1.0 / SQRT2)), 1.0)


def _tanh_pow(op, x):
    inner = op.Add(x, op.Mul(op.Pow(x, 3.0), 0.044715))
    return op.Add(op.Tanh(op.Mul(inner, SQRT_2_OVER_PI)), 1.0)


def _tanh_cube(op, x):
    inner = op.Add(x, op.Mul(op.Mul(x, op.Mul(x, x)), 0.044715))
    return op.Add(op.Tanh(op.Mul(inner, SQRT_2_OVER_PI)), 1.0)


# the three ways of writing 0.5 * x * p
OUTER = {
    "(x*p)*0.5": lambda op, x, p: op.Mul(op.Mul(x, p), 0.5),
    "x*(p*0.5)": lambda op, x, p: op.Mul(x, op.Mul(p, 0.5)),
    "(x*0.5)*p": lambda op, x, p: op.Mul(op.Mul(x, 0.5), p),
}
INNER = {"erf/div": (_erf_div, "none"), "erf/mul": (_erf_mul, "none"),
         "tanh/pow": (_tanh_pow, "tanh"), "tanh/cube": (_tanh_cube, "tanh")}


def _check(g, x):
    return None if is_float(g, x) else "not a floating-point tensor (or its type is unknown)"


def _rule(inner_name: str, outer_name: str) -> RewriteRule:
    inner, approximate = INNER[inner_name]
    outer = OUTER[outer_name]

    def pattern(op, x):
        return outer(op, x, inner(op, x))

    def rewrite(op, x):
        if op.graph.opsets.get("", 0) >= 20:
            return op.Gelu(x, approximate=approximate)
        return op.Gelu(x, approximate=approximate, _domain="onnxkit")

    return RewriteRule(f"Gelu {inner_name} {outer_name}", pattern, rewrite, _check)


RULES = tuple(_rule(i, o) for i in INNER for o in OUTER)
PASS = RulePass("gelu_fusion", RULES, __doc__)
