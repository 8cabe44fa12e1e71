"""A 10 MB model string in an error message is cut: the message stays short, and the
string's length and hash still say which one it was (``errors.shown``)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from onnx import TensorProto, helper, printer

import onnxkit
from onnxkit import errors

HUGE = "N" * (10 * 1024 * 1024 - 1) + "\u202e"  # 10 MB, ending in a bidi override
TAG = f"({len(HUGE)} chars, #{hashlib.sha1(HUGE.encode()).hexdigest()[:8]})"
F = TensorProto.FLOAT


def _vi(name, shape=(2,), elem=F):
    return helper.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def _model(nodes, inputs=("x",), outputs=("y",), opsets=(("", 18),), initializers=()):
    graph = helper.make_graph(nodes, "g", [_vi(i) for i in inputs], [_vi(o) for o in outputs],
                              initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 10
    return model


def _loop_with_bad_body():
    body = helper.make_graph([helper.make_node("NoSuchOp", ["v"], ["w"], name=HUGE)], "body",
                             [_vi("i", (), TensorProto.INT64), _vi("c", (), TensorProto.BOOL), _vi("v")],
                             [_vi("c", (), TensorProto.BOOL), _vi("w")])
    trips = helper.make_tensor("trips", TensorProto.INT64, [], [2])
    return _model([helper.make_node("Loop", ["trips", "", "x"], ["y"], name="loop", body=body)],
                  initializers=[trips])


def _ref_attr():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky")
    attr = node.attribute.add()
    attr.name, attr.type, attr.ref_attr_name = "alpha", 1, HUGE
    return _model([node])


CASES = {
    "node name, unknown op": lambda: _model([helper.make_node("NoSuchOp", ["x"], ["y"], name=HUGE)]),
    "op type": lambda: _model([helper.make_node(HUGE, ["x"], ["y"], name="n")]),
    "domain not imported": lambda: _model([helper.make_node("Relu", ["x"], ["y"], domain=HUGE)]),
    "domain imported": lambda: _model([helper.make_node("Relu", ["x"], ["y"], domain=HUGE)],
                                      opsets=(("", 18), (HUGE, 1))),
    "input with no producer": lambda: _model([helper.make_node("Relu", [HUGE], ["y"], name="n")]),
    "output defined twice": lambda: _model([helper.make_node("Relu", ["x"], [HUGE], name="a"),
                                            helper.make_node("Abs", ["x"], [HUGE], name="b")],
                                           outputs=(HUGE,)),
    "graph output never made": lambda: _model([helper.make_node("Relu", ["x"], ["y"])], outputs=(HUGE,)),
    "node name, bad attribute": lambda: _model([helper.make_node("LeakyRelu", ["x"], ["y"], name=HUGE,
                                                                 alpha="text")]),
    "attribute name": lambda: _model([helper.make_node("Relu", ["x"], ["y"], **{HUGE: 1})]),
    "attribute reference outside a function": _ref_attr,
    "node in a loop body": _loop_with_bad_body,
    "node name, two inputs to Relu": lambda: _model([helper.make_node("Relu", ["x", "x"], ["y"], name=HUGE)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_huge_model_string_gives_a_short_message_that_still_identifies_it(case):
    model = CASES[case]()
    with pytest.raises(errors.OnnxkitError) as info:
        onnxkit.Session(model, executor="reference").run(None, {"x": np.ones(2, np.float32)})
    message = str(info.value)
    assert len(message) < 1024, f"{case}: {len(message)} characters"
    assert TAG in message  # the length and hash of the string, computed here independently
    assert "\u202e" not in message


def test_a_text_syntax_error_quoting_a_huge_line_is_cut():
    text = printer.to_text(_model([helper.make_node("Relu", ["x"], ["y"], name="n")]))
    text = text.replace("Relu (x)", f"Relu (x {'x' * 1_000_000}")  # no ')': the parser quotes the line
    with pytest.raises(errors.ModelLoadError) as info:
        onnxkit.load(text)
    assert len(str(info.value)) < 1024 and "invalid ONNX text syntax" in str(info.value)


def test_short_names_are_repeated_in_full():
    with pytest.raises(errors.NotImplementedOpError) as info:
        onnxkit.Session(_model([helper.make_node("NoSuchOp", ["x"], ["y"], name="conv_1")]))
    assert "node 'conv_1' (NoSuchOp, domain 'ai.onnx')" in str(info.value)
    assert "chars, #" not in str(info.value)


def test_widget_lookups_name_huge_values_briefly():
    from onnxkit.widgets import GraphWidget, TraceRecorder

    model = _model([helper.make_node("Relu", ["x"], [HUGE], name="a"),
                    helper.make_node("Abs", [HUGE], ["y"], name="b")])
    model.graph.name = HUGE
    rec = TraceRecorder(keep_values=True)
    onnxkit.Session(model).run(None, {"x": np.ones(2, np.float32)}, trace=rec)
    for lookup in (lambda: rec.value("nothing"), lambda: GraphWidget(model, infer=False).node_id("nothing")):
        with pytest.raises(KeyError) as info:
            lookup()
        assert len(str(info.value)) < 1024 and TAG in str(info.value)


def _feed_model():
    return _model([helper.make_node("Relu", [HUGE], ["y"], name="n")], inputs=(HUGE,))


@pytest.mark.parametrize("feeds", [
    pytest.param(lambda: {}, id="missing input"),
    pytest.param(lambda: {HUGE: np.ones(2, np.float32), "z" + HUGE: 1}, id="unknown input"),
    pytest.param(lambda: {HUGE: np.ones(3, np.float32)}, id="wrong shape"),
])
def test_feeds_name_huge_inputs_briefly(feeds):
    with pytest.raises(errors.InputError) as info:
        onnxkit.Session(_feed_model(), executor="reference").run(None, feeds())
    message = str(info.value)
    assert len(message) < 1024, f"{len(message)} characters"
    assert TAG in message and "\u202e" not in message


def test_a_malformed_initializer_with_a_huge_name_is_named_briefly():
    bad = helper.make_tensor(HUGE, F, [4], [1.0, 2.0, 3.0, 4.0])
    del bad.float_data[:]
    bad.raw_data = b"\0" * 3  # 3 bytes for 4 floats
    model = _model([helper.make_node("Add", ["x", HUGE], ["y"], name="n")], initializers=[bad])
    model.graph.initializer[0].dims[:] = [2]
    with pytest.raises(errors.OnnxkitError) as info:
        onnxkit.Session(model, executor="reference").run(None, {"x": np.ones(2, np.float32)})
    message = str(info.value)
    assert len(message) < 1024, f"{len(message)} characters"
    assert TAG in message
