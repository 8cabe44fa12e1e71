"""Shared pieces of linear (de)quantization: target types, ranges, scale broadcasting."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from onnxkit.errors import AttributeMismatchError, InputError
from onnxkit.core.values import np_dtype

# integer targets and their saturation ranges
INT_RANGES = {
    np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127),
    np.dtype(np.uint16): (0, 65535), np.dtype(np.int16): (-32768, 32767),
    np.dtype(ml_dtypes.uint4): (0, 15), np.dtype(ml_dtypes.int4): (-8, 7),
    np.dtype(ml_dtypes.uint2): (0, 3), np.dtype(ml_dtypes.int2): (-2, 1),
}
FLOAT8 = {np.dtype(t) for t in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
                                ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz)}
SMALL_FLOATS = {np.dtype(t) for t in (ml_dtypes.float4_e2m1fn, ml_dtypes.float6_e2m3fn,
                                      ml_dtypes.float6_e3m2fn)}


def dtype_of_attribute(value: int, name: str) -> np.dtype:
    try:
        return np_dtype(value)
    except (KeyError, ValueError, TypeError):
        raise AttributeMismatchError(
            f"{name}={value} is not a TensorProto data type") from None


def target_dtype(zero_point, output_dtype: int) -> np.dtype:
    """The quantized type: the zero point's, else ``output_dtype``, else uint8."""
    wanted = dtype_of_attribute(output_dtype, "output_dtype") if output_dtype else None
    if zero_point is not None:
        if wanted is not None and wanted != zero_point.dtype:
            raise AttributeMismatchError(
                f"output_dtype={TensorProto.DataType.Name(output_dtype)} but the zero point "
                f"is {zero_point.dtype}; they must agree")
        wanted = zero_point.dtype
    wanted = np.dtype(np.uint8) if wanted is None else wanted
    if wanted not in INT_RANGES and wanted not in FLOAT8 and wanted not in SMALL_FLOATS:
        raise AttributeMismatchError(f"{wanted} is not a quantized type")
    return wanted


def broadcast_param(param: np.ndarray, shape: tuple, axis: int, block_size: int,
                    what: str) -> np.ndarray:
    """Scale / zero point -> an array broadcastable to ``shape``.

    scalar (or one element): per tensor;  1-D: per ``axis``;
    same rank as the input with block_size > 0: each entry covers ``block_size``
    consecutive elements along ``axis``.
    """
    param = np.asarray(param)
    rank = len(shape)
    if param.size == 1 and not block_size:
        return param.reshape(())
    if rank == 0:
        raise InputError(f"{what} of shape {list(param.shape)} for a scalar input")
    if not -rank <= axis < rank:
        raise AttributeMismatchError(f"axis={axis} is out of range for rank {rank}")
    axis %= rank
    if not block_size:
        if param.ndim != 1 or param.shape[0] != shape[axis]:
            raise InputError(f"{what} of shape {list(param.shape)} does not fit per-axis "
                             f"quantization along axis {axis} of shape {list(shape)}")
        dims = [1] * rank
        dims[axis] = shape[axis]
        return param.reshape(dims)
    if block_size < 0:
        raise AttributeMismatchError(f"block_size={block_size} must be positive")
    expected = list(shape)
    expected[axis] = -(-shape[axis] // block_size)
    if list(param.shape) != expected:
        raise InputError(f"{what} of shape {list(param.shape)} does not fit blocked "
                         f"quantization (block_size={block_size}, axis={axis}) of an input "
                         f"of shape {list(shape)}: expected {expected}")
    return param.take(np.arange(shape[axis]) // block_size, axis=axis)


def saturate_integer(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    low, high = INT_RANGES[dtype]
    return np.clip(values, low, high).astype(np.int64).astype(dtype)


def to_small_float(values: np.ndarray, dtype: np.dtype, saturate: bool) -> np.ndarray:
    """float -> float8 / float6 / float4, optionally saturating to the largest finite value."""
    values = np.asarray(values, dtype=np.float32)
    if saturate or dtype in SMALL_FLOATS:  # float4/float6 have no inf/NaN: always saturate
        top = float(ml_dtypes.finfo(dtype).max)
        values = np.where(np.isnan(values), values, np.clip(values, -top, top))
    return values.astype(dtype)
