"""CategoryMapper: strings -> integers (or back) through the parallel lists
``cats_strings`` / ``cats_int64s``; unknown values map to default_int64 / default_string.

https://onnx.ai/onnx/operators/onnx_aionnxml_CategoryMapper.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.registry import ML_DOMAIN, op


@op("CategoryMapper", 1, domain=ML_DOMAIN)
def category_mapper(X, *, cats_int64s=None, cats_strings=None, default_int64=-1,
                    default_string="_Unused"):
    ints = [] if cats_int64s is None else list(cats_int64s)
    strings = [] if cats_strings is None else list(cats_strings)
    if len(ints) != len(strings):
        raise AttributeMismatchError(
            f"cats_int64s has {len(ints)} entries, cats_strings {len(strings)}; they must match")
    flat = X.reshape(-1).tolist()
    if X.dtype == object:
        table = dict(zip(strings, ints))
        return np.array([table.get(v, default_int64) for v in flat], dtype=np.int64).reshape(X.shape)
    table = dict(zip(ints, strings))
    out = np.empty(len(flat), dtype=object)
    out[:] = [table.get(int(v), default_string) for v in flat]
    return out.reshape(X.shape)
