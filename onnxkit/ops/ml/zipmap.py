"""ZipMap: each row of scores becomes a map {class label: score}; the output is a list.

    Z = [{labels[c]: X[n, c] for c in classes} for n in rows]

https://onnx.ai/onnx/operators/onnx_aionnxml_ZipMap.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("ZipMap", 1, domain=ML_DOMAIN)
def zipmap(X, *, classlabels_int64s=None, classlabels_strings=None):
    if (classlabels_int64s is None) == (classlabels_strings is None):
        raise AttributeMismatchError("ZipMap needs exactly one of classlabels_int64s, classlabels_strings")
    keys = [int(k) for k in classlabels_int64s] if classlabels_strings is None else list(classlabels_strings)
    rows = X.reshape(1, -1) if X.ndim == 1 else X
    if rows.ndim != 2 or rows.shape[1] != len(keys):
        raise InputError(f"ZipMap has {len(keys)} labels but the input has shape {list(X.shape)}")
    values = rows.astype(np.float32).tolist()
    return [dict(zip(keys, row)) for row in values]
