"""float16 nodes on the cpu executor: computed by the float32 kernels, stored as float16.

Oracles: numpy's float16 casts (every float16 value, and the rounding edges) for the
casts; onnxruntime and onnx.reference on the same float16 model for the nodes, within
two units in float16's last place (2**-9 relative) - a node computed in float16, or not
rounded back, is off by more or has the wrong dtype. Which kernel ran is what the
profiler shows (``[... in float32]``, or ``[reference]`` for a node the cpu kernel
handed to its reference kernel).
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.kernels.cpu import _half
from onnxkit.runtime.profile import Profiler

F16, F64 = TensorProto.FLOAT16, TensorProto.DOUBLE
RNG = np.random.default_rng(5)
ULP2 = 2.0 ** -9  # two units in the last place of float16, relative


def h(*shape):
    return RNG.standard_normal(shape).astype(np.float16)


def test_widen_gives_every_float16_value_exactly():
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(256, 256)
    got = _half.widen(every)
    assert got.dtype == np.float32 and got.shape == (256, 256)
    np.testing.assert_array_equal(got.view(np.uint32), every.astype(np.float32).view(np.uint32))


def test_narrow_rounds_as_numpy_does():
    every = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    finite = every[np.isfinite(every)].astype(np.float64)
    finite.sort()
    halfway = ((finite[:-1] + finite[1:]) / 2).astype(np.float32)  # ties: to even
    edges = np.array([65504, 65519.996, 65520, 65536, 1e30, np.inf, -np.inf, np.nan, 0.0,
                      -0.0, 2.0 ** -24, 2.0 ** -25, 2.0 ** -25 * 1.0001, 2.0 ** -14,
                      -6e-8, 3.4e38], np.float32)
    spread = np.concatenate([RNG.standard_normal(4096) * s for s in (1e-7, 1e-5, 1, 1e3, 3e4)])
    every_bit = RNG.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([halfway, edges, spread.astype(np.float32),
                             every_bit.view(np.float32)])[:-7].reshape(-1, 8)
    got = _half.narrow(values)
    with np.errstate(over="ignore", invalid="ignore"):
        want = values.astype(np.float16)
    assert got.dtype == np.float16 and got.shape == values.shape
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), values[~same][:5]


def _model(nodes, inputs, inits=(), out_type=F16, opset=17, values=()):
    """``values``: (name, shape) of float16 values between the nodes, declared in full."""
    graph = helper.make_graph(
        nodes, "half", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("Y", out_type, None)],
        [numpy_helper.from_array(a, n) for n, a in inits],
        value_info=[helper.make_tensor_value_info(n, F16, s) for n, s in values])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=9)


def _run(model, feeds, level):
    sess = onnxkit.Session(model, executor="cpu", level=level)
    prof = Profiler(sess)
    (got,) = sess.run(None, feeds, trace=prof)
    return got, [r["kernel"] for r in prof.rows(by="node")]


def _oracles(model, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    (by_ort,) = ort.InferenceSession(model.SerializeToString(), so,
                                     providers=["CPUExecutionProvider"]).run(None, feeds)
    (by_onnx,) = ReferenceEvaluator(model).run(None, feeds)
    return by_ort, by_onnx


def _close(got, want, ulps=ULP2):
    assert got.dtype == want.dtype and got.shape == want.shape
    want = want.astype(np.float64)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=ulps,
                               atol=ulps * np.abs(want).max())


def _cases():
    w, b = h(6, 4, 3, 3), h(6)
    m, bias = h(16, 8), h(8)
    return {
        "conv + relu": (
            [helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["Y"])],
            [("X", F16, [1, 4, 9, 9])], [("W", w), ("B", b)], {"X": h(1, 4, 9, 9)},
            [("c", [1, 6, 9, 9])]),
        "matmul + add": (
            [helper.make_node("MatMul", ["X", "M"], ["p"]),
             helper.make_node("Add", ["p", "bias"], ["Y"])],
            [("X", F16, [2, 5, 16])], [("M", m), ("bias", bias)], {"X": h(2, 5, 16)}, ()),
        "gemm": (
            [helper.make_node("Gemm", ["X", "G", "bias"], ["Y"], transB=1, alpha=0.5)],
            [("X", F16, [3, 16])], [("G", h(8, 16)), ("bias", bias)], {"X": h(3, 16)}, ()),
        "layer norm": (
            [helper.make_node("LayerNormalization", ["X", "S", "Bn"], ["Y"])],
            [("X", F16, [2, 5, 16])], [("S", h(16)), ("Bn", h(16))], {"X": h(2, 5, 16) * 3},
            ()),
        "rms norm": (
            [helper.make_node("RMSNormalization", ["X", "S"], ["Y"])],
            [("X", F16, [2, 5, 16])], [("S", h(16))], {"X": h(2, 5, 16) * 3}, ()),
        "softmax (declared input)": (
            [helper.make_node("Softmax", ["X"], ["Y"])],
            [("X", F16, [3, 7])], [], {"X": h(3, 7) * 4}, ()),
        "lstm": (
            [helper.make_node("LSTM", ["X", "Wl", "Rl", "Bl"], ["Y"], hidden_size=6,
                              direction="bidirectional")],
            [("X", F16, [5, 2, 4])], [("Wl", h(2, 24, 4)), ("Rl", h(2, 24, 6)),
                                      ("Bl", h(2, 48))], {"X": h(5, 2, 4)}, ()),
        "reduce mean + sigmoid": (
            [helper.make_node("ReduceMean", ["X"], ["r"], axes=[-1]),
             helper.make_node("Sigmoid", ["r"], ["Y"])],
            [("X", F16, [4, 6, 10])], [], {"X": h(4, 6, 10)}, [("r", [4, 6, 1])]),
    }


@pytest.mark.parametrize("level", [0, 2])
@pytest.mark.parametrize("case", list(_cases()))
def test_float16_nodes_run_the_float32_kernels(case, level):
    """Decided when the plan is built: from the weights' dtype (an initializer), or from
    the type the model declares for an input (Softmax, ReduceMean, and the values between
    the nodes)."""
    nodes, inputs, inits, feeds, values = _cases()[case]
    model = _model(nodes, inputs, inits, values=values, opset=23 if case == "rms norm" else 17)
    got, kernels = _run(model, feeds, level)
    for want in _oracles(model, feeds):
        _close(got, want)
    assert all(k.endswith("float32]") for k in kernels), kernels


def test_float16_add_is_numpys_float16_add_bit_for_bit():
    a, b = h(3, 50, 7) * 100, h(3, 50, 7)
    model = _model([helper.make_node("Add", ["A", "B"], ["Y"])],
                   [("A", F16, [3, 50, 7]), ("B", F16, [3, 50, 7])])
    got, kernels = _run(model, {"A": a, "B": b}, 0)
    np.testing.assert_array_equal(got.view(np.uint16), (a + b).view(np.uint16))
    assert kernels == ["cpu:ai.onnx::Add-14 [float32]"]


def test_a_float16_node_the_float32_kernel_refuses_runs_its_reference_in_float32():
    """A 1-D operand: the cpu MatMul hands the node to the reference kernel."""
    model = _model([helper.make_node("MatMul", ["X", "v"], ["Y"])], [("X", F16, [5, 16])],
                   [("v", h(16))])
    feeds = {"X": h(5, 16)}
    got, kernels = _run(model, feeds, 0)
    for want in _oracles(model, feeds):
        _close(got, want)
    assert kernels == ["cpu:ai.onnx::MatMul-13 [reference in float32]"]


def test_nodes_not_known_to_be_float16_keep_their_kernel():
    """float64 stays on the reference kernel; a float16 value of undeclared type (the
    Transpose's output) is not known when the plan is built: Softmax's kernel as is."""
    x64 = RNG.standard_normal((3, 7))
    model = _model([helper.make_node("Softmax", ["X"], ["Y"])], [("X", F64, [3, 7])],
                   out_type=F64)
    got, kernels = _run(model, {"X": x64}, 0)
    np.testing.assert_allclose(got, _oracles(model, {"X": x64})[0], rtol=1e-12)
    assert kernels == ["cpu:ai.onnx::Softmax-13 [reference]"]

    model = _model([helper.make_node("Transpose", ["X"], ["t"], perm=[1, 0]),
                    helper.make_node("Softmax", ["t"], ["Y"])], [("X", F16, [3, 7])])
    feeds = {"X": h(3, 7)}
    got, kernels = _run(model, feeds, 0)
    for want in _oracles(model, feeds):
        _close(got, want)
    assert "cpu:ai.onnx::Softmax-13 [reference]" in kernels


def test_a_prepared_kernel_notes_what_it_ran_each_call():
    """A float16 node's kernel called again and again outside a traced run (as a plan's
    step, directly): each call's note (``executor.trace_extra``) is what that call ran,
    not the earlier calls' notes strung together."""
    nodes, inputs, inits, feeds, values = _cases()["conv + relu"]
    sess = onnxkit.Session(_model(nodes, inputs, inits, values=values), executor="cpu", level=0)
    conv, relu = sess.plan.steps
    c = conv.kernel.fn(feeds["X"], *[sess.plan.initializers[n] for n in conv.inputs[1:]],
                       **conv.attrs)
    for _ in range(3):
        relu.kernel.fn(c, **relu.attrs)
    assert sess.executor.trace_extra() == {"algorithm": "float32"}


def test_float16_values_of_dynamic_shape_run_the_float32_kernels():
    """A declared element type is enough: a batch of symbolic size ("N", as exported
    models have) still makes the nodes float16 ones, through values between the nodes
    too."""
    model = _model([helper.make_node("MatMul", ["X", "M"], ["p"]),
                    helper.make_node("Softmax", ["p"], ["Y"])],
                   [("X", F16, ["N", 5, 16])], [("M", h(16, 8))], values=[("p", ["N", 5, 8])])
    feeds = {"X": h(3, 5, 16)}
    got, kernels = _run(model, feeds, 0)
    for want in _oracles(model, feeds):
        _close(got, want)
    assert kernels == ["cpu:ai.onnx::MatMul-13 [float32]", "cpu:ai.onnx::Softmax-13 [float32]"]
