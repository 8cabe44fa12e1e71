"""MelWeightMatrix: triangular filters mapping DFT bins to mel bands.

    mel(f) = 2595 log10(1 + f / 700)
    edges: num_mel_bins + 2 points from mel(lower_edge_hertz), spaced
           (mel(upper) - mel(lower)) / (num_mel_bins + 2) apart (onnxruntime's spacing),
           mapped back to hertz and then to a bin: floor((dft_length + 1) * f / sample_rate)
    band i rises from edge i to edge i+1 (value (j - left) / (center - left)) and falls to
    edge i+2 ((right - j) / (right - center)); its peak is 1

Output: [dft_length // 2 + 1, num_mel_bins].
https://onnx.ai/onnx/operators/onnx__MelWeightMatrix.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation
from onnxkit.core.values import np_dtype


@op("MelWeightMatrix", 17)
def mel_weight_matrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
                      upper_edge_hertz, *, output_datatype=1):
    bands, n_fft, rate = int(num_mel_bins), int(dft_length), int(sample_rate)
    n_bins = n_fft // 2 + 1
    dtype = np_dtype(output_datatype)
    check_allocation((n_bins, bands), dtype, "MelWeightMatrix output")
    low_mel = 2595 * np.log10(1 + float(lower_edge_hertz) / 700)
    high_mel = 2595 * np.log10(1 + float(upper_edge_hertz) / 700)
    mels = low_mel + np.arange(bands + 2) * (high_mel - low_mel) / (bands + 2)
    hertz = 700 * (10 ** (mels / 2595) - 1)
    edges = np.floor((n_fft + 1) * hertz / rate).astype(np.int64)
    weights = np.zeros((n_bins, bands))
    for i in range(bands):
        left, center, right = edges[i:i + 3]
        if center == left:
            weights[center, i] = 1.0
        for j in range(left, center):
            weights[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            weights[j, i] = (right - j) / (right - center)
        if right == center:
            weights[center, i] = 1.0
    return weights.astype(dtype)
