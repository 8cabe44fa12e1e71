"""onnxruntime's ``com.microsoft`` quantized operators on the reference executor.

Each op runs in a one-node model on onnxkit and on onnxruntime (whose CPU kernels define
these operators); 8-bit outputs must be equal, float outputs equal to float32 rounding.
Hand-computed cases pin rounding (half to even) and saturation.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

import onnxkit

ort = pytest.importorskip("onnxruntime")

EIGHT_BIT = (np.uint8, np.int8)


def one_node(op, inputs, attrs=None, out_dtype=None):
    """A model of one com.microsoft node: input 0 is fed, the others are initializers."""
    names = [f"in{k}" if v is not None else "" for k, v in enumerate(inputs)]
    inits = [numpy_helper.from_array(np.asarray(v), n)
             for n, v in zip(names[1:], inputs[1:]) if v is not None]
    x = np.asarray(inputs[0])
    x_type = helper.np_dtype_to_tensor_dtype(x.dtype)
    y_type = helper.np_dtype_to_tensor_dtype(np.dtype(out_dtype or x.dtype))
    node = helper.make_node(op, names, ["y"], domain="com.microsoft", **(attrs or {}))
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("in0", x_type, x.shape)],
                              [helper.make_tensor_value_info("y", y_type, None)], inits)
    return helper.make_model(graph, ir_version=8, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def run_both(op, inputs, attrs=None, out_dtype=None):
    model = one_node(op, inputs, attrs, out_dtype)
    feeds = {"in0": np.asarray(inputs[0])}
    ours = onnxkit.Session(model).run(None, feeds)[0]
    theirs = ort.InferenceSession(model.SerializeToString(),
                                  providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    return ours, theirs


def run_ours(op, inputs, attrs=None, out_dtype=None):
    return onnxkit.Session(one_node(op, inputs, attrs, out_dtype)).run(
        None, {"in0": np.asarray(inputs[0])})[0]


def assert_same(ours, theirs):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def random_q(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def params(rng, dtype, count):
    """``count`` (scale, zero point) pairs: scales in [0.004, 0.1], zero points inside the type."""
    info = np.iinfo(dtype)
    return [(np.float32(rng.uniform(0.004, 0.1)), dtype(rng.integers(info.min // 2, info.max // 2)))
            for _ in range(count)]


@pytest.mark.parametrize("dtype", EIGHT_BIT, ids=lambda t: t.__name__)
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("shapes", [((2, 8, 5, 5), (2, 8, 5, 5)), ((3, 1, 7), (4, 7)),
                                    ((6, 9), ())], ids=["same", "broadcast", "scalar"])
def test_binary_matches_onnxruntime(op, dtype, shapes):
    rng = np.random.default_rng(len(op) + len(shapes[1]))
    for trial in range(3):
        (sa, za), (sb, zb), (sc, zc) = params(rng, dtype, 3)
        a, b = random_q(rng, dtype, shapes[0]), random_q(rng, dtype, shapes[1])
        assert_same(*run_both(op, [a, sa, za, b, sb, zb, sc, zc]))


def test_add_rounds_half_to_even_and_saturates():
    # (a - 0) * 0.5 + 0 = 0.5, 1.5, 2.5 -> 0, 2, 2; 250 + 250 -> 255
    a = np.array([1, 3, 5, 250], np.uint8)
    b = np.array([0, 0, 0, 250], np.uint8)
    half, one, zero = np.float32(0.5), np.float32(1), np.uint8(0)
    b_scale = np.float32(0.5)
    got = run_ours("QLinearAdd", [a, half, zero, b, b_scale, zero, one, zero])
    np.testing.assert_array_equal(got, [0, 2, 2, 250])
    got = run_ours("QLinearAdd", [a, one, zero, b, one, zero, one, zero])
    np.testing.assert_array_equal(got, [1, 3, 5, 255])
    low = np.array([-128, -100], np.int8)
    z8 = np.int8(0)
    got = run_ours("QLinearAdd", [low, one, z8, low, one, z8, one, z8])
    np.testing.assert_array_equal(got, [-128, -128])


def test_mul_rounds_half_to_even():
    # (a - 1) * (b - 0) * (0.5 * 1 / 1): 1 * 1 * .5, 3 * 1 * .5, 3 * 3 * .5 -> 0, 2, 4
    a = np.array([2, 4, 4], np.int8)
    b = np.array([1, 1, 3], np.int8)
    got = run_ours("QLinearMul", [a, np.float32(0.5), np.int8(1), b, np.float32(1), np.int8(0),
                                  np.float32(1), np.int8(0)])
    np.testing.assert_array_equal(got, [0, 2, 4])


@pytest.mark.parametrize("dtype", EIGHT_BIT, ids=lambda t: t.__name__)
@pytest.mark.parametrize("channels_last", [0, 1])
def test_global_average_pool_matches_onnxruntime(dtype, channels_last):
    rng = np.random.default_rng(3 + channels_last)
    for shape in ((2, 16, 7, 7), (1, 5, 3, 4, 2)):
        x = random_q(rng, dtype, shape)
        (sx, zx), (sy, zy) = params(rng, dtype, 2)
        assert_same(*run_both("QLinearGlobalAveragePool", [x, sx, zx, sy, zy],
                              {"channels_last": channels_last}))


def test_global_average_pool_by_hand():
    # mean of (x - 10) over 4 values = (0 + 2 + 4 + 6) / 4 = 3; * 0.5 / 0.25 = 6; + 1 -> 7
    x = np.array([10, 12, 14, 16], np.uint8).reshape(1, 1, 2, 2)
    got = run_ours("QLinearGlobalAveragePool",
                   [x, np.float32(0.5), np.uint8(10), np.float32(0.25), np.uint8(1)])
    np.testing.assert_array_equal(got, [[[[7]]]])


@pytest.mark.parametrize("dtype", EIGHT_BIT, ids=lambda t: t.__name__)
@pytest.mark.parametrize("op,attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1}),
                                      ("QLinearLeakyRelu", {})])
def test_activation_matches_onnxruntime_on_every_value(op, attrs, dtype):
    info = np.iinfo(dtype)
    every = np.arange(info.min, info.max + 1).astype(dtype).reshape(16, 16)
    rng = np.random.default_rng(5)
    for (sx, zx), (sy, zy) in [params(rng, dtype, 2), params(rng, dtype, 2),
                               [(np.float32(0.07), dtype(10)), (np.float32(1 / 256), dtype(info.min))]]:
        assert_same(*run_both(op, [every, sx, zx, sy, zy], attrs))


@pytest.mark.parametrize("dtype", EIGHT_BIT, ids=lambda t: t.__name__)
def test_concat_matches_onnxruntime(dtype):
    rng = np.random.default_rng(7)
    (sy, zy), (s1, z1), (s2, z2) = params(rng, dtype, 3)
    parts = [random_q(rng, dtype, (2, k, 4)) for k in (3, 5, 1)]
    # the second part shares y's scale and zero point: copied as it is
    inputs = [sy, zy, parts[0], s1, z1, parts[1], sy, zy, parts[2], s2, z2]
    # onnxruntime wants the first input fed; the model feeds y's scale
    assert_same(*run_both("QLinearConcat", [np.float32(sy)] + inputs[1:], {"axis": 1},
                          out_dtype=dtype))
    ours = run_ours("QLinearConcat", [np.float32(sy)] + inputs[1:], {"axis": -2}, out_dtype=dtype)
    np.testing.assert_array_equal(ours[:, 3:8], parts[1])


@pytest.mark.parametrize("a_dtype,b_dtype", [(np.uint8, np.int8), (np.uint8, np.uint8),
                                             (np.int8, np.int8)])
@pytest.mark.parametrize("trans", [(0, 0), (0, 1), (1, 0)])
@pytest.mark.parametrize("output", ["quantized", "float"])
@pytest.mark.parametrize("per_column", [False, True])
def test_qgemm_matches_onnxruntime(a_dtype, b_dtype, trans, output, per_column):
    rng = np.random.default_rng(11)
    m, k, n = 5, 12, 7
    a = random_q(rng, a_dtype, (k, m) if trans[0] else (m, k))
    b = random_q(rng, b_dtype, (n, k) if trans[1] else (k, n))
    if (a_dtype, b_dtype) == (np.uint8, np.int8):
        # 7-bit weights, as onnxruntime's reduce_range makes them: its uint8 x int8 kernel
        # for AVX2 without VNNI adds pairs of products in int16 and saturates
        b = b // 2
    (sa, za), (sy, zy) = params(rng, a_dtype, 2)
    if per_column:
        sb = rng.uniform(0.004, 0.05, n).astype(np.float32)
        zb = np.zeros(n, b_dtype)  # onnxruntime takes per-column zero points only for ... 0
    else:
        sb, zb = params(rng, b_dtype, 1)[0]
    c = rng.integers(-5000, 5000, n).astype(np.int32)
    inputs = [a, sa, za, b, sb, zb, c] + ([sy, zy] if output == "quantized" else [])
    attrs = {"transA": trans[0], "transB": trans[1], "alpha": 0.75}
    out = a_dtype if output == "quantized" else np.float32
    ours, theirs = run_both("QGemm", inputs, attrs, out_dtype=out)
    if output == "quantized":
        assert_same(ours, theirs)
    else:
        assert ours.dtype == theirs.dtype == np.float32
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)


def test_qgemm_saturates():
    a = np.full((1, 2), 255, np.uint8)
    b = np.full((2, 2), 127, np.int8)
    one, z = np.float32(1), np.uint8(0)
    got = run_ours("QGemm", [a, one, z, b, one, np.int8(0), None, one, z], out_dtype=np.uint8)
    np.testing.assert_array_equal(got, [[255, 255]])  # 2 * 255 * 127 saturates


def test_bad_zero_point_is_named():
    a = np.zeros(3, np.uint8)
    with pytest.raises(onnxkit.errors.OnnxkitError, match="A_zero_point"):
        run_ours("QLinearAdd", [a, np.float32(1), np.zeros(2, np.uint8), a, np.float32(1),
                                np.uint8(0), np.float32(1), np.uint8(0)])
