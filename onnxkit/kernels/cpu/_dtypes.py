"""The dtypes the compiled (Numba) kernels take.

Only float32: each other dtype would compile a twin of every kernel, and no benchmark
model needs one. A kernel given another dtype hands the node to the reference kernels
(numpy-only fast paths, which compile nothing, may take more).
"""

from __future__ import annotations

import numpy as np

COMPILED = (np.dtype(np.float32),)
