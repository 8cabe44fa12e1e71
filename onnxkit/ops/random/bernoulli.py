"""Bernoulli: Y[i] = 1 with probability input[i], else 0 (dtype defaults to the input's).
https://onnx.ai/onnx/operators/onnx__Bernoulli.html
"""

from onnxkit.ops.random._rng import generator, output_dtype
from onnxkit.ops.registry import op


@op("Bernoulli", 15, 22)
def bernoulli(input_p, *, dtype=None, seed=None):
    draws = generator(seed).random(size=input_p.shape)
    return (draws < input_p.astype(float)).astype(output_dtype(dtype, input_p))
