"""BitCast: reinterpret each element's bits (little endian) as the type ``to`` names.

    requires bit_width(T1) == bit_width(T2); Y has X's shape; strings are refused

Sub-byte types (int4, uint4, float4e2m1, int2, uint2) are stored one per byte by
ml_dtypes, so their bits are masked out of the byte and rebuilt in the target type.
https://onnx.ai/onnx/operators/onnx__BitCast.html
"""

import ml_dtypes
import numpy as np

from onnxkit.errors import AttributeMismatchError, KernelError
from onnxkit.ops.cast._convert import target_dtype
from onnxkit.ops.registry import op

_SUB_BYTE_BITS = {
    np.dtype(ml_dtypes.int4): 4, np.dtype(ml_dtypes.uint4): 4,
    np.dtype(ml_dtypes.float4_e2m1fn): 4,
    np.dtype(ml_dtypes.int2): 2, np.dtype(ml_dtypes.uint2): 2,
}


def _bit_width(dtype: np.dtype) -> int:
    return _SUB_BYTE_BITS.get(dtype, 8 * dtype.itemsize)


@op("BitCast", 26)
def bitcast(input, *, to):
    dtype = target_dtype(to, "BitCast")
    if dtype == object or input.dtype == object:
        raise AttributeMismatchError("BitCast: strings have no fixed bit width; use Cast")
    if _bit_width(dtype) != _bit_width(input.dtype):
        raise KernelError(
            f"BitCast: input type {input.dtype} has {_bit_width(input.dtype)} bits, target "
            f"{dtype} has {_bit_width(dtype)}; BitCast needs equal bit widths"
        )
    if dtype not in _SUB_BYTE_BITS:
        little = input.astype(input.dtype.newbyteorder("<"), copy=False)
        return np.array(little, order="C").view(dtype.newbyteorder("<")).astype(dtype, copy=False)
    bits = _SUB_BYTE_BITS[dtype]
    raw = np.array(input, order="C").view(np.uint8) & np.uint8((1 << bits) - 1)
    if dtype.kind == "V" and dtype == np.dtype(ml_dtypes.float4_e2m1fn):
        return raw.view(dtype)
    if dtype in (np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.int2)):
        signed = raw.astype(np.int8)
        signed[signed >= 1 << (bits - 1)] -= 1 << bits
        return signed.astype(dtype)
    return raw.astype(dtype)
