"""A Transpose that moves only axes of length 1 is a Reshape (``chains``), which then
joins the Reshapes beside it: a decoder step's heads around its one query row. Checked
exactly against onnxruntime; a Transpose that reorders longer axes stays."""

import numpy as np
import pytest

import onnxkit
from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import chains
from tests.optimizer._exported import ort_outputs
from tests.optimizer._helpers import model, rand

H = '<ir_version: 8, opset_import: ["" : 17]>'


@pytest.mark.parametrize("shape, perm, out", [
    ([2, 4, 1, 16], "0, 2, 1, 3", [2, 1, 4, 16]),  # the attention's output heads
    ([1, 3, 5], "1, 0, 2", [3, 1, 5]),
    ([2, 1, 1, 3], "2, 0, 3, 1", [1, 2, 3, 1]),
])
def test_unit_axis_moves_become_a_reshape(shape, perm, out):
    dims = ",".join(map(str, shape))
    m = model(H + f"""
    g (float[{dims}] x) => (float[{",".join(map(str, out))}] y) {{
        y = Transpose <perm = [{perm}]> (x)
    }}""")
    result, report = optimize(m, 1, passes=(chains.PASS,))
    assert [n.op_type for n in result.graph.node] == ["Reshape"]
    feeds = {"x": rand(*shape)}
    got = onnxkit.Session(result, executor="cpu").run(None, feeds)[0]
    expected = ort_outputs(m, feeds)[0]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_heads_merge_into_one_reshape():
    """Attention output [2, 4, 1, 16] -> Transpose -> Reshape [2, 1, 64]: one Reshape."""
    m = model(H + """
    g (float[2,4,1,16] x) => (float[2,1,64] y) {
        t = Transpose <perm = [0, 2, 1, 3]> (x)
        y = Reshape (t, shape)
    }""", shape=np.array([2, 1, 64]))
    result, _ = optimize(m, 2)
    assert [n.op_type for n in result.graph.node] == ["Reshape"]
    feeds = {"x": rand(2, 4, 1, 16)}
    np.testing.assert_array_equal(onnxkit.Session(result, executor="cpu").run(None, feeds)[0],
                                  ort_outputs(m, feeds)[0])


@pytest.mark.parametrize("shape, perm", [([2, 4, 3, 16], "0, 2, 1, 3"),  # 4 and 3 swap
                                         ([2, 4, 1, 16], "0, 3, 2, 1")])  # 4 and 16 swap
def test_a_transpose_of_longer_axes_stays(shape, perm):
    dims = ",".join(map(str, shape))
    m = model(H + f"""
    g (float[{dims}] x) => (float[?,?,?,?] y) {{
        y = Transpose <perm = [{perm}]> (x)
    }}""")
    result, _ = optimize(m, 1, passes=(chains.PASS,))
    assert [n.op_type for n in result.graph.node] == ["Transpose"]


def test_a_symbolic_shape_stays():
    m = model(H + """
    g (float[N,4,1,16] x) => (float[N,1,4,16] y) {
        y = Transpose <perm = [0, 2, 1, 3]> (x)
    }""")
    result, _ = optimize(m, 1, passes=(chains.PASS,))
    assert [n.op_type for n in result.graph.node] == ["Transpose"]
