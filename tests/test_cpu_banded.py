"""Convolution by bands (``onnxkit.kernels.cpu._banded``): the stems' row bands and the
pointwise layers' column bands.

Oracle: a direct convolution in float64 written here tap by tap with numpy slicing
(no im2col, no BLAS call of ours). Bands are forced to 1, 2 and 3 rows so that every
band edge (first, last, partial band, rows wholly in the padding) is crossed; the
pointwise bands to widths that leave a partial last band.
"""

from __future__ import annotations

import numpy as np
import pytest

import onnxkit
from onnxkit.kernels.cpu import _banded, _blas, _conv_routes, _pointwise, conv
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
    ((1, 3, 30, 28), (16, 3, 7, 7), (3, 3, 3, 3), (2, 2), (1, 1), "Relu", False),
    ((2, 3, 37, 41), (8, 3, 3, 3), (1, 0, 2, 1), (2, 2), (1, 1), "Clip", True),
    ((1, 4, 20, 20), (6, 4, 3, 3), (1, 1, 1, 1), (1, 1), (1, 1), "", False),
    ((1, 4, 20, 19), (6, 4, 3, 3), (2, 2, 2, 2), (1, 1), (2, 2), "Relu", True),
    ((1, 5, 17, 13), (7, 5, 5, 3), (0, 1, 2, 0), (3, 2), (1, 1), "", False),
    ((1, 2, 9, 9), (3, 2, 1, 1), (0, 0, 0, 0), (2, 2), (1, 1), "", False),
    ((1, 2, 6, 6), (3, 2, 3, 3), (4, 4, 4, 4), (1, 1), (1, 1), "Relu", False),  # rows all pad
]


@pytest.mark.parametrize("lib", range(len(_blas.CHOICES)), ids=lambda i: _blas.CHOICES[i])
@pytest.mark.parametrize("rows", [1, 2, 3, None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES,
                         ids=[f"{c[1][2]}x{c[1][3]}_{i}" for i, c in enumerate(CASES)])
def test_banded_conv_matches_a_direct_convolution(monkeypatch, case, dtype, rows, lib):
    xs, ws, pads, strides, dilations, act, has_z = case
    monkeypatch.setattr(_banded, "MIN_COLUMNS", 0)  # small test layers take the band path
    monkeypatch.setattr(_conv_routes, "with_library", lambda key, run: run(lib))  # each BLAS
    if rows is not None:
        monkeypatch.setattr(_conv_routes, "band_rows", lambda *args: rows)
    calls = []
    real = _conv_routes._by_bands
    monkeypatch.setattr(_conv_routes, "_by_bands", lambda *a: calls.append(1) or real(*a))
    X = RNG.standard_normal(xs).astype(dtype)
    W = RNG.standard_normal(ws).astype(dtype)
    B = RNG.standard_normal(ws[0]).astype(dtype)
    want = direct_conv(X, W, B, None, pads, strides, dilations)
    Z = RNG.standard_normal(want.shape).astype(dtype) if has_z else None
    if has_z:
        want = want + Z
    if act == "Relu":
        want = np.maximum(want, 0)
    elif act == "Clip":
        want = np.clip(want, 0, 6)
    Y = conv.fused_conv(X, W, B, Z, pads=list(pads), strides=list(strides),
                        dilations=list(dilations), activation=act,
                        activation_params=[0.0, 6.0] if act == "Clip" else None)
    assert calls, "the layer did not take the band path"
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


POINTWISE = [  # X shape, M, activation, residual, band width
    ((1, 4, 48, 48), 6, "Relu", False, 256),
    ((2, 5, 30, 41), 7, "Clip", True, 320),   # 1230 pixels: a partial last band
    ((1, 3, 16, 16), 9, "", False, 1024),     # one band
    ((1, 8, 33, 35), 4, "Relu", True, 64),    # many bands, more than the threads
]


@pytest.mark.parametrize("lib", range(len(_blas.CHOICES)), ids=lambda i: _blas.CHOICES[i])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", POINTWISE, ids=[f"pw{i}" for i in range(len(POINTWISE))])
def test_pointwise_bands_match_a_direct_convolution(monkeypatch, case, dtype, lib):
    xs, m, act, has_z, width = case
    monkeypatch.setattr(_pointwise, "with_library", lambda key, run: run(lib))
    monkeypatch.setattr(_pointwise, "pointwise_width", lambda *args: width)
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
