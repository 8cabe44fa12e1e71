"""The generator every random kernel draws from (not an operator module)."""

import numpy as np

from onnxkit.core.values import np_dtype


def generator(seed: float | None) -> np.random.Generator:
    """A fresh generator: seeded with the bits of the float ``seed``, or from the OS when unset."""
    if seed is None:
        return np.random.default_rng()
    return np.random.default_rng(int(np.float64(seed).view(np.uint64)))


def output_dtype(dtype: int | None, like: np.ndarray | None = None) -> np.dtype:
    """The dtype attribute as a numpy dtype (``like``'s dtype when the attribute is unset)."""
    return like.dtype if dtype is None else np_dtype(dtype)
