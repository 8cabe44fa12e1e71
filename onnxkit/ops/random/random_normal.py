"""RandomNormal, RandomNormalLike: samples of N(mean, scale^2).

The shape comes from the ``shape`` attribute, or (Like) from the input, whose dtype is
also the default output dtype.
https://onnx.ai/onnx/operators/onnx__RandomNormal.html
https://onnx.ai/onnx/operators/onnx__RandomNormalLike.html
"""

from onnxkit.ops.random._rng import generator, output_dtype
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("RandomNormal", 1, 22)
def random_normal(*, shape, dtype=1, mean=0.0, scale=1.0, seed=None):
    out_dtype = output_dtype(dtype)
    check_allocation(shape, out_dtype, "RandomNormal output")
    return generator(seed).normal(mean, scale, size=tuple(shape)).astype(out_dtype)


@op("RandomNormalLike", 1, 22)
def random_normal_like(input_like, *, dtype=None, mean=0.0, scale=1.0, seed=None):
    out_dtype = output_dtype(dtype, input_like)
    return generator(seed).normal(mean, scale, size=input_like.shape).astype(out_dtype)
