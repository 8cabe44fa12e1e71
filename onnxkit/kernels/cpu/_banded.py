"""Convolution by row bands: im2col, product and epilogue of a few output rows at a time.

    for each band of output rows [r0, r1)            (the bands shared among the threads)
        cols  = im2col of the band                   (K x (r1 - r0) * OW, in this thread's
                                                      scratch: ~512 KiB, it stays in L2)
        Y[:, band] = W (M x K) @ cols                (one single-threaded BLAS call)
        Y[:, band] = activation(Y[:, band] + bias + Z[:, band])   (still in cache)

The whole-image path (``conv._gemm_conv``) writes all of ``cols`` first (the 7x7 stem
of a ResNet: 147 x 12544 values, 7.4 MB), reads it back for the product and reads the
product again for the epilogue: three trips through memory, each from a cold cache
in a real network. By bands, the columns are read back from L2 right after they are
written, and the epilogue runs on the part of Y the product just wrote. (Measurements:
``docs/cpu.md``, "Stems by row bands".)

Each band's product re-packs W, so the bands are for layers whose weights are small
(``eligible``: the stems, the stride-2 layers of few channels); a 512-channel layer
keeps the whole-image product. The host side (scratch, phases, one call per image) is
``conv._by_bands``.
"""

from __future__ import annotations

from numba import njit

from onnxkit.kernels.cpu._blas import AVAILABLE, NO_TRANS, gemm_call
from onnxkit.kernels.cpu._im2col import im2col_rows
from onnxkit.kernels.cpu._math import finish
from onnxkit.kernels.cpu._threads import parts_of, run_split, threads

BAND_COLUMNS = 1024  # output pixels per band, about: narrower bands run slower products
MAX_BAND_BYTES = 1 << 20  # of im2col columns per band, at most
MAX_WEIGHTS = 1 << 16  # values of W (M x K): re-packed by every band's product
MIN_COLUMNS = 1 << 18  # values of the whole im2col below which one product is as good


def eligible(m: int, k: int, pixels: int, group: int, itemsize: int) -> bool:
    """Whether a layer (M outputs, K = C*KH*KW, ``pixels`` output pixels) runs by bands."""
    return (AVAILABLE and group == 1 and m * k <= MAX_WEIGHTS and k * pixels >= MIN_COLUMNS
            and itemsize in (4, 8))


def band_rows(k: int, oh: int, ow: int, itemsize: int) -> int:
    """Output rows per band: about BAND_COLUMNS pixels, in a number of bands the threads
    share evenly (uneven bands left a thread idle at the end: docs/cpu.md)."""
    n = threads()
    per_thread = max(1, round(oh * ow / (BAND_COLUMNS * n)))
    rows = -(-oh // (per_thread * n))
    return max(1, min(rows, MAX_BAND_BYTES // (itemsize * k * ow)))


def scratch_shape(k: int, ow: int, rows: int, oh: int) -> tuple[int, int]:
    """(parts, values per part) of the scratch ``banded_conv`` fills: one per thread."""
    bands = -(-oh // rows)
    return max(1, min(threads(), bands)), k * rows * ow


def banded_conv(x, xp, w, bias, z, has_z, code, p0, p1, y, scratch, kh, kw, sh, sw, dh, dw,
                pt, pl, rows, lib):
    """One image: x (C, H, W) -> y (M, OH, OW), ``rows`` output rows per band.

    ``w`` (M, K) contiguous; ``xp``: ``phases(x, sw)`` when sw > 1; ``z`` (M, OH, OW)
    when ``has_z``; ``scratch`` (parts, K * rows * OW): part p's band buffer; ``lib``:
    the BLAS library of the products (``_blas.CHOICES``). The bands are shared among
    ``parts`` threads.
    """
    bands = -(-y.shape[1] // rows)
    parts = scratch.shape[0]
    per = -(-bands // parts)
    run_split(_bands, bands, parts, per, x, xp, w, bias, z, has_z, code, p0, p1, y, scratch,
              kh, kw, sh, sw, dh, dw, pt, pl, rows, per, lib)


@njit(cache=True, nogil=True, error_model="numpy")
def _bands(x, xp, w, bias, z, has_z, code, p0, p1, y, scratch, kh, kw, sh, sw, dh, dw, pt, pl,
           rows, per, lib, lo, hi):
    """Bands lo .. hi - 1 (part lo // per: its own scratch row)."""
    oh_n = y.shape[1]
    buf = scratch[lo // per]
    for b in range(lo, hi):
        _band(x, xp, w, bias, z, has_z, code, p0, p1, y, buf, kh, kw, sh, sw, dh, dw, pt, pl,
              b * rows, min(oh_n, (b + 1) * rows), lib)


@njit(cache=True, error_model="numpy")
def _band(x, xp, w, bias, z, has_z, code, p0, p1, y, buf, kh, kw, sh, sw, dh, dw, pt, pl,
          r_lo, r_hi, lib):
    """Output rows r_lo .. r_hi - 1: im2col into ``buf``, product, epilogue."""
    m, k = w.shape
    oh_n, ow_n = y.shape[1], y.shape[2]
    n = (r_hi - r_lo) * ow_n
    cols = buf[:k * n].reshape(k, n)
    # every channel: ``r_lo - r_lo``, not a literal 0, which Numba types Literal[int](0)
    # and would compile im2col_rows a second time for
    im2col_rows(x, xp, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh_n, ow_n, r_lo, r_hi,
                r_lo - r_lo, x.shape[0])
    size = y.itemsize
    flat = y.reshape(m, oh_n * ow_n)
    gemm_call(NO_TRANS, NO_TRANS, m, n, k, w.ctypes.data, k, cols.ctypes.data, n,
              flat.ctypes.data + r_lo * ow_n * size, oh_n * ow_n, size == 4, lib)
    start = r_lo * ow_n
    _finish_columns(flat, bias, z.reshape(z.shape[0], -1), has_z, code, p0, p1, start,
                    start + n)


@njit(inline="always")
def _finish_columns(y, bias, z, has_z, code, p0, p1, lo, hi):
    """The epilogue of columns lo .. hi - 1 of y (M, P): bias per row, residual z (M, P)
    when ``has_z``, activation (what a band's product just wrote)."""
    for r in range(y.shape[0]):
        dst = y[r, lo:hi]
        if has_z:  # a literal mode per call: see ``_math.finish``
            finish(dst, bias[r], z[r, lo:hi], True, code, p0, p1)
        else:
            finish(dst, bias[r], dst, False, code, p0, p1)


# --- pointwise layers (1x1, stride 1, no padding): bands of columns, no im2col -----------

POINTWISE_BAND_BYTES = 1 << 18  # of a band's product (M x columns), about: it stays in L2
MIN_POINTWISE_PIXELS = 1 << 11  # output pixels: fewer, and one product is as good


def pointwise_eligible(m: int, k: int, pixels: int, group: int, itemsize: int) -> bool:
    """Whether a pointwise layer may run by bands of columns (``pointwise_bands``): small
    weights (each band's product re-packs them), planes of a few thousand pixels."""
    return (AVAILABLE and group == 1 and m * k <= MAX_WEIGHTS
            and pixels >= MIN_POINTWISE_PIXELS and itemsize in (4, 8))


def pointwise_width(m: int, pixels: int, itemsize: int) -> int:
    """Columns per band: the band's product about ``POINTWISE_BAND_BYTES``, a multiple of
    64 columns, at least 256."""
    width = max(256, POINTWISE_BAND_BYTES // (m * itemsize)) // 64 * 64
    return min(width, pixels)


def pointwise_bands(x, w, bias, z, has_z, code, p0, p1, y, width, lib):
    """One image of a pointwise layer: y (M, P) = act(w (M, K) @ x (K, P) + bias + z) by
    bands of ``width`` columns, each band's product followed by its epilogue while it is
    in cache (the whole-image path writes the product, then reads it again). The bands
    are shared among the threads (small work: one product); ``lib``: the BLAS library
    (``_blas.CHOICES``)."""
    pixels = x.shape[1]
    bands = -(-pixels // width)
    parts, per = parts_of(bands, x.size + y.size)
    if parts == 1:  # one band, or small work: one product
        _pointwise_part(x, w, bias, z, has_z, code, p0, p1, y, pixels, lib, 0, 1)
        return
    run_split(_pointwise_part, bands, parts, per, x, w, bias, z, has_z, code, p0, p1, y, width,
              lib)


@njit(cache=True, nogil=True, error_model="numpy")
def _pointwise_part(x, w, bias, z, has_z, code, p0, p1, y, width, lib, lo, hi):
    """Bands lo .. hi - 1 of ``pointwise_bands``."""
    pixels = x.shape[1]
    for b in range(lo, hi):
        _pointwise_band(x, w, bias, z, has_z, code, p0, p1, y, lib, b * width,
                        min(pixels, (b + 1) * width))


@njit(error_model="numpy")
def _pointwise_band(x, w, bias, z, has_z, code, p0, p1, y, lib, lo, hi):
    """Columns lo .. hi - 1: one product reading x's columns in place (leading dimension
    P), then bias, residual and activation on them."""
    m, k = w.shape
    pixels = x.shape[1]
    size = y.itemsize
    gemm_call(NO_TRANS, NO_TRANS, m, hi - lo, k, w.ctypes.data, k, x.ctypes.data + lo * size,
              pixels, y.ctypes.data + lo * size, pixels, size == 4, lib)
    _finish_columns(y, bias, z, has_z, code, p0, p1, lo, hi)
