"""Convolution by bands (``onnxkit.kernels.cpu._banded``): the stems' row bands and the
pointwise layers' column bands.

Oracle: a direct convolution in float64 written here tap by tap with numpy slicing
(no im2col, no BLAS call of ours). The row-band layers are big enough for the static
rule to run them by bands, through sessions, with band heights that leave a partial
last band and rows wholly in the padding; the pointwise route is called as its layers
call it (the rule never picks it). The other BLAS library runs in a fresh process with
``ONNXKIT_BLAS=openblas``. Nothing is patched.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.kernels.cpu import _banded, _blas, _pointwise
from onnxkit.kernels.cpu._math import activation_code
from onnxkit.kernels.cpu._threads import threads

pytestmark = pytest.mark.skipif(not _blas.AVAILABLE,
                                reason="no BLAS library found (oneMKL, numpy's OpenBLAS)")
RNG = np.random.default_rng(5)


def direct_conv(X, W, B, Z, pads, strides, dilations):
    """float64: Y[n, m, oh, ow] = B[m] + sum_{c,i,j} X_pad[n, c, oh*sh + i*dh, ...] W[m, c, i, j]
    (+ Z)."""
    n, c, h, w = X.shape
    m, _, kh, kw = W.shape
    pt, pl, pb, pr = pads
    (sh, sw), (dh, dw) = strides, dilations
    xp = np.zeros((n, c, h + pt + pb, w + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + w] = X
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, m, oh, ow)) + B.astype(np.float64)[None, :, None, None]
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            window = xp[:, :, rows, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            y += np.einsum("nchw,mc->nmhw", window, W[:, :, i, j].astype(np.float64))
    return y if Z is None else y + Z


CASES = [  # X shape, W shape, pads (t, l, b, r), strides, dilations, activation, residual
    # each big enough (K * output pixels >= _banded.MIN_COLUMNS) for the rule to run it by
    # row bands; heights that leave a partial last band
    ((1, 3, 112, 112), (16, 3, 7, 7), (3, 3, 3, 3), (2, 2), (1, 1), "Relu", False),  # stem
    ((1, 3, 201, 209), (8, 3, 3, 3), (1, 0, 2, 1), (2, 2), (1, 1), "Clip", True),
    ((1, 4, 97, 96), (6, 4, 3, 3), (1, 1, 1, 1), (1, 1), (1, 1), "", False),
    ((1, 4, 90, 89), (6, 4, 3, 3), (2, 2, 2, 2), (1, 1), (2, 2), "Relu", True),
    ((1, 5, 181, 130), (7, 5, 5, 3), (0, 1, 2, 0), (3, 2), (1, 1), "", False),
    ((1, 2, 731, 730), (3, 2, 1, 1), (0, 0, 0, 0), (2, 2), (1, 1), "", False),  # 1x1, strided
    ((1, 2, 121, 120), (3, 2, 3, 3), (4, 4, 4, 4), (1, 1), (1, 1), "Relu", False),  # rows all pad
]


def conv_model(xs, ws, pads, strides, dilations, act, has_z, dtype):
    """Conv (+ Relu / Clip(0, 6)) (+ a residual input r): one FusedConv at level 3."""
    t = "float" if dtype == np.float32 else "double"
    tail = {"Relu": "a = Relu (c)", "Clip": "a = Clip (c, lo, hi)", "": "a = Identity (c)"}[act]
    m = onnx.parser.parse_model(f"""<ir_version: 8, opset_import: ["" : 17]>
        g ({t}{list(xs)} x{f', {t}[n, m, h, w] r' if has_z else ''}) => ({t} y) {{
            c = Conv <pads = {list(pads)}, strides = {list(strides)},
                      dilations = {list(dilations)}> (x, W, B)
            {tail}
            y = {'Add (a, r)' if has_z else 'Identity (a)'}
        }}""")
    m.graph.initializer.extend([
        onnx.numpy_helper.from_array(RNG.standard_normal(ws).astype(dtype), "W"),
        onnx.numpy_helper.from_array(RNG.standard_normal(ws[0]).astype(dtype), "B"),
        onnx.numpy_helper.from_array(np.array(0, dtype), "lo"),
        onnx.numpy_helper.from_array(np.array(6, dtype), "hi")])
    return m


def expected_conv(m, feeds, pads, strides, dilations, act):
    """The oracle for ``conv_model``: ``direct_conv``, then the activation, then the
    residual (an Add after the activation)."""
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
    want = direct_conv(feeds["x"], weights["W"], weights["B"], None, pads, strides, dilations)
    want = {"Relu": lambda y: np.maximum(y, 0), "Clip": lambda y: np.clip(y, 0, 6),
            "": lambda y: y}[act](want)
    return want + feeds["r"] if "r" in feeds else want


@pytest.mark.parametrize("dtype", [np.float32])
@pytest.mark.parametrize("case", CASES,
                         ids=[f"{c[1][2]}x{c[1][3]}_{i}" for i, c in enumerate(CASES)])
def test_banded_conv_matches_a_direct_convolution(case, dtype):
    """Layers the static rule runs by row bands (reported as im2col, whose stems these
    are): a cpu session at level 3 (Conv, activation and residual fused) against the
    direct convolution, with the library the process uses (``ONNXKIT_BLAS``)."""
    xs, ws, pads, strides, dilations, act, has_z = case
    m = conv_model(xs, ws, pads, strides, dilations, act, has_z, dtype)
    feeds = {"x": RNG.standard_normal(xs).astype(dtype)}
    if has_z:
        pt, pl, pb, pr = pads
        oh = (xs[2] + pt + pb - dilations[0] * (ws[2] - 1) - 1) // strides[0] + 1
        ow = (xs[3] + pl + pr - dilations[1] * (ws[3] - 1) - 1) // strides[1] + 1
        feeds["r"] = RNG.standard_normal((xs[0], ws[0], oh, ow)).astype(dtype)
    want = expected_conv(m, feeds, pads, strides, dilations, act)
    sess = onnxkit.Session(m, executor="cpu", level=3)
    (Y,) = sess.run(None, feeds)
    assert [s.algorithm for s in sess.plan.steps if s.algorithm] == ["im2col"]
    assert Y.dtype == dtype and Y.shape == want.shape
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Y, want, **tol)


def test_band_rows_share_the_bands_evenly():
    """The stem of a ResNet (K = 147, 112 x 112 outputs): bands of about 1024 pixels,
    a number of them every thread gets the same share of, under 1 MiB of columns each."""
    rows = _banded.band_rows(147, 112, 112, 4)
    bands = -(-112 // rows)
    assert bands % threads() == 0 or rows == 1
    assert 147 * rows * 112 * 4 <= _banded.MAX_BAND_BYTES
    assert 512 <= rows * 112 <= 2048


def test_big_weights_keep_the_whole_image_product():
    """A 512-channel 3x3 layer would re-pack 9 MB of weights per band: not eligible."""
    assert not _banded.eligible(512, 512 * 9, 49, 1, 4)
    assert not _banded.eligible(64, 147, 12544, 2, 4)  # grouped
    assert _banded.eligible(64, 147, 12544, 1, 4)


POINTWISE = [  # X shape, M, activation, residual: pixel counts that leave a partial band
    ((1, 4, 48, 48), 6, "Relu", False),
    ((2, 5, 30, 71), 7, "Clip", True),
    ((1, 3, 50, 41), 9, "", False),
    ((1, 8, 65, 67), 4, "Relu", True),
]


@pytest.mark.parametrize("dtype", [np.float32])
@pytest.mark.parametrize("case", POINTWISE, ids=[f"pw{i}" for i in range(len(POINTWISE))])
def test_pointwise_bands_match_a_direct_convolution(case, dtype):
    """The pointwise route by bands of columns, called as the layer calls it. The static
    rule never picks it (only a tuned session may: the test below), so it is called
    directly; its band width is its own (``_banded.pointwise_width``)."""
    xs, m, act, has_z = case
    X = RNG.standard_normal(xs).astype(dtype)
    W = RNG.standard_normal((m, xs[1], 1, 1)).astype(dtype)
    B = RNG.standard_normal(m).astype(dtype)
    want = direct_conv(X, W, B, None, (0, 0, 0, 0), (1, 1), (1, 1))
    Z = RNG.standard_normal(want.shape).astype(dtype) if has_z else None
    if has_z:
        want = want + Z
    code = activation_code(act, [0.0, 6.0] if act == "Clip" else None)
    want = {"Relu": np.maximum(want, 0), "Clip": np.clip(want, 0, 6), "": want}[act]
    Y = _pointwise.by_bands(X, W, B, Z, code)
    assert Y.dtype == dtype and Y.shape == want.shape
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(Y, want, **tol)


def test_a_pointwise_layer_is_timed_against_the_whole_image_product():
    """With tuning on, an eligible pointwise layer runs both ways on its first run; the
    profiler names the one kept, and the answer is the same whichever won."""
    from onnx import TensorProto, helper, numpy_helper

    from onnxkit.runtime.profile import Profiler

    X = RNG.standard_normal((1, 16, 64, 64)).astype(np.float32)
    W = RNG.standard_normal((24, 16, 1, 1)).astype(np.float32)
    B = RNG.standard_normal(24).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"]), helper.make_node("Relu", ["c"], ["y"])],
        "pw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = onnxkit.Session(model, executor="cpu", level=2, tune=True)  # -> FusedConv + Relu
    want = np.maximum(direct_conv(X, W, B, None, (0, 0, 0, 0), (1, 1), (1, 1)), 0)
    prof = Profiler(sess)
    for _ in range(2):
        (Y,) = sess.run(None, {"x": X}, trace=prof)
        np.testing.assert_allclose(Y, want, rtol=1e-5, atol=1e-5)
    (row,) = prof.rows(by="node")
    assert row["kernel"].rsplit("[", 1)[1] in ("bands]", "im2col]")
    timed = [e for e in sess.executor.tuning.log if e[0][0] == "conv 1x1"]
    (key, winner, best), = timed
    assert set(best) == {"bands", "im2col"} and winner == min(best, key=best.get)
    assert sess.plan.steps[0].algorithm == winner


def test_which_pointwise_layers_may_run_by_bands():
    assert _banded.pointwise_eligible(96, 16, 112 * 112, 1, 4)  # MobileNetV2's expansion
    assert not _banded.pointwise_eligible(1280, 320, 49, 1, 4)  # big weights, 7x7
    assert not _banded.pointwise_eligible(96, 16, 112 * 112, 2, 4)  # grouped
    assert not _banded.pointwise_eligible(16, 8, 100, 1, 4)  # a small plane
    assert _banded.pointwise_width(96, 12544, 4) % 64 == 0
    assert 96 * _banded.pointwise_width(96, 12544, 4) * 4 <= _banded.POINTWISE_BAND_BYTES


@pytest.mark.skipif(len(_blas.CHOICES) < 2, reason="one BLAS library only")
def test_both_kinds_of_bands_on_the_other_library():
    """The same layers with ``ONNXKIT_BLAS=openblas`` (the library a user can pick; the
    tests above run the process's default, oneMKL where installed): in a fresh process,
    since the variable is read when the kernels load."""
    import os
    import subprocess
    import sys

    script = f"""
import sys
import numpy as np
sys.path.insert(0, {os.path.dirname(__file__)!r})
import test_cpu_banded as t
assert t._blas.CHOICES == ("openblas",), t._blas.CHOICES
for case in t.CASES:
    t.test_banded_conv_matches_a_direct_convolution(case, np.float32)
for case in t.POINTWISE:
    t.test_pointwise_bands_match_a_direct_convolution(case, np.float32)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "ONNXKIT_BLAS": "openblas"}, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_float64_runs_on_the_reference_kernels():
    """The compiled kernels take float32 only (``_dtypes.COMPILED``): a float64 layer
    the rule would run by bands reports no algorithm and gives the direct convolution's
    float64 values."""
    xs, ws, pads, strides, dilations, act, has_z = CASES[0]
    m = conv_model(xs, ws, pads, strides, dilations, act, has_z, np.float64)
    feeds = {"x": RNG.standard_normal(xs)}
    if has_z:
        oh = (xs[2] + pads[0] + pads[2] - dilations[0] * (ws[2] - 1) - 1) // strides[0] + 1
        ow = (xs[3] + pads[1] + pads[3] - dilations[1] * (ws[3] - 1) - 1) // strides[1] + 1
        feeds["r"] = RNG.standard_normal((xs[0], ws[0], oh, ow))
    want = expected_conv(m, feeds, pads, strides, dilations, act)
    sess = onnxkit.Session(m, executor="cpu", level=3)
    (Y,) = sess.run(None, feeds)
    assert Y.dtype == np.float64
    assert [s.algorithm for s in sess.plan.steps if s.algorithm] == []
    np.testing.assert_allclose(Y, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
