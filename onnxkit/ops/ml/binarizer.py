"""Binarizer: Y = 1 where X > threshold, else 0 (NaN stays NaN), in X's type.

https://onnx.ai/onnx/operators/onnx_aionnxml_Binarizer.html
"""

import numpy as np

from onnxkit.ops.registry import ML_DOMAIN, op


@op("Binarizer", 1, domain=ML_DOMAIN)
def binarizer(X, *, threshold=0.0):
    out = np.where(X > threshold, 1, 0).astype(X.dtype)
    if X.dtype.kind == "f":
        out = np.where(np.isnan(X), X, out)
    return out
