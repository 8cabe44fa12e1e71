"""OneHotEncoder: each element becomes a one-hot row over the categories.

    Y[..., c] = 1.0 if X[...] == cats[c] else 0.0       Y has shape X.shape + [len(cats)]

Numeric inputs are truncated to integers and looked up in ``cats_int64s``; strings in
``cats_strings``. An unknown value gives a zero row when ``zeros`` = 1, else an error.
https://onnx.ai/onnx/operators/onnx_aionnxml_OneHotEncoder.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.ops.registry import ML_DOMAIN, op
from onnxkit.core.limits import check_allocation


@op("OneHotEncoder", 1, domain=ML_DOMAIN)
def one_hot_encoder(X, *, cats_int64s=None, cats_strings=None, zeros=1):
    if X.dtype == object:
        cats = [] if cats_strings is None else list(cats_strings)
        values = X.reshape(-1).tolist()
    else:
        cats = [] if cats_int64s is None else [int(c) for c in cats_int64s]
        values = X.reshape(-1).astype(np.int64).tolist()
    if not cats:
        kind = "cats_strings" if X.dtype == object else "cats_int64s"
        raise AttributeMismatchError(f"an input of type {X.dtype} needs {kind}")
    position = {c: i for i, c in enumerate(cats)}
    where = np.array([position.get(v, -1) for v in values], dtype=np.int64)
    if not zeros and np.any(where < 0):
        raise InputError(f"OneHotEncoder: value {values[int(np.argmin(where))]!r} is not a "
                         f"category and zeros=0")
    check_allocation((len(values), len(cats)), np.float32, "OneHotEncoder output")
    out = np.zeros((len(values), len(cats)), dtype=np.float32)
    known = where >= 0
    out[np.flatnonzero(known), where[known]] = 1.0
    return out.reshape(*X.shape, len(cats))
