"""onnxkit::Attention on the ``cpu`` executor: small shapes in one compiled call, larger
ones as two batched BLAS products around a Numba softmax.

    fewer than ``_attention_small.MAX_MACS`` multiply-adds (a decoder step, a short
    sequence): the scores, softmax and product with V row by row in one call, grouped-
    query heads read in place (``_attention_small``); else:
    q, k, v: [batch, heads, seq, size] views of the inputs (3-D inputs split, no copy)
    S = q @ k^T                                  (BLAS, into a reused buffer)
    S = scale * S + mask (-inf past the diagonal if causal), minus its row max  (Numba)
    P = exp(S) / rowsum(exp(S))                  (numpy's SIMD exp, then Numba)
    rows the mask leaves no key -> 0 (found on the mask alone, as the reference does)
    Y = P @ v                                    written straight into [batch, seq, heads*size]

The float mask is read in its own shape (each axis 1 or the scores'), rows contiguous;
a bool mask becomes 0 / -inf.
float16 is computed in float32 and stored as float16: the inputs (and a float16 mask)
are widened once, the result rounded once (numpy has no BLAS for float16, and its
float16 products and exp run element by element), by ``_half``'s vectorized casts (numpy's
float16 casts run element by element too), which give numpy's bits.
Grouped-query attention (fewer kv heads) past the small path, masks shorter than the
keys (padded by the reference), softcap and types other than float32 (``COMPILED``) and float16 run the
reference kernel.
https://onnx.ai/onnx/operators/onnx__Attention.html ; see docs/onnxkit-domain.md
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._attention_small import (MAX_MACS, small_attention, small_step,
                                                  small_step_3d)
from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty, read_only
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._half import narrow, widen
from onnxkit.kernels.cpu._math import FASTMATH
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.cpu.softmax import normalize_rows
from onnxkit.ops.fused.attention import attention as reference_attention
from onnxkit.ops.registry import op

HALF = np.dtype(np.float16)
F32 = np.dtype(np.float32)


def scale_mask(s, mask, has_mask, is_causal, scale):
    """``_scale_mask_rows`` with the score rows (b, h, i) shared among the threads."""
    rows = s.shape[0] * s.shape[1] * s.shape[2]
    run_parts(_scale_mask_rows, rows, s.size, s, mask, has_mask, is_causal, scale)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _scale_mask_rows(s, mask, has_mask, is_causal, scale, lo, hi):
    """s (B, H, Q, K) = scale * s + mask, -inf past the diagonal if causal, then each row
    minus its maximum (0 for a row of -inf): ready for ``exp``.

    ``mask`` is C-contiguous and 4-D, each of its first three axes of size 1 (broadcast)
    or of s's size: its rows are contiguous, so the loops over them vectorize (a
    broadcast view's rows would have a stride Numba cannot see).
    """
    heads, q_len, k_len = s.shape[1], s.shape[2], s.shape[3]
    mb, mh, mq = mask.shape[0], mask.shape[1], mask.shape[2]
    for flat in range(lo, hi):
        b, h, i = flat // (heads * q_len), (flat // q_len) % heads, flat % q_len
        row = s[b, h, i]
        visible = min(k_len, i + 1) if is_causal else k_len
        if has_mask:
            add = mask[b % mb, h % mh, i % mq]
            for j in range(visible):
                row[j] = row[j] * scale + add[j]
        else:
            for j in range(visible):
                row[j] = row[j] * scale
        for j in range(visible, k_len):
            row[j] = -np.inf
        top = row[0]
        for j in range(1, k_len):
            v = row[j]
            top = v if v > top else top
        if top == -np.inf:
            continue
        for j in range(k_len):
            row[j] -= top


def _dead_rows(mask, is_causal, q_len, k_len):
    """Rows (broadcastable to B, H, Q) in which the mask and causality leave no key."""
    if mask is None:
        return None
    m = mask if mask.ndim == 4 else mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
    if is_causal:
        seen = np.maximum.accumulate(np.broadcast_to(m, m.shape[:2] + (q_len, k_len)), axis=-1)
        best = seen[..., np.arange(q_len), np.minimum(np.arange(q_len), k_len - 1)]
    else:
        best = m.max(axis=-1)
    dead = np.isneginf(best)
    return dead if dead.any() else None


def softmax_rows(s, dead):
    """In place over the last axis, after ``scale_mask`` took each row's maximum off:
    exp (numpy's SIMD), then / sum (Numba); 0 for ``dead`` rows."""
    np.exp(s, out=s)
    normalize_rows(s.reshape(-1, s.shape[-1]))  # a row of 0 (no key left): NaN, then 0
    if dead is not None:
        s[np.broadcast_to(dead, s.shape[:3])] = 0


def _as_float_mask(attn_mask, dtype):
    """A bool mask as 0 / -inf; a float mask of the inputs' dtype as is; else None."""
    if attn_mask.dtype == np.bool_:
        return np.where(attn_mask, dtype.type(0), dtype.type(-np.inf))
    return attn_mask if attn_mask.dtype == dtype else None


def attention_fast(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale, softcap):
    if Q.dtype == HALF and K.dtype == HALF and V.dtype == HALF:
        if attn_mask is not None and attn_mask.dtype == HALF:
            attn_mask = widen(attn_mask)
        Y = attention_fast(widen(Q), widen(K), widen(V), attn_mask, is_causal, kv_num_heads,
                           q_num_heads, scale, softcap)
        return None if Y is None else narrow(Y)
    if (Q.dtype not in COMPILED or K.dtype != Q.dtype or V.dtype != Q.dtype or softcap
            or not Q.ndim == K.ndim == V.ndim or Q.ndim not in (3, 4) or Q.size == 0
            or K.size == 0 or V.size == 0):
        return None
    three_d = Q.ndim == 3
    if three_d:  # [b, s, heads * size]: the heads as a [b, s, h, d] view each
        if q_num_heads is None or kv_num_heads is None or q_num_heads <= 0 \
                or kv_num_heads <= 0 or Q.shape[2] % q_num_heads \
                or K.shape[2] % kv_num_heads or V.shape[2] % kv_num_heads:
            return None
        q = Q.reshape(Q.shape[:2] + (q_num_heads, Q.shape[2] // q_num_heads))
        k = K.reshape(K.shape[:2] + (kv_num_heads, K.shape[2] // kv_num_heads))
        v = V.reshape(V.shape[:2] + (kv_num_heads, V.shape[2] // kv_num_heads))
        batch, q_len, heads, size = q.shape
        k_len, kv_heads, v_size = k.shape[1], k.shape[2], v.shape[3]
        kv_lead = (k.shape[0], k.shape[1], k.shape[2])
        v_lead = (v.shape[0], v.shape[1], v.shape[2])
    else:
        q, k, v = Q, K, V
        batch, heads, q_len, size = q.shape
        kv_heads, k_len, v_size = k.shape[1], k.shape[2], v.shape[3]
        kv_lead, v_lead = k.shape[:3], v.shape[:3]
    if k.shape[0] != batch or v_lead != kv_lead or k.shape[3] != size \
            or kv_heads == 0 or heads % kv_heads:
        return None
    shape = (batch, heads, q_len, k_len)
    if attn_mask is None:
        mask = _NO_MASK[Q.dtype.type]
    else:
        if attn_mask.shape[-1] != k_len or attn_mask.ndim > 4:
            return None  # a short mask is padded with -inf by the reference
        mask_small = _as_float_mask(attn_mask, Q.dtype)
        if mask_small is None:
            return None
        mask = mask_small.reshape((1,) * (4 - mask_small.ndim) + mask_small.shape)
        if any(m != 1 and m != n for m, n in zip(mask.shape, shape)):
            return None  # the mask would broadcast the scores to a bigger shape (or not at all)
        mask = read_only(np.ascontiguousarray(mask))  # one signature (``read_only``)
    if scale is None:
        scale = 1 / math.sqrt(size)
    if batch * heads * q_len * k_len * (size + v_size) < MAX_MACS:  # one compiled call
        return small_attention(q, k, v, None if attn_mask is None else mask, is_causal, scale,
                               three_d)
    if kv_heads != heads:
        return None  # grouped-query attention at size: the reference's repeated heads
    if three_d:  # [b, h, s, d] views for the products
        q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    S = empty(shape, Q.dtype)
    _products(q, np.swapaxes(k, 2, 3), S)
    scale_mask(S, mask, attn_mask is not None, bool(is_causal), Q.dtype.type(scale))
    dead = _dead_rows(None if attn_mask is None else mask_small, bool(is_causal), q_len, k_len)
    softmax_rows(S, dead)
    if Q.ndim == 3:
        Y = empty((batch, q_len, heads * v_size), Q.dtype)
        _products(S, v, Y.reshape(batch, q_len, heads, v_size).transpose(0, 2, 1, 3))
    else:
        Y = empty((batch, heads, q_len, v_size), Q.dtype)
        _products(S, v, Y)
    return Y


def _products(a, b, out):
    """out[b, h] = a[b, h] @ b[b, h] (4-D), the batch and heads as one batch axis when the
    views allow it (``_blas.matmul``), else numpy's matmul."""
    batch, heads = out.shape[:2]
    try:
        a3 = a.reshape((batch * heads,) + a.shape[2:], copy=False)
        b3 = b.reshape((batch * heads,) + b.shape[2:], copy=False)
        o3 = out.reshape((batch * heads,) + out.shape[2:], copy=False)
    except (ValueError, TypeError, AttributeError):
        np.matmul(a, b, out=out)
        return
    matmul(a3, b3, o3)


_NO_MASK = {t.type: read_only(np.zeros((1, 1, 1, 1), t)) for t in COMPILED}


@op("Attention", 1, domain="onnxkit", registry=CPU)
def attention(Q, K, V, attn_mask=None, *, is_causal=0, kv_num_heads=None, q_num_heads=None,
              scale=None, softcap=0.0):
    if Q.ndim == 4 and K.ndim == 4 and V.ndim == 4 and Q.dtype == F32 and K.dtype == F32 \
            and V.dtype == F32 and not softcap:  # a decoder step: the fewest checks first
        Y = small_step(Q, K, V, attn_mask, is_causal,
                       1 / math.sqrt(Q.shape[3]) if scale is None else scale)
        if Y is not None:
            return Y
    elif Q.ndim == 3 and K.ndim == 3 and V.ndim == 3 and Q.dtype == F32 and K.dtype == F32 \
            and V.dtype == F32 and not softcap:  # an encoder layer, heads in the last axis
        Y = small_step_3d(Q, K, V, attn_mask, is_causal,
                          1 / math.sqrt(Q.shape[2] // q_num_heads) if scale is None and q_num_heads
                          else scale, q_num_heads, kv_num_heads)
        if Y is not None:
            return Y
    Y = attention_fast(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale, softcap)
    if Y is None:
        return fall_back(reference_attention, Q, K, V, attn_mask, is_causal=is_causal,
                         kv_num_heads=kv_num_heads, q_num_heads=q_num_heads, scale=scale,
                         softcap=softcap)
    return Y
