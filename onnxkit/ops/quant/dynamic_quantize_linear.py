"""DynamicQuantizeLinear: quantize x to uint8 with a scale and zero point taken from x.

    lo = min(0, min(x)); hi = max(0, max(x))
    y_scale = (hi - lo) / 255          (1 when hi == lo)
    y_zero_point = round(clip(-lo / y_scale, 0, 255))
    y = saturate(round(x / y_scale) + y_zero_point)          round: half to even

https://onnx.ai/onnx/operators/onnx__DynamicQuantizeLinear.html
"""

import numpy as np

from onnxkit.ops.registry import op


@op("DynamicQuantizeLinear", 11)
def dynamic_quantize_linear(x):
    f32 = np.float32
    hi = f32(max(0.0, float(x.max()))) if x.size else f32(0)
    lo = f32(min(0.0, float(x.min()))) if x.size else f32(0)
    scale = f32(1.0) if hi == lo else f32(hi - lo) / f32(255)
    zero = np.rint(np.clip(f32(0) - lo / scale, 0, 255))
    y = np.clip(np.rint(x.astype(f32) / scale) + zero, 0, 255)
    return y.astype(np.uint8), np.array(scale, dtype=f32), np.array(zero, dtype=np.uint8)
