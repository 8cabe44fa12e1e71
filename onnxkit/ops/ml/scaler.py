"""Scaler: Y = (X - offset) * scale, offset and scale per feature (last axis) or one value.

https://onnx.ai/onnx/operators/onnx_aionnxml_Scaler.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("Scaler", 1, domain=ML_DOMAIN)
def scaler(X, *, offset=None, scale=None):
    n_features = X.shape[-1] if X.ndim else 1
    offset = np.asarray(offset if offset is not None else [0.0], dtype=np.float32)
    scale = np.asarray(scale if scale is not None else [1.0], dtype=np.float32)
    for name, values in (("offset", offset), ("scale", scale)):
        if values.size not in (1, n_features):
            raise AttributeMismatchError(
                f"{name} has {values.size} values; expected 1 or {n_features} (one per feature)")
    return ((X.astype(np.float32) - offset) * scale).astype(np.float32)
