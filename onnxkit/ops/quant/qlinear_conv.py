"""QLinearConv: convolution of quantized tensors, requantized to y's type.

    acc = conv(x - x_zero_point, w - w_zero_point) + B               exact (B is int32)
    y = saturate(round(acc * (x_scale * w_scale / y_scale)) + y_zero_point)

w_scale and w_zero_point are scalars or one value per output channel; round is half
to even. https://onnx.ai/onnx/operators/onnx__QLinearConv.html
"""

import numpy as np

from onnxkit.ops.quant._int_conv import conv_nd, per_channel
from onnxkit.ops.quant._quant import INT_RANGES
from onnxkit.ops.quant.conv_integer import shift, shift_weights
from onnxkit.ops.registry import op


@op("QLinearConv", 10)
def qlinear_conv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point,
                 B=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
                 pads=None, strides=None):
    acc = conv_nd(shift(x, x_zero_point), shift_weights(w, w_zero_point), group=group,
                  strides=strides, dilations=dilations, pads=pads, auto_pad=auto_pad,
                  kernel_shape=kernel_shape)
    if B is not None:
        acc = acc + per_channel(B, w.shape[0], acc.ndim, "B").astype(np.float64)
    w_scale = per_channel(w_scale, w.shape[0], acc.ndim, "w_scale")
    multiplier = (np.asarray(x_scale).reshape(()) * w_scale
                  / np.asarray(y_scale).reshape(())).astype(np.float64)
    out_dtype = y_zero_point.dtype if y_zero_point is not None else x.dtype
    y = np.rint(acc * multiplier)
    if y_zero_point is not None:
        y = y + np.asarray(y_zero_point).astype(np.float64).reshape(())
    low, high = INT_RANGES[np.dtype(out_dtype)]
    return np.clip(y, low, high).astype(out_dtype)
