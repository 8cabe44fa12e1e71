"""RMSNormalization (opset 23) and onnxkit::RMSNormalization on the cpu executor.

Oracle: onnx.reference for the standard operator, and the formula in float64 numpy for
both (Y = X / sqrt(mean(X^2) + eps) * scale). The fast kernel takes float32 with a
scale of the normalized shape; the other cases (float64, a double stash_type, a scale that
varies along other axes, a strided X) must give the reference's answer through the
fall-back, and a bad scale the reference's error.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from onnxkit import Session
from onnxkit.errors import OnnxkitError
from onnxkit.runtime.profile import Profiler

TYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}


def _model(x_shape, scale_shape, dtype=np.float32, domain="", **attrs):
    node = helper.make_node("RMSNormalization", ["X", "S"], ["Y"], domain=domain, **attrs)
    elem = TYPES[dtype]
    graph = helper.make_graph(
        [node], "rms", [helper.make_tensor_value_info("X", elem, x_shape),
                        helper.make_tensor_value_info("S", elem, scale_shape)],
        [helper.make_tensor_value_info("Y", elem, None)])
    opsets = [helper.make_opsetid("", 23)] + ([helper.make_opsetid("onnxkit", 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _run(model, feeds):
    """The output, and the kernel that ran as the profiler names it (``[reference]``: the
    cpu kernel handed the node to the reference kernel)."""
    sess = Session(model, executor="cpu", level=0)
    prof = Profiler(sess)
    (y,) = sess.run(None, feeds, trace=prof)
    return y, prof.rows()[0]["kernel"]


def _formula(x, scale, axis, eps):
    x64 = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    return x64 / np.sqrt((x64 * x64).mean(axis=axes, keepdims=True) + eps) * scale


CASES = [  # x shape, scale shape, axis, dtype, stash_type
    ((2, 16, 64), (64,), -1, np.float32, 1),       # the fast kernel: T5 / Llama rows
    ((2, 1, 64), (1, 1, 64), -1, np.float32, 1),   # leading ones on the scale
    ((3, 4, 5), (4, 5), 1, np.float32, 1),         # two normalized axes
    ((2, 3, 8), (8,), -1, np.float64, 1),          # float64: reference
    ((2, 3, 8), (8,), -1, np.float32, 11),         # stash_type double: reference
    ((2, 3, 4), (3, 1), 1, np.float32, 1),         # scale constant along the last axis: reference
]


@pytest.mark.parametrize("x_shape, s_shape, axis, dtype, stash", CASES)
@pytest.mark.parametrize("domain", ["", "onnxkit"])
def test_rms_norm_matches_onnx_reference(x_shape, s_shape, axis, dtype, stash, domain):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(x_shape) * 3).astype(dtype)
    scale = rng.standard_normal(s_shape).astype(dtype)
    eps = 1e-6
    feeds = {"X": x, "S": scale}
    attrs = dict(axis=axis, epsilon=eps, stash_type=stash)
    got, kernel = _run(_model(x_shape, s_shape, dtype, domain, **attrs), feeds)
    fast = dtype == np.float32 and stash == 1 and s_shape[-1] == x_shape[-1]
    assert kernel == "cpu:" + ("onnxkit::" if domain else "ai.onnx::") + \
        f"RMSNormalization-{1 if domain else 23}" + ("" if fast else " [reference]")
    assert got.dtype == dtype and got.shape == x.shape
    double = dtype == np.float64 and stash == 11  # else computed in float32 (stash_type 1)
    tol = dict(rtol=1e-12, atol=1e-12) if double else dict(rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(got, _formula(x, scale, axis, eps), **tol)
    if not domain and stash == 1:  # onnx.reference computes in float32 only
        (expected,) = ReferenceEvaluator(_model(x_shape, s_shape, dtype, **attrs)).run(None, feeds)
        np.testing.assert_allclose(got, expected, **tol)


def test_rms_norm_strided_input():
    """A transposed (non-contiguous) X: the kernel reads a copy, rows as the formula's."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 2, 5)).astype(np.float32).transpose(1, 2, 0)
    scale = rng.standard_normal(8).astype(np.float32)
    got, kernel = _run(_model([2, 5, 8], [8]), {"X": x, "S": scale})
    assert kernel == "cpu:ai.onnx::RMSNormalization-23"
    np.testing.assert_allclose(got, _formula(x, scale, -1, 1e-5), rtol=2e-6, atol=2e-6)


def test_rms_norm_bad_scale_is_an_onnxkit_error():
    x = np.ones((2, 3, 4), np.float32)
    with pytest.raises(OnnxkitError, match="scale"):
        Session(_model([2, 3, 4], [5]), executor="cpu", level=0).run(
            None, {"X": x, "S": np.ones(5, np.float32)})
