"""Transpose and Reshape chains collapse into one node.

    before:  t = Transpose <perm = [0, 2, 1, 3]> (x)
             y = Transpose <perm = [0, 1, 3, 2]> (t)
    after:   y = Transpose <perm = [0, 2, 3, 1]> (x)       # or nothing, when the identity

    before:  u = Unsqueeze (mask, {1})                     # any two of Reshape, Flatten,
             y = Unsqueeze (u, {2})                        # Squeeze, Unsqueeze
    after:   y = Reshape (mask, {1, 1, 1, 128})            # y's static shape

    before:  r = Reshape (k, {-1, 9, 16})                  # k: float[2, 4, 9, 16]
             t = Transpose <perm = [0, 2, 1]> (r)
             y = Reshape (t, {2, 4, 16, 9})
    after:   y = Transpose <perm = [0, 1, 3, 2]> (k)       # Reshape (..., y's shape) after
                                                           # it if y's batch axes differ
    before:  y = Transpose <perm = [0, 2, 1, 3]> (a)        # a: float[2, 4, 1, 16]
    after:   y = Reshape (a, {2, 1, 4, 16})                # only axes of length 1 move

The composed permutation is perm[i] = first[second[i]]. A Transpose that keeps the order
of the axes longer than 1 (a decoder step's heads around its one query row) leaves the
values in memory order: a Reshape, which then joins the Reshapes next to it. A shape chain needs the static
shape of its result. The Reshapes around a swap of the last two axes (the dynamo exporter's
``k.transpose(-1, -2)`` on merged batch axes) only regroup the batch axes, which the swap
leaves in order; all three shapes must be static. https://onnx.ai/onnx/operators/onnx__Transpose.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import swaps_last_two
from onnxkit.optimizer.pattern import RewriteRule, RulePass

SHAPE_OPS = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


def _transposes(op, x):
    return op.Transpose(op.Transpose(x, _name="first"), _name="second")


def _perm(g, node, x):
    perm = attr(node, "perm")
    if perm is None:
        rank = g.rank(x)
        return None if rank is None else list(range(rank))[::-1]
    return list(perm)


def _transposes_check(g, x, first, second):
    p1, p2 = _perm(g, first, x), _perm(g, second, first.output[0])
    return None if p1 is not None and p2 is not None else "the rank is unknown"


def _transposes_rewrite(op, x, first, second):
    p1, p2 = _perm(op.graph, first, x), _perm(op.graph, second, first.output[0])
    perm = [p1[i] for i in p2]
    return x if perm == sorted(perm) else op.Transpose(x, perm=perm)


def _shape_chain(first_type: str, second_type: str) -> RewriteRule:
    def pattern(op, x):
        inner = getattr(op, first_type)(x, _allow_other_inputs=True, _name="first")
        return getattr(op, second_type)(inner, _allow_other_inputs=True, _name="second")

    def check(g, x, first, second):
        shape = g.static_shape(second.output[0])
        if shape is None:
            return "the result's shape is not static"
        if 0 in shape or g.opsets.get("", 0) < 5:
            return "an empty axis (Reshape would copy it) or Reshape before opset 5"
        return None

    def rewrite(op, x, first, second):
        shape = op.graph.static_shape(second.output[0])
        return op.Reshape(x, op.constant(np.array(shape, dtype=np.int64), "shape"))

    return RewriteRule(f"{first_type}+{second_type}", pattern, rewrite, check)


def _regrouped_swap(op, x):
    first = op.Reshape(x, _allow_other_inputs=True, _name="first")
    return op.Reshape(op.Transpose(first, _name="t"), _allow_other_inputs=True, _name="second")


def _regrouped_swap_check(g, x, first, t, second):
    sx, s1, s2 = (g.static_shape(v) for v in (x, first.output[0], second.output[0]))
    if None in (sx, s1, s2) or 0 in sx:
        return "the shapes are not static (or one is empty)"
    if len(sx) < 2 or len(s1) < 2 or tuple(s1[-2:]) != tuple(sx[-2:]):
        return f"the first Reshape {list(sx)} -> {list(s1)} changes the last two axes"
    perm = _perm(g, t, first.output[0])
    if perm is None or not swaps_last_two(perm):
        return f"the Transpose (perm {perm}) does not swap just the last two axes"
    if tuple(s2[-2:]) != (s1[-1], s1[-2]):
        return f"the second Reshape -> {list(s2)} changes the last two axes"
    return None


def _regrouped_swap_rewrite(op, x, first, t, second):
    g = op.graph
    sx, s2 = g.static_shape(x), g.static_shape(second.output[0])
    swapped = op.Transpose(x, perm=list(range(len(sx) - 2)) + [len(sx) - 1, len(sx) - 2])
    if tuple(s2) == tuple(sx[:-2]) + (sx[-1], sx[-2]):
        return swapped
    return op.Reshape(swapped, op.constant(np.array(s2, dtype=np.int64), "shape"))


def _unit_moves(op, x):
    return op.Transpose(x, _name="t")


def _unit_moves_check(g, x, t):
    shape, perm = g.static_shape(x), _perm(g, t, x)
    if shape is None or 0 in shape or perm is None or g.opsets.get("", 0) < 5:
        return "the input's shape is not static (or empty), or Reshape before opset 5"
    if perm == list(range(len(perm))):
        return "the identity"
    kept = [p for p in perm if shape[p] != 1]
    if kept != sorted(kept):
        return f"perm {perm} reorders axes longer than 1 of {list(shape)}"
    return None


def _unit_moves_rewrite(op, x, t):
    shape, perm = op.graph.static_shape(x), _perm(op.graph, t, x)
    return op.Reshape(x, op.constant(np.array([shape[p] for p in perm], np.int64), "shape"))


RULES = (RewriteRule("Transpose of unit axes", _unit_moves, _unit_moves_rewrite,
                     _unit_moves_check),
         RewriteRule("Reshape+Transpose+Reshape", _regrouped_swap, _regrouped_swap_rewrite,
                     _regrouped_swap_check),
         RewriteRule("Transpose+Transpose", _transposes, _transposes_rewrite, _transposes_check),) + tuple(
    _shape_chain(a, b) for a in SHAPE_OPS for b in SHAPE_OPS)
PASS = RulePass("chains", RULES, __doc__)
