"""The optimizer meets malformed constants with an onnxkit error naming the tensor."""

import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.errors import ModelLoadError


def _model_with(node_or_init):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    nodes, inits = [helper.make_node("Add", ["x", "w"], ["y"], name="add")], []
    if isinstance(node_or_init, TensorProto):
        inits.append(node_or_init)
    else:
        nodes.insert(0, node_or_init)
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], initializer=inits),
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 10
    return model


def _short_tensor(name):
    t = helper.make_tensor(name, TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])
    del t.float_data[:]
    t.raw_data = b"\0" * 3  # 3 bytes where 4 floats need 16
    return t


@pytest.mark.parametrize("where", ["initializer", "Constant node"])
@pytest.mark.parametrize("level", [1, 2, 3])
def test_a_constant_with_too_few_bytes_is_a_model_error(where, level):
    bad = _short_tensor("w")
    model = _model_with(bad if where == "initializer"
                        else helper.make_node("Constant", [], ["w"], name="c", value=bad))
    with pytest.raises(ModelLoadError, match="tensor 'w' .* is malformed"):
        onnxkit.optimize(model, level=level)
