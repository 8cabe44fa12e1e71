"""Operators that change only a tensor's shape: no kernel, no copy, the data stays put.

    Reshape / Flatten / Squeeze / Unsqueeze: the same device buffer under a new shape
    Identity, Dropout (inference): the input itself (and an all-true mask if asked for)
    Shape: the dimensions, made on the host (they are metadata, never on the device)

Shape, axes and ratio inputs are read on the host (a counted copy if a node made them on
the device). The shape arithmetic is the reference kernels' own helpers.
https://onnx.ai/onnx/operators/onnx__Reshape.html
"""

import numpy as np

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import HostFallback, device, host
from onnxkit.kernels.cuda._elementwise import full
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list
from onnxkit.ops.tensor.flatten import flatten as flatten_ref
from onnxkit.ops.tensor.reshape import target_shape
from onnxkit.ops.tensor.squeeze import squeeze_axes, unsqueeze_axes


@op("Reshape", 5, 13, registry=CUDA)
def reshape_v5(data, shape):
    X = device(data, "data")
    return X.reshape(target_shape(X.shape, int_list(host(shape, "shape"))))


@op("Reshape", 14, 19, 21, 23, 24, 25, registry=CUDA)
def reshape(data, shape, *, allowzero=0):
    X = device(data, "data")
    return X.reshape(target_shape(X.shape, int_list(host(shape, "shape")), allowzero))


@op("Flatten", 1, 9, 11, 13, 21, 23, 24, 25, registry=CUDA)
def flatten(data, *, axis=1):
    return flatten_ref(device(data, "data"), axis=axis)


@op("Squeeze", 1, 11, registry=CUDA)
def squeeze_v1(data, *, axes=None):
    return squeeze_axes(device(data, "data"), axes)


@op("Squeeze", 13, 21, 23, 24, 25, registry=CUDA)
def squeeze(data, axes=None):
    axes = None if axes is None else int_list(host(axes, "axes"))
    return squeeze_axes(device(data, "data"), axes)


@op("Unsqueeze", 1, 11, registry=CUDA)
def unsqueeze_v1(data, *, axes):
    return unsqueeze_axes(device(data, "data"), axes)


@op("Unsqueeze", 13, 21, 23, 24, 25, registry=CUDA)
def unsqueeze(data, axes):
    return unsqueeze_axes(device(data, "data"), int_list(host(axes, "axes")))


@op("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25, registry=CUDA)
def identity(value):
    return value


@op("Shape", 1, 13, registry=CUDA)
def shape_v1(data):
    return np.array(data.shape, dtype=np.int64)


@op("Shape", 15, 19, 21, 23, 24, 25, registry=CUDA)
def shape(data, *, start=0, end=None):
    return np.array(data.shape[start:end], dtype=np.int64)


def _mask(ctx, shape, dtype):
    """Dropout's mask output, only when the node asks for it: all kept (true or one)."""
    if ctx.n_outputs < 2 or not ctx.node.output[1]:
        return None
    return full(shape, dtype, 1)


@op("Dropout", 7, context=True, registry=CUDA)
def dropout_7(data, *, ratio=0.5, ctx):
    X = device(data, "data")
    return X, _mask(ctx, X.shape, X.dtype)


@op("Dropout", 10, context=True, registry=CUDA)
def dropout_10(data, *, ratio=0.5, ctx):
    X = device(data, "data")
    return X, _mask(ctx, X.shape, np.bool_)


@op("Dropout", 12, 13, 22, context=True, registry=CUDA)
def dropout(data, ratio=None, training_mode=None, *, seed=None, ctx):
    """Inference only: training mode draws random numbers, which the host kernel does."""
    X = device(data, "data")
    training = training_mode is not None and bool(np.asarray(host(training_mode)).reshape(-1)[0])
    rate = 0.5 if ratio is None else float(np.asarray(host(ratio)).reshape(-1)[0])
    if training and rate != 0:
        raise HostFallback("Dropout in training mode runs on the host")
    return X, _mask(ctx, X.shape, np.bool_)
