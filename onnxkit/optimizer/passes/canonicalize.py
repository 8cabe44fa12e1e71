"""Canonical forms that later folds and fusions look for.

    before:  y = Sum (a, b)                      # two inputs
    after:   y = Add (a, b)

``Sum`` with two inputs is ``Add`` with the same broadcasting; the fusions match ``Add``.
https://onnx.ai/onnx/operators/onnx__Sum.html
"""

from __future__ import annotations

from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _sum2(op, a, b):
    return op.Sum(a, b)


def _check(g, a, b):
    return None if g.opsets.get("", 0) >= 7 else "Add before opset 7 broadcasts only when told to"


RULES = (RewriteRule("Sum->Add", _sum2, lambda op, a, b: op.Add(a, b), _check),)
PASS = RulePass("canonicalize", RULES, __doc__)
