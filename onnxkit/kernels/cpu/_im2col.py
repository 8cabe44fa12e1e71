"""im2col for 2-D windows, and the clamped ranges that keep its loops branch-free.

    cols[(c * KH + i) * KW + j, oh * OW + ow] = X[c, oh*sh + i*dh - pt, ow*sw + j*dw - pl]
                                                (0 where that falls in the padding)

The row number and the input positions are ``im2col_row`` and ``conv_input_coord`` of
``onnxkit.kernels.indexing`` (the index helpers of the cpu and cuda kernels). For one
tap (i, j) the output columns ``ow`` that read inside the row form one range ``[lo, hi)``
and the output rows ``oh`` one range too (``valid_range``, i.e. ``window_taps``): the
loops copy those ranges and fill the rest with zeros, instead of testing every element.

With stride 1 along the width and OW == W (the usual "same" padding), a tap's whole
row of ``cols`` is the input plane shifted by ``(i*dh - pt) * W + j*dw - pl``: one
contiguous copy, then zeros on the |j*dw - pl| columns that wrapped around a row edge.
"""

from __future__ import annotations

from numba import njit

from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.kernels.indexing import conv_input_coord, for_cpu, im2col_row, window_taps

_coord = for_cpu(conv_input_coord)
_row = for_cpu(im2col_row)
_window_taps = for_cpu(window_taps)


@njit(inline="always")
def ceil_div(a, b):
    return -((-a) // b)


@njit(inline="always")
def valid_range(offset, stride, size, out):
    """The ``o`` in [0, out) with 0 <= o * stride + offset < size, as [lo, hi), lo <= hi.

    This is ``window_taps`` of ``onnxkit.kernels.indexing`` (shared with the cuda kernels)
    with the output index in the role of the tap.
    """
    lo, hi = _window_taps(offset, stride, out, size)
    return lo, max(lo, hi)


@njit(inline="always")
def phase_index(pos, s):
    """Column ``pos`` of a row is column ``index`` of phase ``phase`` (see ``phases``).

    Returns ``(phase, index)``, ``pos = index * s + phase`` with ``0 <= phase < s`` (a
    ``pos`` in the padding has a negative index).
    """
    return pos % s, pos // s


@njit(inline="always")
def column_phase_ranges(start, width, n):
    """For ``split_columns``: the j in [0, n) whose even column start + 2j (lo0, hi0), odd
    column start + 2j + 1 (lo1, hi1), and both (lo, hi) are inside a row of ``width``."""
    lo0, hi0 = valid_range(start, 2, width, n)
    lo1, hi1 = valid_range(start + 1, 2, width, n)
    lo = max(lo0, lo1)
    return lo0, hi0, lo1, hi1, lo, max(lo, min(hi0, hi1))


@njit(inline="always")
def split_columns(row, start, even, odd, lo0, hi0, lo1, hi1, lo, hi):
    """The two column phases of a stride-2 window row, in one pass over ``row``:

        even[j] = row[start + 2j],  odd[j] = row[start + 2j + 1]

    for the j inside the row (``column_phase_ranges``; ``start`` < 0 in the padding).
    Other entries are left as they are. The columns both phases read are copied pairwise
    (contiguous loads), the edges one by one.
    """
    for j in range(lo0, min(lo, hi0)):
        even[j] = row[start + 2 * j]
    for j in range(lo1, min(lo, hi1)):
        odd[j] = row[start + 2 * j + 1]
    pairs = row[start + 2 * lo:]
    e, o = even[lo:hi], odd[lo:hi]
    for j in range(hi - lo):
        e[j] = pairs[2 * j]
        o[j] = pairs[2 * j + 1]
    for j in range(max(hi, lo0), hi0):
        even[j] = row[start + 2 * j]
    for j in range(max(hi, lo1), hi1):
        odd[j] = row[start + 2 * j + 1]


# Loops over views that start at 0 vectorize; offsets inside the index do not.
@njit(inline="always")
def fill_run(dst, start, stop):
    """dst[start:stop] = 0 (im2col's padding, a patch reaching outside the input)."""
    d = dst[start:stop]
    for k in range(d.size):
        d[k] = 0


@njit(inline="always")
def copy_run(dst, d0, src, s0, n):
    """dst[d0:d0 + n] = src[s0:s0 + n] (1-D views; the pools' rows and planes too)."""
    d = dst[d0:d0 + n]
    s = src[s0:s0 + n]
    for t in range(n):
        d[t] = s[t]


def phases(x, s, out):
    """x (P, H, W) -> out (P, H, s, ceil(W/s)): out[p, h, r, w] = x[p, h, w*s + r] (0 past W).

    With the column phases apart, a stride-s window tap reads a contiguous run. The
    planes are shared among the threads.
    """
    run_parts(_phases, x.shape[0], x.size, x, s, out)


@njit(cache=True, nogil=True, error_model="numpy")
def _phases(x, s, out, lo, hi):
    planes, height, width = x.shape
    wq = out.shape[3]
    for p in range(lo, hi):
        for h in range(height):
            row = x[p, h]
            if s == 2:
                even = out[p, h, 0]
                odd = out[p, h, 1]
                half = width // 2
                for w in range(half):
                    even[w] = row[2 * w]
                    odd[w] = row[2 * w + 1]
                if width % 2:
                    even[half] = row[width - 1]
                    odd[half] = 0
                continue
            for r in range(s):
                dst = out[p, h, r]
                n = (width - r + s - 1) // s
                src = row[r:]
                for w in range(n):
                    dst[w] = src[w * s]
                for w in range(n, wq):
                    dst[w] = 0


def phase_shape(shape, s):
    """The ``out`` shape ``phases`` fills for planes of ``shape`` (P, H, W)."""
    return (shape[0], shape[1], s, -(-shape[2] // s))


def im2col(x, xp, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh_n, ow_n):
    """x: (C, H, W) -> cols: (C * kh * kw, oh_n * ow_n), see the module docstring.

    ``xp`` is ``phases(x, sw)`` when sw > 1 (unused otherwise). The channels (each its
    own rows of ``cols``) are shared among the threads.
    """
    run_parts(im2col_rows, x.shape[0], cols.size, x, xp, cols, kh, kw, sh, sw, dh, dw, pt, pl,
              oh_n, ow_n, 0, oh_n)


@njit(cache=True, nogil=True, error_model="numpy")
def im2col_rows(x, xp, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh_n, ow_n, r_lo, r_hi, lo, hi):
    """The rows of ``cols`` of channels lo .. hi - 1, for the output rows r_lo .. r_hi - 1
    only: ``cols`` has (r_hi - r_lo) * ow_n columns (a band, ``_banded``)."""
    channels, height, width = x.shape
    plane = height * width
    shifted = sw == 1 and ow_n == width
    base = r_lo * ow_n  # column 0 of cols is output pixel (r_lo, 0)
    for c in range(lo, hi):
        src = x[c].reshape(plane)
        for i in range(kh):
            top = _coord(0, i, sh, pt, dh)  # the row tap i reads for output row 0
            oh_lo, oh_hi = valid_range(top, sh, height, oh_n)
            oh_lo, oh_hi = max(oh_lo, r_lo), min(oh_hi, r_hi)
            oh_lo = min(oh_lo, r_hi)  # no valid row in the band: all of it is zeros
            oh_hi = max(oh_hi, oh_lo)
            for j in range(kw):
                dst = cols[_row(c, 0, i, j, 1, kh, kw)]
                off = _coord(0, j, sw, pl, dw)  # the column tap j reads for output column 0
                lo_w, hi_w = valid_range(off, sw, width, ow_n)
                fill_run(dst, 0, oh_lo * ow_n - base)
                fill_run(dst, oh_hi * ow_n - base, r_hi * ow_n - base)
                if oh_lo >= oh_hi:
                    continue
                if shifted and sh == 1:
                    shift = top * width + off
                    start = max(oh_lo * ow_n, -shift)
                    stop = max(start, min(oh_hi * ow_n, plane - shift))
                    copy_run(dst, start - base, src, start + shift, stop - start)
                    fill_run(dst, oh_lo * ow_n - base, start - base)
                    fill_run(dst, stop - base, oh_hi * ow_n - base)
                    for oh in range(oh_lo, oh_hi):
                        fill_run(dst, oh * ow_n - base, oh * ow_n - base + lo_w)
                        fill_run(dst, oh * ow_n - base + hi_w, (oh + 1) * ow_n - base)
                    continue
                r, q = phase_index(off, sw)  # column ow*sw + off is phase r, index ow + q
                for oh in range(oh_lo, oh_hi):
                    at = oh * ow_n - base
                    ih = oh * sh + top  # = _coord(oh, i, sh, pt, dh), top hoisted
                    fill_run(dst, at, at + lo_w)
                    if sw == 1:
                        copy_run(dst, at + lo_w, src, ih * width + lo_w + off, hi_w - lo_w)
                    else:
                        copy_run(dst, at + lo_w, xp[c, ih, r], lo_w + q, hi_w - lo_w)
                    fill_run(dst, at + hi_w, at + ow_n)
