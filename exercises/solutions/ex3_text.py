"""Reference solutions of exercise 3 (see exercises/ex3_text.py for the tasks)."""

from __future__ import annotations


def softplus_text() -> str:
    return """
<ir_version: 8, opset_import: ["" : 18]>
softplus (float[N] x) => (float[N] y) {
  one = Constant <value = float {1.0}> ()
  e = Exp (x)
  s = Add (e, one)
  y = Log (s)
}
"""


def normalize_text() -> str:
    return """
<ir_version: 8, opset_import: ["" : 18]>
normalize (float[B, N] x) => (float[B, N] y) {
  axes = Constant <value = int64[1] {-1}> ()
  mean = ReduceMean (x, axes)
  d = Sub (x, mean)
  sq = Mul (d, d)
  var = ReduceMean (sq, axes)
  eps = Constant <value = float {1e-05}> ()
  shifted = Add (var, eps)
  sd = Sqrt (shifted)
  y = Div (d, sd)
}
"""
