"""numba-cuda's simulator made a block's shared array without a lock, so threads of the
first block could each get their own (CI: test_attention_3d failed once, one row of block 0
wrong). onnxkit.kernels.cuda._simulator makes it under a lock; these tests can fail without
it: unpatched, 64 threads lined up at a barrier split the array in about 1 round of 7."""

import sys
import threading

import numpy as np
import pytest
from numba import config, cuda

from onnxkit.kernels.cuda import _simulator
from onnxkit.kernels.cuda._device import launch

pytestmark = pytest.mark.skipif(not config.ENABLE_CUDASIM, reason="the simulator's own fix")


@pytest.fixture
def fast_switching():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread switch almost anywhere: the race shows
    yield
    sys.setswitchinterval(interval)


def test_threads_racing_to_a_shared_array_all_get_the_same_one(fast_switching):
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    assert _simulator.install()
    split = 0
    for _ in range(50):
        shared = FakeCUDAShared(0)
        got = []
        start = threading.Barrier(64)

        def thread():
            start.wait()
            got.append(shared.array(16, np.float32))

        threads = [threading.Thread(target=thread) for _ in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        split += len({id(a) for a in got}) > 1
        assert len(got) == 64 and got[0].shape == (16,) and got[0].dtype == np.float32
    assert split == 0


def test_two_lines_are_two_arrays():
    from numba.cuda.simulator.kernelapi import FakeCUDAShared

    _simulator.install()
    shared = FakeCUDAShared(0)
    a = shared.array(4, np.float32)
    b = shared.array((2, 3), np.int64)
    assert a is not b and a.shape == (4,) and b.shape == (2, 3) and b.dtype == np.int64


@cuda.jit
def _block_sums(out):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    buf[t] = t + cuda.blockIdx.x
    cuda.syncthreads()
    total = 0.0
    for i in range(64):
        total += buf[i]
    out[cuda.blockIdx.x, t] = total


def test_every_thread_of_every_block_sees_the_whole_block(fast_switching):
    expected = np.array([[sum(range(64)) + 64 * b] * 64 for b in range(2)], np.float32)
    for _ in range(5):
        out = np.zeros((2, 64), np.float32)
        launch(_block_sums, 2, 64, out)
        np.testing.assert_array_equal(out, expected)
