"""The register-tiled kernels (``onnxkit/kernels/cuda/_tiles.py``) under every tiling.

``choose`` picks one tiling per product; these tests force each one (the real GPU
tilings included: the simulator runs them, slowly, on small shapes) on products that
cross tile edges, span several K slices, and read operands through strides.
Runs on a GPU, or under the simulator: ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``.
"""

import numpy as np
import pytest

from onnxkit.kernels.cuda import load_cuda_kernels
from onnxkit.kernels.cuda._device import device, download
from onnxkit.kernels.cuda._scalar import relu
from onnxkit.kernels.cuda._tiles import LARGE, MEDIUM, SIMULATED, WIDE
from onnxkit.ops.nn.conv import conv as reference_conv

load_cuda_kernels()
from onnxkit.kernels.cuda.conv import conv_nd  # noqa: E402 (after the registry is loaded)
from onnxkit.kernels.cuda.matmul import _gemm, _matmul, _operands  # noqa: E402

TILINGS = [SIMULATED, MEDIUM, WIDE, LARGE]
IDS = ["simulated", "medium", "wide", "large"]
R = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return R.uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize("tiles", TILINGS, ids=IDS)
@pytest.mark.parametrize("trans_a,trans_b", [(0, 0), (1, 1)])
def test_gemm_crosses_tile_edges(tiles, trans_a, trans_b):
    # 2 x 2 blocks, each edge block partly outside; K spans three slices, the last partial
    M, N, K = tiles.bm + 3, tiles.bn + 5, 2 * tiles.bk + 3
    A = rand(K, M) if trans_a else rand(M, K)
    B = rand(N, K) if trans_b else rand(K, N)
    C = rand(N)
    got = download(_gemm(A, B, C, 0.5, 2.0, trans_a, trans_b, tiles=tiles))
    a = A.T if trans_a else A
    b = B.T if trans_b else B
    want = 0.5 * (a.astype(np.float64) @ b) + 2.0 * C
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("tiles", TILINGS, ids=IDS)
def test_batched_matmul_with_broadcast_and_relu(tiles):
    A, B, bias = rand(3, 1, 9, 21), rand(2, 21, 17), rand(17)
    got = download(_matmul(*_operands(A, B), device(bias), relu, tiles=tiles))
    want = np.maximum(np.matmul(A.astype(np.float64), B) + bias, 0)
    assert got.shape == (3, 2, 9, 17)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_float64_gemm_keeps_float64():
    A, B = rand(33, 20, dtype=np.float64), rand(20, 9, dtype=np.float64)
    got = download(_gemm(A, B, None, 1.0, 1.0, 0, 0, tiles=MEDIUM))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, A @ B, rtol=1e-12)


CONVS = {  # X shape, W shape, attributes
    # 2 x 3 x 3 output pixels by 19 channels: past one SIMULATED tile both ways, each pad
    # and the stride's leftover row read, at the fewest simulated blocks
    "pad_stride": ((2, 5, 5, 4), (19, 5, 3, 3), dict(pads=[1, 0, 2, 1], strides=[2, 1])),
    "dilation_groups": ((1, 6, 7, 7), (18, 2, 2, 3), dict(dilations=[2, 1], group=3)),
    "conv_1d": ((3, 4, 11), (9, 4, 3), dict(pads=[2, 1], strides=[2])),
    "conv_3d": ((1, 2, 4, 5, 5), (10, 2, 2, 3, 2), dict(pads=[1, 0, 1, 0, 1, 1])),
    "pointwise": ((2, 16, 5, 5), (24, 16, 1, 1), {}),
}


@pytest.mark.parametrize("tiles", TILINGS, ids=IDS)
@pytest.mark.parametrize("name", list(CONVS))
def test_implicit_gemm_conv(tiles, name):
    x_shape, w_shape, attrs = CONVS[name]
    X, W = rand(*x_shape), rand(*w_shape)
    B = rand(w_shape[0])
    want = reference_conv(X, W, B, **attrs)
    Z = rand(*want.shape)
    got = download(conv_nd(X, W, B, Z, formula=relu, method="gemm", tiles=tiles, **attrs))
    np.testing.assert_allclose(got, np.maximum(want.astype(np.float64) + Z, 0), rtol=1e-5,
                               atol=1e-5)


# --- split-K: few output tiles, long K (batch-1 convolutions, small-batch Gemm) ----------

@pytest.mark.parametrize("splits", [2, 3])
@pytest.mark.parametrize("trans_b", [0, 1])
def test_split_k_gemm_sums_the_parts_then_applies_the_epilogue(splits, trans_b):
    M, N, K = 7, 11, 5 * SIMULATED.bk + 3  # the last part is shorter than the others
    A, C = rand(M, K), rand(M, 1)
    B = rand(N, K) if trans_b else rand(K, N)
    got = download(_gemm(A, B, C, 0.5, 2.0, 0, trans_b, formula=relu, tiles=SIMULATED,
                         splits=splits))
    b = B.T if trans_b else B
    want = np.maximum(0.5 * (A.astype(np.float64) @ b) + 2.0 * C, 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("splits", [2, 4])
@pytest.mark.parametrize("name", ["pad_stride", "dilation_groups"])
def test_split_k_conv_sums_the_parts_then_adds_bias_and_z(splits, name):
    x_shape, w_shape, attrs = CONVS[name]
    X, W, B = rand(*x_shape), rand(*w_shape), rand(w_shape[0])
    want = reference_conv(X, W, B, **attrs)
    Z = rand(*want.shape)
    got = download(conv_nd(X, W, B, Z, formula=relu, method="gemm", tiles=SIMULATED,
                           splits=splits, **attrs))
    np.testing.assert_allclose(got, np.maximum(want.astype(np.float64) + Z, 0), rtol=1e-5,
                               atol=1e-5)
