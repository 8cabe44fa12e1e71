"""Scaled dot-product attention becomes one Attention node (onnxkit.Attention before opset 23).

    before:  kt = Transpose <perm = [0, 2, 3, 1]> (k)          # k: [B, S, H, D]
             s = MatMul (q, kt)                               # q: [B, H, S, D]
             p = Softmax <axis = -1> (Add (Div (s, 8), mask))
             y = MatMul (p, v)
    after:   k4 = Transpose <perm = [0, 2, 1, 3]> (k)
             y = Attention <scale = 0.125> (q, k4, v, mask)

torch's scaled_dot_product_attention, as both exporters write it, puts
``Where (IsNaN (p), 0, p)`` after the Softmax: a row the mask leaves no key is 0, not NaN.
Attention gives 0 for those rows already (decided on the mask), so the guard goes into
the fusion too; only a NaN in Q, K or V itself now gives NaN where the guard gave 0.

Then the head split and merge around it fold into the 3D form of the operator:

    before:  q = Transpose <perm = [0, 2, 1, 3]> (Reshape (q3, {1, 128, 4, 64}))   # k, v alike
             a = Attention (q, k, v, mask)
             y = Reshape (Transpose <perm = [0, 2, 1, 3]> (a), {1, 128, 256})
    after:   y = Attention <q_num_heads = 4, kv_num_heads = 4> (q3, k3, v3, mask)

Last, the keys and values the dynamo exporter repeats for grouped-query attention
(Unsqueeze, Expand, Reshape: ``repeat_kv``) go in as they are: a 4D Attention with
fewer key/value heads than query heads reads head h's from kv head h // (q / kv).

https://onnx.ai/onnx/operators/onnx__Attention.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import is_float
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of

SWAP_LAST = [0, 1, 3, 2]
HEADS = [0, 2, 1, 3]


def _domain(g) -> str:
    return "" if g.opsets.get("", 0) >= 23 else "onnxkit"


# --- 1. MatMul, scale, mask, Softmax, MatMul -> Attention (4D) -------------------------

def _sdpa_pattern(transposed: bool, scaling: str, masked: bool, guarded: bool = False):
    def pattern(op, q, k, v, s=None, mask=None):
        kt = op.Transpose(k, _name="kt") if transposed else k
        scores = op.MatMul(q, kt, _name="qk")
        if scaling == "div":
            scores = op.Div(scores, s)
        elif scaling == "mul":
            scores = op.Mul(scores, s)
        if masked:
            scores = op.Add(scores, mask)
        probs = op.Softmax(scores, _name="softmax")
        if guarded:  # torch's SDPA export: rows the mask empties (NaN) become 0
            probs = op.Where(op.IsNaN(probs), 0.0, probs)
        return op.MatMul(probs, v)

    return pattern


def _sdpa_variables(scaling: str, masked: bool) -> tuple[str, ...]:
    return ("q", "k", "v") + (("s",) if scaling != "none" else ()) + (("mask",) if masked else ())


def _sdpa_check(g, q, k, v, qk, softmax, s=None, mask=None, kt=None):
    if not is_float(g, q):
        return "not a floating-point tensor (or its type is unknown)"
    sq, sv = g.static_shape(q), g.static_shape(v)
    sk = g.static_shape(k if kt is None else kt.output[0])
    if sq is None or sk is None or sv is None or not len(sq) == len(sk) == len(sv) == 4:
        return "Q, K^T, V are not 4D tensors of known shape"
    if kt is not None and (attr(kt, "perm") is None or sorted(attr(kt, "perm")) != [0, 1, 2, 3]):
        return "the Transpose of K has no explicit 4D permutation"
    axis = attr(softmax, "axis", -1 if g.opsets.get("", 0) >= 13 else 1)
    if axis not in (-1, 3):
        return f"Softmax over axis {axis}, not the last"
    if sq[0] != sk[0] or sk[:2] != sv[:2] or sq[1] % sk[1] or sq[3] != sk[2] or sk[3] != sv[2]:
        return f"the axes of Q {list(sq)}, K^T {list(sk)}, V {list(sv)} do not fit Attention"
    if s is not None:
        value = g.constant(s)
        if value is None or value.size != 1:
            return "the scale is not a constant scalar"
    if mask is not None:
        sm, ss = g.static_shape(mask), g.static_shape(qk.output[0])
        if sm is None or ss is None or not 2 <= len(sm) <= 4 or sm[-1] != ss[-1]:
            return ("the mask is not 2D-4D with one value per key (Attention pads a shorter "
                    "last axis with -inf instead of broadcasting it)")
        if np.broadcast_shapes(sm, ss) != tuple(ss):
            return "the mask broadcasts the scores to a bigger shape"
        if g.dtype(mask) != g.dtype(q):
            return "the mask has another element type"
    return None


def _sdpa_rewrite(scaling: str):
    def rewrite(op, q, k, v, qk, softmax, s=None, mask=None, kt=None):
        g = op.graph
        if kt is None:
            k4 = op.Transpose(k, perm=SWAP_LAST)
        else:
            perm = [list(attr(kt, "perm"))[i] for i in SWAP_LAST]  # K = K^T with the last two swapped
            k4 = k if perm == sorted(perm) else op.Transpose(k, perm=perm)
        value = 1.0 if s is None else float(g.constant(s).reshape(-1)[0])
        scale = 1.0 / value if scaling == "div" else value
        inputs = [q, k4, v] + ([mask] if mask is not None else [])
        return op.Attention(*inputs, scale=scale, _domain=_domain(g))

    return rewrite


# --- 2. head split / merge around a 4D Attention -> the 3D form -----------------------

def _heads_pattern(masked: bool, domain: str):
    def split(op, x3, name):
        return op.Transpose(op.Reshape(x3, _allow_other_inputs=True, _name=f"r{name}"), perm=HEADS)

    def core(op, q3, k3, v3, mask):
        ins = [split(op, q3, "q"), split(op, k3, "k"), split(op, v3, "v")] + ([mask] if masked else [])
        a = op.Attention(*ins, _domain=domain, _name="attn")
        return op.Reshape(op.Transpose(a, perm=HEADS), _allow_other_inputs=True, _name="merge")

    if masked:
        def pattern(op, q3, k3, v3, mask):
            return core(op, q3, k3, v3, mask)
    else:
        def pattern(op, q3, k3, v3):
            return core(op, q3, k3, v3, None)
    return pattern


def _heads_check(g, q3, k3, v3, rq, rk, rv, attn, merge, mask=None):
    if attr(attn, "q_num_heads") is not None or attr(attn, "is_causal", 0):
        return "the Attention is already 3D (or causal)"
    shapes = [g.static_shape(x) for x in (q3, k3, v3)]
    split = [g.static_shape(r.output[0]) for r in (rq, rk, rv)]
    out = g.static_shape(merge.output[0])
    if None in shapes or None in split or out is None:
        return "shapes are not known"
    for s3, s4 in zip(shapes, split):
        if len(s3) != 3 or len(s4) != 4 or s4[:2] != s3[:2] or s4[2] * s4[3] != s3[2]:
            return f"the Reshape {list(s3)} -> {list(s4)} is not a head split"
    if out != (split[0][0], split[0][1], split[0][2] * split[2][3]):
        return f"the result {list(out)} is not the heads merged back"
    return None


def _heads_rewrite(op, q3, k3, v3, rq, rk, rv, attn, merge, mask=None):
    g = op.graph
    heads_q, heads_kv = g.static_shape(rq.output[0])[2], g.static_shape(rk.output[0])[2]
    inputs = [q3, k3, v3] + ([mask] if mask is not None else [])
    return op.Attention(*inputs, q_num_heads=heads_q, kv_num_heads=heads_kv,
                        scale=attr(attn, "scale"), _domain="onnxkit" if attn.domain == "onnxkit" else "")


# --- 3. key / value heads repeated for grouped-query attention -> read in place -------

def _repeat_pattern(k_transposed: bool, masked: bool, domain: str):
    """The dynamo exporter's ``repeat_kv``: x [b, kv, s, d] -> Unsqueeze (axis 2) -> Expand
    [b, kv, g, s, d] -> Reshape [b, kv * g, s, d], the keys' copy read through the
    transposes that give K^T (cancelled by the one the SDPA rewrite put back)."""
    def core(op, q, k, v, mask):
        kx = op.Expand(op.Unsqueeze(k, _allow_other_inputs=True, _name="uk"),
                       _allow_other_inputs=True, _name="ek")
        if k_transposed:
            kt = op.Transpose(kx, perm=[0, 1, 2, 4, 3], _name="tk")
            k4 = op.Transpose(op.Reshape(kt, _allow_other_inputs=True, _name="rk"),
                              perm=SWAP_LAST)
        else:
            k4 = op.Reshape(kx, _allow_other_inputs=True, _name="rk")
        vx = op.Expand(op.Unsqueeze(v, _allow_other_inputs=True, _name="uv"),
                       _allow_other_inputs=True, _name="ev")
        v4 = op.Reshape(vx, _allow_other_inputs=True, _name="rv")
        ins = [q, k4, v4] + ([mask] if masked else [])
        return op.Attention(*ins, _domain=domain, _name="attn")

    if masked:
        def pattern(op, q, k, v, mask):
            return core(op, q, k, v, mask)
    else:
        def pattern(op, q, k, v):
            return core(op, q, k, v, None)
    return pattern


def _repeat_check(g, q, k, v, attn, uk, ek, rk, uv, ev, rv, mask=None, tk=None):
    if attr(attn, "q_num_heads") is not None:
        return "the Attention is 3D"
    sk, sv, sq = g.static_shape(k), g.static_shape(v), g.static_shape(q)
    if sk is None or sv is None or sq is None or len(sk) != 4 or len(sv) != 4:
        return "the keys' and values' shapes are not known 4D shapes"
    for x, u, e, shape in ((k, uk, ek, sk), (v, uv, ev, sv)):
        axes = g.constant(u.input[1]) if len(u.input) > 1 else attr(u, "axes")
        if axes is None or [int(a) % 5 for a in np.reshape(axes, -1)] != [2]:
            return "the Unsqueeze does not add axis 2"
        grown = g.static_shape(e.output[0])
        if grown is None or len(grown) != 5 or grown[:2] != shape[:2] or grown[3:] != shape[2:]:
            return "the Expand does not repeat the heads along axis 2"
    groups = g.static_shape(ek.output[0])[2]
    if g.static_shape(ev.output[0])[2] != groups or sq[1] != sk[1] * groups:
        return "the repeats do not make the query's heads"
    b, h, s, d = sk[0], sk[1] * groups, sk[2], sk[3]
    want_k = (b, h, d, s) if tk is not None else (b, h, s, d)
    if g.static_shape(rk.output[0]) != want_k or g.static_shape(rv.output[0]) != (b, h) + sv[2:]:
        return "the Reshapes do not merge the repeats into the heads"
    return None


def _repeat_rewrite(op, q, k, v, attn, mask=None, **_nodes):
    inputs = [q, k, v] + ([mask] if mask is not None else [])
    return op.Attention(*inputs, **attrs_of(attn), _domain=attn.domain)


RULES = tuple(
    RewriteRule(f"SDPA{' K^T' if t else ''} {sc}{' +mask' if m else ''}{' NaN->0' if n else ''}",
                _sdpa_pattern(t, sc, m, n), _sdpa_rewrite(sc), _sdpa_check,
                variables=_sdpa_variables(sc, m))
    for t in (True, False) for sc in ("div", "mul", "none") for m in (True, False)
    for n in (False, True)
) + tuple(
    RewriteRule(f"Attention heads{' +mask' if m else ''}{' (onnxkit)' if d else ''}",
                _heads_pattern(m, d), _heads_rewrite, _heads_check)
    for m in (True, False) for d in ("", "onnxkit")
) + tuple(
    RewriteRule(f"repeated kv heads{' K^T' if t else ''}{' +mask' if m else ''}"
                f"{' (onnxkit)' if d else ''}", _repeat_pattern(t, m, d), _repeat_rewrite,
                _repeat_check)
    for t in (True, False) for m in (True, False) for d in ("", "onnxkit")
)
PASS = RulePass("attention_fusion", RULES, __doc__)
