"""The reference's matrix products (MatMul, Gemm, Einsum, Conv, ConvTranspose, DeformConv)
multiply floats in float64 and round back to the input's type once.

float32 products of float32 values are exact in float64, and their sums there carry
about 1e-16 of relative error, so the float32 result is the correctly rounded one
whatever order a BLAS sums in: the same on every machine, thread count and BLAS kernel.
In float32 they were not: onnx's light model-zoo nets have equal logits near 1e19, where
a float32 unit in the last place is about 1e12; OpenBLAS summed some of the 1000 columns
in another order (16 threads on a Xeon, one thread with the AVX2 kernels on an EPYC) and
the softmax picked those columns. The cost: float64 products run at about half the speed.
"""

import ml_dtypes
import numpy as np

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
_NARROW_FLOATS = _HALF + (np.dtype(np.float32),)


def product_dtype(dtype) -> np.dtype:
    """float64 for float16, bfloat16 and float32; any other type is kept."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float64) if dtype in _NARROW_FLOATS else dtype


def widened(x: np.ndarray) -> np.ndarray:
    """``x`` in its product type (``product_dtype``)."""
    return x.astype(product_dtype(x.dtype), copy=False)
