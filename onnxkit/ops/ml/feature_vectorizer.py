"""FeatureVectorizer: concatenate the inputs' features into one float tensor.

    each input is [N, C_i] (1-D: [1, C_i]); it fills inputdimensions[i] columns,
    truncated or padded with zeros;  Y = [N, sum(inputdimensions)]

https://onnx.ai/onnx/operators/onnx_aionnxml_FeatureVectorizer.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("FeatureVectorizer", 1, domain=ML_DOMAIN)
def feature_vectorizer(*X, inputdimensions=None):
    dims = list(inputdimensions) if inputdimensions is not None else [
        x.shape[-1] if x.ndim else 1 for x in X]
    if len(dims) != len(X):
        raise AttributeMismatchError(f"inputdimensions has {len(dims)} entries for {len(X)} inputs")
    rows = [x.reshape(1, -1) if x.ndim <= 1 else x.reshape(x.shape[0], -1) for x in X]
    n = rows[0].shape[0] if rows else 1
    if any(r.shape[0] != n for r in rows):
        raise InputError(f"FeatureVectorizer inputs have different batch sizes: "
                         f"{[r.shape[0] for r in rows]}")
    parts = []
    for r, d in zip(rows, dims):
        part = np.zeros((n, d), dtype=np.float32)
        width = min(d, r.shape[1])
        part[:, :width] = r[:, :width]
        parts.append(part)
    return np.concatenate(parts, axis=1) if parts else np.zeros((1, 0), dtype=np.float32)
