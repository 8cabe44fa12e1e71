"""Split: cut a tensor into consecutive pieces along ``axis``.

    sizes = split (attribute up to v11, input from v13; Split-1 accepts either)
         or num_outputs parts of ceil(dim / num_outputs), the last one smaller (v18)
         or, with neither, as many equal parts as the node has outputs
    outputs[i] = data[..., offset_i : offset_i + sizes[i], ...]

https://onnx.ai/onnx/operators/onnx__Split.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axis


def split_into(data: np.ndarray, axis: int, sizes, n_outputs: int) -> tuple:
    axis = normalize_axis(axis, data.ndim)
    dim = data.shape[axis]
    if sizes is None:
        if n_outputs < 1 or dim % n_outputs:
            raise KernelInputError(f"Split: cannot split dimension {dim} (axis {axis}) into "
                                   f"{n_outputs} "
                                   f"equal parts")
        sizes = [dim // n_outputs] * n_outputs
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes) or sum(sizes) != dim:
        raise KernelInputError(f"Split: split sizes {sizes} must be >= 0 and add up to {dim} "
                               f"(axis {axis})")
    if len(sizes) != n_outputs:
        raise KernelInputError(f"Split: split sizes {sizes} give {len(sizes)} parts, the node has "
                               f"{n_outputs} outputs")
    return tuple(np.split(data, np.cumsum(sizes)[:-1], axis=axis))


@op("Split", 1, context=True)
def split_v1(data, split_input=None, *, axis=0, split=None, ctx):
    sizes = split if split_input is None else int_list(split_input)
    return split_into(data, axis, sizes, ctx.n_outputs)


@op("Split", 2, 11, context=True)
def split_v2(data, *, axis=0, split=None, ctx):
    return split_into(data, axis, split, ctx.n_outputs)


@op("Split", 13, context=True)
def split_v13(data, split=None, *, axis=0, ctx):
    return split_into(data, axis, None if split is None else int_list(split), ctx.n_outputs)


@op("Split", 18, context=True)
def split(data, split=None, *, axis=0, num_outputs=None, ctx):
    if split is not None and num_outputs is not None:
        raise AttributeValueError("Split: give either the 'split' input or the 'num_outputs' "
                                  "attribute, not both")
    if split is not None:
        return split_into(data, axis, int_list(split), ctx.n_outputs)
    if num_outputs is None:
        return split_into(data, axis, None, ctx.n_outputs)
    if num_outputs != ctx.n_outputs:  # checked first: it also bounds the list built below
        raise KernelInputError(f"Split: num_outputs={num_outputs}, but the node has "
                               f"{ctx.n_outputs} outputs")
    dim = data.shape[normalize_axis(axis, data.ndim)]
    chunk = -(-dim // num_outputs)
    sizes = [chunk] * (num_outputs - 1) + [dim - chunk * (num_outputs - 1)]
    if sizes[-1] < 0:
        raise KernelInputError(f"Split: cannot split dimension {dim} into {num_outputs} parts of "
                               f"ceil({dim}/{num_outputs}) = {chunk}")
    return split_into(data, axis, sizes, ctx.n_outputs)
