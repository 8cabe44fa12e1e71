"""16-bit floats are multiplied in float32 and rounded back once, like accumulating GEMMs do."""

import ml_dtypes
import numpy as np

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def widened(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype in _HALF else x
