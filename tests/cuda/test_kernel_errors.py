"""Bad input to a cuda kernel is an onnxkit error naming the op, like the reference's."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.errors import KernelInputError

CASES = {  # op, attributes, input shapes, what the message must say
    "concat_ranks": ("Concat", {"axis": 0}, [(2, 3), (2, 3, 1)], "different ranks"),
    "transpose_perm": ("Transpose", {"perm": [0, 0]}, [(2, 3)], "not a permutation"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_names_the_op(name):
    op, attrs, shapes, said = CASES[name]
    names = [f"x{i}" for i in range(len(shapes))]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node(op, names, ["y"], name="bad", **attrs)], "g",
                              inputs, [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    sess = onnxkit.Session(model, executor="cuda")
    feeds = {n: np.ones(s, np.float32) for n, s in zip(names, shapes)}
    with pytest.raises(KernelInputError) as info:
        sess.run(None, feeds)
    message = str(info.value)
    assert "bad" in message and op in message and said in message
    assert sess.executor.stats()["cuda_nodes"] == 1  # the cuda kernel said it, not the host
