"""Normalizer: divide each row (last axis) by its MAX, L1 or L2 norm.

    MAX: Y = X / max(X);  L1: Y = X / sum(|X|);  L2: Y = X / sqrt(sum(X^2))
    a zero divisor leaves the row as it is.

https://onnx.ai/onnx/operators/onnx_aionnxml_Normalizer.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("Normalizer", 1, domain=ML_DOMAIN)
def normalizer(X, *, norm="MAX"):
    x = X.astype(np.float32)
    if norm == "MAX":
        divisor = x.max(axis=-1, keepdims=True) if x.size else x
    elif norm == "L1":
        divisor = np.abs(x).sum(axis=-1, keepdims=True)
    elif norm == "L2":
        divisor = np.sqrt((x * x).sum(axis=-1, keepdims=True))
    else:
        raise AttributeMismatchError(f"norm={norm!r} is not one of MAX, L1, L2")
    safe = np.where(divisor == 0, np.float32(1), divisor)
    return (x / safe).astype(np.float32)
