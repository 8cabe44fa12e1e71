"""Spatial kernels that replaced reference fallbacks on the ``cpu`` executor: 3-D
convolutions (``_conv_nd.conv_nd``: columns per kernel tap, the products on the Numba
threads, the epilogue), ConvTranspose and InstanceNormalization. Oracle: onnxruntime
on the unfused model (onnx.reference for float64, which onnxruntime's Conv does not
take). That a float32 3-D convolution ran the cpu kernel is what the profiler reports
(its algorithm, ``[n-d]``; float64 runs the reference kernel, which names none);
ConvTranspose and InstanceNormalization report no algorithm, so their tests check the
outputs only."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.runtime.profile import Profiler

CASES = [  # (id, X shape, W shape, Conv attributes, what follows the Conv)
    ("pads", (1, 4, 6, 7, 8), (5, 4, 3, 3, 3), "<pads = [1, 1, 1, 1, 1, 1]>", "y = Relu (c)"),
    ("strides, dilations, no bias", (2, 3, 9, 8, 7), (4, 3, 2, 3, 2),
     "<strides = [2, 1, 2], dilations = [1, 2, 1]>", "y = Identity (c)"),
    ("groups, SAME_UPPER, residual", (1, 6, 5, 5, 5), (6, 2, 3, 1, 3),
     '<group = 3, auto_pad = "SAME_UPPER">', "y = Add (c, x)"),
    ("1x1x1, SiLU", (1, 8, 4, 5, 6), (8, 8, 1, 1, 1), "", "s = Sigmoid (c)\n y = Mul (c, s)"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_3d_matches_onnxruntime(case, dtype):
    _, xs, ws, attrs, tail = case
    t = "float" if dtype == np.float32 else "double"
    bias = "" if "no bias" in case[0] else ", B"
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g ({t}{list(xs)} x) => ({t} y) {{
            c = Conv {attrs} (x, W{bias})
            {tail}
        }}""")
    rng = np.random.default_rng(xs[1] * 10 + ws[0])
    m.graph.initializer.extend([
        onnx.numpy_helper.from_array(rng.standard_normal(ws).astype(dtype), "W"),
        onnx.numpy_helper.from_array(rng.standard_normal(ws[0]).astype(dtype), "B")])
    x = rng.standard_normal(xs).astype(dtype)
    if dtype == np.float32:
        expected = ort.InferenceSession(m.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    else:
        expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for level in (0, 3):
        sess = onnxkit.Session(m, executor="cpu", level=level)
        prof = Profiler(sess)
        got = sess.run(None, {"x": x}, trace=prof)[0]
        assert got.dtype == dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
        # the profiler names the algorithm: the cpu kernel's n-d columns for float32; the
        # compiled kernels take float32 only, so float64 runs the reference ("[reference]")
        (conv_row,) = [r for r in prof.rows(by="op") if r["op_type"].endswith("Conv")]
        if dtype == np.float32:
            assert conv_row["kernel"].endswith(" [n-d]"), conv_row["kernel"]
        else:
            assert conv_row["kernel"].endswith(" [reference]"), conv_row["kernel"]


TRANSPOSED = [  # (id, X shape, W shape, ConvTranspose attributes)
    ("stride 2, pads", (1, 6, 5, 7), (6, 4, 4, 4), "<strides = [2, 2], pads = [1, 1, 1, 1]>"),
    ("groups, dilations, output_padding", (2, 4, 4, 5), (4, 3, 3, 2),
     "<group = 2, dilations = [2, 1], strides = [2, 3], output_padding = [1, 2]>"),
    ("output_shape, SAME_LOWER", (1, 3, 4, 4), (3, 2, 3, 3),
     '<strides = [2, 2], output_shape = [9, 9], auto_pad = "SAME_LOWER">'),
    ("1-D", (1, 3, 7), (3, 2, 3), "<strides = [2]>"),
    ("3-D", (1, 2, 3, 4, 3), (2, 3, 2, 2, 2), "<strides = [2, 1, 2]>"),
]


@pytest.mark.parametrize("case", TRANSPOSED, ids=lambda c: c[0])
def test_conv_transpose_matches_onnxruntime(case):
    _, xs, ws, attrs = case
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g (float{list(xs)} x) => (float y) {{ y = ConvTranspose {attrs} (x, W, B) }}""")
    rng = np.random.default_rng(sum(xs) + sum(ws))
    group = 2 if "group" in attrs else 1
    m.graph.initializer.extend([
        onnx.numpy_helper.from_array(rng.standard_normal(ws).astype(np.float32), "W"),
        onnx.numpy_helper.from_array(rng.standard_normal(ws[1] * group).astype(np.float32),
                                     "B")])
    x = rng.standard_normal(xs).astype(np.float32)
    expected = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = onnxkit.Session(m, executor="cpu").run(None, {"x": x})[0]
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 4, 3, 4, 5), (2, 2, 9)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_instance_normalization_matches_onnxruntime(shape, dtype):
    t = "float" if dtype == np.float32 else "double"
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g ({t}{list(shape)} x) => ({t} y) {{
            y = InstanceNormalization <epsilon = 0.01> (x, s, b) }}""")
    rng = np.random.default_rng(len(shape))
    m.graph.initializer.extend([
        onnx.numpy_helper.from_array(rng.standard_normal(shape[1]).astype(dtype), "s"),
        onnx.numpy_helper.from_array(rng.standard_normal(shape[1]).astype(dtype), "b")])
    x = (rng.standard_normal(shape) * 3 + 5).astype(dtype)  # an offset: var from x - mean
    if dtype == np.float32:
        expected = ort.InferenceSession(m.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    else:
        expected = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = onnxkit.Session(m, executor="cpu").run(None, {"x": x})[0]
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
