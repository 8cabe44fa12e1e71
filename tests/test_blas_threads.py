"""The cpu executor runs numpy's BLAS on one thread during a run (onnxkit.runtime.blas_threads);
the reference leaves it alone."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.runtime import blas_threads

pytestmark = pytest.mark.skipif(blas_threads.GET is None, reason="numpy's OpenBLAS not found")


def _matmul_model(w):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, w.shape[0]])],
        [helper.make_empty_tensor_value_info("y")], [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


@pytest.mark.parametrize("executor,inside", [("cpu", 1), ("reference", 2)])
def test_a_run_sets_numpy_blas_threads_as_its_executor_wants(executor, inside):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 48)).astype(np.float32)
    x = rng.standard_normal((1, 64)).astype(np.float32)
    sess = onnxkit.Session(_matmul_model(w), executor=executor)
    before = blas_threads.GET()
    blas_threads.SET(2)
    seen = []
    try:
        if blas_threads.GET() != 2:
            pytest.skip("this OpenBLAS does not take a second thread here")
        (y,) = sess.run(None, {"x": x}, trace=lambda event: seen.append(blas_threads.GET()))
        assert seen == [inside]
        assert blas_threads.GET() == 2
    finally:
        blas_threads.SET(before)
    np.testing.assert_allclose(y, x.astype(np.float64) @ w.astype(np.float64), rtol=1e-5, atol=1e-5)
