"""Model-local functions inlined, then their Constant / CastLike folded: the ONNX Script
model of ``benchmarks.kinds`` and hand-written functions, checked against onnxruntime."""

import numpy as np
import onnx
import onnx.inliner
import pytest

import onnxkit

from onnxkit.optimizer import optimize
from onnxkit.optimizer.passes import cast_like_folding, inline_functions
from tests.optimizer._exported import check_against_ort, op_types

FUNCTIONS = """
<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[2,3] x) => (float[2,3] y) {
    a = local.scaled <alpha = 2.0> (x)
    y = local.twice (a)
}
<domain: "local", opset_import: ["" : 18]>
scaled <alpha: float = 0.5> (x) => (y) {
    c = Constant <value_float: float = @alpha> ()
    cl = CastLike (c, x)
    y = Mul (x, cl)
}
<domain: "local", opset_import: ["" : 18, "local" : 1]>
twice (x) => (y) {
    h = local.scaled (x)
    same = CastLike (h, x)
    y = Add (same, x)
}
"""


def _calls(m: onnx.ModelProto) -> list[str]:
    local = {(f.domain, f.name) for f in m.functions}
    return [n.op_type for n in m.graph.node if (n.domain, n.op_type) in local]


@pytest.mark.parametrize("level", [1, 2])
def test_nested_calls_attributes_and_defaults(level):
    m = onnx.parser.parse_model(FUNCTIONS)
    out, report = optimize(m, level)
    assert _calls(out) == []
    assert report.count("inline_functions") == 3  # scaled, twice, then scaled inside twice
    assert "CastLike" not in op_types(out) and "Constant" not in op_types(out)
    assert op_types(out) == ["Mul", "Mul", "Add"]
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    check_against_ort(m, out, {"x": x})
    y, = onnxkit.Session(out).run(None, {"x": x})
    np.testing.assert_allclose(y, x * 2 * 0.5 + x * 2, rtol=1e-6)  # twice(scaled(x, 2))


def test_onnxscript_model_inlines_and_folds():
    pytest.importorskip("onnxscript")
    from benchmarks.kinds.scripted import model

    m, feeds = model()
    inlined = len(onnx.inliner.inline_local_functions(m).graph.node)
    out, report = optimize(m, 2)
    assert _calls(out) == []
    assert "CastLike" not in op_types(out) and "Constant" not in op_types(out)
    assert len(out.graph.node) < inlined
    assert report.count("cast_like_folding") > 0
    check_against_ort(m, out, feeds)


def test_a_function_of_another_opset_version_is_kept():
    m = onnx.parser.parse_model(FUNCTIONS.replace(
        '<domain: "local", opset_import: ["" : 18]>', '<domain: "local", opset_import: ["" : 17]>'))
    out, report = optimize(m, 1, passes=(inline_functions.PASS, cast_like_folding.PASS))
    assert _calls(out) == ["scaled", "scaled"]  # twice is inlined; the calls of scaled stay
    assert any("imports ai.onnx 17" in r.reason for r in report.rejections)
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    check_against_ort(m, out, {"x": x})


def test_a_recursive_function_is_kept_as_a_call():
    from onnx import TensorProto, helper

    fn = helper.make_function("rec", "Again", ["a"], ["b"],
                              [helper.make_node("Again", ["a"], ["b"], domain="rec")],
                              [helper.make_opsetid("", 18), helper.make_opsetid("rec", 1)])
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "xy"]
    m = helper.make_model(helper.make_graph([helper.make_node("Again", ["x"], ["y"], domain="rec",
                                                              name="call")], "g", vi[:1], vi[1:]),
                          opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("rec", 1)],
                          functions=[fn], ir_version=10)
    out, report = optimize(m, 1)
    assert _calls(out) == ["Again"]
    assert any("calls itself" in r.reason for r in report.rejections)
