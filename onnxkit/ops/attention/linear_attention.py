"""LinearAttention: attention as a recurrence over a [d_k, d_v] state per kv head.

    for t in range(T):                      (q, k, v split into heads; state S from past_state)
        S = exp(decay_t) * S                             gated, gated_delta
        v_t = beta_t * (v_t - S^T k_t)                   delta, gated_delta
        S = S + k_t (outer) v_t
        out_t = scale * q_t^T S                          query head h reads kv head h // group

``decay`` is per key dimension [B, T, H_kv*d_k] or per head [B, T, H_kv]; ``beta`` is
[B, T, H_kv] or [B, T, 1]. ``scale`` 0 means 1/sqrt(d_k). The state is kept in float32;
present_state takes past_state's dtype (the query's when absent). ``chunk_size`` is a
speed hint only. https://onnx.ai/onnx/operators/onnx__LinearAttention.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.attention._heads import merge_heads, split_heads
from onnxkit.ops.registry import op

_RULES = {"linear": (False, False), "gated": (True, False), "delta": (False, True),
          "gated_delta": (True, True)}  # rule -> (uses decay, uses beta)


@op("LinearAttention", 27)
def linear_attention(query, key, value, past_state=None, decay=None, beta=None, *,
                     kv_num_heads, q_num_heads, chunk_size=64, scale=0.0,
                     update_rule="gated_delta"):
    if update_rule not in _RULES:
        raise AttributeValueError("LinearAttention: update_rule must be one of "
                                  f"{', '.join(_RULES)}, got {update_rule!r}")
    gated, delta = _RULES[update_rule]
    for name, needed, given in (("decay", gated, decay), ("beta", delta, beta)):
        if needed != (given is not None):
            raise AttributeValueError(f"LinearAttention: update_rule {update_rule!r} "
                                      f"{'needs' if needed else 'forbids'} "
                                      f"the {name} input")
    if kv_num_heads <= 0 or q_num_heads % kv_num_heads:
        raise KernelInputError(f"LinearAttention: q_num_heads={q_num_heads} must be a positive "
                               "multiple of "
                               f"kv_num_heads={kv_num_heads}")
    f32 = np.float32
    q = split_heads(query, q_num_heads).astype(f32)            # [B, Hq, T, dk]
    k = split_heads(key, kv_num_heads).astype(f32)             # [B, Hkv, T, dk]
    v = split_heads(value, kv_num_heads).astype(f32)           # [B, Hkv, T, dv]
    batch, _, steps, d_k = q.shape
    if k.shape[3] != d_k:
        raise KernelInputError(f"LinearAttention: query heads have size {d_k}, key heads "
                               f"{k.shape[3]}")
    state_shape = (batch, kv_num_heads, d_k, v.shape[3])
    if past_state is None:
        state, state_dtype = np.zeros(state_shape, dtype=f32), query.dtype
    elif past_state.shape != state_shape:
        raise KernelInputError(f"LinearAttention: past_state has shape {list(past_state.shape)}, "
                               f"expected {list(state_shape)}")
    else:
        state, state_dtype = past_state.astype(f32), past_state.dtype
    g = None if decay is None else _per_head(decay, kv_num_heads, d_k)     # [B, Hkv, T, 1|dk]
    b = None if beta is None else _per_head(beta, kv_num_heads, 1)         # [B, Hkv|1, T, 1]
    factor = f32(1 / np.sqrt(d_k) if scale == 0.0 else scale)
    group = q_num_heads // kv_num_heads

    out = np.empty((batch, q_num_heads, steps, v.shape[3]), dtype=f32)
    for t in range(steps):
        k_t, v_t = k[:, :, t], v[:, :, t]
        if gated:
            state = state * np.exp(g[:, :, t])[..., None]
        if delta:
            v_t = b[:, :, t] * (v_t - np.einsum("bhkv,bhk->bhv", state, k_t))
        state = state + k_t[..., :, None] * v_t[..., None, :]
        out[:, :, t] = factor * np.einsum("bhk,bhkv->bhv", q[:, :, t],
                                          np.repeat(state, group, axis=1))
    return merge_heads(out).astype(query.dtype), state.astype(state_dtype)


def _per_head(x: np.ndarray, heads: int, size: int) -> np.ndarray:
    """[B, T, heads*size] or [B, T, heads] or [B, T, 1] -> [B, heads|1, T, size|1]."""
    if x.ndim != 3:
        raise KernelInputError("LinearAttention: decay and beta must be rank 3, got shape "
                               f"{list(x.shape)}")
    if x.shape[2] == heads * size:
        return split_heads(x, heads).astype(np.float32)
    if x.shape[2] in (heads, 1):
        return x.transpose(0, 2, 1)[..., None].astype(np.float32)
    raise KernelInputError(f"LinearAttention: last dimension {x.shape[2]} must be {heads * size}, "
                           f"{heads} or 1")
