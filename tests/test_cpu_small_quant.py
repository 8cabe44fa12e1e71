"""Small dynamically quantized products on the cpu executor: the whole
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul -> Add chain in one compiled call
(``kernels/cpu/_small_quant.py``, the profiler shows ``[one call]``) where B is an
initializer. Oracles: the unfused chain on the reference executor, bit for bit, and
onnxruntime on the unfused model (7-bit weights, where its u8s8 product is exact).
Products too big for one call, and A with a NaN, run the chain's kernels."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import onnxkit
from onnxkit.runtime.profile import Profiler

F = TensorProto.FLOAT


def _chain(m, k, n, *, dynamic=True, per_column=False, bias=True, seed=0):
    """The chain onnxruntime's quantize_dynamic writes, B (k, n) int8 of 7 bits."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-64, 64, (k, n)).astype(np.int8)
    w_scale = rng.uniform(0.001, 0.02, n if per_column else ()).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.zeros((), np.int8), "wz"),
             numpy_helper.from_array(w_scale, "ws")]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["X"], ["xq", "xs", "xz"]),
             helper.make_node("MatMulInteger", ["xq", "W", "xz", "wz"], ["p"]),
             helper.make_node("Cast", ["p"], ["pf"], to=F),
             helper.make_node("Mul", ["xs", "ws"], ["s"]),
             helper.make_node("Mul", ["pf", "s"], ["y" if bias else "Y"])]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b"))
        nodes.append(helper.make_node("Add", ["y", "b"], ["Y"]))
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("X", F, [2, m, k])],
                              [helper.make_tensor_value_info("Y", F, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    x = (rng.standard_normal((2, m, k)) * 3).astype(np.float32)
    return model, {"X": x}


def _run(model, feeds):
    sess = onnxkit.Session(model, executor="cpu", level=2)
    prof = Profiler(sess)
    (got,) = sess.run(None, feeds, trace=prof)
    return got, [r["kernel"] for r in prof.rows(by="node")]


def _oracles(model, feeds):
    (unfused,) = onnxkit.Session(model, executor="reference", level=0).run(None, feeds)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    (theirs,) = ort.InferenceSession(model.SerializeToString(), so,
                                     providers=["CPUExecutionProvider"]).run(None, feeds)
    return unfused, theirs


@pytest.mark.parametrize("per_column", [False, True], ids=["scale", "per-column"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("shape", [(16, 64, 64), (5, 33, 7)], ids=["bert-mini", "odd"])
def test_one_call_gives_the_chains_bits(shape, bias, per_column):
    model, feeds = _chain(*shape, bias=bias, per_column=per_column, seed=sum(shape))
    got, kernels = _run(model, feeds)
    assert kernels == ["cpu:onnxkit::DynamicQuantizeMatMul-1 [one call]"]
    unfused, theirs = _oracles(model, feeds)
    np.testing.assert_array_equal(got, unfused)
    np.testing.assert_array_equal(got, theirs)


def test_a_big_product_runs_the_chains_kernels():
    model, feeds = _chain(64, 128, 96)  # 1.6 million multiply-adds
    got, kernels = _run(model, feeds)
    assert kernels == ["cpu:onnxkit::DynamicQuantizeMatMul-1"]
    np.testing.assert_array_equal(got, _oracles(model, feeds)[0])


def test_nan_in_a_runs_the_chains_kernels():
    model, feeds = _chain(4, 16, 8)
    feeds["X"][0, 1, 2] = np.nan
    got, kernels = _run(model, feeds)
    assert "[one call]" not in kernels[0]
    np.testing.assert_array_equal(got, _oracles(model, feeds)[0])


def test_a_shared_quantized_input_runs_matmul_integer_to_float_in_one_call():
    """One DynamicQuantizeLinear read by two products (as BERT's q, k, v projections):
    each product is a MatMulIntegerToFloat of the 8-bit input."""
    rng = np.random.default_rng(3)
    ws = [rng.integers(-64, 64, (32, 24)).astype(np.int8) for _ in range(2)]
    inits = [numpy_helper.from_array(np.zeros((), np.int8), "wz")]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["X"], ["xq", "xs", "xz"])]
    for i, w in enumerate(ws):
        inits += [numpy_helper.from_array(w, f"W{i}"),
                  numpy_helper.from_array(np.float32(0.01 + i / 100), f"ws{i}")]
        nodes += [helper.make_node("MatMulInteger", ["xq", f"W{i}", "xz", "wz"], [f"p{i}"]),
                  helper.make_node("Cast", [f"p{i}"], [f"f{i}"], to=F),
                  helper.make_node("Mul", ["xs", f"ws{i}"], [f"s{i}"]),
                  helper.make_node("Mul", [f"f{i}", f"s{i}"], [f"Y{i}"])]
    graph = helper.make_graph(nodes, "shared", [helper.make_tensor_value_info("X", F, [2, 8, 32])],
                              [helper.make_tensor_value_info(f"Y{i}", F, None) for i in range(2)],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    feeds = {"X": rng.standard_normal((2, 8, 32)).astype(np.float32)}
    sess = onnxkit.Session(model, executor="cpu", level=2)
    prof = Profiler(sess)
    got = sess.run(None, feeds, trace=prof)
    fused = [r["kernel"] for r in prof.rows(by="node") if "MatMulIntegerToFloat" in r["kernel"]]
    assert fused == ["cpu:onnxkit::MatMulIntegerToFloat-1 [one call]"] * 2
    unfused = onnxkit.Session(model, executor="reference", level=0).run(None, feeds)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    theirs = ort.InferenceSession(model.SerializeToString(), so,
                                  providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, u, t in zip(got, unfused, theirs):
        np.testing.assert_array_equal(g, u)
        np.testing.assert_array_equal(g, t)


def test_a_fed_scale_changed_in_place_is_read_again():
    """b_scale fed at run time (not an initializer): the same array, its value changed
    between runs, gives the new product (what the one call works out from the
    initializers it keeps; a fed array it reads on each call)."""
    model, feeds = _chain(8, 16, 8, bias=False)
    scale = next(t for t in model.graph.initializer if t.name == "ws")
    model.graph.initializer.remove(scale)
    model.graph.input.append(helper.make_tensor_value_info("ws", F, []))
    sess = onnxkit.Session(model, executor="cpu", level=2)
    ws = np.array(0.01, np.float32)
    for value in (0.01, 0.02):
        ws[...] = value  # the same array object, another value
        prof = Profiler(sess)
        (got,) = sess.run(None, {**feeds, "ws": ws}, trace=prof)
        assert [r["kernel"] for r in prof.rows(by="node")] == [
            "cpu:onnxkit::DynamicQuantizeMatMul-1 [one call]"]
        (want,) = onnxkit.Session(model, executor="reference", level=0).run(
            None, {**feeds, "ws": ws.copy()})
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("value", [-np.inf, np.inf], ids=["-inf", "inf"])
def test_an_infinite_input_gives_the_chains_answer(value):
    """An infinite A makes the scale infinite and the zero point 0 - inf / inf: the one
    call and DynamicQuantizeLinear alone give what the unfused chain gives on the
    reference executor (zero point 0, and NaN products), not an error."""
    model, feeds = _chain(4, 16, 8)
    feeds["X"][1, 2, 3] = value
    got, kernels = _run(model, feeds)
    assert kernels == ["cpu:onnxkit::DynamicQuantizeMatMul-1 [one call]"]
    np.testing.assert_array_equal(got, _oracles(model, feeds)[0])  # NaN where it is NaN
    dql = helper.make_graph([helper.make_node("DynamicQuantizeLinear", ["X"], ["y", "s", "z"])],
                            "dql", [helper.make_tensor_value_info("X", F, [2, 4, 16])],
                            [helper.make_tensor_value_info(n, t, None) for n, t in
                             (("y", TensorProto.UINT8), ("s", F), ("z", TensorProto.UINT8))])
    dql = helper.make_model(dql, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)
    for g, w in zip(onnxkit.Session(dql, executor="cpu").run(None, feeds),
                    onnxkit.Session(dql, executor="reference").run(None, feeds)):
        np.testing.assert_array_equal(g, w)
