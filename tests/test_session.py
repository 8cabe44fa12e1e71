"""Session API: shaped like onnxruntime's, checked against hand-computed values."""

import threading

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.runtime.trace import TraceEvent

CHAIN = """
<ir_version: 8, opset_import: ["" : 18]>
chain (float[2, 3] x, float[3] b) => (float[2, 3] y, float[2, 3] z) {
  r = Relu(x)
  s = Add(r, b)
  y = Mul(s, s)
  z = Identity(r)
}
"""

X = np.array([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], np.float32)
B = np.array([1.0, 1.0, 1.0], np.float32)
Y = (np.maximum(X, 0) + B) ** 2


def test_run_matches_hand_computed_values():
    sess = onnxkit.Session(CHAIN)
    y, z = sess.run(None, {"x": X, "b": B})
    np.testing.assert_array_equal(y, Y)
    np.testing.assert_array_equal(z, np.maximum(X, 0))
    assert y.dtype == np.float32


def test_output_names_select_and_order():
    sess = onnxkit.Session(CHAIN)
    z, y = sess.run(["z", "y"], {"x": X, "b": B})
    np.testing.assert_array_equal(y, Y)
    np.testing.assert_array_equal(z, np.maximum(X, 0))
    assert len(sess.run(["y"], {"x": X, "b": B})) == 1


def test_inputs_and_outputs_described_like_onnxruntime():
    sess = onnxkit.Session(CHAIN)
    (x, b) = sess.get_inputs()
    assert (x.name, x.shape, x.type) == ("x", [2, 3], "tensor(float)")
    assert (b.name, b.shape, b.type) == ("b", [3], "tensor(float)")
    assert [o.name for o in sess.get_outputs()] == ["y", "z"]


@pytest.mark.parametrize("form", ["text", "proto", "bytes", "path"])
def test_load_accepts_every_form(form, tmp_path):
    proto = onnxkit.load(CHAIN)
    model = {"text": CHAIN, "proto": proto, "bytes": proto.SerializeToString()}.get(form)
    if form == "path":
        model = str(tmp_path / "chain.onnx")
        onnx.save(proto, model)
    y, _ = onnxkit.run(model, {"x": X, "b": B})
    np.testing.assert_array_equal(y, Y)


def test_values_are_freed_after_last_use():
    sess = onnxkit.Session(CHAIN)
    freed = {s.node.op_type: s.free_after for s in sess.plan.steps}
    assert "x" in freed["Relu"]          # x is read by Relu only
    assert "s" in freed["Mul"]           # s dies at its last reader
    assert "r" in freed["Identity"]      # r lives until Identity (the last of Add, Identity)
    assert all("y" not in f and "z" not in f for f in freed.values())  # outputs survive


def test_trace_reports_every_node_with_its_values():
    events: list[TraceEvent] = []
    onnxkit.Session(CHAIN).run(None, {"x": X, "b": B}, trace=events.append)
    assert [e.node.op_type for e in events] == ["Relu", "Add", "Mul", "Identity"]
    mul = events[2]
    np.testing.assert_array_equal(mul.outputs[0], Y)
    assert mul.kernel == "ai.onnx::Mul-14" and mul.elapsed >= 0


def test_trace_reaches_into_subgraphs():
    model = """
    <ir_version: 8, opset_import: ["" : 18]>
    g (float[2] x, bool c) => (float[2] y) {
      y = If(c) <then_branch = t () => (float[2] o) { o = Relu(x) },
                 else_branch = e () => (float[2] o) { o = Identity(x) }>
    }
    """
    events = []
    onnxkit.Session(model).run(None, {"x": np.array([-1, 1], np.float32), "c": np.array(True)},
                               trace=events.append)
    assert [(e.node.op_type, e.path) for e in events] == [("Relu", "If/then_branch"), ("If", "")]


def test_one_session_from_many_threads():
    sess = onnxkit.Session(CHAIN)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(16)]
    results = [None] * len(inputs)

    def work(i):
        for _ in range(20):
            results[i] = sess.run(["y"], {"x": inputs[i], "b": B})[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, y in zip(inputs, results):
        np.testing.assert_array_equal(y, (np.maximum(x, 0) + B) ** 2)


def test_model_local_function_with_attribute_reference():
    model = """
    <ir_version: 8, opset_import: ["" : 18, "local" : 1]>
    g (float[3] x) => (float[3] y) {
      y = local.AddRelu <unused = 1> (x, x)
    }
    <domain: "local", opset_import: ["" : 18]>
    AddRelu <unused> (a, b) => (c) {
      s = Add(a, b)
      c = Relu(s)
    }
    """
    y, = onnxkit.run(model, {"x": np.array([-1, 0.5, 2], np.float32)})
    np.testing.assert_array_equal(y, np.array([0, 1, 4], np.float32))


def test_gradient_keeps_the_values_it_rereads_alive():
    # `c` is read only by Mul before Gradient runs; Gradient re-runs Mul, so c must survive.
    model = """
    <ir_version: 8, opset_import: ["" : 18, "ai.onnx.preview.training" : 1]>
    g (float[2] a, float[2] c) => (float[2] y, float[2] da) {
      y = Mul(a, c)
      da = ai.onnx.preview.training.Gradient <xs = ["a"], y = "y"> (a)
    }
    """
    a, c = np.array([1.0, 2.0], np.float32), np.array([3.0, 5.0], np.float32)
    y, da = onnxkit.run(model, {"a": a, "c": c})
    np.testing.assert_array_equal(y, a * c)
    np.testing.assert_array_equal(da, c)  # d(a*c)/da = c
