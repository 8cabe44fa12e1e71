"""DFT: the discrete Fourier transform of one axis of a [..., 1 | 2] signal.

    y[m, k] = sum_n x[m, n] exp(-2 pi j k n / N)        (inverse: exp(+...) / N)

N = dft_length (the signal is cropped or zero-padded to it; default: the axis length,
or 2 * (length - 1) for the inverse one-sided case). onesided = 1 keeps bins
0..N/2 (forward, RFFT) or reads them and returns the real signal [..., 1] (inverse, IRFFT).
Opset 17 takes ``axis`` as an attribute (default 1), opset 20 as an input (default -2);
both count the trailing complex axis, which cannot itself be transformed.
https://onnx.ai/onnx/operators/onnx__DFT.html
"""

import numpy as np

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.registry import op
from onnxkit.ops.signal._complex import from_complex, to_complex
from onnxkit.core.limits import check_allocation


@op("DFT", 20, context=True)
def dft(input_signal, dft_length=None, axis=None, *, inverse=0, onesided=0, ctx):
    axis = -2 if axis is None else int(axis.reshape(-1)[0])
    return _dft(input_signal, dft_length, axis, inverse, onesided, ctx.node)


@op("DFT", 17, context=True)
def dft_17(input_signal, dft_length=None, *, axis=1, inverse=0, onesided=0, ctx):
    return _dft(input_signal, dft_length, axis, inverse, onesided, ctx.node)


def _dft(x: np.ndarray, dft_length, axis: int, inverse: int, onesided: int, node) -> np.ndarray:
    rank = x.ndim
    if rank < 2 or x.shape[-1] not in (1, 2):
        raise InputError(f"{describe_node(node)}: input must be [..., 1] (real) or [..., 2] "
                         f"(complex), got shape {list(x.shape)}")
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise InputError(f"{describe_node(node)}: axis {axis} is outside [{-rank}, -2] and "
                         f"[0, {rank - 2}]")
    axis = axis + rank if axis < 0 else axis
    signal = to_complex(x)
    length = signal.shape[axis]
    if dft_length is not None:
        n = int(dft_length.reshape(-1)[0])
    else:
        n = 2 * (length - 1) if onesided and inverse else length
    if n < 1:
        raise InputError(f"{describe_node(node)}: dft_length must be at least 1, got {n}")
    shape = list(signal.shape)
    shape[axis] = n
    check_allocation(shape, signal.dtype, f"{describe_node(node)}: DFT spectrum")
    if onesided and inverse:
        return np.fft.irfft(signal, n=n, axis=axis)[..., None].astype(x.dtype)
    spectrum = np.fft.ifft(signal, n=n, axis=axis) if inverse else np.fft.fft(signal, n=n, axis=axis)
    if onesided:
        spectrum = np.take(spectrum, np.arange(n // 2 + 1), axis=axis)
    return from_complex(spectrum, x.dtype)
