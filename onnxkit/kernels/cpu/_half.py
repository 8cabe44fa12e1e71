"""float16 <-> float32 on the ``cpu`` executor, bit by bit (Numba has no float16 type).

    widen:  float16 bits -> the float32 of the same value (exact: every float16 is a float32)
    narrow: float32 -> the nearest float16, ties to even; overflow to inf; NaN stays NaN

numpy's casts run element by element through a generic loop (a few ns each); these
loops work on the integer bits (``uint16`` / ``uint32`` views) and give numpy's answers
(``tests/test_cpu_half.py`` checks every float16 and the rounding edges). The
elements are shared among the threads (``run_split``) when there are many.

    widen(h):  sign | exponent rebased 15 -> 127 | mantissa << 13 (subnormals normalized)
    narrow(f): |f| >= 65536: inf (NaN: a quiet NaN);  |f| < 2^-14: rint(|f| * 2^24)
               else: (bits + rebase + 0xfff + lowest kept bit) >> 13
"""

from __future__ import annotations

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._threads import parts_of, run_split

HALF = np.dtype(np.float16)
FLOAT = np.dtype(np.float32)


def widen(h: np.ndarray) -> np.ndarray:
    """A float16 array as a new float32 array of the same shape (C order)."""
    out = empty(h.shape, FLOAT)
    n = h.size
    if n:
        src = np.ascontiguousarray(h).reshape(n).view(np.uint16)
        _split(_widen, n, src, out.reshape(n))
    return out


def narrow(f: np.ndarray) -> np.ndarray:
    """A float32 array rounded to a new float16 array of the same shape (C order)."""
    out = empty(f.shape, HALF)
    n = f.size
    if n:
        src = np.ascontiguousarray(f, dtype=FLOAT).reshape(n)
        _split(_narrow, n, src, out.reshape(n).view(np.int16))
    return out


def _split(kernel, n: int, src, dst) -> None:
    """``kernel(src, dst, lo, hi)`` over [0, n): shared among the threads when n is big.
    ``src`` goes as it comes (not ``read_only``: a view per call costs more than these
    loops on small tensors): read-only (initializers, widened once) or writable (values
    between nodes), two signatures, both compiled by the warm-up."""
    parts, per = parts_of(n, n)
    if parts == 1:
        kernel(src, dst, 0, n)
    else:
        run_split(kernel, n, parts, per, src, dst)


# The loops run over slices: indexed from 0, Numba knows the index is not negative and
# LLVM vectorizes them (``range(lo, hi)`` on the whole array did not; docs/cpu.md).
I32 = np.int32


@njit(cache=True, nogil=True)
def _widen(src, values, lo, hi):
    """Three vectorized passes: exponent and mantissa moved up, times 2^112 in float32
    (rebases the exponent and normalizes subnormals, as multiplying a float32 subnormal
    does), then inf / NaN's exponent and the sign."""
    s, v = src[lo:hi], values[lo:hi]
    b = v.view(np.uint32)
    for i in range(s.size):
        b[i] = (np.uint32(s[i]) & 0x7FFF) << 13
    for i in range(s.size):
        v[i] *= np.float32(5.192296858534828e33)  # 2^112
    for i in range(s.size):
        x = np.uint32(s[i])
        u = b[i] | 0x7F800000 if (x & 0x7C00) == 0x7C00 else b[i]
        b[i] = u | ((x & 0x8000) << 16)


@njit(cache=True, nogil=True)
def _narrow(values, dst, lo, hi):
    """One vectorized pass in int32 (AVX2 converts float32 to int32, not to uint32)."""
    v, d = values[lo:hi], dst[lo:hi]
    b = v.view(np.int32)
    for i in range(v.size):
        f = b[i]
        a = f & I32(0x7FFFFFFF)
        big = I32(0x7E00) if a > I32(0x7F800000) else I32(0x7C00)  # NaN: quiet; inf
        sub = I32(np.rint(min(abs(v[i]) * np.float32(16777216.0), np.float32(2048.0))))
        # exponent - 112, plus 0xfff and the lowest kept bit: rounds ties to even
        normal = (a - I32(0x37FFF001) + ((a >> I32(13)) & I32(1))) >> I32(13)
        o = big if a >= I32(0x47800000) else (sub if a < I32(0x38800000) else normal)
        d[i] = np.int16(o | ((f >> I32(16)) & I32(0x8000)))


def warm_up() -> None:
    """Compile both casts for what they meet: read-only arrays (initializers) and
    writable ones (values between nodes), called whole and split among the threads (the
    pool's hand-over compiles per argument types too)."""
    for a in (np.zeros(4, HALF), np.zeros(4, FLOAT)):
        fixed = np.frombuffer(a.tobytes(), a.dtype)  # read-only, as an initializer
        for x in (a, fixed):
            if x.dtype == HALF:
                kernel, src, dst = _widen, x.view(np.uint16), np.empty(4, FLOAT)
            else:
                kernel, src, dst = _narrow, x, np.empty(4, np.int16)
            kernel(src, dst, 0, 4)
            run_split(kernel, 4, 2, 2, src, dst)
