"""The cpu executor's quantized elementwise and conv kernels with their work split among
the threads (every split taken: ``set_min_parallel(1)``) give the reference kernels' bits:
QLinearAdd / QLinearMul over several parts of values, QuantizeDequantize, and a
QLinearConv whose output channels are shared out in blocks."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper, numpy_helper

import onnxkit
from onnxkit.kernels.cpu._threads import min_parallel, set_min_parallel

U8, I8 = np.uint8, np.int8


@pytest.fixture
def every_split():
    before = min_parallel()
    set_min_parallel(1)
    yield
    set_min_parallel(before)


def one_node(op, inputs, domain="", opset=17, attrs=None):
    names = [f"in{k}" for k in range(len(inputs))]
    x = np.asarray(inputs[0])
    graph_in = [helper.make_tensor_value_info("in0", helper.np_dtype_to_tensor_dtype(x.dtype),
                                              x.shape)]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in zip(names[1:], inputs[1:])]
    out = helper.make_tensor_value_info("out", 0, None)
    node = helper.make_node(op, names, ["out"], domain=domain, **(attrs or {}))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    graph = helper.make_graph([node], op, graph_in, [out], inits)
    model = helper.make_model(graph, ir_version=8, opset_imports=opsets)
    (cpu,) = onnxkit.Session(model, "cpu").run(None, {"in0": x})
    (ref,) = onnxkit.Session(model, "reference").run(None, {"in0": x})
    return cpu, ref


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("b_shape", [(3, 9001), (1,)], ids=["same", "one"])
def test_binary_in_parts(every_split, op, dtype, b_shape):
    rng = np.random.default_rng(5)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max + 1, (3, 9001)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, b_shape).astype(dtype)
    z = [dtype(info.min + 120), dtype(info.min + 131), dtype(info.min + 127)]
    scales = [np.float32(0.03), np.float32(0.05), np.float32(0.04)]
    cpu, ref = one_node(op, [a, scales[0], z[0], b, scales[1], z[1], scales[2], z[2]],
                        domain="com.microsoft")
    assert cpu.dtype == ref.dtype == dtype
    np.testing.assert_array_equal(cpu, ref)
    assert len(np.unique(cpu)) > 100  # not saturated everywhere


def test_quantize_dequantize_in_parts(every_split):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 4001)).astype(np.float32)
    cpu, ref = one_node("QuantizeDequantize", [x, np.float32(0.01), I8(3), np.float32(0.011),
                                               I8(2)], domain="onnxkit", opset=13)
    np.testing.assert_array_equal(cpu, ref)


def test_qlinear_conv_in_parts(every_split):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, (2, 16, 9, 9)).astype(U8)
    w = rng.integers(-128, 128, (22, 16, 3, 3)).astype(I8)
    inputs = [x, np.float32(0.02), U8(128), w, rng.uniform(0.001, 0.004, 22).astype(np.float32),
              np.zeros(22, I8), np.float32(0.2), U8(120),
              rng.integers(-3000, 3000, 22).astype(np.int32)]
    cpu, ref = one_node("QLinearConv", inputs, opset=13, attrs={"pads": [1, 1, 1, 1]})
    np.testing.assert_array_equal(cpu, ref)
    assert len(np.unique(cpu)) > 50


POOLS = [  # x shape, attributes
    ((2, 3, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 4, 8, 7), {"kernel_shape": [2, 3], "strides": [2, 1], "dilations": [2, 2],
                    "pads": [0, 2, 1, 0], "ceil_mode": 1}),
    ((1, 2, 5, 6), {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER"}),
    ((2, 3, 11), {"kernel_shape": [4], "strides": [3], "pads": [2, 1]}),
]


@pytest.mark.parametrize("dtype", [U8, I8])
@pytest.mark.parametrize("pool", POOLS, ids=lambda p: "x".join(map(str, p[0])))
def test_max_pool_8bit(every_split, dtype, pool):
    """Against the reference kernel and onnx.reference (MaxPool-12 takes 8-bit values);
    values near the type's lowest, so that padding read as a value would show."""
    from onnx.reference import ReferenceEvaluator

    shape, attrs = pool
    rng = np.random.default_rng(8)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.min + 40, shape).astype(dtype)
    x.reshape(-1)[::7] = info.max
    node = helper.make_node("MaxPool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info(
        "x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(x.dtype), None)])
    model = helper.make_model(graph, ir_version=8, opset_imports=[helper.make_opsetid("", 12)])
    (cpu,) = onnxkit.Session(model, "cpu").run(None, {"x": x})
    (ref,) = onnxkit.Session(model, "reference").run(None, {"x": x})
    assert cpu.dtype == dtype and cpu.shape == ref.shape
    np.testing.assert_array_equal(cpu, ref)
    if "auto_pad" not in attrs:  # onnx.reference pads int8 with NaN there, and fails
        (oracle,) = ReferenceEvaluator(model).run(None, {"x": x})
        np.testing.assert_array_equal(cpu, oracle)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_binary_scales_fed_and_zero_point_absent(op):
    """The node's values worked out per call when a scale is a graph input (it may change
    between runs), once when all are initializers; C's zero point absent (0)."""
    rng = np.random.default_rng(9)
    a = rng.integers(0, 256, (2, 300)).astype(U8)
    b = rng.integers(0, 256, (2, 300)).astype(U8)
    names = ["a", "sa", "za", "b", "sb", "zb", "sc"]
    values = [a, np.float32(0.03), U8(120), b, np.float32(0.05), U8(131), np.float32(0.2)]
    fed = ("a", "sa")
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(
        np.asarray(v).dtype), np.shape(v)) for n, v in zip(names, values) if n in fed]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in zip(names, values)
             if n not in fed]
    node = helper.make_node(op, names + [""], ["y"], domain="com.microsoft")
    graph = helper.make_graph([node], op, inputs, [helper.make_tensor_value_info(
        "y", helper.np_dtype_to_tensor_dtype(a.dtype), None)], inits)
    model = helper.make_model(graph, ir_version=8, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    cpu = onnxkit.Session(model, "cpu")
    ref = onnxkit.Session(model, "reference")
    for scale in (0.03, 0.07, 0.03):
        feeds = {"a": a, "sa": np.float32(scale)}
        (got,), (want,) = cpu.run(None, feeds), ref.run(None, feeds)
        np.testing.assert_array_equal(got, want)
        assert len(np.unique(got)) > 20
