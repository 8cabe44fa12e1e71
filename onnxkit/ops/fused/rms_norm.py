"""onnxkit::RMSNormalization: the opset-23 operator, for models of older opsets.

    Y = X / sqrt(mean(X^2, axes axis..) + epsilon) * scale

https://onnx.ai/onnx/operators/onnx__RMSNormalization.html ; see docs/onnxkit-domain.md
"""

from onnxkit.ops.fused._common import standard
from onnxkit.ops.registry import op


@op("RMSNormalization", 1, domain="onnxkit")
def rms_normalization(X, scale, *, axis=-1, epsilon=1e-5, stash_type=1):
    return standard("RMSNormalization", 23)(X, scale, axis=axis, epsilon=epsilon,
                                            stash_type=stash_type)
