"""Small helpers the tensor kernels share: axis normalisation and int lists from tensors."""

from __future__ import annotations

import numpy as np

from onnxkit.errors import KernelInputError


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map ``axis`` in [-rank, rank-1] to [0, rank-1]; anything else is an error."""
    if not -rank <= axis < rank:
        raise KernelInputError(f"{what} {axis} is out of range for a tensor of rank {rank} "
                               f"(accepted: [{-rank}, {rank - 1}])")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes, rank: int, what: str = "axes") -> list[int]:
    """Normalise every axis; repeated axes are an error."""
    result = [normalize_axis(int(a), rank, what) for a in axes]
    if len(set(result)) != len(result):
        raise KernelInputError(f"{what} {list(map(int, axes))} repeat an axis")
    return result


def int_list(tensor) -> list[int]:
    """A 1-D (or scalar) integer tensor as a list of Python ints."""
    return [int(v) for v in np.asarray(tensor).reshape(-1).tolist()]


def scalar_int(tensor, what: str) -> int:
    """The single value of a scalar or one-element tensor, as an int."""
    flat = np.asarray(tensor).reshape(-1)
    if flat.size != 1:
        raise KernelInputError(f"{what} must hold exactly one value, got shape "
                               f"{list(np.shape(tensor))}")
    return int(flat[0])
