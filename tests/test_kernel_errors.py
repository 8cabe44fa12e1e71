"""Bad input to a reference kernel ends as an onnxkit error naming the node and its op.

Each case is a one-node model whose feeds (or attributes) the op refuses. The error a
user sees from ``Session.run`` must be the onnxkit class that says what kind of mistake
it is (an attribute value, an input's shape, an index), with the kernel's own reason,
not a wrapped Python ``ValueError``.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.errors import AttributeValueError, KernelIndexError, KernelInputError, OnnxkitError

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(op_type, inputs, output_rank, opset, **attrs):
    """One ``op_type`` node named ``bad_<op>``: ``inputs`` is [(name, elem_type, rank)]."""
    node = helper.make_node(op_type, [n for n, _, _ in inputs], ["y"],
                            name=f"bad_{op_type.lower()}", **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, t, [None] * r) for n, t, r in inputs],
        [helper.make_tensor_value_info("y", inputs[0][1], [None] * output_rank)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


x23 = np.arange(6, dtype=np.float32).reshape(2, 3)

CASES = [
    # (op, model, feeds, expected class, words the message must hold)
    ("Reshape", _model("Reshape", [("x", F, 2), ("shape", I64, 1)], 2, 14),
     {"x": x23, "shape": np.array([4, 2], np.int64)}, KernelInputError, "cannot reshape"),
    ("Mod", _model("Mod", [("x", F, 2), ("d", F, 2)], 2, 13, fmod=2),
     {"x": x23, "d": x23 + 1}, AttributeValueError, "fmod must be 0 or 1"),
    ("Gather", _model("Gather", [("x", F, 2), ("i", I64, 1)], 2, 13),
     {"x": x23, "i": np.array([0, 5], np.int64)}, KernelIndexError, "out of range"),
    ("DepthToSpace", _model("DepthToSpace", [("x", F, 4)], 4, 13, blocksize=2, mode="XYZ"),
     {"x": np.zeros((1, 4, 2, 2), np.float32)}, AttributeValueError, "'DCR' or 'CRD'"),
    ("Transpose", _model("Transpose", [("x", F, 2)], 2, 13, perm=[0, 0]),
     {"x": x23}, AttributeValueError, "not a permutation"),
]


@pytest.mark.parametrize("op_type, model, feeds, expected, words", CASES,
                         ids=[c[0] for c in CASES])
def test_bad_input_is_an_onnxkit_error_naming_the_op(op_type, model, feeds, expected, words):
    session = onnxkit.Session(model, executor="reference")
    with pytest.raises(OnnxkitError) as info:
        session.run(None, feeds)
    error = info.value
    assert isinstance(error, expected), f"{type(error).__name__}: {error}"
    message = str(error)
    assert f"'bad_{op_type.lower()}' ({op_type}, domain 'ai.onnx')" in message
    assert words in message
    assert "ValueError" not in message and "IndexError" not in message  # not a wrapped one


def test_errors_are_onnxkit_errors_and_stay_catchable_as_before():
    """The magics' and the wire decoder's errors are onnxkit errors too; callers that caught
    ``ValueError``/``IndexError`` from a kernel or the decoder still do."""
    from onnxkit.magic import MagicError
    from onnxkit.protobuf import WireError, decode_varint

    assert issubclass(MagicError, OnnxkitError)
    with pytest.raises(OnnxkitError, match="truncated varint"):
        decode_varint(b"\x80", 0)
    assert issubclass(WireError, ValueError)
    assert issubclass(KernelInputError, ValueError) and issubclass(AttributeValueError, ValueError)
    assert issubclass(KernelIndexError, IndexError)
