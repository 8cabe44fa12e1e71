"""Momentum: one step of SGD with momentum ("standard") or Nesterov momentum.

    G_reg = norm_coefficient * X + G
    V_new = alpha * V + (T > 0 ? beta : 1) * G_reg
    standard: X_new = X - R * V_new
    nesterov: X_new = X - R * (G_reg + alpha * V_new)
    outputs: X_new..., V_new...

https://onnx.ai/onnx/operators/onnx_aionnxpreviewtraining_Momentum.html
"""

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.registry import TRAINING_DOMAIN, op
from onnxkit.ops.training._groups import grouped


@op("Momentum", 1, domain=TRAINING_DOMAIN)
def momentum(R, T, *inputs, alpha, beta, mode, norm_coefficient):
    if mode not in ("standard", "nesterov"):
        raise AttributeMismatchError(f"mode={mode!r} is not 'standard' or 'nesterov'")
    rate = float(R)
    gain = beta if float(T) > 0 else 1.0
    xs, vs = [], []
    for X, G, V in grouped(inputs, 3, "Momentum"):
        g = norm_coefficient * X + G
        v_new = alpha * V + gain * g
        step = v_new if mode == "standard" else g + alpha * v_new
        xs.append((X - rate * step).astype(X.dtype))
        vs.append(v_new.astype(V.dtype))
    return tuple(xs + vs)
