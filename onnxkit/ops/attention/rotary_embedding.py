"""RotaryEmbedding (RoPE): rotate pairs of features by a position-dependent angle.

    x: [batch, heads, seq, size], or [batch, seq, heads*size] with ``num_heads``
    cos, sin = cos_cache[position_ids], sin_cache[position_ids]   (or the caches as given,
               [batch, seq, rot/2], when position_ids is absent)
    the first ``rot`` features (rotary_embedding_dim, 0 = all) form pairs (x1, x2):
        halves (x[:rot/2], x[rot/2:rot]) or, if ``interleaved``, (x[0::2], x[1::2])
    (x1, x2) -> (cos*x1 - sin*x2, sin*x1 + cos*x2); the other features pass through

https://onnx.ai/onnx/operators/onnx__RotaryEmbedding.html
"""

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op


@op("RotaryEmbedding", 23)
def rotary_embedding(X, cos_cache, sin_cache, position_ids=None, *, interleaved=0,
                     num_heads=0, rotary_embedding_dim=0):
    if X.ndim == 4:
        x = X.transpose(0, 2, 1, 3)                          # [batch, seq, heads, size]
    elif X.ndim == 3:
        batch, seq, hidden = X.shape
        if not num_heads or hidden % num_heads:
            raise KernelInputError(f"RotaryEmbedding: 3D input of hidden size {hidden} needs "
                                   "num_heads dividing it, "
                                   f"got num_heads={num_heads}")
        x = X.reshape(batch, seq, num_heads, hidden // num_heads)
    else:
        raise KernelInputError(f"RotaryEmbedding: X must be 3D or 4D, got shape {list(X.shape)}")
    size = x.shape[3]
    rot = size if rotary_embedding_dim == 0 else rotary_embedding_dim
    if rot > size or rot % 2:
        raise AttributeValueError(f"RotaryEmbedding: rotary_embedding_dim={rot} must be even and "
                                  f"at most head size {size}")
    if position_ids is not None:
        cos, sin = cos_cache[position_ids], sin_cache[position_ids]
    else:
        cos, sin = cos_cache, sin_cache
    if cos.shape[-1] != rot // 2 or sin.shape[-1] != rot // 2:
        raise KernelInputError(f"RotaryEmbedding: cos/sin caches must have {rot // 2} values per "
                               "position, "
                               f"got {cos.shape[-1]} and {sin.shape[-1]}")
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]      # broadcast over heads

    out = x.copy()
    if interleaved:
        first, second = slice(0, rot, 2), slice(1, rot, 2)
    else:
        first, second = slice(0, rot // 2), slice(rot // 2, rot)
    x1, x2 = x[..., first], x[..., second]
    out[..., first] = cos * x1 - sin * x2
    out[..., second] = sin * x1 + cos * x2
    if X.ndim == 4:
        return out.transpose(0, 2, 1, 3).astype(X.dtype, copy=False)
    return out.reshape(X.shape).astype(X.dtype, copy=False)
