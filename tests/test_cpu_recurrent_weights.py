"""LSTM and GRU on the cpu executor with their weights as initializers, as exported models
have them: the plan arranges W, R, B (and P) once for the compiled loop (every
direction's input projection in one product). Checked against onnxruntime and onnx's
reference (where it applies: it ignores ``sequence_lens``), with weights that are
initializers, weights fed at each run (arranged per call), and a node the compiled loop
does not take (another activation: the reference kernel, which the profiler shows)."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxkit
from onnxkit.runtime.profile import Profiler

F = TensorProto.FLOAT
NAMES = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def _model(op, arrays: dict, fed: set, attrs: dict, outputs):
    """``op`` over the named ``arrays``: those in ``fed`` are graph inputs, the others
    initializers."""
    n = max(NAMES.index(k) for k in arrays) + 1
    node = helper.make_node(op, [k if k in arrays else "" for k in NAMES[:n]], list(outputs),
                            **attrs)
    inputs = [helper.make_tensor_value_info(k, TensorProto.INT32 if k == "sequence_lens"
                                            else F, list(v.shape))
              for k, v in arrays.items() if k in fed]
    inits = [numpy_helper.from_array(v, k) for k, v in arrays.items() if k not in fed]
    graph = helper.make_graph([node], "rnn", inputs,
                              [helper.make_tensor_value_info(o, F, None) for o in outputs],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def _arrays(op, seq=6, batch=3, size=5, hidden=8, dirs=2, lens=None, peep=False):
    gates = 4 if op == "LSTM" else 3
    rng = np.random.default_rng(seq + 10 * hidden + dirs)
    a = {"X": rng.standard_normal([seq, batch, size]).astype(np.float32),
         "W": (rng.standard_normal([dirs, gates * hidden, size]) * 0.5).astype(np.float32),
         "R": (rng.standard_normal([dirs, gates * hidden, hidden]) * 0.5).astype(np.float32),
         "B": (rng.standard_normal([dirs, 2 * gates * hidden]) * 0.3).astype(np.float32)}
    if lens is not None:
        a["sequence_lens"] = np.array(lens, np.int32)
    a["initial_h"] = rng.standard_normal([dirs, batch, hidden]).astype(np.float32)
    if op == "LSTM":
        a["initial_c"] = rng.standard_normal([dirs, batch, hidden]).astype(np.float32)
    if peep:
        a["P"] = rng.standard_normal([dirs, 3 * hidden]).astype(np.float32)
    return a


CASES = {
    "lstm bidirectional, lengths, peepholes": ("LSTM", dict(lens=[6, 2, 4], peep=True), {}),
    "lstm reverse": ("LSTM", dict(dirs=1), dict(direction="reverse")),
    "gru bidirectional, lengths": ("GRU", dict(lens=[1, 6, 3]), {}),
    "gru linear before reset": ("GRU", dict(dirs=1, hidden=12), dict(linear_before_reset=1)),
}


def _check(model, feeds, onnx_reference=True):
    sess = onnxkit.Session(model, executor="cpu")
    prof = Profiler(sess)
    got = sess.run(None, feeds, trace=prof)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    oracles = [want]
    if onnx_reference and "sequence_lens" not in feeds:
        oracles.append(ReferenceEvaluator(model).run(None, feeds))
    for oracle in oracles:
        for g, w in zip(got, oracle):
            assert g.shape == w.shape and g.dtype == np.float32
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
    (row,) = prof.rows()
    return row["kernel"]


@pytest.mark.parametrize("fed", ["initializers", "weights fed"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime_and_onnx_reference(name, fed):
    op, shape, attrs = CASES[name]
    arrays = _arrays(op, **shape)
    inputs = {"X", "sequence_lens", "initial_h", "initial_c"} | (
        {"W", "R", "B", "P"} if fed == "weights fed" else set())
    direction = attrs.pop("direction", "bidirectional" if shape.get("dirs", 2) == 2
                          else "forward")
    outputs = ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")
    model = _model(op, arrays, inputs, dict(hidden_size=arrays["R"].shape[-1],
                                            direction=direction, **attrs), outputs)
    kernel = _check(model, {k: v for k, v in arrays.items() if k in inputs})
    assert "[reference]" not in kernel


def test_another_activation_runs_the_reference_kernel():
    """(onnx.reference's HardSigmoid in a GRU takes other defaults than onnxruntime's and
    the spec's alpha 0.2, beta 0.5: onnxruntime alone is the oracle here.)"""
    arrays = _arrays("GRU", dirs=1)
    inputs = {"X", "initial_h"}
    model = _model("GRU", arrays, inputs, dict(hidden_size=8, activations=["HardSigmoid", "Tanh"]),
                   ("Y", "Y_h"))
    kernel = _check(model, {k: arrays[k] for k in inputs}, onnx_reference=False)
    assert kernel.endswith("[reference]")
