"""onnxkit.protobuf: the wire format by hand, the schema-named walk, the dump, the sizes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from onnxkit.conformance import node_cases
from onnxkit.examples import example_path
from onnxkit.protobuf import (WireError, decode_varint, dump, encode_tag, encode_varint, explain_tag,
                              hexdump, iter_all, iter_fields, select, size_breakdown, walk)
from onnxkit.protobuf.sizes import CONSTANTS, NODES, WEIGHTS


def ld(field_number: int, payload: bytes) -> bytes:
    """A LEN field written by hand: tag, length, payload."""
    return encode_tag(field_number, 2) + encode_varint(len(payload)) + payload


# --- the wire format, by hand ---------------------------------------------------------

@pytest.mark.parametrize("value, encoded", [
    (0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (128, b"\x80\x01"), (150, b"\x96\x01"),
    (300, b"\xac\x02"), (-1, b"\xff" * 9 + b"\x01"),
])
def test_varint_examples(value, encoded):
    assert encode_varint(value) == encoded
    raw, end = decode_varint(encoded)
    assert end == len(encoded)
    assert raw == value % (1 << 64)


def test_tags():
    assert encode_tag(7, 2) == b"\x3a"          # ModelProto.graph
    assert encode_tag(1, 0) == b"\x08"          # ModelProto.ir_version
    assert encode_tag(20, 0) == b"\xa0\x01"     # AttributeProto.type: a two-byte tag
    assert explain_tag(0x3a) == "field 7, wire type 2 (len)"


def test_hand_encoded_model():
    node = ld(1, b"x") + ld(2, b"y") + ld(4, b"Relu")          # input, output, op_type
    graph = ld(1, node) + ld(2, b"g")                          # node, name
    data = b"\x08\x08" + ld(2, b"onnxkit") + ld(7, graph) + ld(8, b"\x10\x12")  # opset 18
    parsed = onnx.ModelProto.FromString(data)
    assert (parsed.ir_version, parsed.producer_name, parsed.opset_import[0].version) == (8, "onnxkit", 18)
    assert parsed.graph.node[0].op_type == "Relu"

    fields = walk(data)
    assert [(f.name, f.offset, f.size) for f in fields] == [
        ("ir_version", 0, 2), ("producer_name", 2, 9), ("graph", 11, 2 + len(graph)),
        ("opset_import", 13 + len(graph), 4)]
    assert fields[0].value == 8 and fields[1].value == "onnxkit"
    graph_field = fields[2]
    assert graph_field.type_name == "GraphProto" and graph_field.payload_size == len(graph)
    assert [f.name for f in graph_field.children] == ["node", "name"]
    assert [(f.name, f.value) for f in graph_field.children[0].children] == [
        ("input", "x"), ("output", "y"), ("op_type", "Relu")]
    assert [f.value for f in select(fields, "opset_import.version")] == [18]


def test_scalar_types_decoded_by_schema():
    attr_i = ld(1, b"axis") + b"\x18" + encode_varint(-1) + b"\xa0\x01\x02"   # i = -1, type INT
    attr_f = ld(1, b"alpha") + b"\x15" + np.float32(0.5).tobytes() + b"\xa0\x01\x01"  # f, FLOAT
    node = ld(5, attr_i) + ld(5, attr_f)
    parsed = onnx.NodeProto.FromString(node)
    assert parsed.attribute[0].i == -1 and parsed.attribute[1].f == 0.5

    fields = walk(node, onnx.NodeProto.DESCRIPTOR)
    first, second = (f.children for f in fields)
    assert [(f.name, f.value) for f in first] == [("name", "axis"), ("i", -1), ("type", "INT")]
    assert [(f.name, f.value) for f in second] == [("name", "alpha"), ("f", 0.5), ("type", "FLOAT")]
    assert first[1].size == 11            # 1 tag byte + 10 bytes for a negative varint
    assert first[2].header_size == 2      # field 20 needs a two-byte tag


def test_packed_and_raw_tensor_data():
    floats = numpy_helper.from_array(np.arange(10, dtype=np.float32), "a")
    floats.ClearField("raw_data")
    floats.float_data.extend(range(10))
    raw = numpy_helper.from_array(np.arange(6, dtype=np.int64).reshape(2, 3), "b")
    ints = helper.make_tensor("c", onnx.TensorProto.INT64, [3], [1, 300, -2])
    by_name = {}
    for tensor in (floats, raw, ints):
        fields = walk(tensor)
        by_name[tensor.name] = {f.name: f for f in fields}
    f = by_name["a"]["float_data"]
    assert f.type_name == "float[] packed" and f.count == 10 and f.value[:3] == [0.0, 1.0, 2.0]
    assert f.payload_size == 40
    r = by_name["b"]["raw_data"]
    assert r.payload_size == 48 and r.value == np.int64(0).tobytes()
    assert [f.value for f in walk(raw) if f.name == "dims"] == [2, 3]   # dims: not packed
    i = by_name["c"]["int64_data"]
    assert i.count == 3 and i.value == [1, 300, -2]


def test_unknown_field_is_kept_and_numbered():
    data = b"\x08\x08" + ld(99, b"??")
    fields = walk(data)
    assert [(f.name, f.type_name) for f in fields] == [("ir_version", "int64"), ("#99", "unknown")]
    assert sum(f.size for f in fields) == len(data)


@pytest.mark.parametrize("data, message", [
    (b"\x08", "truncated varint"),
    (b"\x3a\x05ab", "runs past the end"),
    (b"\x00\x01", "field number 0"),
    (b"\x0b", "wire type 3"),
])
def test_malformed_bytes(data, message):
    with pytest.raises(WireError, match=message):
        walk(data)


# --- real models ------------------------------------------------------------------------

def test_walk_covers_every_byte_of_every_node_case():
    for case in node_cases()[::7]:
        data = case.model.SerializeToString()
        fields = walk(data)
        assert sum(f.size for f in fields) == len(data), case.name
        for _, f in iter_all(fields):
            assert f.size == f.header_size + f.payload_size
            if f.children:
                assert sum(c.size for c in f.children) == f.payload_size, (case.name, f.name)


def test_raw_fields_match_protobuf_for_an_if_model():
    model = next(c.model for c in node_cases() if c.name == "test_if")
    data = model.SerializeToString()
    assert [r.field_number for r in iter_fields(data)] == [f.number for f in
                                                          _set_fields_in_number_order(model)]
    branches = [f for _, f in iter_all(walk(model)) if f.name == "g"]
    assert len(branches) == 2 and all(f.type_name == "GraphProto" for f in branches)


def _set_fields_in_number_order(message):
    return sorted((fd for fd, _ in message.ListFields()), key=lambda fd: fd.number)


def _model_with_weights(n: int = 32):
    w = numpy_helper.from_array(np.ones((n, n), np.float32), "w")
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    c = helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.ones(4, np.float32)))
    graph = helper.make_graph([node, c], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, n])],
                              [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_size_breakdown_adds_up_and_finds_the_weights():
    model = _model_with_weights(32)
    sizes = size_breakdown(model)
    assert sizes.total == len(model.SerializeToString())
    assert sum(sizes.by_category.values()) == sizes.total
    # raw_data: a 1-byte tag, a 2-byte length (4096 > 127) and 32*32*4 bytes
    assert sizes.by_category[WEIGHTS] == 1 + 2 + 4096
    assert sizes.by_category[CONSTANTS] == 1 + 1 + 16
    assert sizes.weights == sizes.by_category[WEIGHTS] + sizes.by_category[CONSTANTS]
    assert sizes.structure == sizes.total - sizes.weights
    assert NODES in sizes.by_category and "total" in str(sizes)


@pytest.mark.parametrize("name", ["squeezenet", "resnet50"])
def test_size_breakdown_of_bundled_models(name):
    model = onnx.load(example_path(name))
    sizes = size_breakdown(model)
    assert sum(sizes.by_category.values()) == sizes.total == len(model.SerializeToString())
    raw = sum(len(t.raw_data) for t in model.graph.initializer)
    assert sizes.by_category.get(WEIGHTS, 0) >= raw


def test_dump_lines():
    model = onnx.parser.parse_model('<ir_version: 8, opset_import: ["" : 18]> '
                                    'g (float[2] x) => (float[2] y) { y = Relu(x) }')
    text = dump(model)
    lines = text.splitlines()
    assert lines[1].split() == ["0", "08", "2", "ir_version", "(1,", "varint)", "int64", "8"]
    assert lines[2].split()[:5] == ["2", "3a", str(len(model.graph.SerializeToString()) + 2),
                                    "graph", "(7,"]
    assert any("op_type (4, len) string" in line and "'Relu'" in line for line in lines)
    assert lines[-1].split() == [str(len(model.SerializeToString())), "end"]
    short = dump(model, max_lines=3).splitlines()
    assert short[-2].startswith("... ") and len(short) == 6
    assert all(line.startswith(("offset", "     0", "     2", "... ", "    ")) for line in short)
    assert "node (1, len)" in dump(model, max_depth=1) and "op_type" not in dump(model, max_depth=1)


def test_hexdump():
    text = hexdump(b"\x08\x08:\x05hello", 0)
    assert text == "000000  08 08 3a 05 68 65 6c 6c  6f" + " " * 21 + "  |..:.hello       |"
    assert hexdump(bytes(range(40)), 18, 20).startswith("000010        ")


def test_empty_messages_are_messages():
    model = onnx.parser.parse_model('<ir_version: 8, opset_import: ["" : 18]> '
                                    'g (float[N, ?] x, float s) => (float[N, ?] y) { y = Mul(x, s) }')
    dims = select(walk(model), "graph.input.type.tensor_type.shape.dim")
    assert [d.payload_size for d in dims] == [3, 0]          # dim_param "N", then an unknown dim
    assert all(d.is_message for d in dims) and dims[1].children == []
    scalar_shape = select(walk(model), "graph.input.type.tensor_type.shape")[1]
    assert scalar_shape.is_message and scalar_shape.payload_size == 0
    assert "TensorShapeProto.Dimension    0 bytes" in dump(model)
