"""StringSplit: split each string on ``delimiter`` at most ``maxsplit`` times.

    parts = s.split(delimiter, maxsplit)   (delimiter "" or unset: runs of whitespace,
                                            leading and trailing whitespace dropped)
    Y = X.shape + [most parts], padded with ""; Z = number of parts of each string

https://onnx.ai/onnx/operators/onnx__StringSplit.html
"""

import numpy as np

from onnxkit.ops.registry import op


@op("StringSplit", 20)
def string_split(X, *, delimiter="", maxsplit=None):
    sep = delimiter if delimiter else None
    limit = -1 if maxsplit is None else maxsplit
    parts = [s.split(sep, limit) for s in X.reshape(-1)]
    width = max((len(p) for p in parts), default=0)
    Y = np.full((len(parts), width), "", dtype=object)
    for i, p in enumerate(parts):
        Y[i, :len(p)] = p
    Z = np.array([len(p) for p in parts], dtype=np.int64).reshape(X.shape)
    return Y.reshape(*X.shape, width), Z
