"""The run's memory budget on the cuda executor: device allocations are checked before
they are made, and host-run bodies (Loop) share the run's budget.

Runs on a GPU, or under the simulator: ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``.
"""

import numpy as np
import pytest

import onnxkit
from onnxkit.errors import LimitExceededError
from tests.hostile.test_memory_budget import MiB_LIMITS, _doubling, _one_node



def test_a_device_concat_over_the_budget_is_refused_before_it_is_made():
    # four float32[750] inputs: the output would take 12,000 bytes > 10,000 (small, so that
    # the unlimited run below takes seconds under the simulator, not minutes)
    x = np.ones(750, np.float32)
    model, feeds = _one_node("Concat", [("a", x), ("b", x), ("c", x), ("d", x)], axis=0)
    with pytest.raises(LimitExceededError) as info:
        onnxkit.Session(model, executor="cuda",
                        limits=onnxkit.Limits(max_run_bytes=10_000)).run(None, feeds)
    assert str(info.value) == (
        "node 'big' (Concat, domain 'ai.onnx'): device tensor of shape [3000] would take "
        "12,000 bytes while the run already holds 0: over the run's memory budget "
        "max_run_bytes=10,000 (set Limits(max_run_bytes=...) to change it)")
    y, = onnxkit.Session(model, executor="cuda").run(None, feeds)
    np.testing.assert_array_equal(y, np.ones(3_000, np.float32))


def test_a_loop_that_doubles_its_state_stops_at_the_budget_on_cuda():
    sess = onnxkit.Session(_doubling(), executor="cuda", limits=MiB_LIMITS)
    y, = sess.run(None, {"x": np.arange(4, dtype=np.float32), "n": np.array(3, np.int64)})
    np.testing.assert_array_equal(y, np.tile(np.arange(4, dtype=np.float32), 8))
    with pytest.raises(LimitExceededError, match=r"^node 'double' \(Concat, domain 'ai.onnx'\): "
                       r".*max_run_bytes=1,048,576 .*in the body of node 'grow' \(Loop"):
        sess.run(None, {"x": np.ones(4, np.float32), "n": np.array(20, np.int64)})
