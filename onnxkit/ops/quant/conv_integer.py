"""ConvInteger: convolution of integer tensors with zero points, exact int32 output.

    y = conv(x - x_zero_point, w - w_zero_point)      (w_zero_point: scalar or per channel M)

Padding adds the zero point, i.e. zeros after the shift.
https://onnx.ai/onnx/operators/onnx__ConvInteger.html
"""

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.quant._int_conv import conv_nd, per_channel
from onnxkit.ops.registry import op


@op("ConvInteger", 10)
def conv_integer(x, w, x_zero_point=None, w_zero_point=None, *, auto_pad="NOTSET",
                 dilations=None, group=1, kernel_shape=None, pads=None, strides=None):
    return conv_nd(shift(x, x_zero_point), shift_weights(w, w_zero_point), group=group,
                   strides=strides, dilations=dilations, pads=pads, auto_pad=auto_pad,
                   kernel_shape=kernel_shape).astype(np.int32)


def shift(x, zero_point):
    """x - zero_point as int64 (the input's zero point is a scalar)."""
    x = x.astype(np.int64)
    if zero_point is None:
        return x
    if np.size(zero_point) != 1:
        raise InputError(f"x_zero_point must be a scalar, got shape {list(np.shape(zero_point))}")
    return x - np.asarray(zero_point).astype(np.int64).reshape(())


def shift_weights(w, zero_point):
    """w - zero_point, the zero point a scalar or one per output channel."""
    w = w.astype(np.int64)
    if zero_point is None:
        return w
    zp = per_channel(zero_point, w.shape[0], w.ndim + 1, "w_zero_point")
    return w - (zp if zp.ndim == 0 else zp[0]).astype(np.int64)
