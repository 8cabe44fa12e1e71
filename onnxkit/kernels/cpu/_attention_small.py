"""Attention of small shapes in one compiled call: the scores, the softmax and the
product with V row by row, no BLAS calls and no scores tensor.

    for b, h, i (query row):  hk = h // (heads / kv_heads)        (grouped-query)
        s[j] = scale * q[b, h, i] . k[b, hk, j] + mask[b, h, i, j]  j < visible
        visible = i + 1 if causal else the keys
        y[b, h, i] = sum_j exp(s[j] - max s) / sum exp(...) * v[b, hk, j]
        a row the mask (or causality) leaves no key: 0

At a decoder step or a short encoder sequence each of the BLAS path's products,
softmax passes and its Python around them costs more than the arithmetic; here the
whole node is one call. The operands come as C-contiguous 4-D arrays in either axis
order, [b, h, s, d] or [b, s, h, d] (a flag each), so a 3-D input's head split and a
Transpose view of a [b, s, h, d] tensor are read as they lie: one compiled signature,
read-only inputs, called through its entry point (``_entry``: no read-only view made and
no argument typed per call). exp is ``_math.exp_parts`` (vectorizes); sums in float32, the
dot products in any order. The rows are indexed as [row, d] of 2-D arrays, d from 0: a
1-D view per row costs its reference count, and an index that could be negative keeps
the loop from vectorizing.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from onnxkit.kernels.cpu._buffers import read_only
from onnxkit.kernels.cpu._entry import compiled_entry
from onnxkit.kernels.cpu._math import FASTMATH, exp_parts

#: multiply-adds (both products) below which an Attention takes this path
MAX_MACS = 1 << 18
_NO_MASK = read_only(np.zeros((1, 1, 1, 1), np.float32))
_F32 = np.dtype(np.float32)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _attend(q, q_bshd, k, k_bshd, v, v_bshd, mask, has_mask, is_causal, scale, y, y_bshd):
    batch, size, v_size = y.shape[0], q.shape[3], v.shape[3]
    heads, q_len = (y.shape[2], y.shape[1]) if y_bshd else (y.shape[1], y.shape[2])
    kv_heads, k_len = (k.shape[2], k.shape[1]) if k_bshd else (k.shape[1], k.shape[2])
    group = heads // kv_heads
    mb, mh, mq = mask.shape[0], mask.shape[1], mask.shape[2]
    # rows as 2-D arrays, indexed [row, d]: no 1-D view made per row (each costs its
    # reference count), and the inner index runs from 0, so the loops vectorize
    q2, k2, v2 = (q.reshape((q.size // size, size)), k.reshape((k.size // size, size)),
                  v.reshape((v.size // v_size, v_size)))
    m2 = mask.reshape((mask.size // mask.shape[3], mask.shape[3]))  # (k_len wide if has_mask)
    y2 = y.reshape((y.size // v_size, v_size))
    scale32 = np.float32(scale)
    s = np.empty(max(k_len, 1), np.float32)  # one row of scores
    for b in range(batch):
        for h in range(heads):
            hk = h // group
            for i in range(q_len):
                qr = (b * q_len + i) * heads + h if q_bshd else (b * heads + h) * q_len + i
                yr = (b * q_len + i) * heads + h if y_bshd else (b * heads + h) * q_len + i
                visible = min(k_len, i + 1) if is_causal else k_len
                for j in range(visible):
                    kr = (b * k_len + j) * kv_heads + hk if k_bshd \
                        else (b * kv_heads + hk) * k_len + j
                    acc = np.float32(0)
                    for d in range(size):
                        acc += q2[qr, d] * k2[kr, d]
                    s[j] = acc * scale32
                seen = np.float32(0)  # the mask's best key
                if has_mask:
                    mr = ((b % mb) * mh + h % mh) * mq + i % mq
                    seen = np.float32(-np.inf)
                    for j in range(visible):
                        m = m2[mr, j]
                        s[j] += m
                        seen = max(seen, m)
                top = np.float32(-np.inf)
                for j in range(visible):
                    top = max(top, s[j])
                for d in range(v_size):
                    y2[yr, d] = 0
                if visible == 0 or seen == -np.inf or top == -np.inf:
                    continue  # no key left: 0
                total = np.float32(0)
                for j in range(visible):
                    p2, frac = exp_parts(s[j] - top)
                    e = p2 + p2 * frac
                    s[j] = e
                    total += e
                inv = np.float32(1) / total
                for j in range(visible):
                    w = s[j] * inv
                    vr = (b * k_len + j) * kv_heads + hk if v_bshd \
                        else (b * kv_heads + hk) * k_len + j
                    for d in range(v_size):
                        y2[yr, d] += w * v2[vr, d]


# Compiled only for the signature below, called through its entry point (``_entry``):
# read-only C-contiguous float32 inputs, checked by the callers (float32 only)
_attend._can_compile = False
_READ = types.Array(types.float32, 4, "C", readonly=True)
_SIGNATURE = (_READ, types.boolean, _READ, types.boolean, _READ, types.boolean, _READ,
              types.boolean, types.boolean, types.float64, types.Array(types.float32, 4, "C"),
              types.boolean)
_CALL: list = []  # [the entry point], looked up on first use


def _attend_entry():
    if not _CALL:
        _CALL.append(compiled_entry(_attend, _SIGNATURE))
    return _CALL[0]


def _as_read(x, bshd):
    """(a C-contiguous 4-D array, whether its axes are [b, s, h, d]) for the [b, h, s, d]
    tensor ``x`` (``bshd``: x is already the [b, s, h, d] form)."""
    if x.flags.c_contiguous:
        return x, bshd
    swapped = x.transpose(0, 2, 1, 3)
    if swapped.flags.c_contiguous:
        return swapped, not bshd
    return np.ascontiguousarray(x), bshd


def small_attention(q, k, v, mask, is_causal, scale, three_d):
    """Y for float32 q, k, v: [b, s, h, d] views of the 3-D inputs (``three_d``) or the 4-D
    inputs as given; ``mask``: None, or a float32 4-D C-contiguous mask broadcasting to
    the scores. Y is [b, s, h * dv] (3-D) or [b, h, s, dv]."""
    q4, q_bshd = _as_read(q, three_d)
    k4, k_bshd = _as_read(k, three_d)
    v4, v_bshd = _as_read(v, three_d)
    batch, size = q.shape[0], v.shape[3]
    heads, q_len = (q.shape[2], q.shape[1]) if three_d else (q.shape[1], q.shape[2])
    if three_d:
        Y = np.empty((batch, q_len, heads * size), np.float32)  # small: numpy's own buffer
        y4 = Y.reshape(batch, q_len, heads, size)
    else:
        Y = y4 = np.empty((batch, heads, q_len, size), np.float32)
    mask = _NO_MASK if mask is None else mask
    if not q4.dtype == k4.dtype == v4.dtype == mask.dtype == _F32:
        raise TypeError("small_attention takes float32 only")  # (callers check: never)
    _attend_entry()(q4, q_bshd, k4, k_bshd, v4, v_bshd, mask, mask is not _NO_MASK,
                    bool(is_causal), float(scale), y4, three_d)
    return Y


def small_step(Q, K, V, mask, is_causal, scale):
    """``small_attention`` for 4-D float32 Q, K, V [b, h, s, d] and a float32 4-D mask (or
    None) with the fewest checks (a decoder step: the Python around the call is the
    cost): Y [b, h, s, dv], or None where the general path must decide (other shapes,
    sizes or masks). The same compiled call as the general path, so the same bits."""
    batch, heads, q_len, size = Q.shape
    kv_heads, k_len, v_size = K.shape[1], K.shape[2], V.shape[3]
    if K.shape[0] != batch or V.shape[:3] != K.shape[:3] or K.shape[3] != size \
            or not kv_heads or heads % kv_heads or not (Q.size and K.size and V.size) \
            or batch * heads * q_len * k_len * (size + v_size) >= MAX_MACS:
        return None
    if mask is not None:
        shape = mask.shape
        if mask.dtype != _F32 or len(shape) != 4 or shape[3] != k_len \
                or shape[0] not in (1, batch) or shape[1] not in (1, heads) \
                or shape[2] not in (1, q_len):
            return None
        mask = np.ascontiguousarray(mask)
    return small_attention(Q, K, V, mask, is_causal, scale, False)


def small_step_3d(Q, K, V, mask, is_causal, scale, q_heads, kv_heads):
    """``small_step`` for 3-D float32 Q, K, V [b, s, heads * d] (an encoder layer, a
    step without a KV cache in 4-D): Y [b, s, heads * dv], or None where the general
    path must decide."""
    if not q_heads or not kv_heads or q_heads % kv_heads:
        return None
    batch, q_len, width = Q.shape
    k_len, k_width, v_width = K.shape[1], K.shape[2], V.shape[2]
    if width % q_heads or k_width % kv_heads or v_width % kv_heads \
            or width // q_heads != k_width // kv_heads or K.shape[0] != batch \
            or V.shape[:2] != K.shape[:2] or not (Q.size and K.size and V.size):
        return None
    size, v_size = width // q_heads, v_width // kv_heads
    if batch * q_heads * q_len * k_len * (size + v_size) >= MAX_MACS:
        return None
    if mask is not None:
        shape = mask.shape
        if mask.dtype != _F32 or len(shape) != 4 or shape[3] != k_len \
                or shape[0] not in (1, batch) or shape[1] not in (1, q_heads) \
                or shape[2] not in (1, q_len):
            return None
        mask = np.ascontiguousarray(mask)
    q = Q.reshape(batch, q_len, q_heads, size)
    k = K.reshape(batch, k_len, kv_heads, size)
    v = V.reshape(batch, k_len, kv_heads, v_size)
    return small_attention(q, k, v, mask, is_causal, scale, True)
