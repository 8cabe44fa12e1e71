"""The shared index helpers against brute force, as plain Python and compiled for the CPU.

(The CUDA compile of the same helpers is exercised by the simulator tests and the PTX
check.) Runs in any process.
"""

import itertools

import numpy as np
import pytest

from onnxkit.kernels import indexing as ix


def test_window_taps_are_exactly_the_taps_inside():
    taps = ix.for_cpu(ix.window_taps)
    for start, dilation, kernel, size in itertools.product(range(-7, 8), (1, 2, 3), (1, 2, 4), (1, 3, 5)):
        inside = [j for j in range(kernel) if 0 <= start + j * dilation < size]
        for fn in (ix.window_taps, taps):
            first, stop = fn(start, dilation, kernel, size)
            if inside:
                assert (first, stop) == (inside[0], inside[-1] + 1)
            else:
                assert first >= stop


@pytest.mark.parametrize("shape,out_shape", [((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (3, 4)),
                                             ((2, 1, 3), (2, 5, 3))])
def test_broadcast_offset_reads_what_numpy_broadcasting_reads(shape, out_shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    want = np.broadcast_to(x, out_shape).reshape(-1)
    strides = ix.broadcast_strides(shape, out_shape)
    shape_arr = np.array(out_shape, dtype=np.int64)
    offset = ix.for_cpu(ix.broadcast_offset)
    for i, w in enumerate(want):
        assert x.reshape(-1)[ix.broadcast_offset(i, shape_arr, strides)] == w
        assert x.reshape(-1)[offset(i, shape_arr, strides)] == w


def test_transpose_strides_and_index_round_trip():
    x = np.arange(24).reshape(2, 3, 4)
    perm = (2, 0, 1)
    want = x.transpose(perm).reshape(-1)
    strides = ix.transpose_strides(x.shape, perm)
    out_shape = np.array([x.shape[p] for p in perm])
    got = [x.reshape(-1)[ix.broadcast_offset(i, out_shape, strides)] for i in range(x.size)]
    assert got == list(want)
    index = np.zeros(3, dtype=np.int64)
    ix.unravel_index(17, np.array(x.shape), index)
    assert tuple(index) == np.unravel_index(17, x.shape)
    assert ix.ravel_index(index, ix.contiguous_strides(x.shape)) == 17


def test_im2col_rows_and_columns_round_trip():
    for row in range(3 * 2 * 3 * 4):
        parts = ix.im2col_row_split(row, 2, 3, 4)
        assert ix.im2col_row(*parts, 2, 3, 4) == row
    assert ix.im2col_col_split(17, 2, 3, 4) == np.unravel_index(17, (2, 3, 4))
    assert ix.conv_input_coord(3, 2, 2, 1, 2) == 3 * 2 - 1 + 2 * 2


def test_broadcast_strides_refuses_what_does_not_broadcast():
    with pytest.raises(ValueError):
        ix.broadcast_strides((3,), (4,))
    assert ix.spatial3([5, 6], 1) == (1, 5, 6)
