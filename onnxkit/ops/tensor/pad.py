"""Pad: add (or, with negative counts, remove) elements at both ends of each axis.

    pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]  over ``axes`` (all by default)
    negative pads crop first; then the positive pads are filled by ``mode``:
        constant: constant_value (0, "" or False by default)
        reflect:  mirror without repeating the edge    edge: repeat the edge
        wrap:     wrap around (Pad-19+)
Pad-1 (``paddings``) and Pad-2 take pads and the value as attributes; from Pad-11 they
are inputs, and from Pad-18 ``axes`` may select the padded axes.

https://onnx.ai/onnx/operators/onnx__Pad.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axes
from onnxkit.core.limits import check_allocation


def pad_tensor(data: np.ndarray, pads: list[int], mode: str, value, axes=None,
               modes=("constant", "reflect", "edge")) -> np.ndarray:
    if mode not in modes:
        raise AttributeValueError(f"Pad: unsupported pad mode {mode!r} (accepted: "
                                  f"{', '.join(modes)})")
    axes = list(range(data.ndim)) if axes is None else normalize_axes(axes, data.ndim)
    if len(pads) != 2 * len(axes):
        raise KernelInputError(f"Pad: pads {pads} must hold 2 values per padded axis ({len(axes)} "
                               "axes)")
    width = [[0, 0] for _ in range(data.ndim)]
    for i, axis in enumerate(axes):
        width[axis] = [pads[i], pads[i + len(axes)]]
    crop = tuple(slice(max(-b, 0), data.shape[a] - max(-e, 0)) for a, (b, e) in enumerate(width))
    data = data[crop]
    width = [(max(b, 0), max(e, 0)) for b, e in width]
    out_shape = [d + b + e for d, (b, e) in zip(data.shape, width)]
    check_allocation(out_shape, data.dtype, "Pad output")
    if mode == "constant":
        out = np.full(out_shape, _fill_value(value, data.dtype), dtype=data.dtype)
        out[tuple(slice(b, b + d) for d, (b, _) in zip(data.shape, width))] = data
        return out
    if data.size == 0 and any(b or e for b, e in width):
        raise KernelInputError(f"Pad: cannot pad an empty tensor in {mode!r} mode")
    if mode == "reflect":
        for axis, (b, e) in enumerate(width):
            if (b or e) and data.shape[axis] < 2:
                raise KernelInputError("Pad: reflect padding needs at least 2 elements on axis "
                                       f"{axis}")
    return np.pad(data, width, mode=mode)


def _fill_value(value, dtype):
    if value is not None:
        value = np.asarray(value).reshape(-1)
        if value.size != 1:
            raise KernelInputError(f"Pad: constant_value must be a scalar, got {value.size} values")
        return value[0]
    if dtype == object:
        return ""
    return np.zeros((), dtype=dtype)


@op("Pad", 1)
def pad_v1(data, *, paddings, mode="constant", value=0.0):
    return pad_tensor(data, paddings, mode, value)


@op("Pad", 2)
def pad_v2(data, *, pads, mode="constant", value=0.0):
    return pad_tensor(data, pads, mode, value)


@op("Pad", 11, 13)
def pad_v11(data, pads, constant_value=None, *, mode="constant"):
    return pad_tensor(data, int_list(pads), mode, constant_value)


@op("Pad", 18)
def pad_v18(data, pads, constant_value=None, axes=None, *, mode="constant"):
    return pad_tensor(data, int_list(pads), mode, constant_value,
                      None if axes is None else int_list(axes))


@op("Pad", 19, 21, 23, 24, 25)
def pad(data, pads, constant_value=None, axes=None, *, mode="constant"):
    return pad_tensor(data, int_list(pads), mode, constant_value,
                      None if axes is None else int_list(axes),
                      modes=("constant", "reflect", "edge", "wrap"))
