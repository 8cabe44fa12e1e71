"""ArrayFeatureExtractor: pick the columns ``Y`` of the last axis of ``X``.

    Z[..., k] = X[..., Y[k]]     (a 1-D X is read as one row: Z has shape [1, len(Y)])

https://onnx.ai/onnx/operators/onnx_aionnxml_ArrayFeatureExtractor.html
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("ArrayFeatureExtractor", 1, domain=ML_DOMAIN)
def array_feature_extractor(X, Y):
    indices = np.asarray(Y, dtype=np.int64).reshape(-1)
    width = X.shape[-1] if X.ndim else 0
    if indices.size and (indices.min() < 0 or indices.max() >= width):
        raise InputError(f"ArrayFeatureExtractor: index {int(indices.max() if indices.max() >= width else indices.min())} "
                         f"is out of range for a last axis of size {width}")
    data = X.reshape(1, -1) if X.ndim == 1 else X
    return np.take(data, indices, axis=-1)
