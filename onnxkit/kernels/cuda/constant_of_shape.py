"""ConstantOfShape on the GPU: a tensor of the given shape, filled on the device.

Its only input is a shape (host data), yet its output is data for the GPU, so it is one
of the executor's ``DEVICE_SOURCES``: it runs here even though no input is on the
device, instead of being made on the host and copied up on every run.
https://onnx.ai/onnx/operators/onnx__ConstantOfShape.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, HostFallback, host
from onnxkit.kernels.cuda._elementwise import full
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list
from onnxkit.runtime.limits import check_allocation


@op("ConstantOfShape", 9, 20, 21, 23, 24, 25, registry=CUDA)
def constant_of_shape(input_shape, *, value=None):
    if value is None:
        value = np.zeros(1, dtype=np.float32)
    if value.size != 1:
        raise KernelInputError(f"ConstantOfShape: 'value' must hold one element, got shape "
                               f"{list(value.shape)}")
    if value.dtype not in DEVICE_DTYPES:
        raise HostFallback(f"value is {value.dtype}, a dtype the device does not hold")
    shape = int_list(host(input_shape, "input"))
    if any(d < 0 for d in shape):
        raise KernelInputError(f"ConstantOfShape: shape {shape} has a negative dimension")
    check_allocation(shape, value.dtype, "ConstantOfShape output")
    return full(shape, value.dtype, value.reshape(-1)[0])
