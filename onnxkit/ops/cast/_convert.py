"""The conversion rules Cast and CastLike share.

    cast_array(x, to):
        string   -> number : parse ("1e-5", "INF", "-inf", "NaN"; ints may be written "100.5")
        number   -> string : shortest round-trip text ("NaN", "INF", "-INF"; bool "1"/"0")
        number   -> float8 : saturate=1 clips to [-max, max] first (NaN stays NaN), then RNE
        number   -> e8m0   : keep the float32 exponent, rounded by ``round_mode``
        otherwise          : numpy / ml_dtypes ``astype`` (integers wrap, floats round to nearest even)

https://onnx.ai/onnx/operators/onnx__Cast.html
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from onnx import TensorProto

from onnxkit.errors import AttributeMismatchError
from onnxkit.core.values import np_dtype

FLOAT8_SATURATING = {
    np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e4m3fnuz),
    np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e5m2fnuz),
}
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)
SMALL_INTS = {np.dtype(t) for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2)}
ROUND_MODES = ("up", "down", "nearest")


def target_dtype(to: int, what: str = "Cast") -> np.dtype:
    """The numpy dtype of the TensorProto element type ``to``."""
    if to in (TensorProto.UNDEFINED,) or to not in TensorProto.DataType.values():
        raise AttributeMismatchError(f"{what}: 'to'={to} is not an ONNX tensor element type")
    try:
        return np_dtype(to)
    except (KeyError, ValueError, TypeError) as exc:
        raise AttributeMismatchError(
            f"{what}: element type {TensorProto.DataType.Name(to)} has no numpy dtype here"
        ) from exc


def cast_array(x: np.ndarray, dtype: np.dtype, saturate: int = 1, round_mode: str = "up") -> np.ndarray:
    """``x`` converted to ``dtype`` by the rules of Cast."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x.copy()
    if dtype == object:
        return _to_string(x)
    if x.dtype == object or x.dtype.kind in "US":
        x = _from_string(x, dtype)
        if x.dtype == dtype:
            return x
    x = _widen(x)
    if dtype == E8M0:
        return to_e8m0(x, saturate, round_mode)
    if dtype in FLOAT8_SATURATING:
        if x.dtype.kind != "f":
            x = x.astype(np.float64)
        if saturate:
            limit = float(ml_dtypes.finfo(dtype).max)
            x = np.clip(x, -limit, limit)  # NaN passes through clip unchanged
        return x.astype(dtype)
    if dtype.kind == "b" and x.dtype.kind not in "biu":
        return x != 0  # NaN -> True, like C
    return x.astype(dtype)


def _widen(x: np.ndarray) -> np.ndarray:
    """ml_dtypes storage types -> a plain numpy type that holds every value exactly."""
    if x.dtype in SMALL_INTS:
        return x.astype(np.int8)
    if x.dtype.kind == "V":  # bfloat16, float8, float6, float4 all fit in float32
        return x.astype(np.float32)
    return x


def to_e8m0(x: np.ndarray, saturate: int, round_mode: str) -> np.ndarray:
    """float -> float8e8m0 (a bare power of two, 2**(code-127); code 255 is NaN).

        code = float32 exponent field; up: +1 if any fraction bit, nearest: +1 if fraction >= 1/2
        saturate: overflow and Inf -> 254, tiny -> 0;  otherwise both -> NaN (255)
    """
    if round_mode not in ROUND_MODES:
        raise AttributeMismatchError(f"Cast: round_mode={round_mode!r}; expected one of {ROUND_MODES}")
    bits = np.array(x, dtype=np.float32, order="C").view(np.uint32)
    code = ((bits >> 23) & 0xFF).astype(np.int32)
    fraction = bits & 0x7FFFFF
    is_nan = (code == 255) & (fraction != 0)
    is_inf = (code == 255) & (fraction == 0)
    if round_mode == "up":
        code = code + (fraction != 0)
    elif round_mode == "nearest":
        code = code + (fraction >= 0x400000)
    overflow = (code > 254) | is_inf
    if saturate:
        code = np.where(overflow, 254, code)
    else:
        too_small = (code == 0) & (fraction < 0x400000)  # below 2**-127
        code = np.where(overflow | too_small, 255, code)
    code = np.where(is_nan, 255, code)
    return code.astype(np.uint8).view(E8M0)


_SPECIAL_TEXT = {"inf": np.inf, "+inf": np.inf, "-inf": -np.inf, "nan": np.nan,
                 "+nan": np.nan, "-nan": np.nan}


def _parse_float(text: str) -> float:
    text = text.strip()
    special = _SPECIAL_TEXT.get(text.lower())
    return special if special is not None else float(text)


def _parse_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        return int(_parse_float(text))  # "100.5" -> 100 (the spec leaves it undefined)


def _wrap(value: int, dtype: np.dtype) -> int:
    """Keep the low bits, two's complement for signed types (200 -> -56 for int8)."""
    bits = 8 * dtype.itemsize
    value &= (1 << bits) - 1
    if dtype.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    return _parse_float(text) != 0


def _from_string(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Parse each string; integers parse exactly, everything else goes through float64."""
    items = [v.decode() if isinstance(v, bytes) else str(v) for v in x.reshape(-1)]
    if dtype.kind == "b":
        return np.array([_parse_bool(v) for v in items], dtype=bool).reshape(x.shape)
    if dtype.kind in "iu":
        return np.array([_wrap(_parse_int(v), dtype) for v in items], dtype=dtype).reshape(x.shape)
    return np.array([_parse_float(v) for v in items], dtype=np.float64).reshape(x.shape)


def _to_string(x: np.ndarray) -> np.ndarray:
    if x.dtype == object:
        return x.copy()
    x = _widen(x)
    out = np.empty(x.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(x.reshape(-1)):
        flat[i] = _format(v)
    return out


def _format(v) -> str:
    if isinstance(v, np.bool_):
        return "1" if v else "0"
    if isinstance(v, np.floating):
        if np.isnan(v):
            return "NaN"
        if np.isinf(v):
            return "INF" if v > 0 else "-INF"
        text = str(v)
        return text[:-2] if text.endswith(".0") else text
    return str(v)
