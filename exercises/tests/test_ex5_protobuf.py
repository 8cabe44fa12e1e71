"""Checks of exercise 5: varints by hand and as protobuf writes them; fields found in the
bytes of models that onnx serialized (protobuf is the oracle)."""

from __future__ import annotations

import onnx
import onnx.helper as oh
import pytest

from exercises.tests.select import exercise

ex = exercise("ex5_protobuf")


@pytest.mark.task5_1
def test_varints_by_hand():
    assert ex.decode_varint(b"\x00") == (0, 1)
    assert ex.decode_varint(b"\x01") == (1, 1)
    assert ex.decode_varint(b"\x7f") == (127, 1)
    assert ex.decode_varint(b"\x80\x01") == (128, 2)
    assert ex.decode_varint(b"\xac\x02") == (300, 2)
    assert ex.decode_varint(b"\xff\x96\xac\x02\x00", 1) == (300 * 128 + 0x16, 4)


@pytest.mark.task5_1
@pytest.mark.hidden
def test_varints_as_protobuf_writes_them():
    for value in (0, 1, 150, 2**14 - 1, 2**14, 2**31 + 5, 2**63 - 1):
        data = onnx.TensorProto(dims=[value]).SerializeToString()   # dims: field 1, a varint
        assert data[0] == (1 << 3 | 0)
        assert ex.decode_varint(data, 1) == (value, len(data)), value
    with pytest.raises(ValueError):
        ex.decode_varint(b"\x80\x80")


def model_bytes() -> tuple[onnx.ModelProto, bytes]:
    node = oh.make_node("Relu", ["x"], ["y"])
    graph = oh.make_graph([node], "tiny", [oh.make_tensor_value_info("x", 1, [2])],
                          [oh.make_tensor_value_info("y", 1, [2])])
    model = oh.make_model(graph, producer_name="exercise-five", opset_imports=[oh.make_opsetid("", 18)])
    model.doc_string = "fields before and after the graph"
    model.model_version = 300                                       # a varint field (5)
    return model, model.SerializeToString()


@pytest.mark.task5_2
def test_producer_name_and_graph():
    model, data = model_bytes()
    assert ex.find_field(data, 2) == b"exercise-five"
    graph = onnx.GraphProto()
    graph.ParseFromString(ex.find_field(data, 7))
    assert graph == model.graph
    assert ex.find_field(data, 20) is None                          # metadata_props: none here


@pytest.mark.task5_2
@pytest.mark.hidden
def test_fields_of_every_wire_type_are_skipped():
    data = onnx.TensorProto(dims=[2], data_type=11, float_data=[0.5], name="w",
                            raw_data=b"\x01\x02").SerializeToString()
    assert ex.find_field(data, 8) == b"w"                           # after dims, float_data...
    assert ex.find_field(data, 9) == b"\x01\x02"
    fixed = b"\x0d\x00\x00\x80\x3f" + b"\x11" + bytes(8) + b"\x1a\x02ok"   # 32-bit, 64-bit, string
    assert ex.find_field(fixed, 3) == b"ok"
    with pytest.raises(ValueError):
        ex.find_field(b"\x1a\x05ok", 3)                             # 5 bytes promised, 2 there
    with pytest.raises(ValueError):
        ex.find_field(b"\x0b", 1)                                   # wire type 3
