"""Exercise 2: write graph rewrites with onnxkit's pattern language.

A rewrite rule is a pattern, an optional check and a rewrite (onnxkit/optimizer/pattern.py):

    def pattern(op, x, w):            # parameters after ``op`` are variables (value names)
        return op.Relu(op.Conv(x, w, _name="conv"))     # _name: the check sees that node

    def check(g, x, w, conv):         # None: go ahead; a string: the reason not to
        return None if g.is_constant(w) else "W is not a constant"

    def rewrite(op, x, w, conv):      # build the replacement with op.X(...); return its output
        return op.FusedConv(x, w, activation="Relu", _domain="onnxkit")

The matcher already refuses a match whose inner values are read elsewhere, and tries both
input orders of ``Add`` and ``Mul``. In a check, ``g.constant(v)`` is v's array when v is a
constant (else None), ``g.rank(v)`` its rank when known (else None).

Check your work:   ONNXKIT_EXERCISES=learner python -m pytest exercises -m task2_1
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (for your check)

from onnxkit.optimizer.pattern import RewriteRule, RulePass


# Task 2.1: x * Reciprocal(y)  ->  x / y
#     before:  r = Reciprocal (y)
#              z = Mul (x, r)
#     after:   z = Div (x, y)

def reciprocal_pattern(op, x, y):
    """The pattern: a Mul of ``x`` and the Reciprocal of ``y``."""
    # ## Task 2.1
    raise NotImplementedError("Need to implement for Task 2.1")


def reciprocal_rewrite(op, x, y):
    """The replacement: one Div node (mind the order of its inputs)."""
    # ## Task 2.1
    raise NotImplementedError("Need to implement for Task 2.1")


def reciprocal_rule() -> RewriteRule:
    return RewriteRule("Mul(x, Reciprocal(y))->Div", reciprocal_pattern, reciprocal_rewrite)


# Task 2.2: Pow(x, 2)  ->  Mul(x, x), a cheaper way to square
#     before:  z = Pow (x, e)          # e a constant equal to 2
#     after:   z = Mul (x, x)
# The check must refuse (returning a reason, a short string) when the rewrite would change
# the result: the exponent is not a constant, not 2 everywhere, or has more dimensions
# than x (Pow broadcasts x against it; Mul(x, x) would not).

def square_pattern(op, x, e):
    return op.Pow(x, e)


def square_check(g, x, e) -> str | None:
    """None when ``Pow(x, e)`` may become ``Mul(x, x)``, else the reason it may not."""
    # ## Task 2.2
    raise NotImplementedError("Need to implement for Task 2.2")


def square_rewrite(op, x, e):
    return op.Mul(x, x)


def square_rule() -> RewriteRule:
    return RewriteRule("Pow(x, 2)->Mul", square_pattern, square_rewrite, square_check)


def make_pass(*rules: RewriteRule) -> RulePass:
    """A pass of the given rules, for ``onnxkit.optimizer.optimize(model, passes=(...,))``."""
    return RulePass("exercise", rules, __doc__)

