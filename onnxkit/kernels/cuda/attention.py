"""Attention (23, 24) and onnxkit::Attention on the GPU: two tiled products around one
masked softmax, every head a strided view of Q, K, V (no copy, no transpose).

    q, k, v = [batch, heads, seq, size] views (3-D inputs [batch, seq, heads*size] split)
    S = scale * q @ k^T               (``_tiles`` GEMM; product batch = (batch, kv head,
                                       group): query head h reads kv head h // group)
    for each row (b, h, i) of S, one block (``_rows``):
        s_j = softcap * tanh(s_j / softcap)                 if softcap > 0
        bias_j = attn_mask[b, h, i, j]    (bool: 0 / -inf; -inf past a short mask)
                 + (-inf if is_causal and j > i)
        s_j = s_j + bias_j
        p_j = 0 if max(bias) or max(s) is -inf (no key left) else exp(s_j - max s) / sum
    Y = P @ v                         (the same GEMM, written straight into Y's layout)

The mask is read in its own shape (strides 0 on its broadcast axes). A KV cache,
nonpad_kv_seqlen, outputs beyond Y, float16 / bfloat16, a mask that would broadcast the
scores to a bigger shape, and a softmax_precision other than the inputs' type run the
reference kernel on the host.
https://onnx.ai/onnx/operators/onnx__Attention.html ; see docs/onnxkit-domain.md
"""

import math
from functools import lru_cache

import numba
import numpy as np
from numba import cuda

from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import FLOAT_DTYPES, HostFallback, device, launch, need_dtype
from onnxkit.kernels.cuda._rows import MAX_ROW_THREADS, block_reduce, row_threads
from onnxkit.kernels.cuda.matmul import tiled_gemm
from onnxkit.kernels.indexing import broadcast_offset, broadcast_strides, for_cuda
from onnxkit.ops.registry import op
from onnxkit.runtime.values import np_dtype

_sum = block_reduce(s.add)
_max = block_reduce(s.maximum)
_maximum = for_cuda(s.maximum)
_offset = for_cuda(broadcast_offset)


@lru_cache(maxsize=None)
def masked_softmax_kernel(dtype, mask_dtype):
    """Softmax of the score rows in place, after softcap, mask and causality."""
    elem = numba.from_dtype(dtype)
    lowest = np.dtype(dtype).type(-np.inf)
    zero = np.dtype(dtype).type(0)
    boolean = np.dtype(mask_dtype) == np.bool_

    @cuda.jit
    def kernel(scores, length, row_shape, mask, mask_strides, mask_len, has_mask, causal,
               softcap):
        buf = cuda.shared.array(MAX_ROW_THREADS, elem)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        r = cuda.blockIdx.x
        i = r % row_shape[2]  # the query
        base = r * length
        m0 = _offset(r, row_shape, mask_strides)
        top = lowest
        top_bias = lowest
        for j in range(t, length, nt):
            v = scores[base + j]
            if softcap > zero:
                v = softcap * math.tanh(v / softcap)
            bias = zero
            if has_mask:
                if j >= mask_len:
                    bias = lowest
                elif boolean:
                    bias = zero if mask[m0 + j] else lowest
                else:
                    bias = mask[m0 + j]
            if causal and j > i:
                bias += lowest
            v += bias
            scores[base + j] = v
            top = _maximum(top, v)
            top_bias = _maximum(top_bias, bias)
        top = _max(buf, t, nt, top)
        dead = top == lowest  # no key left, or every score -inf: a row of 0 either way
        if top != top:  # NaN: still 0 if the mask and causality leave no key
            dead = _max(buf, t, nt, top_bias) == lowest
        total = zero
        if not dead:
            for j in range(t, length, nt):
                total += math.exp(scores[base + j] - top)
        total = _sum(buf, t, nt, total)
        for j in range(t, length, nt):
            scores[base + j] = zero if dead else math.exp(scores[base + j] - top) / total

    return kernel


def _heads(x, heads, what):
    """``x`` as [batch, heads, seq, size]: that shape and (batch, head, row) strides."""
    if x.ndim == 4:
        b, h, n, d = x.shape
        return (b, h, n, d), (h * n * d, n * d, d)
    b, n, hidden = x.shape
    if heads is None or heads <= 0 or hidden % heads:
        raise KernelError(f"3-D {what} {list(x.shape)} needs a number of heads dividing its "
                          f"hidden size {hidden} (q_num_heads / kv_num_heads), got {heads}")
    return (b, heads, n, hidden // heads), (n * hidden, hidden // heads, hidden)


def _mask(attn_mask, dtype, rows):
    """The mask on the device, its strides over the score rows ``rows`` (batch, heads,
    queries) and its length; a dummy for no mask."""
    if attn_mask is None:
        return None, (0, 0, 0), 0
    mask = device(attn_mask, "attn_mask")
    if mask.dtype != np.bool_ and mask.dtype != dtype:
        raise HostFallback(f"attn_mask is {mask.dtype}, the inputs {dtype}")
    if not 1 <= mask.ndim <= 4:
        raise HostFallback(f"a {mask.ndim}-D attn_mask")
    full = rows + mask.shape[-1:]
    try:
        fits = tuple(np.broadcast_shapes(mask.shape, full)) == full
    except ValueError:
        fits = False
    if not fits:
        raise HostFallback(f"attn_mask {list(mask.shape)} does not broadcast to the scores "
                           f"{list(full)} without growing them")
    strides = tuple(int(v) for v in broadcast_strides(mask.shape, full)[:3])
    return mask, strides, mask.shape[-1]


def attention_on_device(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale,
                        softcap):
    Q, K, V = device(Q, "Q"), device(K, "K"), device(V, "V")
    need_dtype(Q, FLOAT_DTYPES, "Q")
    if K.dtype != Q.dtype or V.dtype != Q.dtype:
        raise HostFallback(f"Q, K, V are {Q.dtype}, {K.dtype}, {V.dtype}")
    if not Q.ndim == K.ndim == V.ndim or Q.ndim not in (3, 4):
        raise KernelError(f"Q, K, V must all be 3-D or all 4-D, got ranks {Q.ndim}, {K.ndim}, "
                          f"{V.ndim}")
    if Q.ndim == 3 and (q_num_heads is None or kv_num_heads is None):
        raise KernelError("3-D inputs need the q_num_heads and kv_num_heads attributes")
    if 0 in (Q.size, K.size, V.size):
        raise HostFallback("an empty input")
    (batch, heads, q_len, size), qs = _heads(Q, q_num_heads, "Q")
    (kb, kv_heads, k_len, k_size), ks = _heads(K, kv_num_heads, "K")
    (vb, v_heads, v_len, v_size), vs = _heads(V, kv_num_heads, "V")
    if (kb, k_size, vb, v_heads, v_len) != (batch, size, batch, kv_heads, k_len) \
            or heads % kv_heads:
        raise KernelError(f"Q {list(Q.shape)}, K {list(K.shape)} and V {list(V.shape)} do not "
                          f"fit: as [batch, heads, seq, size] they are "
                          f"{[batch, heads, q_len, size]}, {[kb, kv_heads, k_len, k_size]}, "
                          f"{[vb, v_heads, v_len, v_size]}; K needs Q's batch and size, V K's "
                          f"batch, heads and seq, and Q's heads must be a multiple of K's")
    group = heads // kv_heads
    mask, mask_strides, mask_len = _mask(attn_mask, Q.dtype, (batch, heads, q_len))
    if mask_len > k_len:
        raise KernelError(f"attn_mask covers {mask_len} keys, more than the {k_len} keys")
    root = float(Q.dtype.type(np.sqrt(1 / np.sqrt(size) if scale is None else scale)))
    product = (batch, kv_heads, group)
    S = tiled_gemm(Q, ((qs[0], qs[1] * group, qs[1]), qs[2], 1),
                   K, ((ks[0], ks[1], 0), 1, ks[2]), None, None, product, q_len, k_len, size,
                   (batch, heads, q_len, k_len), alpha=root * root)
    launch(masked_softmax_kernel(Q.dtype, Q.dtype if mask is None else mask.dtype),
           batch * heads * q_len, row_threads(k_len), S.flat, k_len, (batch, heads, q_len),
           (S if mask is None else mask).flat, mask_strides, mask_len, mask is not None,
           bool(is_causal), Q.dtype.type(softcap))
    if Q.ndim == 3:  # Y [batch, q_len, heads * v_size]: head h's columns start at h * v_size
        y_shape = (batch, q_len, heads * v_size)
        y_strides = ((q_len * heads * v_size, group * v_size, v_size), heads * v_size)
    else:
        y_shape, y_strides = (batch, heads, q_len, v_size), None
    p_batch = (heads * q_len * k_len, group * q_len * k_len, q_len * k_len)
    return tiled_gemm(S, (p_batch, k_len, 1), V, ((vs[0], vs[1], 0), vs[2], 1), None, None,
                      product, q_len, v_size, k_len, y_shape, out_strides=y_strides)


@op("Attention", 1, domain="onnxkit", registry=CUDA)
def attention(Q, K, V, attn_mask=None, *, is_causal=0, kv_num_heads=None, q_num_heads=None,
              scale=None, softcap=0.0):
    return attention_on_device(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale,
                               softcap)


@op("Attention", 23, 24, context=True, registry=CUDA)
def attention_23(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None,
                 *, is_causal=0, kv_num_heads=None, q_num_heads=None, qk_matmul_output_mode=0,
                 scale=None, softcap=0.0, softmax_precision=None, ctx):
    if past_key is not None or past_value is not None:
        raise HostFallback("a KV cache (past_key / past_value)")
    if nonpad_kv_seqlen is not None:
        raise HostFallback("nonpad_kv_seqlen")
    if any(ctx.node.output[1:]):
        raise HostFallback("outputs beyond Y (present_key, present_value, qk_matmul_output)")
    if softmax_precision is not None and np_dtype(softmax_precision) != np.dtype(Q.dtype):
        raise HostFallback(f"softmax_precision {np_dtype(softmax_precision)}, inputs {Q.dtype}")
    return attention_on_device(Q, K, V, attn_mask, is_causal, kv_num_heads, q_num_heads, scale,
                               softcap)
