"""Every level keeps the outputs of real models, and meets onnxruntime's node counts.

The light ResNet-50 and DenseNet-121 come with onnx; the torch models are built (once,
into benchmarks/models/) by ``benchmarks.models`` and need torch.
"""

import numpy as np
import onnx
import pytest

import onnxkit
from benchmarks.models import LIGHT_MODELS, TORCH_MODELS, build, feeds, model_path
from onnxkit.optimizer import optimize

MODELS = [pytest.param(n, id=n) for n in LIGHT_MODELS] + [
    pytest.param(n, id=n, marks=[pytest.mark.torch, pytest.mark.slow]) for n in TORCH_MODELS]


@pytest.fixture(scope="module")
def optimized():
    """name -> (model, {level: optimized model}), built on first use."""
    cache = {}

    def get(name):
        if name not in cache:
            if name in TORCH_MODELS:
                pytest.importorskip("torch")
            build((name,), verbose=False)
            m = onnx.load(str(model_path(name)))
            cache[name] = (m, {level: optimize(m, level) for level in (1, 2, 3)})
        return cache[name]
    return get


@pytest.mark.parametrize("name", MODELS)
def test_every_level_keeps_outputs(name, optimized):
    m, levels = optimized(name)
    x = feeds(name)
    expected = onnxkit.Session(m).run(None, x)
    for level, (out, _) in levels.items():
        for e, a in zip(expected, onnxkit.Session(out).run(None, x)):
            scale = float(np.max(np.abs(e)))
            np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4 * scale, err_msg=f"level {level}")


@pytest.mark.parametrize("name", MODELS)
def test_level1_is_standard_onnx_that_onnxruntime_runs_alike(name, optimized):
    ort = pytest.importorskip("onnxruntime")
    m, levels = optimized(name)
    out = levels[1][0]
    onnx.checker.check_model(out, full_check=True)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    x = feeds(name)
    want = ort.InferenceSession(m.SerializeToString(), so).run(None, x)
    got = ort.InferenceSession(out.SerializeToString(), so).run(None, x)
    for e, a in zip(want, got):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4 * float(np.max(np.abs(e))))


@pytest.mark.parametrize("name", MODELS)
def test_node_counts_meet_onnxruntime(name, optimized):
    pytest.importorskip("onnxruntime")
    from benchmarks.node_counts import ort_counts

    _, levels = optimized(name)
    ort = ort_counts(model_path(name))
    assert levels[2][1].nodes_after <= ort["EXTENDED"]
    assert levels[3][1].nodes_after <= ort["ALL"]
