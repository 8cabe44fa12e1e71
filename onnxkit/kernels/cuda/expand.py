"""Expand on the GPU: one thread per output element, reading X through broadcast strides.

    Y.shape = broadcast(X.shape, shape)        (numpy's rule: Y may be larger than shape)
    Y[i] = X[broadcast_offset(i, Y.shape, strides)],  stride 0 on the broadcast axes

The shape input is read on the host; the kernel is ``_elementwise.strided``.
https://onnx.ai/onnx/operators/onnx__Expand.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, device, host, need_dtype
from onnxkit.kernels.cuda._elementwise import strided
from onnxkit.kernels.indexing import broadcast_strides
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list
from onnxkit.runtime.limits import check_allocation


@op("Expand", 8, 13, registry=CUDA)
def expand(data, shape):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    target = int_list(host(shape, "shape"))
    try:
        out_shape = np.broadcast_shapes(X.shape, tuple(target))
    except ValueError:
        raise KernelInputError(f"Expand: cannot broadcast input {list(X.shape)} to shape {target}") from None
    check_allocation(out_shape, X.dtype, "Expand output")
    if out_shape == X.shape:
        return X  # nothing to broadcast: share the buffer
    return strided(X, out_shape, broadcast_strides(X.shape, out_shape))
