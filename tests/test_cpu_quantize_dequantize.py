"""onnxkit::QuantizeDequantize on the cpu executor (one compiled pass) against the
unfused QuantizeLinear -> DequantizeLinear pair: onnx.reference's bits, and onnxkit's
reference kernels' where NaN is involved (the spec leaves its 8-bit value open; the
reference kernels make it 0)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxkit


def models(y_scale, y_zero, x_scale, x_zero, shape):
    """(the fused one-node model, the unfused pair) with x fed, the rest initializers."""
    inits = [numpy_helper.from_array(np.asarray(v), name) for name, v in
             (("ys", y_scale), ("yz", y_zero), ("xs", x_scale), ("xz", x_zero)) if v is not None]
    names = ["x", "ys", "yz" if y_zero is not None else "", "xs"] + (
        ["xz"] if x_zero is not None else [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)
    fused = helper.make_graph([helper.make_node("QuantizeDequantize", names, ["y"],
                                                domain="onnxkit")], "qdq", [x], [y], inits)
    pair = helper.make_graph([
        helper.make_node("QuantizeLinear", names[:3], ["q"]),
        helper.make_node("DequantizeLinear", ["q"] + names[3:], ["y"])], "pair", [x], [y],
        inits)
    # the pair at opset 21 (the first with 16-bit types; onnx.reference has no 13)
    return (helper.make_model(fused, ir_version=8, opset_imports=[
                helper.make_opsetid("", 13), helper.make_opsetid("onnxkit", 1)]),
            helper.make_model(pair, ir_version=10, opset_imports=[helper.make_opsetid("", 21)]))


ZEROS = {"uint8": np.uint8(131), "int8": np.int8(-7), "uint16": np.uint16(30001),
         "int16": np.int16(-300), "none": None}


@pytest.mark.parametrize("zero", list(ZEROS))
@pytest.mark.parametrize("shape", [(3, 5), (2, 16, 33, 17)])  # the second: many parts
def test_one_pass_is_the_pair(zero, shape):
    rng = np.random.default_rng(len(shape))
    y_zero = ZEROS[zero]
    wide = y_zero is not None and y_zero.dtype.itemsize == 2
    scale = np.float32(0.0037 if not wide else 1e-4)
    x = (rng.standard_normal(shape) * (2.0 if wide else 0.4)).astype(np.float32)
    x.reshape(-1)[:6] = np.float32(scale) * np.float32([0.5, 1.5, 2.5, -0.5, -2.5, 1e9])
    x_zero = None if y_zero is None else y_zero.dtype.type(y_zero - 2)
    fused, pair = models(scale, y_zero, np.float32(0.0041), x_zero, shape)
    (got,) = onnxkit.Session(fused, "cpu").run(None, {"x": x})
    (want,) = ReferenceEvaluator(pair).run(None, {"x": x})
    assert got.dtype == np.float32 and got.shape == x.shape
    np.testing.assert_array_equal(got, want)


def test_nan_and_infinities_as_the_reference_kernels():
    """NaN quantizes to 0, infinities saturate (onnx.reference's int32 cast of them is
    undefined behaviour)."""
    x = np.array([[np.nan, 1.0, -np.nan, 0.3, np.inf, -np.inf]], np.float32)
    fused, pair = models(np.float32(0.01), np.uint8(10), np.float32(0.02), np.uint8(9), x.shape)
    (got,) = onnxkit.Session(fused, "cpu").run(None, {"x": x})
    (want,) = onnxkit.Session(pair, "reference").run(None, {"x": x})
    np.testing.assert_array_equal(got, want)
    step = np.float32(0.02)
    np.testing.assert_array_equal(got[0, [0, 4, 5]], [(0 - 9) * step, (255 - 9) * step,
                                                      (0 - 9) * step])
