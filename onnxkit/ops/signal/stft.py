"""STFT: the DFT of successive windowed frames of a [batch, length, 1 | 2] signal.

    frame_length = frame_length, else len(window), else length;  window defaults to ones
    frames = (length - frame_length) // frame_step + 1
    out[b, f] = DFT(signal[b, f*frame_step : f*frame_step + frame_length] * window)
    onesided = 1 (default, real signals only) keeps bins 0..frame_length // 2

Output: [batch, frames, bins, 2].  https://onnx.ai/onnx/operators/onnx__STFT.html
"""

import numpy as np

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.registry import op
from onnxkit.ops.signal._complex import from_complex, to_complex
from onnxkit.core.limits import check_allocation


@op("STFT", 17, context=True)
def stft(signal, frame_step, window=None, frame_length=None, *, onesided=1, ctx):
    where = describe_node(ctx.node)
    if signal.ndim != 3 or signal.shape[-1] not in (1, 2):
        raise InputError(f"{where}: signal must be [batch, length, 1 | 2], got {list(signal.shape)}")
    if onesided and signal.shape[-1] == 2:
        raise InputError(f"{where}: onesided=1 needs a real signal ([batch, length, 1])")
    length = signal.shape[1]
    if frame_length is not None:
        size = int(frame_length.reshape(-1)[0])
    else:
        size = length if window is None else window.shape[0]
    if window is None:
        window = np.ones(size)
    if window.shape != (size,):
        raise InputError(f"{where}: window has shape {list(window.shape)}, frame_length is {size}")
    step = int(frame_step.reshape(-1)[0])
    if step <= 0 or not 0 < size <= length:
        raise InputError(f"{where}: need frame_step > 0 and 0 < frame_length <= {length}, "
                         f"got frame_step={step}, frame_length={size}")
    n_frames = (length - size) // step + 1
    # overlapping frames copy the signal up to frame_length times: check before gathering
    check_allocation((signal.shape[0], n_frames, size), np.complex128 if signal.dtype == np.float64
                     else np.complex64, f"{where}: STFT frames")
    starts = np.arange(n_frames) * step
    frames = to_complex(signal)[:, starts[:, None] + np.arange(size)]  # [batch, frames, size]
    spectrum = np.fft.fft(frames * window.astype(frames.real.dtype), axis=-1)
    if onesided:
        spectrum = spectrum[..., :size // 2 + 1]
    return from_complex(spectrum, signal.dtype)
