"""The cpu executor's quantized kernels against the reference executor and onnxruntime.

One-node models on random inputs of several shapes: uint8 / int8, per tensor / per axis,
weights as initializers (prepared once) and as fed inputs. The cpu kernels must give the
reference's exact bits; onnxruntime must agree too, where its kernels are exact (its
uint8 x int8 products on AVX2 without VNNI saturate pairs in int16, so the comparisons
with it use 7-bit weights, as its ``reduce_range`` quantization makes them).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit

ort = pytest.importorskip("onnxruntime")

U8, I8 = np.uint8, np.int8


def model_of(op, inputs, attrs=None, fed=(0,), out_types=None, domain="", opset=21):
    """One node; the inputs whose index is in ``fed`` are graph inputs, the others
    initializers (None: an absent optional input)."""
    names = [f"in{k}" if v is not None else "" for k, v in enumerate(inputs)]
    graph_inputs, inits = [], []
    for k, (name, value) in enumerate(zip(names, inputs)):
        if value is None:
            continue
        value = np.asarray(value)
        if k in fed:
            graph_inputs.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
        else:
            inits.append(numpy_helper.from_array(value, name))
    out_types = out_types or [np.asarray(inputs[0]).dtype]
    outputs = [helper.make_tensor_value_info(f"out{i}", helper.np_dtype_to_tensor_dtype(
        np.dtype(t)), None) for i, t in enumerate(out_types)]
    node = helper.make_node(op, names, [o.name for o in outputs], domain=domain, **(attrs or {}))
    opsets = [helper.make_opsetid("", opset)] + (
        [helper.make_opsetid(domain, 1)] if domain else [])
    graph = helper.make_graph([node], op, graph_inputs, outputs, inits)
    return helper.make_model(graph, ir_version=8, opset_imports=opsets)


def run_three(op, inputs, attrs=None, fed=(0,), out_types=None, domain="", opset=21,
              onnxruntime=True):
    """(cpu, reference, onnxruntime or None) outputs of the one-node model."""
    model = model_of(op, inputs, attrs, fed, out_types, domain, opset)
    feeds = {f"in{k}": np.asarray(inputs[k]) for k in fed}
    cpu = onnxkit.Session(model, "cpu").run(None, feeds)
    ref = onnxkit.Session(model, "reference").run(None, feeds)
    theirs = None
    if onnxruntime:
        theirs = ort.InferenceSession(model.SerializeToString(),
                                      providers=["CPUExecutionProvider"]).run(None, feeds)
    return cpu, ref, theirs


def assert_equal_all(cpu, ref, theirs=None):
    for i, (c, r) in enumerate(zip(cpu, ref)):
        assert c.dtype == r.dtype and c.shape == r.shape, (i, c.dtype, r.dtype, c.shape, r.shape)
        np.testing.assert_array_equal(c, r, err_msg=f"cpu vs reference, output {i}")
        if theirs is not None:
            np.testing.assert_array_equal(c, theirs[i], err_msg=f"cpu vs onnxruntime, output {i}")


def random_q(rng, dtype, shape, bits=8):
    info = np.iinfo(dtype)
    low, high = info.min >> (8 - bits), info.max >> (8 - bits)
    return rng.integers(low, high + 1, shape).astype(dtype)


def zero_points(rng, dtype, n):
    return (rng.integers(100, 156, n) if dtype == U8 else rng.integers(-20, 21, n)).astype(dtype)


# ---- QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear -----------------------

@pytest.mark.parametrize("dtype", [U8, I8], ids=["uint8", "int8"])
@pytest.mark.parametrize("shape,axis", [((37,), None), ((2, 3, 5, 7), None), ((2, 3, 5, 7), 1),
                                        ((4, 6, 5), 0), ((4, 6, 5), -1)])
def test_quantize_dequantize(dtype, shape, axis):
    rng = np.random.default_rng(len(shape) + (axis or 0) + (dtype == I8))
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    n = 1 if axis is None else shape[axis]
    scale = rng.uniform(0.01, 0.05, n).astype(np.float32)
    zero = zero_points(rng, dtype, n)
    if axis is None:
        scale, zero = scale[0], zero[0]
    # exact ties (x / scale = k + 0.5) and values that saturate
    x.reshape(-1)[:4] = np.array([2.5, -3.5, 1e6, -1e6], np.float32) * np.float32(scale if axis is None else 1)
    attrs = {} if axis is None else {"axis": axis}
    cpu, ref, theirs = run_three("QuantizeLinear", [x, scale, zero], attrs, out_types=[dtype])
    assert_equal_all(cpu, ref, theirs)
    q = ref[0]
    assert_equal_all(*run_three("DequantizeLinear", [q, scale, zero], attrs, out_types=[np.float32]))


def test_quantize_rounds_half_to_even_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 300, -300, np.nan], np.float32)
    cpu, ref, _ = run_three("QuantizeLinear", [x, np.float32(1), np.uint8(0)], onnxruntime=False,
                             out_types=[U8])
    np.testing.assert_array_equal(cpu[0], [0, 2, 2, 0, 0, 255, 0, 0])
    cpu, _, _ = run_three("QuantizeLinear", [x, np.float32(1), np.int8(-1)], onnxruntime=False,
                             out_types=[I8])
    np.testing.assert_array_equal(cpu[0], [-1, 1, 1, -1, -3, 127, -128, 0])


def test_quantize_float16_and_blocks_take_the_reference():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    assert_equal_all(*run_three("QuantizeLinear", [x.astype(np.float16), np.float16(0.02), U8(128)],
                                out_types=[U8]))
    scale = rng.uniform(0.01, 0.05, (4, 2)).astype(np.float32)
    assert_equal_all(*run_three("QuantizeLinear", [x, scale, np.zeros((4, 2), I8)],
                                {"axis": 1, "block_size": 4}, out_types=[I8]))


@pytest.mark.parametrize("shape", [(1, 1), (3, 17), (2, 5, 64), (4, 128, 80)])  # last: steps
@pytest.mark.parametrize("kind", ["mixed", "positive", "negative", "constant"])
def test_dynamic_quantize_linear(shape, kind):
    rng = np.random.default_rng(shape[-1])
    x = rng.standard_normal(shape).astype(np.float32) * 3
    x = {"mixed": x, "positive": np.abs(x), "negative": -np.abs(x),
         "constant": np.full(shape, 0.75, np.float32)}[kind]
    cpu, ref, theirs = run_three("DynamicQuantizeLinear", [x],
                                 out_types=[np.uint8, np.float32, np.uint8], opset=11)
    assert_equal_all(cpu, ref, theirs)


# ---- integer products ----------------------------------------------------------------

@pytest.mark.parametrize("a_dtype,b_dtype", [(U8, I8), (U8, U8), (I8, I8)])
@pytest.mark.parametrize("shape", [(4, 16, 9), (2, 3, 64, 33), (1, 300, 20)],
                         ids=["small", "batched", "long"])
@pytest.mark.parametrize("per_column", [False, True])
def test_matmul_integer(a_dtype, b_dtype, shape, per_column):
    rng = np.random.default_rng(shape[-2])
    *rows, k, n = shape
    a = random_q(rng, a_dtype, (*rows, k))
    b = random_q(rng, b_dtype, (k, n), bits=7 if b_dtype == I8 else 8)
    zb = zero_points(rng, b_dtype, n if per_column else 1)
    inputs = [a, b, zero_points(rng, a_dtype, 1)[0], zb if per_column else zb[0]]
    assert_equal_all(*run_three("MatMulInteger", inputs, out_types=[np.int32]))
    # B fed (shifted on each call), no zero points
    assert_equal_all(*run_three("MatMulInteger", [a, b], fed=(0, 1), out_types=[np.int32]))


def test_matmul_integer_beyond_float32():
    """1201 * 255 * 127 = 38,894,385 is odd and above 2**24: float32 cannot hold it."""
    a = np.full((2, 1201), 255, U8)
    b = np.full((1201, 3), 127, I8)
    cpu, ref, _ = run_three("MatMulInteger", [a, b], onnxruntime=False, out_types=[np.int32])
    np.testing.assert_array_equal(cpu[0], np.full((2, 3), 38_894_385, np.int32))
    np.testing.assert_array_equal(ref[0], cpu[0])


@pytest.mark.parametrize("a_dtype,b_dtype", [(U8, I8), (I8, I8), (U8, U8)])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("k", [24, 1500], ids=["float32", "float64"])
def test_qlinear_matmul(a_dtype, b_dtype, per_column, k):
    rng = np.random.default_rng(k + per_column)
    n = 10
    a = random_q(rng, a_dtype, (2, 6, k))
    b = random_q(rng, b_dtype, (k, n), bits=7 if b_dtype == I8 else 8)
    count = n if per_column else 1
    b_scale = rng.uniform(0.001, 0.01, count).astype(np.float32)
    b_zero = np.zeros(count, b_dtype) if per_column else zero_points(rng, b_dtype, 1)
    if not per_column:
        b_scale, b_zero = b_scale[0], b_zero[0]
    y_scale = np.float32(0.4 if k > 100 else 0.05)
    inputs = [a, np.float32(0.02), zero_points(rng, a_dtype, 1)[0], b, b_scale, b_zero,
              y_scale, zero_points(rng, a_dtype, 1)[0]]
    assert_equal_all(*run_three("QLinearMatMul", inputs))
    full = random_q(rng, b_dtype, (k, n))  # full-range weights: cpu and reference only
    assert_equal_all(*run_three("QLinearMatMul", inputs[:3] + [full] + inputs[4:],
                                onnxruntime=False))


CONVS = [  # x shape, w shape, attributes
    ((2, 8, 9, 9), (16, 8, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 8, 9, 9), (16, 8, 1, 1), {}),
    ((1, 8, 9, 10), (16, 8, 1, 1), {"strides": [2, 2]}),
    ((1, 8, 11, 9), (8, 4, 3, 3), {"group": 2, "strides": [2, 1], "pads": [1, 0, 2, 1],
                                   "dilations": [1, 2]}),
    ((1, 4, 8, 8), (4, 1, 3, 3), {"group": 4, "auto_pad": "SAME_UPPER"}),
    ((1, 160, 4, 4), (24, 160, 3, 3), {"pads": [1, 1, 1, 1]}),  # K = 1440: float64
    ((1, 32, 2, 2), (16, 32, 3, 3), {"pads": [1, 1, 1, 1]}),  # 4 pixels: integer dots
    ((2, 8, 3, 3), (8, 2, 3, 3), {"group": 4, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize("x_dtype,w_dtype", [(U8, I8), (I8, I8), (U8, U8)])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "x".join(map(str, c[1])) + str(len(c[2])))
def test_qlinear_conv(x_dtype, w_dtype, per_channel, conv):
    x_shape, w_shape, attrs = conv
    rng = np.random.default_rng(w_shape[0] + per_channel)
    m = w_shape[0]
    x = random_q(rng, x_dtype, x_shape)
    w = random_q(rng, w_dtype, w_shape, bits=7 if w_dtype == I8 else 8)
    count = m if per_channel else 1
    w_scale = rng.uniform(0.001, 0.01, count).astype(np.float32)
    w_zero = np.zeros(count, w_dtype) if per_channel else zero_points(rng, w_dtype, 1)
    if not per_channel:
        w_scale, w_zero = w_scale[0], w_zero[0]
    bias = rng.integers(-4000, 4000, m).astype(np.int32)
    y_scale = np.float32(0.5 if w_shape[1] * w_shape[2] * w_shape[3] > 1000 else 0.1)
    inputs = [x, np.float32(0.02), zero_points(rng, x_dtype, 1)[0], w, w_scale, w_zero,
              y_scale, zero_points(rng, x_dtype, 1)[0], bias]
    assert_equal_all(*run_three("QLinearConv", inputs, attrs))
    # full-range weights, fed (no prepared copy): cpu and reference only
    full = random_q(rng, w_dtype, w_shape)
    assert_equal_all(*run_three("QLinearConv", inputs[:3] + [full] + inputs[4:], attrs,
                                fed=(0, 3), onnxruntime=False))


@pytest.mark.parametrize("size", [3, 5], ids=["dots", "blas"])
def test_qlinear_conv_beyond_float32(size):
    """Every product 255 * 127 over 3 * 3 * 201 taps: 58,584,465, odd and above 2**25, so
    float32 cannot hold it; a bias of -58,584,400 leaves 65, which the output keeps."""
    x = np.full((1, 201, size, size), 255, U8)
    w = np.full((2, 201, 3, 3), 127, I8)
    bias = np.full(2, -58_584_400, np.int32)
    one = np.float32(1)
    inputs = [x, one, U8(0), w, one, I8(0), one, U8(0), bias]
    cpu, ref, _ = run_three("QLinearConv", inputs, onnxruntime=False)
    np.testing.assert_array_equal(cpu[0], np.full((1, 2, size - 2, size - 2), 65, U8))
    np.testing.assert_array_equal(ref[0], cpu[0])


# ---- com.microsoft QLinearAdd / QLinearMul ---------------------------------------------

@pytest.mark.parametrize("dtype", [U8, I8], ids=["uint8", "int8"])
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("b_shape", [(2, 8, 5, 5), (1,), (8, 1, 1)], ids=["same", "one", "broadcast"])
def test_qlinear_binary(dtype, op, b_shape):
    rng = np.random.default_rng(len(b_shape))
    a = random_q(rng, dtype, (2, 8, 5, 5))
    b = random_q(rng, dtype, b_shape)
    z = zero_points(rng, dtype, 3)
    scales = [np.float32(0.03), np.float32(0.05), np.float32(0.04)]
    inputs = [a, scales[0], z[0], b, scales[1], z[1], scales[2], z[2]]
    cpu, ref, theirs = run_three(op, inputs, domain="com.microsoft", opset=17)
    assert_equal_all(cpu, ref)
    if op == "QLinearMul":
        assert_equal_all(cpu, ref, theirs)
        return
    # 0.75 (a - za) + 1.25 (b - zb) often ends in .5: onnxruntime's AVX2 QLinearAdd rounds
    # through fixed-point multipliers, ties away from zero, where the float formula rounds
    # them to even. Everywhere else the two agree.
    exact = (0.75 * (a.astype(float) - float(z[0])) + 1.25 * (b.astype(float) - float(z[1])))
    tie = np.broadcast_to(np.abs(exact - np.floor(exact)) == 0.5, a.shape)
    differ = cpu[0] != theirs[0]
    assert tie.any() and not (differ & ~tie).any()
    assert np.abs(cpu[0].astype(int) - theirs[0].astype(int)).max() <= 1


@pytest.mark.parametrize("a_dtype,b_dtype", [(U8, I8), (U8, U8), (I8, I8)])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("output", ["quantized", "float"])
@pytest.mark.parametrize("per_column", [False, True])
def test_qgemm(a_dtype, b_dtype, trans_b, output, per_column):
    rng = np.random.default_rng(3 + trans_b)
    m, k, n = 3, 40, 17
    a = random_q(rng, a_dtype, (m, k))
    b = random_q(rng, b_dtype, (n, k) if trans_b else (k, n), bits=7 if b_dtype == I8 else 8)
    count = n if per_column else 1
    b_scale = rng.uniform(0.001, 0.01, count).astype(np.float32)
    b_zero = np.zeros(count, b_dtype) if per_column else zero_points(rng, b_dtype, 1)
    if not per_column:
        b_scale, b_zero = b_scale[0], b_zero[0]
    c = rng.integers(-5000, 5000, n).astype(np.int32)
    tail = [np.float32(0.05), zero_points(rng, a_dtype, 1)[0]] if output == "quantized" else []
    inputs = [a, np.float32(0.02), zero_points(rng, a_dtype, 1)[0], b, b_scale, b_zero, c] + tail
    out = a_dtype if output == "quantized" else np.float32
    cpu, ref, theirs = run_three("QGemm", inputs, {"transB": trans_b, "alpha": 0.5},
                                 out_types=[out], domain="com.microsoft", opset=17)
    assert_equal_all(cpu, ref)
    if output == "quantized":
        assert_equal_all(cpu, ref, theirs)
    else:
        np.testing.assert_allclose(cpu[0], theirs[0], rtol=1e-6, atol=0)


@pytest.mark.parametrize("x_dtype,w_dtype", [(U8, U8), (U8, I8), (I8, I8)])
@pytest.mark.parametrize("conv", CONVS, ids=lambda c: "x".join(map(str, c[1])) + str(len(c[2])))
def test_conv_integer(x_dtype, w_dtype, conv):
    x_shape, w_shape, attrs = conv
    rng = np.random.default_rng(w_shape[0] + 7)
    x = random_q(rng, x_dtype, x_shape)
    w = random_q(rng, w_dtype, w_shape)
    inputs = [x, w, zero_points(rng, x_dtype, 1)[0], zero_points(rng, w_dtype, w_shape[0])]
    # onnxruntime's ConvInteger takes uint8 x uint8 with scalar zero points
    ours = run_three("ConvInteger", inputs, attrs, out_types=[np.int32], opset=10,
                     onnxruntime=False)
    assert_equal_all(*ours)
    if (x_dtype, w_dtype) == (U8, U8):
        scalar = inputs[:3] + [inputs[3][0]]
        assert_equal_all(*run_three("ConvInteger", scalar, attrs, out_types=[np.int32], opset=10))
    assert_equal_all(*run_three("ConvInteger", inputs[:2], attrs, fed=(0, 1),
                                out_types=[np.int32], opset=10, onnxruntime=False))


@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool(dtype, channels_last):
    """The cpu kernel (not the reference's) gives onnxruntime's and the reference's bits."""
    from onnxkit.runtime.profile import Profiler

    rng = np.random.default_rng(11 + channels_last)
    for shape in ((2, 16, 7, 7), (1, 5, 3, 4, 2), (1, 512, 2, 2)):
        x = random_q(rng, dtype, shape)
        inputs = [x, np.float32(rng.uniform(0.004, 0.1)), zero_points(rng, dtype, 1)[0],
                  np.float32(rng.uniform(0.004, 0.1)), zero_points(rng, dtype, 1)[0]]
        attrs = {"channels_last": channels_last}
        assert_equal_all(*run_three("QLinearGlobalAveragePool", inputs, attrs,
                                    domain="com.microsoft", opset=17))
        model = model_of("QLinearGlobalAveragePool", inputs, attrs, domain="com.microsoft",
                         opset=17)
        sess = onnxkit.Session(model, "cpu")
        prof = Profiler(sess)
        sess.run(None, {"in0": x}, trace=prof)
        assert [r["kernel"] for r in prof.rows(by="node")] == [
            "cpu:com.microsoft::QLinearGlobalAveragePool-1"]


def test_qlinear_conv_is_exact_where_u8s8_pairs_saturate():
    """x = 255 against weights of 127 on every tap: onnxruntime's AVX2 u8s8 path adds
    pairs of products in int16 (255 * 127 * 2 = 64770 > 32767) and saturates; the spec's
    exact integer sum is what onnx.reference and the cpu kernel give (a resnet18 stem:
    3 channels, 7x7 kernel, stride 2)."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(21)
    x = rng.integers(200, 256, (1, 3, 16, 16)).astype(U8)
    w = np.where(rng.random((8, 3, 7, 7)) < 0.9, 127, -128).astype(I8)
    inputs = [x, np.float32(0.02), np.uint8(3), w, np.float32(0.001), np.int8(0),
              np.float32(0.5), np.uint8(100)]
    attrs = {"strides": [2, 2], "pads": [3, 3, 3, 3]}
    model = model_of("QLinearConv", inputs, attrs)
    (cpu,) = onnxkit.Session(model, "cpu").run(None, {"in0": x})
    (oracle,) = ReferenceEvaluator(model).run(None, {"in0": x})
    np.testing.assert_array_equal(cpu, oracle)
    # one output by hand: the centre pixel's exact sum, requantized in float64
    acc = int(((x[0, :, 3:10, 3:10].astype(np.int64) - 3) * w[0].astype(np.int64)).sum())
    by_hand = min(255, max(0, round(acc * (0.02 * 0.001 / 0.5) + 100)))
    m = np.float64(np.float32(0.02)) * np.float64(np.float32(0.001)) / np.float64(np.float32(0.5))
    assert cpu[0, 0, 3, 3] == min(255, max(0, int(np.rint(acc * m)) + 100)) == by_hand


def test_qgemm_is_exact_where_u8s8_pairs_saturate():
    """A classifier head (one row, K = 512) of full-range uint8 against int8 weights:
    the exact sums (int64), scaled as com.microsoft QGemm specifies, bit for bit."""
    rng = np.random.default_rng(22)
    a = rng.integers(0, 256, (1, 512)).astype(U8)
    b = rng.integers(-128, 128, (1000, 512)).astype(I8)
    c = rng.integers(-5000, 5000, 1000).astype(np.int32)
    inputs = [a, np.float32(0.018), np.uint8(0), b, np.float32(0.00035), np.int8(0), c,
              np.float32(0.021), np.uint8(118)]
    cpu, _, _ = run_three("QGemm", inputs, {"transB": 1}, domain="com.microsoft", opset=17,
                          onnxruntime=False)
    acc = a.astype(np.int64) @ b.astype(np.int64).T + c
    scale = np.float32(1.0) * np.float32(0.018) * np.float32(0.00035) / np.float32(0.021)
    want = np.clip(np.rint(acc.astype(np.float32) * scale) + np.float32(118), 0, 255)
    np.testing.assert_array_equal(cpu[0], want.astype(U8))
