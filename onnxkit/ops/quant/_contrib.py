"""Shared pieces of onnxruntime's ``com.microsoft`` quantized operators.

These operators are onnxruntime's, so onnxruntime's CPU kernels are their specification:
scales are float32 scalars, zero points 8-bit scalars (absent means 0), and the
requantization runs in float32 as theirs does,
``y = saturate(round_half_even(value_f32 / y_scale) + y_zero_point)``.
https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md
"""

from __future__ import annotations

import numpy as np

from onnxkit.errors import InputError
from onnxkit.ops.quant._quant import INT_RANGES

MS_DOMAIN = "com.microsoft"
EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))
F32 = np.float32


def eight_bit(x: np.ndarray, what: str) -> np.ndarray:
    """``x`` itself, after checking it is a uint8 or int8 tensor."""
    if np.asarray(x).dtype not in EIGHT_BIT:
        raise InputError(f"{what} must be uint8 or int8, got {np.asarray(x).dtype}")
    return x


def scale_of(value, what: str) -> np.float32:
    """A scale input: one float32 value (a scalar or a 1-element tensor)."""
    value = np.asarray(value)
    if value.size != 1:
        raise InputError(f"{what} must be a scalar (or hold one value); got shape "
                         f"{list(value.shape)}")
    return F32(value.reshape(()))


def zero_point_of(value, dtype: np.dtype, what: str) -> int:
    """A zero point input: one value of the tensor's type; absent means 0."""
    if value is None:
        return 0
    value = np.asarray(value)
    if value.size != 1:
        raise InputError(f"{what} must be a scalar (or hold one value); got shape "
                         f"{list(value.shape)}")
    if value.dtype != dtype:
        raise InputError(f"{what} is {value.dtype}, the tensor it describes is {dtype}")
    return int(value.reshape(()))


def dequantized(x: np.ndarray, scale: np.float32, zero_point: int) -> np.ndarray:
    """(x - zero_point) * scale in float32."""
    return (x.astype(np.int32) - np.int32(zero_point)).astype(F32) * scale


def saturated(q: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Rounded float values (zero point added) clipped to ``dtype``'s range."""
    low, high = INT_RANGES[np.dtype(dtype)]
    return np.clip(np.nan_to_num(q), low, high).astype(dtype)


def quantized(values: np.ndarray, scale: np.float32, zero_point: int,
              dtype: np.dtype) -> np.ndarray:
    """saturate(round(values / scale) + zero_point), in float32."""
    return saturated(np.rint(values.astype(F32) / scale) + F32(zero_point), dtype)
