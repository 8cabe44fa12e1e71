"""The reference's products round once: every float32 output is the correctly rounded
exact result, whatever order numpy's BLAS sums in (onnxkit.ops.linalg._precision).

The inputs are integers below 2**20, so every product and every partial sum is an
integer below 2**53: float64 holds them exactly and the exact result, rounded once to
float32, is the oracle. Summed in float32 instead, most outputs would be a unit in the
last place or more away (their sums pass 2**24 after a few terms).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit


def _ints(rng, shape):
    return rng.integers(-(2 ** 20), 2 ** 20, size=shape).astype(np.float32)


def _run(node, inputs, initializers=()):
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in inputs],
        [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(v, n) for n, v in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    return onnxkit.Session(model).run(None, dict(inputs))[0]


def _rounded_once(exact_int64):
    # |values| < 2**53: exact in float64; float32 of that is the single rounding
    return exact_int64.astype(np.float64).astype(np.float32)


def _exact_matmul(a, b):
    return a.astype(np.int64) @ b.astype(np.int64)


def test_matmul_rounds_once():
    rng = np.random.default_rng(0)
    a, b = _ints(rng, (7, 300)), _ints(rng, (300, 9))
    y = _run(helper.make_node("MatMul", ["a", "b"], ["y"]), [("a", a), ("b", b)])
    want = _rounded_once(_exact_matmul(a, b))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, want)
    # the oracle is worth having: a float32 product misses it
    assert not np.array_equal(a @ b, want)


def test_gemm_rounds_once():
    rng = np.random.default_rng(1)
    a, b, c = _ints(rng, (300, 5)), _ints(rng, (6, 300)), _ints(rng, (6,))
    y = _run(helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1),
             [("a", a), ("b", b)], [("c", c)])
    want = _rounded_once(_exact_matmul(a.T, b.T) + c.astype(np.int64))
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("group", [1, 2])
def test_conv_rounds_once(group):
    rng = np.random.default_rng(2)
    x, w = _ints(rng, (2, 64, 5, 5)), _ints(rng, (4, 64 // group, 3, 3))
    y = _run(helper.make_node("Conv", ["x", "w"], ["y"], group=group), [("x", x)], [("w", w)])
    xi, wi = x.astype(np.int64), w.astype(np.int64)
    per = 64 // group
    want = np.zeros((2, 4, 3, 3), np.int64)
    for m in range(4):
        g = m // (4 // group)
        for i in range(3):
            for j in range(3):
                want[:, m, i, j] = (xi[:, g * per:(g + 1) * per, i:i + 3, j:j + 3] * wi[m]).sum(axis=(1, 2, 3))
    np.testing.assert_array_equal(y, _rounded_once(want))
