"""Host-side planning of the tiled cuda kernels: tilings, their choice, the im2col row table.

No GPU and no simulator needed: this is plain Python and numpy.
"""

import itertools
import time

import numpy as np
import pytest

from onnxkit.kernels.cuda import _tiles
from onnxkit.kernels.cuda._tiles import LARGE, MEDIUM, SIMULATED, WIDE, Tiles
from onnxkit.kernels.cuda.conv import row_table


@pytest.mark.parametrize("tiles", [SIMULATED, MEDIUM, WIDE, LARGE])
def test_each_tiling_deals_every_slice_element_to_exactly_one_thread(tiles):
    def dealt(width, depth_fast):
        seen = set()
        for t in range(tiles.threads):
            for l in range(width * tiles.bk // tiles.threads):
                seen.add(_tiles.slot.py_func(t + l * tiles.threads, depth_fast, width, tiles.bk))
        return seen

    for width in (tiles.bm, tiles.bn):
        for depth_fast in (True, False):
            assert dealt(width, depth_fast) == set(itertools.product(range(width), range(tiles.bk)))


def test_a_tiling_the_threads_cannot_split_is_refused():
    with pytest.raises(ValueError, match="split"):
        Tiles(64, 64, 6, 4, 4)  # 64 * 6 slice elements over 256 threads


def test_wide_tiles_only_when_every_multiprocessor_gets_a_block(monkeypatch):
    monkeypatch.setattr(_tiles, "simulated", lambda: False)
    monkeypatch.setattr(_tiles, "multiprocessors", lambda: 132)
    # ResNet-50 at batch 32: its last 3x3 convolution, 512 x (32*7*7) -> 8 x 13 wide blocks
    assert _tiles.choose(512, 32 * 49, 1, np.float32) is MEDIUM
    # its first bottleneck's 1x1 convolution: 256 x (32*56*56)
    assert _tiles.choose(256, 32 * 56 * 56, 1, np.float32) is WIDE
    assert _tiles.choose(256, 32 * 56 * 56, 1, np.float64) is MEDIUM  # would spill
    assert _tiles.choose(64, 2 * 56 * 56, 1, np.float32) is MEDIUM  # 49 x 1 wide blocks
    assert _tiles.choose(32, 32 * 56 * 56, 1, np.float32) is MEDIUM  # half a wide tile wasted


def test_the_simulator_takes_the_tiling_cheapest_to_simulate(monkeypatch):
    monkeypatch.setattr(_tiles, "simulated", lambda: True)
    assert _tiles.choose(5, 7, 1, np.float32) is SIMULATED  # one block of 64 threads
    # per unit of K: 99 x 64 threads x (380 + 16) / 4, 9 x 256 x (380 + 256) / 16, 4 x 256 x
    # (380 + 512) / 8 multiply-adds' worth: 627,264, 91,584 and 114,176
    assert _tiles.simulated_cost(SIMULATED, 130, 162) == 99 * 64 * 396 / 4
    assert _tiles.simulated_cost(MEDIUM, 130, 162) == 9 * 256 * 636 / 16
    assert _tiles.simulated_cost(LARGE, 130, 162) == 4 * 256 * 892 / 8
    assert _tiles.choose(130, 162, 1, np.float32) is MEDIUM
    assert _tiles.choose(13, 1824, 1, np.float32) is MEDIUM  # LARGE starts fewer threads
    assert _tiles.choose(128, 128 * 40, 1, np.float32) is LARGE  # no padding: 1,141,760 < 1,628,160


def test_row_table_gives_each_taps_offset_and_position():
    cg, in3, k3, d3 = 3, (4, 5, 6), (2, 3, 2), (1, 2, 3)
    table = row_table(cg, in3, k3, d3)
    assert table.dtype == np.int32 and table.shape == (cg * 12, 4)
    r = 0
    for c, kd, kh, kw in itertools.product(range(cg), *(range(k) for k in k3)):
        taps = (kd * d3[0], kh * d3[1], kw * d3[2])
        # X[c, b0 + taps[0], ...] is this far from X[0, b0, b1, b2] in a (cg, 4, 5, 6) group
        offset = c * 120 + taps[0] * 30 + taps[1] * 6 + taps[2]
        assert tuple(table[r]) == (offset,) + taps
        r += 1


def test_tuning_times_each_tiling_once_per_product_and_keeps_the_fastest(monkeypatch):
    monkeypatch.setenv("ONNXKIT_CUDA_TUNE", "1")
    monkeypatch.setattr(_tiles, "simulated", lambda: False)
    monkeypatch.setattr(_tiles, "synchronize", lambda: None)
    monkeypatch.setattr(_tiles, "_TUNED", {})
    monkeypatch.setattr(_tiles, "TUNING_LOG", [])
    calls = []

    def run(tiles):  # MEDIUM "runs" faster than LARGE and WIDE here
        calls.append(tiles)
        time.sleep(0.001 if tiles is MEDIUM else 0.004)

    key = ("gemm", 512, 1568, 4608, 1, np.dtype(np.float32))
    assert _tiles.pick(key, 512, 1568, 1, np.float32, run) is MEDIUM
    assert [calls.count(t) for t in (LARGE, WIDE, MEDIUM)] == [4, 4, 4]  # warm-up + 3 timed
    assert _tiles.pick(key, 512, 1568, 1, np.float32, run) is MEDIUM
    assert len(calls) == 12  # remembered, not timed again
    (logged_key, chosen, timings), = _tiles.TUNING_LOG
    assert logged_key == key and chosen is MEDIUM and timings[LARGE] > timings[MEDIUM]
    assert _tiles.pick(("gemm", 1), 9, 9, 1, np.float64, run) is MEDIUM  # the only 8-byte one


def test_without_tuning_pick_is_the_guess(monkeypatch):
    monkeypatch.delenv("ONNXKIT_CUDA_TUNE", raising=False)
    monkeypatch.setattr(_tiles, "simulated", lambda: False)
    monkeypatch.setattr(_tiles, "multiprocessors", lambda: 132)
    assert _tiles.pick("k", 256, 32 * 56 * 56, 1, np.float32, run=None) is WIDE


def test_split_k_only_where_few_tiles_meet_a_long_k(monkeypatch):
    monkeypatch.setattr(_tiles, "simulated", lambda: False)
    monkeypatch.setattr(_tiles, "multiprocessors", lambda: 132)
    # ResNet-18 at batch 1, last 3x3 convolution: 512 x 49 outputs, K = 4608: 8 MEDIUM blocks
    splits = _tiles.k_splits(MEDIUM, 512, 49, 1, 4608)
    chunk = _tiles.split_chunk(4608, splits, MEDIUM.bk)
    assert chunk % MEDIUM.bk == 0 and (splits - 1) * chunk < 4608 <= splits * chunk  # no empty part
    assert 8 * splits >= 2 * 132 - 8 and chunk >= _tiles.MIN_SPLIT_SLICES * MEDIUM.bk
    assert _tiles.k_splits(LARGE, 256, 32 * 56 * 56, 1, 576) == 1  # enough blocks already
    assert _tiles.k_splits(MEDIUM, 512, 49, 1, 64) == 1  # too short a K to share
