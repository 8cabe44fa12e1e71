"""Split on the cpu executor: views of the input, the pieces' indices worked out once per
data shape when the sizes are an initializer (or absent). Oracle: onnxruntime; the
profiler's ``[reference]`` marks the cases handed to the reference kernel, and bad
sizes get the reference's onnxkit error."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxkit import Session
from onnxkit.errors import OnnxkitError
from onnxkit.runtime.profile import Profiler

ort = pytest.importorskip("onnxruntime")


def _model(x_shape, n_out, opset, sizes=None, sizes_fed=False, **attrs):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits, names = [], ["x"]
    if sizes is not None:
        names.append("s")
        if sizes_fed:
            inputs.append(helper.make_tensor_value_info("s", TensorProto.INT64, [len(sizes)]))
        else:
            inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "s"))
    outs = [f"y{i}" for i in range(n_out)]
    graph = helper.make_graph([helper.make_node("Split", names, outs, **attrs)], "split", inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


X = np.random.default_rng(4).standard_normal((2, 3, 12)).astype(np.float32)
CASES = {  # name: (outputs, opset, sizes, sizes fed at run time, attributes)
    "qkv sizes, initializer": (3, 13, [4, 4, 4], False, dict(axis=-1)),
    "uneven sizes fed": (2, 13, [5, 7], True, dict(axis=2)),
    "equal parts, no sizes": (3, 13, None, False, dict(axis=1)),
    "num_outputs, last piece smaller": (3, 18, None, False, dict(axis=-1, num_outputs=3)),
    "num_outputs, 3 into 2": (2, 18, None, False, dict(axis=1, num_outputs=2)),
    "a piece of size 0": (3, 18, [6, 0, 6], False, dict(axis=-1)),
}


@pytest.mark.parametrize("name", CASES)
def test_split_matches_onnxruntime(name):
    n_out, opset, sizes, fed, attrs = CASES[name]
    model = _model(list(X.shape), n_out, opset, sizes, fed, **attrs)
    feeds = {"x": X} | ({"s": np.array(sizes, np.int64)} if fed else {})
    sess = Session(model, executor="cpu", level=0)
    prof = Profiler(sess)
    got = sess.run(None, feeds, trace=prof)
    assert prof.rows()[0]["kernel"] == f"cpu:ai.onnx::Split-{opset}"
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(got) == len(expected) == n_out
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_array_equal(g, e)
    again = sess.run(None, feeds)  # the kept pieces serve the second run
    for g, e in zip(again, expected):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("sizes, n_out, match", [([4, 4], 2, "add up"), ([6, 6], 3, "parts")])
def test_bad_sizes_get_the_reference_error(sizes, n_out, match):
    model = _model(list(X.shape), n_out, 13, sizes, axis=-1)
    with pytest.raises(OnnxkitError, match=match):
        Session(model, executor="cpu", level=0).run(None, {"x": X})
