"""Which BLAS libraries the cpu products call, and their entry points.

    LIBRARY      oneMKL's libmkl_rt (the ``mkl`` wheel, set to run sequentially) where
                 installed, else numpy's bundled OpenBLAS
    CHOICES      the libraries ``_blas.matmul`` times against each other per product
                 shape: ("onemkl", "openblas") with both, else one
    DEFAULT      the index in ``CHOICES`` of the library that runs when nothing is timed:
                 by the processor's maker (``preferred``)
    AVAILABLE    False where no ``cblas_?gemm`` / ``?gemv`` was found (``matmul`` is then
                 ``np.matmul``)

The 64-bit-integer entry points are handed to LLVM by name (``onnxkit_sgemm`` for the
first library, ``onnxkit_sgemm2`` for the second, the same for ``dgemm``, ``sgemv`` and
``dgemv``), so the kernels that call them (``_blas.gemm_call``) stay cacheable; the
libraries' names are part of the kernel cache's (``onnxkit.kernels.cpu.cache_dir``).
``ONNXKIT_BLAS=mkl`` or ``=openblas`` keeps one library only. numpy's own pool and its
``_SET`` / ``_GET`` come from ``onnxkit.runtime.blas_threads``.
"""

from __future__ import annotations

import ctypes
import glob
import os
import sys

import numpy as np

from onnxkit.runtime.blas_threads import GET as _GET, LIBRARY as _NUMPY, LIBRARY_NAME as _NUMPY_NAME
from onnxkit.runtime.blas_threads import SET as _SET, entry_point

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
MKL_SEQUENTIAL = 1  # MKL_Set_Threading_Layer's MKL_THREADING_SEQUENTIAL


def _wanted() -> str:
    """``ONNXKIT_BLAS``: "openblas" or "mkl" for that library alone; anything else both."""
    return os.environ.get("ONNXKIT_BLAS", "").strip().lower()


def _mkl():
    """oneMKL's single dynamic library (the ``mkl`` wheel) set to run sequentially, and its
    file name; (None, "") where it is missing, refused (``ONNXKIT_BLAS=openblas``) or already
    set up by someone else to run threaded."""
    if _wanted() == "openblas":
        return None, ""
    for path in sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        layer = getattr(lib, "MKL_Set_Threading_Layer", None)
        if layer is None:
            continue
        layer.argtypes, layer.restype = [ctypes.c_int], ctypes.c_int
        if layer(MKL_SEQUENTIAL) == MKL_SEQUENTIAL:
            _load_kernels(lib)
            return lib, os.path.basename(path)
    return None, ""


def _load_kernels(lib) -> None:
    """One small product of each type: oneMKL loads its kernels for this CPU (libmkl_core,
    libmkl_avx512 ..., ~18 MiB resident) on its first products; done here, with the
    library, not in a session's first run."""
    for name, ctype, dtype in (("cblas_sgemm", ctypes.c_float, np.float32),
                               ("cblas_dgemm", ctypes.c_double, np.float64)):
        n = 8
        a, c = np.ones((n, n), dtype), np.empty((n, n), dtype)
        getattr(lib, name)(ROW_MAJOR, NO_TRANS, NO_TRANS, n, n, n, ctype(1),
                           ctypes.c_void_p(a.ctypes.data), n, ctypes.c_void_p(a.ctypes.data),
                           n, ctype(0), ctypes.c_void_p(c.ctypes.data), n)


_MKL, _MKL_NAME = _mkl()
_LIB, LIBRARY = (_MKL, _MKL_NAME) if _MKL is not None else (_NUMPY, _NUMPY_NAME)
_SGEMM_NAMES = ("cblas_sgemm_64", "scipy_cblas_sgemm64_", "cblas_sgemm64_", "scipy_cblas_sgemm",
                "cblas_sgemm")
_DGEMM_NAMES = tuple(name.replace("sgemm", "dgemm") for name in _SGEMM_NAMES)
_S_NAME, _SGEMM = entry_point(_LIB, _SGEMM_NAMES)
_D_NAME, _DGEMM = entry_point(_LIB, _DGEMM_NAMES)


def _gemv(lib, gemm_names):
    """The ?gemv entry points of ``lib`` named like its ?gemm ones (None where missing):
    a product of one row runs as a matrix-vector product (``gemv_call``), the libraries'
    sgemm of one row ran 2.5x (oneMKL) to 10x (OpenBLAS) slower than their sgemv here."""
    return (getattr(lib, name.replace("gemm", "gemv"), None) if name else None
            for name in gemm_names)


_SGEMV, _DGEMV = _gemv(_LIB, (_S_NAME, _D_NAME))
# the second library: numpy's OpenBLAS beside oneMKL, timed against it per product shape
_ALT = _NUMPY if _MKL is not None and _wanted() != "mkl" else None
_S2_NAME, _SGEMM2 = entry_point(_ALT, _SGEMM_NAMES)
_D2_NAME, _DGEMM2 = entry_point(_ALT, _DGEMM_NAMES)
_SGEMV2, _DGEMV2 = _gemv(_ALT, (_S2_NAME, _D2_NAME))
AVAILABLE = None not in (_SGEMM, _DGEMM, _SGEMV, _DGEMV, _SET, _GET)
ILP64 = bool(_S_NAME) and _S_NAME.endswith(("64_", "_64"))
_ALT_OK = (None not in (_SGEMM2, _DGEMM2, _SGEMV2, _DGEMV2)
           and _S2_NAME.endswith(("64_", "_64")) == ILP64 == _D2_NAME.endswith(("64_", "_64")))
#: the libraries ``matmul`` chooses between (index 0 the default): "onemkl", "openblas"
CHOICES = (("onemkl",) if _MKL is not None else ("openblas",)) + (("openblas",) if _ALT_OK else ())
LIBRARIES = (LIBRARY,) + ((_NUMPY_NAME,) if _ALT_OK else ())


def cpu_vendor() -> str:
    """The processor's maker as the kernel names it ("GenuineIntel", "AuthenticAMD"), or ""."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def preferred(vendor: str) -> str:
    """The library a product runs on by default, a static rule: oneMKL's kernels on AMD
    processors ran the narrow products of convolutions slower than OpenBLAS (measured in
    docs/cpu.md, "oneMKL or OpenBLAS"), so OpenBLAS there and oneMKL elsewhere."""
    return "openblas" if vendor == "AuthenticAMD" else "onemkl"


DEFAULT = CHOICES.index(preferred(cpu_vendor())) if preferred(cpu_vendor()) in CHOICES else 0

if AVAILABLE:
    import llvmlite.binding as llvm

    for symbol, fn in (("onnxkit_sgemm", _SGEMM), ("onnxkit_dgemm", _DGEMM),
                       ("onnxkit_sgemm2", _SGEMM2 if _ALT_OK else _SGEMM),
                       ("onnxkit_dgemm2", _DGEMM2 if _ALT_OK else _DGEMM),
                       ("onnxkit_sgemv", _SGEMV), ("onnxkit_dgemv", _DGEMV),
                       ("onnxkit_sgemv2", _SGEMV2 if _ALT_OK else _SGEMV),
                       ("onnxkit_dgemv2", _DGEMV2 if _ALT_OK else _DGEMV)):
        llvm.add_symbol(symbol, ctypes.cast(fn, ctypes.c_void_p).value)
