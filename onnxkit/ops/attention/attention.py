"""Attention: scaled dot-product attention with masks, KV cache, GQA and softcap.

    q, k, v = 4D views ([batch, heads, seq, size]; 3D inputs are split into heads)
    k, v = concat(past_key, k), concat(past_value, v)       -> present_key, present_value
    s = (q * sqrt(scale)) @ (k * sqrt(scale))^T            (kv heads repeated for GQA)
    s = softcap * tanh(s / softcap)                         if softcap > 0
    p = softmax(s + bias)                                   rows with no visible key -> 0
    Y = p @ v

``bias`` adds the float ``attn_mask`` (a bool mask gives 0 / -inf; a short mask is
padded with -inf) to -inf at every key the structure forbids: ``is_causal`` (query i
sees key j iff j <= i + offset), the sliding window (opset 25) and ``nonpad_kv_seqlen``
(opset 24). ``offset`` is the past length, else ``nonpad_kv_seqlen - q_len`` per batch,
else 0. The 4th output is the scores raw (mode 0), softcapped (1), biased (2) or the
probabilities (3). https://onnx.ai/onnx/operators/onnx__Attention.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.attention._heads import matmul, merge_heads, repeat_kv, softmax_rows, split_heads
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation
from onnxkit.core.values import np_dtype


@op("Attention", 23, 24)
def attention_23(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None,
                 *, is_causal=0, kv_num_heads=None, q_num_heads=None, qk_matmul_output_mode=0,
                 scale=None, softcap=0.0, softmax_precision=None):
    return _attention(Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen, is_causal,
                      kv_num_heads, q_num_heads, qk_matmul_output_mode, scale, softcap,
                      softmax_precision, -1, -1)


@op("Attention", 25)
def attention_25(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None,
                 *, is_causal=0, kv_num_heads=None, q_num_heads=None, qk_matmul_output_mode=0,
                 scale=None, softcap=0.0, softmax_precision=None, left_window_size=-1,
                 right_window_size=-1):
    if Q.ndim == 4 and (q_num_heads is not None or kv_num_heads is not None):
        raise AttributeValueError("Attention: q_num_heads and kv_num_heads must not be set for 4D "
                                  "inputs (opset 25)")
    if left_window_size < -1 or right_window_size < -1:
        raise AttributeValueError("Attention: window sizes must be -1 or >= 0, got "
                                  f"left={left_window_size}, "
                                  f"right={right_window_size}")
    return _attention(Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen, is_causal,
                      kv_num_heads, q_num_heads, qk_matmul_output_mode, scale, softcap,
                      softmax_precision, left_window_size, right_window_size)


def _attention(Q, K, V, attn_mask, past_key, past_value, nonpad, is_causal, kv_num_heads,
               q_num_heads, mode, scale, softcap, softmax_precision, left, right):
    if (past_key is None) != (past_value is None):
        raise KernelInputError("Attention: past_key and past_value must be given together")
    if nonpad is not None and past_key is not None:
        raise KernelInputError("Attention: nonpad_kv_seqlen cannot be combined with "
                               "past_key/past_value")
    if not Q.ndim == K.ndim == V.ndim or Q.ndim not in (3, 4):
        raise KernelInputError(f"Attention: Q, K, V must all be 3D or all 4D, got ranks {Q.ndim}, "
                               f"{K.ndim}, {V.ndim}")
    dtype = Q.dtype
    if Q.ndim == 3:
        if q_num_heads is None or kv_num_heads is None:
            raise AttributeValueError("Attention: 3D inputs need the q_num_heads and kv_num_heads "
                                      "attributes")
        q, k, v = split_heads(Q, q_num_heads), split_heads(K, kv_num_heads), split_heads(V, kv_num_heads)
    else:
        q, k, v = Q, K, V
    if past_key is not None:
        k = np.concatenate([past_key, k], axis=2)
        v = np.concatenate([past_value, v], axis=2)
    present_key, present_value = k, v

    q_len, total = q.shape[2], k.shape[2]
    # the scores are [batch, heads, q_len, total]: quadratic in the sequence lengths
    check_allocation((q.shape[0], q.shape[1], q_len, total), np.float32 if dtype.itemsize < 4 else dtype,
                     "Attention scores")
    past_len = 0 if past_key is None else past_key.shape[2]
    bias = _bias(attn_mask, dtype, q.shape[0], q_len, total, past_len, nonpad, is_causal,
                 left, right)
    dead = np.isneginf(np.max(bias, axis=-1, keepdims=True))

    if scale is None:
        scale = 1 / np.sqrt(q.shape[3])
    root = dtype.type(np.sqrt(scale))
    scores = matmul(q * root, np.swapaxes(repeat_kv(k, q.shape[1]), 2, 3) * root)
    qk_output = scores
    if softcap > 0:
        scores = (softcap * np.tanh(scores / dtype.type(softcap))).astype(dtype)
        if mode == 1:
            qk_output = scores
    logits = scores + bias
    if mode == 2:
        qk_output = logits
    if softmax_precision is not None:
        logits = logits.astype(np_dtype(softmax_precision))
    probs = softmax_rows(logits, dead)
    if mode == 3:
        qk_output = probs
    Y = matmul(probs.astype(dtype), repeat_kv(v, q.shape[1]))
    if Q.ndim == 3:
        Y = merge_heads(Y)
    return Y, present_key, present_value, qk_output.astype(dtype)


def _bias(mask, dtype, batch, q_len, total, past_len, nonpad, is_causal, left, right):
    """The additive bias: the float mask plus -inf where causality/window/padding forbid."""
    bias = np.zeros((q_len, total), dtype=dtype)
    if mask is not None:
        short = total - mask.shape[-1]
        if short < 0:
            raise KernelInputError(f"Attention: attn_mask covers {mask.shape[-1]} keys, more than "
                                   f"the {total} keys")
        pad = [(0, 0)] * (mask.ndim - 1) + [(0, short)]
        if mask.dtype == np.bool_:
            mask = np.where(np.pad(mask, pad, constant_values=False), dtype.type(0), dtype.type(-np.inf))
        else:
            mask = np.pad(mask.astype(dtype), pad, constant_values=-np.inf)
        bias = bias + mask
    # absolute position of query i is i + offset (per batch with an external cache)
    if nonpad is not None:
        offset = (nonpad.astype(np.int64) - q_len).reshape(batch, 1, 1, 1)
    else:
        offset = np.int64(past_len)
    i = np.arange(q_len)[:, None] + offset
    j = np.arange(total)[None, :]
    allowed = np.ones(np.broadcast_shapes(np.shape(i), j.shape), dtype=bool)
    if is_causal:
        allowed &= j <= i
    if left >= 0:
        allowed &= i - j <= left
    if right >= 0:
        allowed &= j - i <= right
    if nonpad is not None:
        allowed &= j < nonpad.astype(np.int64).reshape(batch, 1, 1, 1)
    if not allowed.all():
        bias = bias + np.where(allowed, dtype.type(0), dtype.type(-np.inf))
    return bias
