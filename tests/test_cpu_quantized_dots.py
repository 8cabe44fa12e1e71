"""QLinearConv / ConvInteger's integer products on the cpu executor (``_quantized_dots``)
against onnx.reference and exact int64 sums, bit for bit.

The product takes blocks of four output channels by two output pixels, rows padded to a
multiple of 16: the cases cover channel counts and pixel counts that leave partial blocks
(also inside groups), reductions that are not a multiple of 16, batches, int16 weight rows
(a zero point moves int8 weights out of int8) and sums next to the int32 bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxkit
from tests.test_cpu_quantized import model_of

U8, I8 = np.uint8, np.int8


def conv_model(op, inputs, attrs, fed=(0,)):
    out_type = np.int32 if op == "ConvInteger" else np.asarray(inputs[-2]).dtype
    return model_of(op, inputs, attrs, fed, out_types=[out_type], opset=10)


def cpu_and_oracle(op, inputs, attrs, fed=(0,)):
    model = conv_model(op, inputs, attrs, fed)
    feeds = {f"in{k}": np.asarray(inputs[k]) for k in fed}
    (cpu,) = onnxkit.Session(model, "cpu").run(None, feeds)
    (oracle,) = ReferenceEvaluator(model).run(None, feeds)
    return cpu, oracle


def exact_conv(x, zx, w, zw, strides=(1, 1), pads=(0, 0, 0, 0)):
    """conv(x - zx, w - zw) in int64, one group, no dilation."""
    xs = np.pad(x.astype(np.int64) - int(zx), [(0, 0), (0, 0), (pads[0], pads[2]),
                                                (pads[1], pads[3])])
    ws = w.astype(np.int64) - np.asarray(zw, np.int64).reshape(-1, 1, 1, 1)
    kh, kw = w.shape[2:]
    oh = (xs.shape[2] - kh) // strides[0] + 1
    ow = (xs.shape[3] - kw) // strides[1] + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            patch = xs[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw]
            y[:, :, i, j] = np.einsum("nchw,mchw->nm", patch, ws)
    return y


SHAPES = [  # x shape, w shape, attributes: partial blocks of rows and pixels
    ((3, 5, 7, 7), (7, 5, 3, 3), {"pads": [1, 2, 0, 1]}),  # M = 7, 7x7 - odd pixel count
    ((1, 6, 9, 5), (9, 2, 3, 3), {"group": 3, "strides": [2, 1], "dilations": [2, 1]}),
    ((2, 12, 5, 5), (6, 4, 1, 1), {"group": 3}),  # 1x1, two rows a group: clamped blocks
    ((1, 17, 6, 6), (5, 17, 1, 1), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 32, 4, 4), (8, 32, 1, 1), {}),  # pointwise, K = 32: the input is the patches
    ((1, 3, 20, 20), (10, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 3, 3]}),  # K = 147
    ((1, 64, 1, 1), (3, 64, 1, 1), {}),  # one pixel
]


@pytest.mark.parametrize("x_dtype,w_dtype", [(U8, I8), (I8, I8), (U8, U8)])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s[1])))
def test_qlinear_conv_blocks(x_dtype, w_dtype, shape):
    x_shape, w_shape, attrs = shape
    rng = np.random.default_rng(w_shape[0] * 31 + w_shape[1])
    info_x, info_w = np.iinfo(x_dtype), np.iinfo(w_dtype)
    x = rng.integers(info_x.min, info_x.max + 1, x_shape).astype(x_dtype)
    w = rng.integers(info_w.min, info_w.max + 1, w_shape).astype(w_dtype)
    m = w_shape[0]
    zx = x_dtype(info_x.min + 37)
    w_zero = rng.integers(info_w.min, info_w.max + 1, m).astype(w_dtype)  # int16 rows
    w_scale = rng.uniform(0.001, 0.01, m).astype(np.float32)
    bias = rng.integers(-20000, 20000, m).astype(np.int32)
    inputs = [x, np.float32(0.05), zx, w, w_scale, w_zero, np.float32(2.0),
              x_dtype(info_x.min + 100), bias]
    for fed in ((0,), (0, 3)):  # weights packed once per node, and fed
        cpu, oracle = cpu_and_oracle("QLinearConv", inputs, attrs, fed)
        assert cpu.dtype == oracle.dtype
        np.testing.assert_array_equal(cpu, oracle)
    symmetric = inputs[:5] + [np.zeros(m, w_dtype)] + inputs[6:]  # int8 rows
    cpu, oracle = cpu_and_oracle("QLinearConv", symmetric, attrs)
    np.testing.assert_array_equal(cpu, oracle)
    cpu, oracle = cpu_and_oracle("ConvInteger", [x, w, zx, w_zero], attrs)
    np.testing.assert_array_equal(cpu, oracle)


def bound_case(channels):
    """|x - zx| = 255 against |w - zw| = 255 (or 0 on the middle kernel row of the last
    three output channels) on every tap, all products of one sign, padding 1."""
    x = np.full((1, channels, 3, 3), -128, I8)
    w = np.full((6, channels, 3, 3), -128, I8)
    w[3:, :, 1] = 127
    return x, w, I8(127), I8(127)


def test_conv_integer_next_to_the_int32_bound():
    """3 * 3 * 3000 taps of 255 * 255: the centre sums to 1,755,675,000, below 2**31 (the
    integer products), every pair of products 130,050 (beyond int16); exact int64 sums
    are the oracle."""
    x, w, zx, zw = bound_case(3000)
    expected = exact_conv(x, zx, w, zw, pads=(1, 1, 1, 1))
    assert expected.max() == 1_755_675_000
    cpu, oracle = cpu_and_oracle("ConvInteger", [x, w, zx, zw], {"pads": [1, 1, 1, 1]})
    np.testing.assert_array_equal(oracle, expected.astype(np.int32))
    np.testing.assert_array_equal(cpu, oracle)


def test_qlinear_conv_beyond_the_int32_bound():
    """3700 channels: the centre sums to 2,165,332,500, beyond int32 (an int32 sum would
    wrap to a negative number); a bias of -2**31 and a scale of 2**-17 bring it to 136."""
    x, w, zx, zw = bound_case(3700)
    exact = exact_conv(x, zx, w, zw, pads=(1, 1, 1, 1))
    bias = np.full(6, -2**31, np.int32)
    scale = np.float32(2.0**-17)
    inputs = [x, np.float32(1), zx, w, scale, zw, np.float32(1), U8(0), bias]
    cpu, oracle = cpu_and_oracle("QLinearConv", inputs, {"pads": [1, 1, 1, 1]})
    by_hand = np.clip(np.rint((exact - 2**31) * np.float64(scale)), 0, 255).astype(U8)
    assert by_hand[0, 0, 1, 1] == 136
    np.testing.assert_array_equal(oracle, by_hand)
    np.testing.assert_array_equal(cpu, by_hand)


def test_qlinear_conv_largest_sums_requantized():
    """A 1x1 conv of 30,000 uint8 channels at 255 against int8 -128: each output sum is
    -979,200,000 + a per-channel offset, requantized in float64 as the spec says."""
    x = np.full((1, 30000, 2, 3), 255, U8)
    w = np.full((5, 30000, 1, 1), -128, I8)
    w[:, :5, 0, 0] = np.arange(5)[:, None] - 2
    exact = exact_conv(x, 0, w, 0)
    scale = np.float32(1.0 / 4096)
    inputs = [x, np.float32(1), U8(0), w, scale, I8(0), np.float32(1), U8(0),
              np.full(5, 979_200_000, np.int32)]
    cpu, oracle = cpu_and_oracle("QLinearConv", inputs, {})
    mult = np.float64(np.float32(1)) * np.float64(scale) / np.float64(np.float32(1))
    by_hand = np.clip(np.rint((exact + 979_200_000) * mult), 0, 255).astype(U8)
    np.testing.assert_array_equal(oracle, by_hand)
    np.testing.assert_array_equal(cpu, by_hand)


def matmul_integer(a, b, za, zb):
    names = ["a", "b", "za", "zb"]
    node = helper.make_node("MatMulInteger", names, ["y"])
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in zip(names[1:], (b, za, zb))]
    graph = helper.make_graph([node], "mmi", [helper.make_tensor_value_info(
        "a", helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)],
        [helper.make_tensor_value_info("y", 6, None)], inits)
    model = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 10)])
    (cpu,) = onnxkit.Session(model, "cpu").run(None, {"a": a})
    (oracle,) = ReferenceEvaluator(model).run(None, {"a": a})
    return cpu, oracle


@pytest.mark.parametrize("a_shape,n", [((2, 3, 1021), 67), ((1, 4001), 37), ((9, 130), 13)])
def test_matmul_integer_blocks(a_shape, n):
    """Rows of A and columns of B that leave partial blocks, K not a multiple of 16,
    per-column zero points (int16 columns): exact int64 sums. (The last is small enough
    for numpy's float32 matmul.)"""
    rng = np.random.default_rng(n)
    a = rng.integers(0, 256, a_shape).astype(U8)
    b = rng.integers(-128, 128, (a_shape[-1], n)).astype(I8)
    za, zb = U8(201), rng.integers(-128, 128, n).astype(I8)
    exact = (a.astype(np.int64) - 201) @ (b.astype(np.int64) - zb.astype(np.int64))
    cpu, oracle = matmul_integer(a, b, za, zb)
    np.testing.assert_array_equal(oracle, exact)
    np.testing.assert_array_equal(cpu, exact)


def test_matmul_integer_next_to_the_int32_bound():
    """33,000 products of 255 * 255 in one sum: 2,145,825,000, just below 2**31."""
    a = np.zeros((3, 33000), U8)
    a[1] = 255
    b = np.full((33000, 5), 127, I8)
    b[:, 2] = -128
    za, zb = U8(0), np.array([-128, 127, 127, -128, 0], I8)
    exact = (a.astype(np.int64) - 0) @ (b.astype(np.int64) - zb.astype(np.int64))
    assert np.abs(exact).max() == 2_145_825_000
    cpu, oracle = matmul_integer(a, b, za, zb)
    np.testing.assert_array_equal(oracle, exact)
    np.testing.assert_array_equal(cpu, exact)
