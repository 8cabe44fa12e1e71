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

from onnxkit.errors import InputError
from onnxkit.ops.registry import op
from onnxkit.ops.signal._complex import from_complex, to_complex


@op("DFT", 20)
def dft(input_signal, dft_length=None, axis=None, *, inverse=0, onesided=0):
    return _dft(input_signal, dft_length, -2 if axis is None else int(axis), inverse, onesided)


@op("DFT", 17)
def dft_17(input_signal, dft_length=None, *, axis=1, inverse=0, onesided=0):
    return _dft(input_signal, dft_length, axis, inverse, onesided)


def _dft(x: np.ndarray, dft_length, axis: int, inverse: int, onesided: int) -> np.ndarray:
    rank = x.ndim
    if not (-rank <= axis <= -2 or 0 <= axis <= rank - 2):
        raise InputError(f"DFT: axis {axis} is outside [{-rank}, -2] and [0, {rank - 2}]")
    axis = axis + rank if axis < 0 else axis
    signal = to_complex(x)
    length = signal.shape[axis]
    if dft_length is not None:
        n = int(dft_length.reshape(-1)[0])
    else:
        n = 2 * (length - 1) if onesided and inverse else length
    if onesided and inverse:
        return np.fft.irfft(signal, n=n, axis=axis)[..., None].astype(x.dtype)
    spectrum = np.fft.ifft(signal, n=n, axis=axis) if inverse else np.fft.fft(signal, n=n, axis=axis)
    if onesided:
        spectrum = np.take(spectrum, np.arange(n // 2 + 1), axis=axis)
    return from_complex(spectrum, x.dtype)
