"""com.microsoft QLinearConcat: concatenate 8-bit tensors, each requantized to y's scale.

    inputs: Y_scale, Y_zero_point, then (tensor, scale, zero point) for each part
    part' = part                                     when its scale and zero point are y's
          = saturate(round((part - zp) * scale / Y_scale) + Y_zero_point)   otherwise
    Y = Concat(part'..., axis)

Float32 arithmetic, round half to even.
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.QLinearConcat
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.quant._contrib import (MS_DOMAIN, dequantized, eight_bit, quantized, scale_of,
                                        zero_point_of)
from onnxkit.ops.registry import op
from onnxkit.ops.tensor.concat import concat


@op("QLinearConcat", 1, domain=MS_DOMAIN)
def qlinear_concat(Y_scale, Y_zero_point, *parts, axis):
    if not parts or len(parts) % 3:
        raise InputError(f"QLinearConcat takes Y_scale, Y_zero_point and then (tensor, scale, "
                         f"zero point) triples; got {2 + len(parts)} inputs")
    dtype = eight_bit(parts[0], "the first tensor").dtype
    sy = scale_of(Y_scale, "Y_scale")
    zy = zero_point_of(Y_zero_point, dtype, "Y_zero_point")
    same = []
    for i in range(0, len(parts), 3):
        x, scale, zero = parts[i:i + 3]
        if np.asarray(x).dtype != dtype:
            raise InputError(f"tensor {i // 3} is {np.asarray(x).dtype}, the first is {dtype}")
        sx, zx = scale_of(scale, f"scale {i // 3}"), zero_point_of(zero, dtype, f"zero point {i // 3}")
        same.append(x if (sx, zx) == (sy, zy) else quantized(dequantized(x, sx, zx), sy, zy, dtype))
    return concat(*same, axis=axis)
