"""A fix to numba-cuda's CUDA simulator that the cuda kernels' tests depend on.

The simulator runs every thread of a block as a Python thread and makes a block's
``cuda.shared.array`` on the first call from each source line: it looks the line up in a
dict and, if absent, makes the array and stores it, with no lock (numba-cuda 0.30.4,
``simulator/kernelapi.FakeCUDAShared.array``). When the interpreter switches threads
between the look-up and the store, two threads of the launch's first block each make an
array and that block's "shared" memory is split: its reductions and tiles come out wrong.
CI saw it once in test_attention_3d (one score row of block 0 wrong, 8 of 192 values).
``install()`` replaces that method with one that makes the array under a lock, keyed the
same way (the calling file and line); dynamic shared memory (size 0) is left to numba.
"""

from __future__ import annotations

import sys
import threading

_LOCK = threading.Lock()
_installed = False


def _locked_array(original):
    import numpy as np
    from numba import types
    from numba.np import numpy_support

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with _LOCK:
            made = self._allocations.get(key)
            if made is None:
                made = self._allocations[key] = np.empty(shape, dtype)
        return made

    array.__doc__ = "cuda.shared.array under a lock (see onnxkit.kernels.cuda._simulator)"
    return array


def install() -> bool:
    """Patch the simulator's shared arrays once; False when numba's class is not the one
    this fix knows (no ``_allocations`` dict: then it is left alone)."""
    global _installed
    if _installed:
        return True
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    if not isinstance(getattr(FakeCUDAShared(0), "_allocations", None), dict):
        return False
    FakeCUDAShared.array = _locked_array(FakeCUDAShared.array)
    _installed = True
    return True
