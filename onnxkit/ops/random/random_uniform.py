"""RandomUniform, RandomUniformLike: samples of U[low, high).

The shape comes from the ``shape`` attribute, or (Like) from the input, whose dtype is
also the default output dtype.
https://onnx.ai/onnx/operators/onnx__RandomUniform.html
https://onnx.ai/onnx/operators/onnx__RandomUniformLike.html
"""

from onnxkit.ops.random._rng import generator, output_dtype
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("RandomUniform", 1, 22)
def random_uniform(*, shape, dtype=1, low=0.0, high=1.0, seed=None):
    out_dtype = output_dtype(dtype)
    check_allocation(shape, out_dtype, "RandomUniform output")
    return generator(seed).uniform(low, high, size=tuple(shape)).astype(out_dtype)


@op("RandomUniformLike", 1, 22)
def random_uniform_like(input_like, *, dtype=None, low=0.0, high=1.0, seed=None):
    out_dtype = output_dtype(dtype, input_like)
    return generator(seed).uniform(low, high, size=input_like.shape).astype(out_dtype)
