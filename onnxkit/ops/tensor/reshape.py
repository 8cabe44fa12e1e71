"""Reshape: same data, new shape; -1 is inferred, 0 copies the input's dimension.

    Reshape-1 takes the shape as an attribute; from Reshape-5 it is an input.
    allowzero=1 (Reshape-14+) keeps 0 as a real zero-length dimension.

https://onnx.ai/onnx/operators/onnx__Reshape.html
"""

import math

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list


def target_shape(in_shape: tuple, shape: list[int], allowzero: int = 0) -> tuple:
    """Resolve 0 and -1 in ``shape`` against ``in_shape`` (same element count)."""
    dims = list(shape)
    if allowzero and 0 in dims and -1 in dims:
        raise KernelInputError(f"Reshape: shape {shape} has both 0 and -1, which allowzero=1 "
                               "forbids")
    for i, d in enumerate(dims):
        if d == 0 and not allowzero:
            if i >= len(in_shape):
                raise KernelInputError(f"Reshape: shape {shape}: 0 at position {i} copies a "
                                       "dimension the "
                                       f"input {list(in_shape)} does not have")
            dims[i] = in_shape[i]
        elif d < -1:
            raise KernelInputError(f"Reshape: shape {shape} has a negative dimension other than -1")
    total = math.prod(in_shape)
    if dims.count(-1) > 1:
        raise KernelInputError(f"Reshape: shape {shape} has more than one -1")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or total % known:
            raise KernelInputError(f"Reshape: cannot infer the -1 of shape {shape} for input "
                                   f"{list(in_shape)}")
        dims[dims.index(-1)] = total // known
    if math.prod(dims) != total:
        raise KernelInputError(f"Reshape: cannot reshape {list(in_shape)} ({total} elements) to "
                               f"{shape}")
    return tuple(dims)


@op("Reshape", 1)
def reshape_v1(data, *, shape=None, consumed_inputs=None):
    if shape is None:
        raise AttributeValueError("Reshape-1 needs the 'shape' attribute")
    return data.reshape(target_shape(data.shape, shape))


@op("Reshape", 5, 13)
def reshape_v5(data, shape):
    return data.reshape(target_shape(data.shape, int_list(shape)))


@op("Reshape", 14, 19, 21, 23, 24, 25)
def reshape(data, shape, *, allowzero=0):
    return data.reshape(target_shape(data.shape, int_list(shape), allowzero))
