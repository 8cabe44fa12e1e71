"""Between ONNX's [..., 1 | 2] real layout and numpy complex arrays (not an operator module).

The transforms run in the input's precision: complex128 for double, complex64 otherwise
(numpy's FFT keeps single precision, as other runtimes do).
"""

import numpy as np


def to_complex(x: np.ndarray) -> np.ndarray:
    """[..., 1] (real) or [..., 2] (real, imag) -> complex [...]."""
    ctype = np.complex128 if x.dtype == np.float64 else np.complex64
    real = x[..., 0].astype(ctype)
    return real if x.shape[-1] == 1 else real + 1j * x[..., 1].astype(ctype)


def from_complex(c: np.ndarray, dtype) -> np.ndarray:
    """complex [...] -> [..., 2] of ``dtype``."""
    return np.stack([c.real, c.imag], axis=-1).astype(dtype)
