"""onnxkit::LayerNormalization and onnxkit::SkipLayerNormalization.

    LayerNormalization:      the opset-17 operator, for models of older opsets
    SkipLayerNormalization:  S = X + Skip;  Y = LayerNormalization(S, Scale, B)
                             (second output, if asked for: S itself)

https://onnx.ai/onnx/operators/onnx__LayerNormalization.html ; see docs/onnxkit-domain.md
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.fused._common import standard
from onnxkit.ops.registry import op


@op("LayerNormalization", 1, domain="onnxkit")
def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    return standard("LayerNormalization", 17)(X, Scale, B, axis=axis, epsilon=epsilon,
                                              stash_type=stash_type)


@op("SkipLayerNormalization", 1, domain="onnxkit")
def skip_layer_normalization(X, Skip, Scale, B=None, *, axis=-1, epsilon=1e-5):
    if X.shape != Skip.shape:
        raise KernelInputError(f"SkipLayerNormalization: X has shape {list(X.shape)} and Skip "
                               f"{list(Skip.shape)}; they must match")
    S = np.add(X, Skip).astype(X.dtype, copy=False)
    Y = standard("LayerNormalization", 17)(S, Scale, B, axis=axis, epsilon=epsilon)[0]
    return Y, S
