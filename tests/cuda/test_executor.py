"""The cuda executor's contract: values stay on the device, every copy is counted and shown.

Runs on a GPU, or under the simulator: ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``.
"""

import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.errors import KernelError
from onnxkit.kernels.cuda import DeviceProfile

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, inits=(), opset=18, functions=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_empty_tensor_value_info(o) for o in outputs], list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(f.domain, 1) for f in functions]
    return helper.make_model(graph, opset_imports=opsets, functions=list(functions), ir_version=10)


def _init(name, array):
    return onnx.numpy_helper.from_array(array, name)


X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
W = np.linspace(-1, 1, 4).astype(np.float32)


def test_feeds_up_once_weights_once_per_session_outputs_down_once():
    model = _model([helper.make_node("Add", ["x", "w"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                   [("x", [3, 4])], ["y"], [_init("w", W)])
    sess = onnxkit.Session(model, executor="cuda")
    (y,) = sess.run(None, {"x": X})
    np.testing.assert_allclose(y, np.maximum(X + W, 0))
    first = sess.executor.stats()
    assert first["feeds_h2d_bytes"] == X.nbytes
    assert first["nodes_h2d_bytes"] == W.nbytes  # the initializer, uploaded by Add
    assert first["outputs_d2h_bytes"] == y.nbytes and first["nodes_d2h_bytes"] == 0
    assert first["cuda_nodes"] == 2 and first["host_nodes"] == 0
    sess.run(None, {"x": X})
    second = sess.executor.stats()
    assert second["nodes_h2d_bytes"] == W.nbytes  # not uploaded again
    assert second["feeds_h2d_bytes"] == 2 * X.nbytes and second["h2d_count"] == 3


def test_a_host_fallback_is_counted_and_profiled():
    model = _model([helper.make_node("Relu", ["x"], ["a"], name="first"),
                    helper.make_node("Softsign", ["a"], ["b"], name="soft"),
                    helper.make_node("Relu", ["b"], ["y"], name="last")], [("x", [3, 4])], ["y"])
    sess = onnxkit.Session(model, executor="cuda")
    prof = DeviceProfile(sess)
    (y,) = sess.run(None, {"x": X}, trace=prof)
    relu = np.maximum(X, 0)
    np.testing.assert_allclose(y, relu / (1 + relu), rtol=1e-6)
    rows = {r.node: r for r in prof.rows}
    assert rows["soft"].placement == "host" and rows["soft"].reason == "no cuda kernel"
    assert rows["soft"].d2h_bytes == X.nbytes and rows["soft"].h2d_bytes == X.nbytes  # down, up
    assert rows["last"].placement == "cuda" and rows["last"].h2d_bytes == 0
    assert [r.node for r in prof.host_rows()] == ["soft"]
    table = prof.table()
    assert "soft" in table and "no cuda kernel" in table and "3 nodes (2 on cuda, 1 on host)" in table
    assert sess.executor.stats()["host_kernels"] == {("ai.onnx::Softsign-1", "no cuda kernel"): 1}


def test_a_declined_kernel_says_why():
    x16 = X.astype(np.float16)
    model = _model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Exp", ["a"], ["y"])],
                   [("x", [3, 4])], ["y"])
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    sess = onnxkit.Session(model, executor="cuda")
    (y,) = sess.run(None, {"x": x16})
    np.testing.assert_allclose(y, np.exp(np.maximum(x16, 0)), rtol=1e-3)
    reasons = {k for k, _ in sess.executor.stats()["host_kernels"]}
    assert reasons == {"ai.onnx::Relu-14", "ai.onnx::Exp-13"}  # float16 is not held on the device


def test_shape_arithmetic_stays_on_the_host():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "zero"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    inits = [_init("zero", np.array(0, np.int64)), _init("minus1", np.array([-1], np.int64))]
    sess = onnxkit.Session(_model(nodes, [("x", [3, 4])], ["y"], inits), executor="cuda")
    prof = DeviceProfile(sess)
    (y,) = sess.run(None, {"x": X}, trace=prof)
    np.testing.assert_array_equal(y, X)
    stats = sess.executor.stats()
    assert stats["nodes_h2d_bytes"] == 0 and stats["nodes_d2h_bytes"] == 0
    where = {r.op_type: r.placement for r in prof.rows}
    assert where == {"Shape": "cuda", "Gather": "host", "Unsqueeze": "host", "Concat": "host",
                     "Reshape": "cuda"}


def test_control_flow_sees_host_values_and_bodies_run_on_the_device():
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", F, [3, 4])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", F, [3, 4])])
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Loop", ["trips", "", "r"], ["y"], body=body, name="loop")]
    inits = [_init("trips", np.array(3, np.int64))]
    sess = onnxkit.Session(_model(nodes, [("x", [3, 4])], ["y"], inits, opset=16), executor="cuda")
    prof = DeviceProfile(sess)
    (y,) = sess.run(None, {"x": X}, trace=prof)
    np.testing.assert_allclose(y, np.maximum(X, 0) + 3 * X)
    loop = next(r for r in prof.rows if r.op_type == "Loop")
    assert loop.placement == "host" and loop.d2h_count >= 1  # its state came down
    adds = [r for r in prof.rows if r.op_type == "Add"]
    assert len(adds) == 3 and all(r.placement == "cuda" and r.path == "loop/body" for r in adds)


def test_model_local_function_bodies_run_on_the_device():
    fn = helper.make_function("local", "Act", ["a"], ["b"],
                              [helper.make_node("Relu", ["a"], ["t"]), helper.make_node("Neg", ["t"], ["b"])],
                              [helper.make_opsetid("", 18)])
    model = _model([helper.make_node("Act", ["x"], ["y"], domain="local")], [("x", [3, 4])], ["y"],
                   functions=[fn])
    sess = onnxkit.Session(model, executor="cuda")
    (y,) = sess.run(None, {"x": X})
    np.testing.assert_allclose(y, -np.maximum(X, 0))
    assert sess.executor.stats()["host_nodes"] == 0


def test_a_failing_kernel_names_its_node_and_where_its_inputs_live():
    model = _model([helper.make_node("Relu", ["x"], ["a"]),
                    helper.make_node("Reshape", ["a", "shape"], ["y"], name="bad_reshape")],
                   [("x", [3, 4])], ["y"], [_init("shape", np.array([5, -1], np.int64))])
    sess = onnxkit.Session(model, executor="cuda")
    with pytest.raises(KernelError) as info:
        sess.run(None, {"x": X})
    message = str(info.value)
    assert "bad_reshape" in message and "float32[3, 4] on cuda" in message
    assert "int64[2] on host" in message


def test_outputs_are_fresh_writable_arrays_and_feeds_are_read_each_run():
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [("x", [3, 4])], ["y"])
    sess = onnxkit.Session(model, executor="cuda")
    feed = X.copy()
    (y1,) = sess.run(None, {"x": feed})
    y1 += 1  # writable
    feed *= -1  # the same array refilled
    (y2,) = sess.run(None, {"x": feed})
    np.testing.assert_allclose(y2, np.maximum(-X, 0))


def test_runs_from_several_threads():
    model = _model([helper.make_node("Mul", ["x", "x"], ["y"])], [("x", [3, 4])], ["y"])
    sess = onnxkit.Session(model, executor="cuda")
    results = {}

    def work(k):
        results[k] = sess.run(None, {"x": X * k})[0]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(3):
        np.testing.assert_allclose(results[k], (X * k) ** 2)


def test_device_buffers_are_reused_from_run_to_run():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Exp", ["b"], ["c"]), helper.make_node("Add", ["c", "x"], ["y"])]
    sess = onnxkit.Session(_model(nodes, [("x", [3, 4])], ["y"]), executor="cuda")
    (first,) = sess.run(None, {"x": X})
    pool = sess.executor.pool
    made = pool.new_buffers
    assert made <= 3  # the feed, then intermediates reuse whatever the evaluator dropped
    for scale in (2.0, -1.0):
        (y,) = sess.run(None, {"x": X * scale})
        np.testing.assert_allclose(y, np.exp(-np.maximum(X * scale, 0)) + X * scale, rtol=1e-6)
    assert pool.new_buffers == made and pool.reused > 0


def test_attention_inputs_that_do_not_fit_name_the_node():
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn", q_num_heads=2,
                              kv_num_heads=2)]
    model = _model(nodes, [("q", [1, 3, 8]), ("k", [1, 3, 6]), ("v", [1, 3, 6])], ["y"], opset=23)
    feeds = {"q": np.ones((1, 3, 8), np.float32), "k": np.ones((1, 3, 6), np.float32),
             "v": np.ones((1, 3, 6), np.float32)}
    with pytest.raises(KernelError) as info:  # heads of size 4 in Q, 3 in K
        onnxkit.Session(model, executor="cuda").run(None, feeds)
    message = str(info.value)
    assert "'attn' (Attention" in message and "do not fit" in message


@pytest.mark.parametrize("node,init,says", [
    (helper.make_node("Slice", ["x", "s", "s", "s", "s"], ["y"], name="bad_slice"),
     np.array([0], np.int64), "step must not be 0"),
    (helper.make_node("Pad", ["x", "s"], ["y"], name="bad_pad", mode="reflect"),
     np.array([0, 0, 0, 9], np.int64), None),  # fine: X has 3 rows, 4 columns
    (helper.make_node("Tile", ["x", "s"], ["y"], name="bad_tile"), np.array([2], np.int64),
     "repeats [2] must be 2"),
    (helper.make_node("Expand", ["x", "s"], ["y"], name="bad_expand"), np.array([2, 3], np.int64),
     "cannot broadcast"),
])
def test_shape_kernels_name_the_node_on_bad_inputs(node, init, says):
    model = _model([helper.make_node("Relu", ["x"], ["r"]),
                    helper.make_node(node.op_type, ["r"] + list(node.input[1:]), ["y"],
                                     name=node.name, **{a.name: helper.get_attribute_value(a)
                                                        for a in node.attribute})],
                   [("x", [3, 4])], ["y"], [_init("s", init)])
    sess = onnxkit.Session(model, executor="cuda")
    if says is None:  # the same node on good inputs runs on the device and agrees
        (y,) = sess.run(None, {"x": X})
        np.testing.assert_array_equal(y, np.pad(np.maximum(X, 0), [(0, 0), (0, 9)], "reflect"))
        assert sess.executor.stats()["host_nodes"] == 0
        return
    with pytest.raises(KernelError) as info:
        sess.run(None, {"x": X})
    message = str(info.value)
    assert f"'{node.name}' ({node.op_type}" in message and says in message
