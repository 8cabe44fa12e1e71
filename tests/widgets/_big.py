"""A synthetic big graph with the structure of a transformer exported by PyTorch.

``layered_model(layers, units)``: ``layers`` layers named ``/layers/layers.{i}/...``; each is
a LayerNormalization then ``units`` residual units ``/layers/layers.{i}/mlp.{k}/...`` of five
nodes (Constant, MatMul, Relu, Mul, Add); a Softmax head. 12 layers of 66 units: 3,974 nodes,
the size of torchvision's swin_t. One shared 8x8 weight keeps the file small.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

UNIT_NODES = 5


def dynamo_style(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model as PyTorch's dynamo exporter names it: nodes ``node_<Op>_<k>``, the module
    path in ``pkg.torch.onnx.name_scopes`` (``['', 'layers', 'layers.3', ..., leaf]``)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for k, node in enumerate(out.graph.node):
        parts = node.name.strip("/").split("/")  # layers, layers.3, mlp.2, MatMul
        scopes, path = ["", parts[0]], ""
        for part in parts[1:-1]:
            path = f"{path}.{part}" if path else part
            scopes.append(path)
        node.metadata_props.add(key="pkg.torch.onnx.name_scopes",
                                value=repr(scopes + [f"{node.op_type.lower()}_{k}"]))
        node.name = f"node_{node.op_type}_{k}"
    return out


def layered_model(layers: int = 12, units: int = 66, width: int = 8) -> onnx.ModelProto:
    nodes = []
    x = "x"
    for i in range(layers):
        scope = f"/layers/layers.{i}"
        y = f"{scope}/ln_out"
        nodes.append(helper.make_node("LayerNormalization", [x, "gamma", "beta"], [y],
                                      name=f"{scope}/norm/LayerNormalization", axis=-1))
        x = y
        for k in range(units):
            s = f"{scope}/mlp.{k}"
            nodes += [
                helper.make_node("Constant", [], [f"{s}/c"], name=f"{s}/Constant",
                                 value=numpy_helper.from_array(np.array(0.5, np.float32))),
                helper.make_node("MatMul", [x, "w"], [f"{s}/mm"], name=f"{s}/MatMul"),
                helper.make_node("Relu", [f"{s}/mm"], [f"{s}/act"], name=f"{s}/Relu"),
                helper.make_node("Mul", [f"{s}/act", f"{s}/c"], [f"{s}/scaled"], name=f"{s}/Mul"),
                helper.make_node("Add", [x, f"{s}/scaled"], [f"{s}/out"], name=f"{s}/Add"),
            ]
            x = f"{s}/out"
    nodes.append(helper.make_node("Softmax", [x], ["y"], name="/head/Softmax", axis=-1))
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32), "w"),
             numpy_helper.from_array(np.ones(width, np.float32), "gamma"),
             numpy_helper.from_array(np.zeros(width, np.float32), "beta")]
    graph = helper.make_graph(nodes, "layered",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
