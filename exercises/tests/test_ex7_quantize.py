"""Checks of exercise 7: values by hand, onnxruntime's QuantizeLinear and DequantizeLinear
as oracles, and the error of the quantized model within the learner's bound."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime
import pytest

from exercises.tests.select import exercise

ex = exercise("ex7_quantize")
rng = np.random.default_rng(7)


def ort_run(model: onnx.ModelProto, **feeds) -> list:
    """onnxruntime as the oracle, its graph left as it is (its optimizer would fuse
    DequantizeLinear + MatMul into a kernel that also quantizes x)."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return onnxruntime.InferenceSession(model.SerializeToString(), options,
                                        providers=["CPUExecutionProvider"]).run(None, feeds)


def ort_quantize(w: np.ndarray, scale: np.float32) -> np.ndarray:
    """onnxruntime's QuantizeLinear(w, scale, int8 zero point 0)."""
    f = onnx.TensorProto.FLOAT
    graph = oh.make_graph([oh.make_node("QuantizeLinear", ["w", "s", "z"], ["q"])], "q",
                          [oh.make_tensor_value_info("w", f, None), oh.make_tensor_value_info("s", f, [])],
                          [oh.make_tensor_value_info("q", onnx.TensorProto.INT8, None)],
                          [onnx.numpy_helper.from_array(np.array(0, np.int8), "z")])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)], ir_version=8)
    return ort_run(model, w=w, s=np.array(scale, np.float32))[0]


@pytest.mark.task7_1
def test_quantize_by_hand():
    q, scale = ex.quantize_int8(np.array([1.27, -0.5, 0.0, 0.005, 0.015], np.float32))
    assert isinstance(scale, np.float32) and scale == np.float32(0.01)
    assert q.dtype == np.int8 and q.tolist() == [127, -50, 0, 0, 2]    # 0.5 and 1.5: to even
    q, scale = ex.quantize_int8(np.zeros(3, np.float32))
    assert scale == 1.0 and q.tolist() == [0, 0, 0]


@pytest.mark.task7_1
@pytest.mark.hidden
def test_quantize_as_onnxruntime_does_within_half_a_step():
    for shape in ((16,), (8, 5), (3, 4, 6)):
        w = (rng.standard_normal(shape) * 3).astype(np.float32)
        q, scale = ex.quantize_int8(w)
        assert q.shape == w.shape and q.dtype == np.int8
        assert np.abs(q.astype(np.int32)).max() == 127
        np.testing.assert_array_equal(q, ort_quantize(w, scale))
        assert (np.abs(w - q.astype(np.float64) * scale) <= scale / 2 * (1 + 1e-6)).all()


@pytest.mark.task7_2
def test_error_bound_by_hand():
    bound = ex.error_bound(np.array([[1.0, -2.0], [0.0, 0.0]], np.float32), 0.1)
    np.testing.assert_allclose(bound, [0.15, 0.0], rtol=1e-12)


@pytest.mark.task7_2
@pytest.mark.hidden
def test_quantized_model_stays_within_the_bound():
    w = rng.standard_normal((32, 8)).astype(np.float32)
    model = ex.quantized_matmul_model(w)
    onnx.checker.check_model(model, full_check=True)
    stored = {t.name: t for t in model.graph.initializer}
    assert [t.data_type for t in stored.values()].count(onnx.TensorProto.INT8) == 1
    assert all(t.data_type != onnx.TensorProto.FLOAT or not t.dims for t in stored.values()), \
        "the weights must be stored as int8, not float"
    q, scale = ex.quantize_int8(w)
    for batch in (1, 6):
        x = rng.standard_normal((batch, 32)).astype(np.float32)
        (y,) = ort_run(model, x=x)
        assert y.shape == (batch, 8)
        np.testing.assert_allclose(y, x @ (q.astype(np.float32) * scale), rtol=1e-5, atol=1e-5)
        error = np.abs(y.astype(np.float64) - x.astype(np.float64) @ w.astype(np.float64)).max(axis=1)
        bound = ex.error_bound(x, scale)
        assert bound.shape == (batch,)
        assert (error <= bound + 1e-4).all(), f"errors {error} beyond the bound {bound}"
        assert (bound <= np.abs(x).sum(axis=1) * scale / 2 * (1 + 1e-6)).all(), "a bound too loose"
