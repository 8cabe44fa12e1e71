"""onnxkit::Attention on the ``cpu`` executor: two batched BLAS products around a Numba softmax.

    q, k, v: [batch, heads, seq, size] views of the inputs (3-D inputs split, no copy)
    S = q @ k^T                                  (BLAS, into a reused buffer)
    S = scale * S + bias; S -= rowmax(S)         (Numba; bias as the reference builds it)
    P = exp(S) (numpy SIMD); P /= rowsum(P)      rows with no visible key -> 0
    Y = P @ v                                    written straight into [batch, seq, heads*size]

Grouped-query attention (fewer kv heads) and non-float types run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Attention.html ; see docs/onnxkit-domain.md
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.ops.attention._heads import split_heads
from onnxkit.ops.attention.attention import _bias as reference_bias
from onnxkit.ops.fused.attention import attention as reference_attention
from onnxkit.ops.registry import op

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@njit(cache=True, error_model="numpy")
def scale_bias_shift(s, bias, scale):
    """s (B, H, Q, K) = scale * s + bias (broadcast over B, H), minus each row's max."""
    batch, heads, q_len, k_len = s.shape
    bb, bh = bias.shape[0], bias.shape[1]
    for b in range(batch):
        for h in range(heads):
            for i in range(q_len):
                row = s[b, h, i]
                add = bias[b if bb > 1 else 0, h if bh > 1 else 0, i]
                top = -np.inf
                for j in range(k_len):
                    v = row[j] * scale + add[j]
                    row[j] = v
                    top = v if (v > top or v != v) else top
                if top == -np.inf:
                    top = 0.0
                for j in range(k_len):
                    row[j] = row[j] - top


@njit(cache=True, error_model="numpy")
def normalize_rows(p, dead):
    """p (B, H, Q, K) /= row sums; rows flagged in ``dead`` (Bd, Hd, Q) become 0."""
    batch, heads, q_len, k_len = p.shape
    db, dh = dead.shape[0], dead.shape[1]
    for b in range(batch):
        for h in range(heads):
            for i in range(q_len):
                row = p[b, h, i]
                if dead[b if db > 1 else 0, h if dh > 1 else 0, i]:
                    row[:] = 0
                    continue
                total = 0.0
                for j in range(k_len):
                    total += row[j]
                if total == 0:
                    total = 1.0
                for j in range(k_len):
                    row[j] = row[j] / total


def attention_fast(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale, softcap):
    if (Q.dtype not in FLOATS or K.dtype != Q.dtype or V.dtype != Q.dtype or softcap
            or not Q.ndim == K.ndim == V.ndim or Q.ndim not in (3, 4) or Q.size == 0
            or K.size == 0 or V.size == 0):
        return None
    if Q.ndim == 3:
        if q_num_heads is None or kv_num_heads != q_num_heads or Q.shape[2] % q_num_heads \
                or K.shape[2] % q_num_heads or V.shape[2] % q_num_heads:
            return None
        q, k, v = (split_heads(x, q_num_heads) for x in (Q, K, V))
    else:
        q, k, v = Q, K, V
    batch, heads, q_len, size = q.shape
    if k.shape[:2] != (batch, heads) or v.shape[:3] != k.shape[:3] or k.shape[3] != size:
        return None
    k_len, v_size = k.shape[2], v.shape[3]
    if attn_mask is not None and (attn_mask.shape[-1] > k_len or attn_mask.ndim > 4):
        return None
    bias = reference_bias(attn_mask, Q.dtype, batch, q_len, k_len, 0, None, is_causal, -1, -1)
    bias = bias.reshape((1,) * (4 - bias.ndim) + bias.shape)
    if bias.shape[2] != q_len or bias.shape[0] not in (1, batch) or bias.shape[1] not in (1, heads):
        return None
    dead = np.isneginf(np.max(bias, axis=-1))
    if scale is None:
        scale = 1 / np.sqrt(size)
    S = empty((batch, heads, q_len, k_len), Q.dtype)
    np.matmul(q, np.swapaxes(k, 2, 3), out=S)
    scale_bias_shift(S, np.ascontiguousarray(bias), Q.dtype.type(scale))
    np.exp(S, out=S)
    normalize_rows(S, dead)
    if Q.ndim == 3:
        Y = empty((batch, q_len, heads * v_size), Q.dtype)
        np.matmul(S, v, out=Y.reshape(batch, q_len, heads, v_size).transpose(0, 2, 1, 3))
    else:
        Y = empty((batch, heads, q_len, v_size), Q.dtype)
        np.matmul(S, v, out=Y)
    return Y


@op("Attention", 1, domain="onnxkit", registry=CPU)
def attention(Q, K, V, attn_mask=None, *, is_causal=0, kv_num_heads=None, q_num_heads=None,
              scale=None, softcap=0.0):
    Y = attention_fast(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale, softcap)
    if Y is None:
        return reference_attention(Q, K, V, attn_mask, is_causal=is_causal,
                                   kv_num_heads=kv_num_heads, q_num_heads=q_num_heads,
                                   scale=scale, softcap=softcap)
    return Y
