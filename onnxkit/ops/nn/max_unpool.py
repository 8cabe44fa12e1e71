"""MaxUnpool: put each pooled value back where MaxPool found it, zeros elsewhere.

    inferred = (in - 1) * stride - pads_begin - pads_end + kernel      per spatial axis
    Z = zeros(inferred);  Z.flat[I[i]] = X.flat[i]
    Y = Z placed at the origin of zeros(output_shape)   (output_shape defaults to inferred)

As onnx's expected outputs do, indices address the inferred shape and a larger
output_shape (the size lost to floor division in MaxPool) is zero-filled at the end
(onnxruntime and PyTorch read the indices against output_shape instead).
https://onnx.ai/onnx/operators/onnx__MaxUnpool.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._windows import listed
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("MaxUnpool", 9, 11, 22)
def max_unpool(X, I, output_shape=None, *, kernel_shape, pads=None, strides=None):
    nd = len(kernel_shape)
    if nd != X.ndim - 2:
        raise KernelError(f"MaxUnpool: kernel_shape has {nd} values for an input of rank {X.ndim}")
    strides = listed(strides, nd, 1, "strides")
    pads = listed(pads, 2 * nd, 0, "pads")
    kernel = tuple(int(k) for k in kernel_shape)
    if any(k < 1 for k in kernel) or any(s < 1 for s in strides):
        raise KernelError(f"MaxUnpool: kernel_shape {list(kernel)} and strides {list(strides)} "
                          "must be positive")
    inferred = X.shape[:2] + tuple(
        (size - 1) * s - pads[i] - pads[nd + i] + k
        for i, (size, s, k) in enumerate(zip(X.shape[2:], strides, kernel))
    )
    if any(d < 0 for d in inferred):
        raise KernelError(f"MaxUnpool: the unpooled shape {list(inferred)} is negative")
    shape = inferred if output_shape is None else tuple(int(v) for v in output_shape)
    if len(shape) != X.ndim or any(o < i for o, i in zip(shape, inferred)):
        raise KernelError(f"MaxUnpool: output_shape {list(shape)} is smaller than the "
                          f"unpooled shape {list(inferred)}")
    check_allocation(inferred, X.dtype, "MaxUnpool unpooled tensor")
    check_allocation(shape, X.dtype, "MaxUnpool output")
    Z = np.zeros(int(np.prod(inferred)), dtype=X.dtype)
    flat = I.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= Z.size):
        raise KernelError(f"MaxUnpool: indices must lie in [0, {Z.size}) for the unpooled "
                          f"shape {list(inferred)}")
    Z[flat] = X.reshape(-1)
    if shape == inferred:
        return Z.reshape(shape)
    Y = np.zeros(shape, dtype=X.dtype)
    Y[tuple(slice(0, i) for i in inferred)] = Z.reshape(inferred)
    return Y
