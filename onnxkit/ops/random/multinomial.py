"""Multinomial: draw ``sample_size`` class indices per batch row.

    p = softmax(input[b])          (input holds unnormalized log-probabilities, [batch, classes])
    Y[b, :] = sample_size draws of an index with probability p     (int32 unless dtype says int64)

https://onnx.ai/onnx/operators/onnx__Multinomial.html
"""

import numpy as np

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.random._rng import generator, output_dtype
from onnxkit.ops.registry import op


@op("Multinomial", 7, 22, context=True)
def multinomial(input_logits, *, dtype=6, sample_size=1, seed=None, ctx):
    if input_logits.ndim != 2:
        raise InputError(
            f"{describe_node(ctx.node)}: input must be [batch_size, class_size], got {list(input_logits.shape)}")
    logits = input_logits.astype(np.float64)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    rng = generator(seed)
    rows = [rng.choice(p.shape[1], size=sample_size, p=row) for row in p]
    out = np.array(rows, dtype=np.int64).reshape(p.shape[0], sample_size)
    return out.astype(output_dtype(dtype))
