"""CausalConvWithState: depthwise causal 1D convolution that carries its left context.

    padded = concat(past_state or zeros[batch, channels, k-1], input)   along length
    output[b, c, t] = act(bias[c] + sum_i weight[c, 0, i] * padded[b, c, t + i])
    present_state = the last k-1 positions of padded

``activation`` is 'none', or 'silu' / 'swish' (x * sigmoid(x)).
https://onnx.ai/onnx/operators/onnx__CausalConvWithState.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op


@op("CausalConvWithState", 27)
def causal_conv_with_state(X, weight, bias=None, past_state=None, *, activation="none"):
    """``X`` is the spec's ``input`` (renamed: ``input`` is a Python builtin)."""
    if activation not in ("none", "silu", "swish"):
        raise AttributeValueError("CausalConvWithState: activation must be 'none', 'silu' or "
                                  f"'swish', got {activation!r}")
    if X.ndim != 3 or weight.ndim != 3 or weight.shape[1] != 1:
        raise KernelInputError("CausalConvWithState: input must be [batch, channels, length] and "
                               "weight [channels, 1, k], "
                               f"got {list(X.shape)} and {list(weight.shape)}")
    batch, channels, length = X.shape
    k = weight.shape[2]
    if past_state is None:
        past_state = np.zeros((batch, channels, k - 1), dtype=X.dtype)
    padded = np.concatenate([past_state, X], axis=2)
    work = np.float64 if X.dtype == np.float64 else np.float32
    x, w = padded.astype(work), weight[:, 0, :].astype(work)       # w: [channels, k]
    out = np.zeros((batch, channels, length), dtype=work)
    for i in range(k):
        out += w[None, :, i, None] * x[:, :, i:i + length]
    if bias is not None:
        out += bias.astype(work)[None, :, None]
    if activation != "none":
        out = out / (1 + np.exp(-out))
    return out.astype(X.dtype), padded[:, :, padded.shape[2] - (k - 1):]
