"""HannWindow, HammingWindow, BlackmanWindow: cosine windows of ``size`` points.

    N = size if periodic else size - 1;  c_k = cos(2 pi k n / N)  for n = 0..size-1
    Hann      w[n] = 0.5 - 0.5 c_1
    Hamming   w[n] = 25/46 - 21/46 c_1
    Blackman  w[n] = 0.42 - 0.5 c_1 + 0.08 c_2

https://onnx.ai/onnx/operators/onnx__HannWindow.html
https://onnx.ai/onnx/operators/onnx__HammingWindow.html
https://onnx.ai/onnx/operators/onnx__BlackmanWindow.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation
from onnxkit.core.values import np_dtype


def _cosines(size, periodic: int, output_datatype: int):
    """(n, N, dtype) for a window of ``size`` points."""
    count = int(size.reshape(-1)[0])
    dtype = np_dtype(output_datatype)
    check_allocation((count,), dtype, "window")
    period = count if periodic else count - 1
    angle = 2 * np.pi * np.arange(count) / max(period, 1)
    return angle, dtype


@op("HannWindow", 17)
def hann_window(size, *, output_datatype=1, periodic=1):
    angle, dtype = _cosines(size, periodic, output_datatype)
    return (0.5 - 0.5 * np.cos(angle)).astype(dtype)


@op("HammingWindow", 17)
def hamming_window(size, *, output_datatype=1, periodic=1):
    angle, dtype = _cosines(size, periodic, output_datatype)
    return (25 / 46 - 21 / 46 * np.cos(angle)).astype(dtype)


@op("BlackmanWindow", 17)
def blackman_window(size, *, output_datatype=1, periodic=1):
    angle, dtype = _cosines(size, periodic, output_datatype)
    return (0.42 - 0.5 * np.cos(angle) + 0.08 * np.cos(2 * angle)).astype(dtype)
