"""Adam: one step of Adam for each optimized tensor X.

    G_reg = norm_coefficient * X + G
    V_new = alpha * V + (1 - alpha) * G_reg
    H_new = beta * H + (1 - beta) * G_reg * G_reg
    r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
    X_new = (1 - norm_coefficient_post) * (X - r * V_new / (sqrt(H_new) + epsilon))
    outputs: X_new..., V_new..., H_new...

https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Adam.html
"""

import numpy as np

from onnxkit.ops.registry import TRAINING_DOMAIN, op
from onnxkit.ops.training._groups import grouped


@op("Adam", 1, domain=TRAINING_DOMAIN)
def adam(R, T, *inputs, alpha=0.9, beta=0.999, epsilon=1e-6, norm_coefficient=0.0,
         norm_coefficient_post=0.0):
    step = float(T)
    rate = float(R)
    if step > 0:
        rate = rate * np.sqrt(1.0 - beta ** step) / (1.0 - alpha ** step)
    xs, vs, hs = [], [], []
    for X, G, V, H in grouped(inputs, 4, "Adam"):
        g = norm_coefficient * X + G
        v_new = alpha * V + (1.0 - alpha) * g
        h_new = beta * H + (1.0 - beta) * g * g
        x_new = X - rate * v_new / (np.sqrt(h_new) + epsilon)
        xs.append(((1.0 - norm_coefficient_post) * x_new).astype(X.dtype))
        vs.append(v_new.astype(V.dtype))
        hs.append(h_new.astype(H.dtype))
    return tuple(xs + vs + hs)
