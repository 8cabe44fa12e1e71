"""Mod: elementwise remainder with broadcasting.

fmod=0: A - floor(A / B) * B, the sign follows the divisor B (Python's %);
fmod=1: A - trunc(A / B) * B, the sign follows the dividend A (C's fmod).
https://onnx.ai/onnx/operators/onnx__Mod.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError
from onnxkit.ops.math._common import as_dtype, check_broadcast, working
from onnxkit.ops.registry import op


@op("Mod", 10, 13, 28)
def mod(A, B, *, fmod=0):
    if fmod not in (0, 1):
        raise AttributeValueError(f"Mod: attribute fmod must be 0 or 1, got {fmod}")
    fn = np.fmod if fmod else np.mod
    check_broadcast(A, B)
    return as_dtype(fn(working(A), working(B)), A.dtype)
