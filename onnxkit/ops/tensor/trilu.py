"""Trilu: keep the upper (upper=1: on and above diagonal k) or lower (on and below
diagonal k) triangle of the last two axes; zero the rest.
https://onnx.ai/onnx/operators/onnx__Trilu.html"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import scalar_int


@op("Trilu", 14)
def trilu(data, k=None, *, upper=1):
    if data.ndim < 2:
        raise KernelInputError(f"Trilu takes a tensor of rank >= 2, got shape {list(data.shape)}")
    diagonal = 0 if k is None else scalar_int(k, "k")
    rows, cols = data.shape[-2:]
    keep = np.arange(cols)[None, :] - np.arange(rows)[:, None]  # column - row
    mask = keep >= diagonal if upper else keep <= diagonal
    return np.where(mask, data, np.zeros((), dtype=data.dtype)).astype(data.dtype, copy=False)
