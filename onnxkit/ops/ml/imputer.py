"""Imputer: replace every element equal to ``replaced_value`` (NaN matches NaN) by the
imputed value of its feature (last axis), or by the single imputed value.

https://onnx.ai/onnx/operators/onnx_aionnxml_Imputer.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("Imputer", 1, domain=ML_DOMAIN)
def imputer(X, *, imputed_value_floats=None, imputed_value_int64s=None,
            replaced_value_float=0.0, replaced_value_int64=0):
    if X.dtype.kind == "f":
        values, replaced = imputed_value_floats, np.float32(replaced_value_float)
        hit = np.isnan(X) if np.isnan(replaced) else X == replaced
    else:
        values, replaced = imputed_value_int64s, replaced_value_int64
        hit = X == replaced
    if values is None or len(values) == 0:
        kind = "imputed_value_floats" if X.dtype.kind == "f" else "imputed_value_int64s"
        raise AttributeMismatchError(f"an input of type {X.dtype} needs {kind}")
    n_features = X.shape[-1] if X.ndim else 1
    if len(values) not in (1, n_features):
        raise AttributeMismatchError(
            f"{len(values)} imputed values; expected 1 or {n_features} (one per feature)")
    fill = np.broadcast_to(np.asarray(values).astype(X.dtype), X.shape)
    return np.where(hit, fill, X).astype(X.dtype)
