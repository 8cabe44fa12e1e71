"""onnxkit::FusedConv: Conv, plus an optional same-shaped Z, then an activation.

    Y = activation(Conv(X, W, B) + Z)

Conv's attributes and semantics are unchanged; ``activation`` names one of
``onnxkit.ops.fused._common.ACTIVATIONS`` ("" for none). See docs/onnxkit-domain.md and
https://onnx.ai/onnx/operators/onnx__Conv.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.fused._common import activate, standard
from onnxkit.ops.registry import op


@op("FusedConv", 1, domain="onnxkit")
def fused_conv(X, W, B=None, Z=None, *, auto_pad="NOTSET", dilations=None, group=1,
               kernel_shape=None, pads=None, strides=None, activation="", activation_params=None):
    Y = standard("Conv", 22)(X, W, B, auto_pad=auto_pad, dilations=dilations, group=group,
                             kernel_shape=kernel_shape, pads=pads, strides=strides)
    if Z is not None:
        if Z.shape != Y.shape:
            raise KernelInputError(f"FusedConv: Z has shape {list(Z.shape)}, the convolution "
                                   f"gives {list(Y.shape)}")
        Y = np.add(Y, Z).astype(Y.dtype, copy=False)
    return activate(Y, activation, activation_params)
