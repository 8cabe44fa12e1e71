"""Reference solutions of exercise 6 (see exercises/ex6_build.py for the tasks)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import onnx.version_converter


def mlp_model(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> onnx.ModelProto:
    f = onnx.TensorProto.FLOAT
    weights = [onnx.numpy_helper.from_array(np.asarray(a, np.float32), name)
               for a, name in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    nodes = [oh.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
             oh.make_node("Relu", ["h"], ["r"]),
             oh.make_node("Gemm", ["r", "w2", "b2"], ["y"])]
    graph = oh.make_graph(nodes, "mlp", [oh.make_tensor_value_info("x", f, ["N", w1.shape[0]])],
                          [oh.make_tensor_value_info("y", f, ["N", w2.shape[1]])], weights)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)], ir_version=8)


def to_opset_18(model: onnx.ModelProto) -> onnx.ModelProto:
    return onnx.version_converter.convert_version(model, 18)


def attributes_now_inputs(before: onnx.ModelProto, after: onnx.ModelProto) -> dict[str, list[str]]:
    now = {n.output[0]: n for n in after.graph.node if n.output}
    moved = {}
    for node in before.graph.node:
        new = now.get(node.output[0]) if node.output else None
        if new is None:
            continue
        gone = sorted({a.name for a in node.attribute} - {a.name for a in new.attribute})
        if gone and len(new.input) > len(node.input):
            moved[node.op_type] = gone
    return moved
