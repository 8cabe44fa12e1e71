"""A Session keeps each weight once (the plan's arrays); ``Session.model`` rebuilds them.

Oracle: onnx's own ``numpy_helper.to_array`` of the initializers as written, compared
bit for bit with those of ``Session.model``, for every element type a weight can have.
"""

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.runtime.weights import DATA_FIELDS, attach_weights, detach_weights

RNG = np.random.default_rng(7)

# element type -> values of that type (raw_data or typed fields: both encodings)
VALUES = {
    TensorProto.FLOAT: RNG.standard_normal((3, 4)).astype(np.float32),
    TensorProto.DOUBLE: RNG.standard_normal((2, 2)),
    TensorProto.FLOAT16: RNG.standard_normal((5,)).astype(np.float16),
    TensorProto.BFLOAT16: RNG.standard_normal((2, 3)).astype(ml_dtypes.bfloat16),
    TensorProto.FLOAT8E4M3FN: RNG.standard_normal((4,)).astype(ml_dtypes.float8_e4m3fn),
    TensorProto.INT4: np.array([-8, -1, 0, 7, 3], ml_dtypes.int4),
    TensorProto.UINT4: np.array([0, 15, 9], ml_dtypes.uint4),
    TensorProto.INT8: np.array([-128, 5, 127], np.int8),
    TensorProto.UINT16: np.array([0, 65535, 12], np.uint16),
    TensorProto.INT64: np.array([[1, -2], [3, 1 << 40]], np.int64),
    TensorProto.BOOL: np.array([True, False, True]),
    TensorProto.STRING: np.array([b"a", b"", b"onnx"], dtype=object),
}


def _model(raw: bool) -> onnx.ModelProto:
    inits, nodes, outputs = [], [], []
    for i, (elem, values) in enumerate(VALUES.items()):
        name = f"w{i}"
        if raw or elem == TensorProto.STRING:
            t = numpy_helper.from_array(values, name)
        else:  # the typed fields (float_data, int32_data, ...): onnx's helper picks them
            t = helper.make_tensor(name, elem, values.shape, values.flatten().tolist())
        t.doc_string = f"weight {i}"
        inits.append(t)
        nodes.append(helper.make_node("Identity", [name], [f"y{i}"]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", elem, values.shape))
    graph = helper.make_graph(nodes, "weights", [], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == object:
        assert a.tolist() == b.tolist()
    else:
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("raw", [True, False], ids=["raw_data", "typed_fields"])
def test_session_model_has_the_weights_bit_for_bit(raw):
    model = _model(raw)
    sess = onnxkit.Session(model)
    rebuilt = sess.model
    assert [t.name for t in rebuilt.graph.initializer] == [t.name for t in model.graph.initializer]
    for given, back in zip(model.graph.initializer, rebuilt.graph.initializer):
        assert back.data_type == given.data_type and list(back.dims) == list(given.dims)
        assert back.doc_string == given.doc_string
        _same(numpy_helper.to_array(back), numpy_helper.to_array(given))
    onnx.checker.check_model(rebuilt)
    # the outputs are the weights themselves: the plan's arrays are the same values
    for i, out in enumerate(sess.run(None, {})):
        _same(np.asarray(out), numpy_helper.to_array(model.graph.initializer[i]))


def test_the_session_keeps_no_weight_data_in_its_proto():
    sess = onnxkit.Session(_model(raw=True))
    for stub in sess._skeleton.graph.initializer:
        assert not any(stub.HasField(f) if f in ("raw_data", "data_location")
                       else len(getattr(stub, f)) for f in DATA_FIELDS), stub.name
    assert sess._skeleton.ByteSize() < 2000  # names, types, dims: no values


def test_detach_leaves_the_model_alone_and_attach_inverts_it():
    model = _model(raw=False)
    before = model.SerializeToString()
    skeleton, arrays = detach_weights(model)
    assert model.SerializeToString() == before
    back = attach_weights(skeleton, arrays)
    for given, got in zip(model.graph.initializer, back.graph.initializer):
        _same(numpy_helper.to_array(got), numpy_helper.to_array(given))
    assert attach_weights(skeleton, arrays) is not back  # a new proto each time


def test_optimized_session_model_runs_like_the_session():
    """Level 3 folds and fuses: ``Session.model`` is the optimized model, weights included,
    and a reference session of it gives the cpu session's outputs."""
    text = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2, 4] x) => (float[2, 3] y) {
      w = Constant <value = float[4, 3] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}> ()
      b = Constant <value = float[3] {0.5, -1, 2}> ()
      m = MatMul(x, w)
      a = Add(m, b)
      y = Relu(a)
    }
    """
    x = np.array([[1, -1, 2, 0], [0.5, 0.25, -3, 1]], np.float32)
    expected = np.maximum(x @ np.arange(1, 13, dtype=np.float32).reshape(4, 3)
                          + np.array([0.5, -1, 2], np.float32), 0)
    sess = onnxkit.Session(text, executor="cpu", level=3)
    rebuilt = sess.model
    assert len(rebuilt.graph.initializer) >= 1
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], expected, rtol=1e-6)
    np.testing.assert_allclose(onnxkit.Session(rebuilt).run(None, {"x": x})[0], expected,
                               rtol=1e-6)
