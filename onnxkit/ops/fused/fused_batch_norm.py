"""onnxkit::FusedBatchNormalization: BatchNormalization (inference), then an activation.

    Y = activation(BatchNormalization(X, scale, B, mean, var))       (per channel, axis 1)

The inference form of BatchNormalization-15 (one output, running statistics); ``activation``
names one of ``onnxkit.ops.fused._common.ACTIVATIONS`` ("" for none). DenseNet's
pre-activation blocks (BatchNormalization, Relu, Conv) are its use: one pass over the
feature map instead of two. See docs/onnxkit-domain.md and
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
"""

from onnxkit.ops.fused._common import activate, standard
from onnxkit.ops.registry import op


@op("FusedBatchNormalization", 1, domain="onnxkit")
def fused_batch_normalization(X, scale, B, mean, var, *, epsilon=1e-5, activation="",
                              activation_params=None):
    Y = standard("BatchNormalization", 15)(X, scale, B, mean, var, epsilon=epsilon)
    return activate(Y, activation, activation_params)
