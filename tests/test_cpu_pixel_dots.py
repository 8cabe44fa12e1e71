"""Conv of few output pixels by dot products (``onnxkit.kernels.cpu._pixel_dots``).

The path serves layers of at most ``PIXELS`` output pixels by the static rule and is
timed against im2col + BLAS up to 64 when tuning is on. Each case below runs the ``cpu``
Conv / FusedConv kernel, checks that the path was taken (the algorithm the executor
reports for the profiler, ``conv.ran``), and compares with the reference kernel (numpy,
its own padding and products); the last compares a whole session with onnxruntime.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.kernels.cpu import conv as cpu_conv
from onnxkit.kernels.cpu._pixel_dots import PIXELS, patches
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv

RNG = np.random.default_rng(7)

# (input N, C, H, W), (M, C/group, KH, KW), attributes
CASES = [
    ((1, 64, 3, 3), (40, 64, 3, 3), dict(pads=[1, 1, 1, 1])),  # SqueezeNet's expand3x3
    ((1, 48, 3, 3), (30, 48, 1, 1), {}),  # pointwise: each patch is one pixel's channels
    ((2, 5, 4, 4), (7, 5, 3, 3), dict(pads=[1, 1, 1, 1])),  # a batch; M odd (a row alone)
    ((1, 6, 7, 7), (9, 2, 3, 3), dict(group=3, strides=[2, 2])),  # groups of 3 rows
    ((1, 4, 5, 6), (5, 4, 2, 3), dict(pads=[0, 2, 1, 0], strides=[2, 3], dilations=[2, 1])),
    ((1, 3, 2, 2), (4, 3, 3, 3), dict(pads=[1, 1, 1, 1])),  # every patch reaches the padding
    ((1, 8, 9, 9), (6, 8, 3, 3), dict(pads=[1, 1, 1, 1], strides=[3, 3])),  # 9 pixels of 81
    ((1, 6, 1, 13), (4, 6, 1, 3), dict(pads=[0, 1, 0, 1])),  # 13 pixels: 4 + 4 + 4 + 1
    ((1, 10, 1, 1), (6, 10, 1, 1), {}),  # a squeeze-excitation layer: one pixel
    ((1, 4, 2, 3), (5, 4, 1, 1), {}),  # 6 pixels: 4 + 2
    ((1, 7, 1, 3), (3, 7, 1, 1), {}),  # 3 pixels, 3 rows: a pair and a row alone
]


def _inputs(x_shape, w_shape, m, dtype):
    X = RNG.standard_normal(x_shape).astype(dtype)
    W = RNG.standard_normal(w_shape).astype(dtype)
    B = RNG.standard_normal(m).astype(dtype)
    return X, W, B


@pytest.mark.parametrize("dtype", [np.float32])
@pytest.mark.parametrize("x_shape, w_shape, attrs", CASES)
def test_conv_matches_reference(x_shape, w_shape, attrs, dtype):
    X, W, B = _inputs(x_shape, w_shape, w_shape[0], dtype)
    Y = cpu_conv.conv(X, W, B, **attrs)
    expected = reference_fused_conv(X, W, B, None, **attrs)
    assert Y.shape[2] * Y.shape[3] <= PIXELS
    assert cpu_conv.ran() == "dots"
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(Y, expected, rtol=tol, atol=tol * np.abs(expected).max())


@pytest.mark.parametrize("activation, params", [("Relu", None), ("LeakyRelu", [0.2]),
                                                ("Clip", [-0.5, 0.5]), ("HardSwish", None),
                                                ("Sigmoid", None)])
def test_fused_residual_and_activation(activation, params):
    X, W, B = _inputs((2, 12, 4, 4), (10, 12, 3, 3), 10, np.float32)
    Z = RNG.standard_normal((2, 10, 2, 2)).astype(np.float32)
    attrs = dict(strides=[2, 2], pads=[1, 1, 1, 1], activation=activation,
                 activation_params=params)
    Y = cpu_conv.fused_conv(X, W, B, Z, **attrs)
    assert cpu_conv.ran() == "dots"
    expected = reference_fused_conv(X, W, B, Z, **attrs)
    np.testing.assert_allclose(Y, expected, rtol=1e-5, atol=1e-5)


def test_no_bias_and_nan():
    X, W, _ = _inputs((1, 6, 3, 3), (4, 6, 3, 3), 4, np.float32)
    X[0, 2, 1, 1] = np.nan  # the centre pixel: in every patch of the 3x3 output
    Y = cpu_conv.conv(X, W, None, pads=[1, 1, 1, 1])
    assert cpu_conv.ran() == "dots"
    assert np.isnan(Y).all()
    X[0, 2, 1, 1] = 0
    np.testing.assert_allclose(cpu_conv.conv(X, W, None, pads=[1, 1, 1, 1]),
                               reference_fused_conv(X, W, None, None, pads=[1, 1, 1, 1]),
                               rtol=1e-5, atol=1e-5)


def test_patches_by_hand():
    """Two channels of 2x2 under a 3x3 window with padding 1: each output pixel's patch
    is its 3x3 neighbourhood, channel by channel, zeros outside."""
    x = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.float32)
    p = np.full((4, 18), -1, np.float32)
    patches(x, p, 3, 3, 1, 1, 1, 1, 1, 1, 2)
    top_left = [0, 0, 0, 0, 1, 2, 0, 3, 4, 0, 0, 0, 0, 5, 6, 0, 7, 8]
    bottom_right = [1, 2, 0, 3, 4, 0, 0, 0, 0, 5, 6, 0, 7, 8, 0, 0, 0, 0]
    np.testing.assert_array_equal(p[0], top_left)
    np.testing.assert_array_equal(p[3], bottom_right)


def test_larger_planes_keep_im2col():
    X, W, B = _inputs((1, 4, 9, 9), (6, 4, 3, 3), 6, np.float32)
    cpu_conv.conv(X, W, B, pads=[1, 1, 1, 1])  # 81 output pixels
    assert cpu_conv.ran() == "im2col"


def _squeeze_tail() -> bytes:
    """A SqueezeNet fire module on a 3x3 plane, then the classifier: Conv+Relu, two
    expands concatenated, a 1x1 classifier, GlobalAveragePool."""
    def init(name, *shape):
        return numpy_helper.from_array(RNG.standard_normal(shape).astype(np.float32) * 0.1,
                                       name)

    nodes = [
        helper.make_node("Conv", ["x", "sw", "sb"], ["s"]),
        helper.make_node("Relu", ["s"], ["sr"]),
        helper.make_node("Conv", ["sr", "ew1", "eb1"], ["e1"]),
        helper.make_node("Conv", ["sr", "ew3", "eb3"], ["e3"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["e1"], ["e1r"]),
        helper.make_node("Relu", ["e3"], ["e3r"]),
        helper.make_node("Concat", ["e1r", "e3r"], ["cat"], axis=1),
        helper.make_node("Conv", ["cat", "cw", "cb"], ["c"]),
        helper.make_node("Relu", ["c"], ["cr"]),
        helper.make_node("GlobalAveragePool", ["cr"], ["y"]),
    ]
    inits = [init("sw", 16, 96, 1, 1), init("sb", 16), init("ew1", 32, 16, 1, 1),
             init("eb1", 32), init("ew3", 32, 16, 3, 3), init("eb3", 32),
             init("cw", 50, 64, 1, 1), init("cb", 50)]
    graph = helper.make_graph(
        nodes, "squeeze_tail", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                              [1, 96, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 50, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    onnx.checker.check_model(model)
    return model.SerializeToString()


@pytest.mark.parametrize("level", [0, 3])
def test_session_matches_onnxruntime(level):
    from onnxkit.runtime.profile import Profiler

    ort = pytest.importorskip("onnxruntime")
    model = _squeeze_tail()
    x = RNG.standard_normal((1, 96, 3, 3)).astype(np.float32)
    sess = onnxkit.Session(model, executor="cpu", level=level)
    prof = Profiler(sess)
    (y,) = sess.run(None, {"x": x}, trace=prof)
    (expected,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    convs = [r["kernel"] for r in prof.rows(by="node") if "Conv" in r["op_type"]]
    assert len(convs) == 4 and all(k.endswith("[dots]") for k in convs)  # every Conv
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
