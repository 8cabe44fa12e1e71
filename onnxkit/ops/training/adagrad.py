"""Adagrad: one step of ADAGRAD for each optimized tensor X.

    r = R / (1 + T * decay_factor)
    G_reg = norm_coefficient * X + G
    H_new = H + G_reg * G_reg
    X_new = X - r * G_reg / (sqrt(H_new) + epsilon)
    outputs: X_new..., H_new...

https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Adagrad.html
"""

import numpy as np

from onnxkit.ops.registry import TRAINING_DOMAIN, op
from onnxkit.ops.training._groups import grouped


@op("Adagrad", 1, domain=TRAINING_DOMAIN)
def adagrad(R, T, *inputs, decay_factor=0.0, epsilon=1e-6, norm_coefficient=0.0):
    rate = float(R) / (1.0 + float(T) * decay_factor)
    xs, hs = [], []
    for X, G, H in grouped(inputs, 3, "Adagrad"):
        g = norm_coefficient * X + G
        h_new = H + g * g
        xs.append((X - rate * g / (np.sqrt(h_new) + epsilon)).astype(X.dtype))
        hs.append(h_new.astype(H.dtype))
    return tuple(xs + hs)
