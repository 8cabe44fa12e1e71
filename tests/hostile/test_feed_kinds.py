"""Feeds of every declared kind are checked element by element: sequences, maps and
optionals get messages like tensors do (the input, what was given, what is accepted),
and good feeds still run, with outputs as onnx.reference (or hand arithmetic) gives them.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.errors import InputError

ML = "ai.onnx.ml"


def _model(input_type: onnx.TypeProto, nodes: list, outputs: list[str]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", [helper.make_value_info("s", input_type)],
                              [onnx.ValueInfoProto(name=o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid(ML, 3)])
    model.ir_version = 8
    return model


def _tensor(elem=T.FLOAT, shape=None) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(elem, shape)


SEQ = helper.make_sequence_type_proto(_tensor())
SEQ_N2 = helper.make_sequence_type_proto(_tensor(T.FLOAT, ["N", 2]))
MAP_STR = helper.make_map_type_proto(T.STRING, _tensor(T.FLOAT, []))
MAP_INT = helper.make_map_type_proto(T.INT64, _tensor(T.FLOAT, []))
SEQ_MAP = helper.make_sequence_type_proto(MAP_STR)
OPT = helper.make_optional_type_proto(_tensor(T.FLOAT, [2]))
OPT_SEQ = helper.make_optional_type_proto(SEQ)

# seq(tensor(float)) -> its tensors joined, and how many there are
JOIN = _model(SEQ, [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0),
                    helper.make_node("SequenceLength", ["s"], ["n"])], ["y", "n"])
JOIN_N2 = _model(SEQ_N2, [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)], ["y"])
VECTORIZE = _model(MAP_STR, [helper.make_node("DictVectorizer", ["s"], ["y"], domain=ML,
                                              string_vocabulary=["a", "b", "c"])], ["y"])
VECTORIZE_ROWS = _model(SEQ_MAP, [helper.make_node("DictVectorizer", ["s"], ["y"], domain=ML,
                                                   string_vocabulary=["a", "b"])], ["y"])
CAST_MAP = _model(MAP_INT, [helper.make_node("CastMap", ["s"], ["y"], domain=ML)], ["y"])
HAS = _model(OPT, [helper.make_node("OptionalHasElement", ["s"], ["has"])], ["has"])
HAS_SEQ = _model(OPT_SEQ, [helper.make_node("OptionalHasElement", ["s"], ["has"])], ["has"])

F2 = np.array([1.0, 2.0], np.float32)

BAD = [
    # seq(tensor(float)): the kinds the issue saw passed through, and their neighbours
    (JOIN, "abc", "input 's' expects seq(tensor(float)) as a list, got a str ('abc')"),
    (JOIN, None, "input 's' expects seq(tensor(float)) as a list, got None"),
    (JOIN, {"a": F2}, "input 's' expects seq(tensor(float)) as a list, got a dict of 1"),
    (JOIN, F2, "input 's' expects seq(tensor(float)) as a list, got an array float32[2]"),
    (JOIN, [[1.0, 2.0]],
     "input 's' expects seq(tensor(float)): s[0] is a list of 2, not a numpy array of float32"),
    (JOIN, [F2, "abc"],
     "input 's' expects seq(tensor(float)): s[1] is a str ('abc'), not a numpy array of float32"),
    (JOIN, [F2, None],
     "input 's' expects seq(tensor(float)): s[1] is None, not a numpy array of float32"),
    (JOIN, [{}], "input 's' expects seq(tensor(float)): s[0] is a dict of 0, not a numpy array "
                 "of float32"),
    (JOIN, [1.5], "input 's' expects seq(tensor(float)): s[0] is a Python float (1.5), not a "
                  "numpy array of float32"),
    (JOIN, [F2, np.array([1, 2], np.int64)],
     "input 's' expects seq(tensor(float)): s[1] is an array of int64, not float32; convert it "
     "with .astype(np.float32)"),
    # seq(tensor(float)[N, 2]): ranks and fixed dims of the elements
    (JOIN_N2, [F2], "input 's' expects seq(tensor(float)): s[0] has rank 1 (shape [2]); the "
                    "rank must be 2 (shape ['N', 2])"),
    (JOIN_N2, [np.ones((1, 2), np.float32), np.ones((1, 3), np.float32)],
     "input 's' expects seq(tensor(float)): s[1] has shape [1, 3]; dimension 1 must be 2 "
     "(shape ['N', 2])"),
    # map(string, tensor(float))
    (VECTORIZE, [("a", 1.0)],
     "input 's' expects map(string,tensor(float)) as a dict, got a list of 1"),
    (VECTORIZE, {"a": 1.0, 7: 2.0},
     "input 's' expects map(string,tensor(float)): s has the key 7 (int); its keys must be str"),
    (VECTORIZE, {"a": "x"},
     "input 's' expects map(string,tensor(float)): s['a'] is a str ('x'), not a number (int, "
     "float or numpy scalar) for tensor(float) (or a numpy array of float32)"),
    (VECTORIZE, {"a": None},
     "input 's' expects map(string,tensor(float)): s['a'] is None, not a number (int, float or "
     "numpy scalar) for tensor(float) (or a numpy array of float32)"),
    (VECTORIZE, {"b": [1.0]},
     "input 's' expects map(string,tensor(float)): s['b'] is a list of 1, not a number (int, "
     "float or numpy scalar) for tensor(float) (or a numpy array of float32)"),
    (VECTORIZE, {"a": np.array([1, 2], np.int64)},
     "input 's' expects map(string,tensor(float)): s['a'] is an array of int64, not float32; "
     "convert it with .astype(np.float32)"),
    # map(int64, tensor(float)): keys are integers, and bool is not one
    (CAST_MAP, {"1": 2.0}, "input 's' expects map(int64,tensor(float)): s has the key '1' (str); "
                           "its keys must be int64 (int or numpy integer)"),
    (CAST_MAP, {True: 2.0}, "input 's' expects map(int64,tensor(float)): s has the key True "
                            "(bool); its keys must be int64 (int or numpy integer)"),
    (CAST_MAP, {1.5: 2.0}, "input 's' expects map(int64,tensor(float)): s has the key 1.5 "
                           "(float); its keys must be int64 (int or numpy integer)"),
    # seq(map(string, tensor(float))): the place of a bad value inside both
    (VECTORIZE_ROWS, [{"a": 1.0}, {"b": "c"}],
     "input 's' expects seq(map(string,tensor(float))): s[1]['b'] is a str ('c'), not a number "
     "(int, float or numpy scalar) for tensor(float) (or a numpy array of float32)"),
    (VECTORIZE_ROWS, [[{"a": 1.0}]],
     "input 's' expects seq(map(string,tensor(float))): s[0] is a list of 1, not a dict"),
    # optional(tensor(float)[2]) and optional(seq(tensor(float)))
    (HAS, [1.0], "input 's' expects optional(tensor(float)): s is a list of 1, not a numpy array "
                 "of float32; or None, for an empty optional"),
    (HAS, np.zeros(3, np.float32), "input 's' expects optional(tensor(float)): s has shape [3]; "
                                   "dimension 0 must be 2 (shape [2]); or None, for an empty "
                                   "optional"),
    (HAS, np.zeros(2, np.float64), "input 's' expects optional(tensor(float)): s is an array of "
                                   "float64, not float32; convert it with .astype(np.float32); "
                                   "or None, for an empty optional"),
    (HAS_SEQ, [F2, "x"], "input 's' expects optional(seq(tensor(float))): s[1] is a str ('x'), "
                         "not a numpy array of float32; or None, for an empty optional"),
]


@pytest.mark.parametrize("model, feed, message", BAD,
                         ids=[f"{i}-{m.graph.node[0].op_type}" for i, (m, _, _) in enumerate(BAD)])
def test_a_bad_feed_is_refused_with_what_was_given_and_what_is_accepted(model, feed, message):
    sess = onnxkit.Session(model)
    with pytest.raises(InputError) as info:
        sess.run(None, {"s": feed})
    assert str(info.value) == message


def test_a_tensor_input_still_refuses_a_sequence():
    model = _model(_tensor(T.FLOAT, [2]), [helper.make_node("Relu", ["s"], ["y"])], ["y"])
    with pytest.raises(InputError) as info:
        onnxkit.Session(model).run(None, {"s": [F2]})
    assert str(info.value) == "input 's' expects tensor(float) as a numpy array, got sequence of 1"


def _same_as_onnx_reference(model, feed):
    ours = onnxkit.Session(model).run(None, {"s": feed})
    theirs = ReferenceEvaluator(model).run(None, {"s": feed})
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    return ours


def test_good_sequences_run_as_onnx_reference_runs_them():
    y, n = _same_as_onnx_reference(JOIN, [F2, np.array([3.0], np.float32)])
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])
    assert int(n) == 2
    y, n = onnxkit.Session(JOIN).run(None, {"s": (F2,)})  # a tuple is a sequence too
    np.testing.assert_array_equal(y, F2)
    y, = _same_as_onnx_reference(JOIN_N2, [np.ones((1, 2), np.float32),
                                           np.zeros((2, 2), np.float32)])
    assert y.shape == (3, 2)


def test_numpy_scalars_in_a_sequence_become_0d_tensors():
    model = _model(SEQ, [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0,
                                          new_axis=1)], ["y"])
    y, = onnxkit.Session(model).run(None, {"s": [np.float32(1.5), np.float32(-2.0)]})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, [1.5, -2.0])


def test_good_maps_run_as_onnx_reference_runs_them():
    # onnx.reference answers float64 [3] for one map of Python floats, onnxkit float32 [1, 3]
    # as onnxruntime does: the values are what is compared with it
    y, = onnxkit.Session(VECTORIZE).run(None, {"s": {"a": 1.0, "c": 2.5}})
    expected, = ReferenceEvaluator(VECTORIZE).run(None, {"s": {"a": 1.0, "c": 2.5}})
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.ravel(), expected.astype(np.float32))
    np.testing.assert_array_equal(y, [[1.0, 0.0, 2.5]])
    y, = onnxkit.Session(VECTORIZE).run(None, {"s": {"b": np.float32(4.0), "a": 3}})
    np.testing.assert_array_equal(y, [[3.0, 4.0, 0.0]])


def test_good_maps_with_integer_keys_and_sequences_of_maps_run():
    y, = onnxkit.Session(CAST_MAP).run(None, {"s": {2: 0.5, np.int64(1): 1.5}})
    np.testing.assert_array_equal(y, np.array([[1.5, 0.5]], np.float32))  # ordered by key
    y, = onnxkit.Session(VECTORIZE_ROWS).run(None, {"s": [{"a": 1.0}, {"b": 2.0, "a": 3.0}]})
    np.testing.assert_array_equal(y, [[1.0, 0.0], [3.0, 2.0]])


def test_optional_inputs_take_none_and_a_value():
    has, = _same_as_onnx_reference(HAS, None)
    assert not bool(has)
    has, = _same_as_onnx_reference(HAS, F2)
    assert bool(has)
    has, = onnxkit.Session(HAS_SEQ).run(None, {"s": None})
    assert not bool(has)
    has, = onnxkit.Session(HAS_SEQ).run(None, {"s": [F2]})
    assert bool(has)
