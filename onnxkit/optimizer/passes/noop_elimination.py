"""No-op nodes: remove a node whose output always equals its (first) input.

    before:  y = Cast <to = 1> (x)                   # x is already float
    before:  y = Reshape (x, s)                      # x: float[2,3], s = {2, -1}
    before:  y = Transpose <perm = [0, 1, 2]> (x)
    before:  y = Slice (x, starts={0}, ends={9223372036854775807})
    before:  y = Pad (x, pads={0, 0, 0, 0})          # also Expand to x's own shape
    before:  u = Unsqueeze (x, axes={1});  y = Squeeze (u, axes={1})
    before:  y = Add (x, zero)                       # also x - 0, x * 1, x / 1, Concat(x)
    after:   (readers of y read x)

Each check needs the shapes or constants that prove the node does nothing; when one is
unknown the node stays and the report says which.
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import UNKNOWN, normalize_axes, operand
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _cast(g, x, node):
    if g.dtype(x) is None:
        return f"the type of {x!r} is unknown"
    return None if g.dtype(x) == attr(node, "to") else "changes the element type"


def _target_shape(shape: list[int], dims: tuple, allowzero: int) -> tuple | None:
    out = [dims[i] if (d == 0 and not allowzero) else d for i, d in enumerate(shape)]
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1]))
        if known == 0:
            return None
        out[out.index(-1)] = int(np.prod(dims)) // known
    return tuple(out)


def _reshape(g, x, node):
    dims = g.static_shape(x)
    shape = operand(g, node, 1, "shape")
    if dims is None or shape is UNKNOWN or shape is None:
        return "the input shape or the target shape is not known"
    if _target_shape(list(shape), dims, attr(node, "allowzero", 0)) != tuple(dims):
        return "changes the shape"
    return None


def _expand(g, x, node):
    dims = g.static_shape(x)
    shape = operand(g, node, 1, "shape")
    if dims is None or shape is UNKNOWN or shape is None:
        return "the input shape or the target shape is not known"
    try:
        out = np.broadcast_shapes(tuple(dims), tuple(shape))
    except ValueError:
        return "the shapes do not broadcast"
    return None if tuple(out) == tuple(dims) else "broadcasts to a larger shape"


def _transpose(g, x, node):
    perm = attr(node, "perm")
    if perm is None:
        rank = g.rank(x)
        return None if rank is not None and rank <= 1 else "reverses the axes"
    return None if list(perm) == sorted(perm) else "permutes the axes"


def _slice(g, x, node):
    dims = g.static_shape(x)
    starts, ends = operand(g, node, 1, "starts"), operand(g, node, 2, "ends")
    axes, steps = operand(g, node, 3, "axes"), operand(g, node, 4, "steps")
    if dims is None or UNKNOWN in (starts, ends, axes, steps) or starts is None or ends is None:
        return "the input shape or the slice bounds are not known"
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    for a, s, e, k in zip(axes, starts, ends, steps):
        d = dims[a]
        s, e = (s + d if s < 0 else s), (e + d if e < 0 else e)
        if k != 1 or min(max(s, 0), d) != 0 or min(max(e, 0), d) != d:
            return f"keeps only part of axis {a}"
    return None


def _pad(g, x, node):
    pads = operand(g, node, 1, "pads")
    if pads is UNKNOWN or pads is None:
        return "the pads are not known"
    return None if not any(pads) else "adds padding"


def _single_input(g, x, node):
    return None if len([i for i in node.input if i]) == 1 else "has more than one input"


CHECKS = {"Cast": _cast, "Reshape": _reshape, "Expand": _expand, "Transpose": _transpose,
          "Slice": _slice, "Pad": _pad, "Concat": _single_input, "Sum": _single_input,
          "Max": _single_input, "Min": _single_input, "Mean": _single_input}


def _pass_through(op, x, **_):
    return x


def _noop_rule(op_type: str) -> RewriteRule:
    def pattern(op, x):
        return getattr(op, op_type)(x, _allow_other_inputs=True, _name="node")

    pattern.__name__ = f"noop_{op_type}"
    return RewriteRule(f"{op_type}", pattern, _pass_through, CHECKS[op_type])


# --- Unsqueeze / Squeeze pairs ---------------------------------------------------------

def _unsqueeze_squeeze(op, x):
    return op.Squeeze(op.Unsqueeze(x, _allow_other_inputs=True, _name="unsq"),
                      _allow_other_inputs=True, _name="sq")


def _squeeze_unsqueeze(op, x):
    return op.Unsqueeze(op.Squeeze(x, _allow_other_inputs=True, _name="sq"),
                        _allow_other_inputs=True, _name="unsq")


def _same_axes(g, x, unsq, sq):
    a, b = operand(g, unsq, 1, "axes"), operand(g, sq, 1, "axes")
    if a in (UNKNOWN, None) or b in (UNKNOWN, None):
        return "the axes are not known constants"
    wide = g.rank(unsq.output[0])  # both axes lists count in the rank with the extra axes
    na, nb = normalize_axes(a, wide), normalize_axes(b, wide)
    if na is None or nb is None:
        return "negative axes and an unknown rank"
    return None if na == nb else f"different axes ({list(a)} and {list(b)})"


# --- arithmetic identities -------------------------------------------------------------

def _same_shape_as_input(g, x, node):
    sx, sy = g.static_shape(x), g.static_shape(node.output[0])
    if sx is None or sy is None:
        return "the shapes are not known (the constant could broadcast)"
    if sx != sy:
        return "the constant broadcasts the input to a larger shape"
    if g.dtype(x) != g.dtype(node.output[0]):
        return "changes the element type"
    return None


def _add_zero(op, x):
    return op.Add(x, 0.0, _name="node")


def _sub_zero(op, x):
    return op.Sub(x, 0.0, _name="node")


def _mul_one(op, x):
    return op.Mul(x, 1.0, _name="node")


def _div_one(op, x):
    return op.Div(x, 1.0, _name="node")


RULES = tuple(_noop_rule(t) for t in CHECKS) + (
    RewriteRule("Unsqueeze+Squeeze", _unsqueeze_squeeze, _pass_through, _same_axes),
    RewriteRule("Squeeze+Unsqueeze", _squeeze_unsqueeze, _pass_through, _same_axes),
    RewriteRule("Add 0", _add_zero, _pass_through, _same_shape_as_input),
    RewriteRule("Sub 0", _sub_zero, _pass_through, _same_shape_as_input),
    RewriteRule("Mul 1", _mul_one, _pass_through, _same_shape_as_input),
    RewriteRule("Div 1", _div_one, _pass_through, _same_shape_as_input),
)
PASS = RulePass("noop_elimination", RULES, __doc__)
