"""Helpers shared by the normalization kernels: stash type and per-slice moments."""

from __future__ import annotations

import numpy as np
from onnx.helper import tensor_dtype_to_np_dtype

from onnxkit.errors import KernelError


def stash_dtype(stash_type: int, x_dtype) -> np.dtype:
    """The precision statistics are computed in (the ``stash_type`` attribute)."""
    try:
        dtype = np.dtype(tensor_dtype_to_np_dtype(int(stash_type)))
    except (KeyError, ValueError, TypeError):
        raise KernelError(f"stash_type {stash_type} is not a tensor element type") from None
    if dtype.kind != "f" or dtype.itemsize < 4:  # float16 / bfloat16 stash: widen
        return np.dtype(np.float32)
    return dtype


def moments(x: np.ndarray, axes: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population (biased) variance over ``axes``, kept as size-1 dimensions."""
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    return mean, (centered * centered).mean(axis=axes, keepdims=True)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise KernelError(f"{what} {axis} is out of range for a tensor of rank {rank}")
    return axis % rank


def check_unidirectional(x_shape, param, what: str) -> None:
    """A parameter may broadcast to X's shape but never enlarge it."""
    if param is None:
        return
    try:
        ok = np.broadcast_shapes(tuple(x_shape), param.shape) == tuple(x_shape)
    except ValueError:
        ok = False
    if not ok:
        raise KernelError(f"{what} of shape {list(param.shape)} does not broadcast to X's "
                          f"shape {list(x_shape)}")
