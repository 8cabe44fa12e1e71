"""Helpers shared by the attention kernels: head reshapes, GQA, matmul, masked softmax."""

from __future__ import annotations

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.linalg._precision import widened


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """[batch, seq, heads*size] -> [batch, heads, seq, size]."""
    batch, seq, hidden = x.shape
    if num_heads <= 0 or hidden % num_heads:
        raise KernelInputError(f"hidden size {hidden} is not a multiple of num_heads={num_heads}")
    return x.reshape(batch, seq, num_heads, hidden // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """[batch, heads, seq, size] -> [batch, seq, heads*size]."""
    batch, heads, seq, size = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)


def repeat_kv(x: np.ndarray, q_heads: int) -> np.ndarray:
    """Grouped-query attention: query head h reads kv head h // (q_heads / kv_heads)."""
    kv_heads = x.shape[1]
    if q_heads == kv_heads:
        return x
    if kv_heads == 0 or q_heads % kv_heads:
        raise KernelInputError(f"q_num_heads={q_heads} must be a multiple of "
                               f"kv_num_heads={kv_heads}")
    return np.repeat(x, q_heads // kv_heads, axis=1)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in a's dtype (numpy computes bfloat16 products in float32). float16 is
    multiplied in float64 and rounded once, as MatMul does: numpy's float16 matmul has
    no BLAS and runs element by element, tens of times slower."""
    if a.dtype == np.float16:
        return np.matmul(widened(a), widened(b)).astype(a.dtype)
    return np.matmul(a, b).astype(a.dtype, copy=False)


def softmax_rows(x: np.ndarray, dead: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis; all ``-inf`` rows, and rows flagged ``dead``, give 0.

    ``dead`` marks rows with no attendable key (decided on the mask, not the scores).
    """
    top = np.max(x, axis=-1, keepdims=True)
    empty = np.isneginf(top)
    zero = np.zeros((), dtype=x.dtype)
    e = np.exp(x - np.where(empty, zero, top))
    total = np.sum(e, axis=-1, keepdims=True)
    probs = e / np.where(total == 0, np.ones((), dtype=x.dtype), total)
    if dead is not None:
        probs = np.where(dead, zero, probs)
    return probs.astype(x.dtype, copy=False)
