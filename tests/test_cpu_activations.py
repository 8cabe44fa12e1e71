"""Sigmoid, Tanh and Swish on the ``cpu`` executor: the vectorizable exp of ``_math``, the
standalone kernels, and the pass after a fused kernel (Conv, Gemm, MatMul, BatchNorm).

Oracles: numpy's float64 exp and tanh for the scalar formulas; onnxruntime running the
unfused model for the sessions (the optimizer turns Conv -> Sigmoid -> Mul into one
FusedConv with activation Swish, which onnxruntime never sees).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from numba import njit

import onnxkit
from onnxkit.kernels.cpu._math import FASTMATH, sigmoid, tanh
from onnxkit.kernels.cpu.activations import activate_in_place
from onnxkit.kernels.cpu._math import SIGMOID

FLOATS = (np.float32, np.float64)
# float32: within 3 ulps of the float64 function; float64: within 32 (measured: 2.3 and
# 1.9 ulps in float32, 19 and 2 in float64)
ULPS = {np.float32: 3, np.float64: 32}


@njit(fastmath=FASTMATH, error_model="numpy")
def _apply(x, which, y):
    for i in range(x.size):
        y[i] = sigmoid(x[i]) if which == 0 else tanh(x[i])


def _grid(dtype):
    rng = np.random.default_rng(3)
    return np.concatenate([rng.standard_normal(200_000) * 12, np.linspace(-120, 120, 40_001),
                           np.linspace(-1e-3, 1e-3, 2_001), [1e-30, -1e-30, 5e-8, -5e-8]]
                          ).astype(dtype)


def _exact(x, which):
    x = x.astype(np.float64)
    if which == 1:
        return np.tanh(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("which", [0, 1], ids=["sigmoid", "tanh"])
def test_formulas_within_a_few_ulps_of_float64(dtype, which):
    x = _grid(dtype)
    y = np.empty_like(x)
    _apply(x, which, y)
    exact = _exact(x, which)
    tiny = np.finfo(dtype).tiny * 1e6  # below: the denormal tail, flushed to 0
    big = np.abs(exact) > tiny
    ulps = np.abs(y[big] - exact[big]) / (np.abs(exact[big]) * np.finfo(dtype).eps)
    assert ulps.max() <= ULPS[dtype], f"worst at x = {x[big][np.argmax(ulps)]!r}"
    assert np.all(np.abs(y[~big]) <= 2 * tiny)


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values(dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1000.0, -1000.0], dtype)
    s, t = np.empty_like(x), np.empty_like(x)
    _apply(x, 0, s)
    _apply(x, 1, t)
    np.testing.assert_array_equal(s, np.array([0.5, 0.5, 1, 0, np.nan, 1, 0], dtype))
    np.testing.assert_array_equal(t, np.array([0, 0, 1, -1, np.nan, 1, -1], dtype))


def test_in_place_pass_on_a_strided_view_writes_back():
    base = np.linspace(-4, 4, 48, dtype=np.float32).reshape(6, 8)
    view = base[:, ::2]  # not contiguous: the pass works on a copy, then writes it back
    expected = _exact(view, 0).astype(np.float32)
    activate_in_place(view, (SIGMOID, 0.0, 0.0))
    np.testing.assert_allclose(base[:, ::2], expected, rtol=1e-6)
    np.testing.assert_array_equal(base[:, 1::2], np.linspace(-4, 4, 48, dtype=np.float32)
                                  .reshape(6, 8)[:, 1::2])


def _model(body: str, inputs: str, outputs: str, opset: int = 17, **init):
    m = onnx.parser.parse_model(
        f'<ir_version: 8, opset_import: ["" : {opset}]>\n'
        f"g ({inputs}) => ({outputs}) {{\n{body}\n}}")
    for name, value in init.items():
        m.graph.initializer.append(onnx.numpy_helper.from_array(value, name))
    return m


def _rand(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _conv_cases():
    """(id, X shape, W shape, conv attributes): one per path of the cpu convolution."""
    return [
        ("im2col", (1, 4, 9, 9), (6, 4, 3, 3), "<strides = [2, 2]>"),
        ("1x1", (1, 8, 10, 10), (12, 8, 1, 1), ""),
        ("depthwise", (1, 8, 12, 12), (8, 1, 3, 3), "<group = 8, pads = [1, 1, 1, 1]>"),
        ("depthwise channels-last", (1, 32, 5, 5), (32, 1, 5, 5),
         "<group = 32, pads = [2, 2, 2, 2]>"),
        ("Winograd", (1, 16, 14, 14), (16, 16, 3, 3), "<pads = [1, 1, 1, 1]>"),
        ("row bands", (1, 3, 96, 96), (8, 3, 7, 7), "<strides = [2, 2], pads = [3, 3, 3, 3]>"),
    ]


@pytest.mark.parametrize("case", _conv_cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("tail", ["silu", "sigmoid", "tanh"])
def test_fused_conv_with_a_separate_activation_matches_onnxruntime(case, tail):
    _, xs, ws, attrs = case
    rng = np.random.default_rng(len(xs) + ws[0])
    body = {"silu": "s = Sigmoid (c)\n y = Mul (s, c)", "sigmoid": "y = Sigmoid (c)",
            "tanh": "y = Tanh (c)"}[tail]
    m = _model(f"c = Conv {attrs} (x, W, B)\n{body}", f"float{list(xs)} x", "float y",
               W=_rand(rng, *ws) * 0.5, B=_rand(rng, ws[0]))
    x = _rand(rng, *xs)
    sess = onnxkit.Session(m, executor="cpu", level=3)
    assert [n.op_type for n in sess.model.graph.node] == ["FusedConv"]
    expected = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gemm_matmul_batchnorm_and_standalone_ops_match_onnxruntime(dtype):
    rng = np.random.default_rng(11)
    t = "float" if dtype == np.float32 else "double"
    m = _model("""
        g1 = Gemm <transB = 1> (a, Wg, Bg)
        s1 = Sigmoid (g1)
        y1 = Mul (g1, s1)
        m1 = MatMul (b, Wm)
        y2 = Tanh (m1)
        n1 = BatchNormalization (x, sc, bb, mu, va)
        y3 = Sigmoid (n1)
        y4 = Tanh (x)
        y5 = Sigmoid (b)
    """, f"{t}[5,6] a, {t}[2,5,6] b, {t}[2,4,7,7] x",
        f"{t} y1, {t} y2, {t} y3, {t} y4, {t} y5",
        Wg=_rand(rng, 4, 6, dtype=dtype), Bg=_rand(rng, 4, dtype=dtype),
        Wm=_rand(rng, 6, 3, dtype=dtype), sc=_rand(rng, 4, dtype=dtype),
        bb=_rand(rng, 4, dtype=dtype), mu=_rand(rng, 4, dtype=dtype),
        va=np.abs(_rand(rng, 4, dtype=dtype)) + 0.5)
    feeds = {"a": _rand(rng, 5, 6, dtype=dtype) * 3, "b": _rand(rng, 2, 5, 6, dtype=dtype) * 3,
             "x": _rand(rng, 2, 4, 7, 7, dtype=dtype) * 3}
    sess = onnxkit.Session(m, executor="cpu", level=3)
    fused = sorted(n.op_type for n in sess.model.graph.node if n.domain == "onnxkit")
    assert fused == ["FusedBatchNormalization", "FusedGemm", "FusedMatMul"]
    expected = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(sess.run(None, feeds), expected):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_swish_op_of_opset_24_matches_its_formula():
    x = np.linspace(-30, 30, 601, dtype=np.float32).reshape(1, -1)
    m = _model("y = Swish <alpha = 0.7> (x)", "float[1,601] x", "float y", opset=24)
    m.ir_version = 10
    got = onnxkit.Session(m, executor="cpu").run(None, {"x": x})[0]
    v = np.float32(0.7) * x  # alpha * x rounded to float32 as the kernel does: sigmoid's
    # relative error grows with |v| times v's (0.7 * 21 * 6e-8 ~ 1e-6 at x = -21)
    np.testing.assert_allclose(got, x.astype(np.float64) * _exact(v, 0), rtol=1e-6, atol=1e-30)
