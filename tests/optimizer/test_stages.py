"""The fixed-point loop runs level by level, long enough for shape code that folds a block
at a time (torch's dynamic exports, e.g. Swin-T's window padding)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.optimizer import levels, optimize
from onnxkit.optimizer.base import Pass
from onnxkit.optimizer.graph import Edit, Graph

BLOCKS = 14  # more than the 10 iterations the loop used to allow


def padded_chain(blocks: int = BLOCKS, relu_first: bool = False) -> onnx.ModelProto:
    """x -> (Relu) -> blocks x [pad the last axis by (its size mod 2)].

    Each block's pads come from ``Mod``, which onnx's data propagation does not follow,
    so its Pad's output shape is only known once folding made the pads constant: one
    block per iteration of the loop.
    """
    one = helper.make_tensor("three", TensorProto.INT64, [1], [3])
    two = helper.make_tensor("two", TensorProto.INT64, [1], [2])
    zeros = helper.make_tensor("zeros", TensorProto.INT64, [7], [0] * 7)
    nodes, v = [], "x"
    if relu_first:
        nodes.append(helper.make_node("Relu", ["x"], ["r"], name="relu"))
        v = "r"
    for k in range(blocks):
        nodes += [
            helper.make_node("Shape", [v], [f"s{k}"], name=f"shape{k}"),
            helper.make_node("Gather", [f"s{k}", "three"], [f"w{k}"], name=f"gather{k}"),
            helper.make_node("Mod", [f"w{k}", "two"], [f"m{k}"], name=f"mod{k}"),
            helper.make_node("Concat", ["zeros", f"m{k}"], [f"p{k}"], axis=0, name=f"concat{k}"),
            helper.make_node("Pad", [v, f"p{k}"], [f"v{k}"], name=f"pad{k}"),
        ]
        v = f"v{k}"
    nodes.append(helper.make_node("Identity", [v], ["y"], name="out"))
    graph = helper.make_graph(
        nodes, "padded_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [one, two, zeros])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def op_types(m: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in m.graph.node]


def test_level_1_folds_a_chain_longer_than_ten_iterations():
    m = padded_chain()
    out, report = optimize(m, 1)
    assert "Shape" not in op_types(out) and "Mod" not in op_types(out)
    assert report.iterations > 10
    assert not any("without a fixed point" in note for note in report.notes)
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 5)).astype(np.float32)
    expected = ort.InferenceSession(m.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert expected.shape == (1, 2, 3, 6)  # 5 + 5 % 2, then 6 % 2 = 0 for every later block
    for level in (1, 3):
        actual = onnxkit.Session(m, level=level).run(None, {"x": x})[0]
        np.testing.assert_array_equal(actual, expected)


class FreshRelu(Pass):
    """A fusion whose node onnx has no schema for and whose output is a new value (as the
    attention fusion's is): after it, onnx's shape inference knows nothing."""

    name = "fresh_relu"

    def run(self, g: Graph, ctx) -> int:
        edits = []
        for node in g.nodes:
            if node.op_type == "Relu" and node.domain == "":
                fresh = node.output[0] + "_fused"
                fused = helper.make_node("Relu", list(node.input), [fresh], name=node.name + ":fused",
                                         domain="test.fused")
                edits.append(Edit([node], [fused], renames={node.output[0]: fresh}))
        g.apply(edits)
        return len(edits)


def test_level_2_folds_before_its_fusions(monkeypatch):
    m = padded_chain(blocks=3, relu_first=True)
    monkeypatch.setitem(levels.LEVELS, 2, levels.BASIC + (FreshRelu(),))
    out, report = optimize(m, 2)
    assert op_types(out) == ["Relu", "Pad"]  # the fused Relu and the one pad that pads
    assert out.graph.node[0].domain == "test.fused"
    # in one loop, the fusion ran in the first iteration and the rest of the chain stayed
    out, _ = optimize(m, 1, passes=levels.BASIC + (FreshRelu(),))
    assert op_types(out).count("Shape") == 2


def test_shapes_after_an_onnxkit_node_stay_known():
    text = """
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 8] x) => (float y) {
        h = Relu (x)
        z = Sigmoid (h)
        y = Identity (z)
    }
    """
    g = Graph(onnx.parser.parse_model(text))
    relu, sigmoid = g.nodes[:2]
    g.apply([Edit([relu], [helper.make_node("Gelu", ["x"], ["h"], name="gelu", domain="onnxkit")]),
             Edit([sigmoid], [helper.make_node("Tanh", ["h"], ["t"], name="tanh")],
                  renames={"z": "t"})])
    g.infer_types()
    # a new value after the onnxkit node: typed only if inference took the onnxkit domain
    # (imported) and the Gelu's output kept its type
    assert g.shape("t") == (1, 8)
    assert {(o.domain, o.version) for o in g.opset_imports()} == {("", 17), ("onnxkit", 1)}


@pytest.mark.parametrize("level", [1, 2, 3])
def test_stages_end_with_the_level_list(level):
    assert levels.stages_for(level)[-1] is levels.LEVELS[level]
    assert levels.stages_for(level)[0] is levels.BASIC
