"""LSTM and GRU on the cpu executor (the compiled time loop) against onnxruntime and
against onnxkit's reference, over directions, lengths, layouts, clip, peepholes,
input_forget and linear_before_reset. onnxruntime refuses layout 1 (batch first): it runs
the same case at layout 0 on transposed inputs, its outputs transposed back."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxkit

F = TensorProto.FLOAT


def _model(op, n_inputs, attrs, shapes, outputs=("Y", "Y_h", "Y_c")):
    names = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"][:n_inputs]
    node = helper.make_node(op, names, list(outputs), **attrs)
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32 if n == "sequence_lens" else F,
                                            shapes[n]) for n in names if n in shapes]
    node.input[:] = [n if n in shapes else "" for n in names]
    graph = helper.make_graph([node], "rnn", inputs,
                              [helper.make_tensor_value_info(o, F, None) for o in outputs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def _case(op, gates, seq=7, batch=3, size=5, hidden=4, dirs=1, lens=None, layout=0, peep=False,
          init=True, **attrs):
    rng = np.random.default_rng(seq * 100 + batch * 10 + hidden + dirs)
    x_shape = [seq, batch, size] if layout == 0 else [batch, seq, size]
    feeds = {"X": rng.standard_normal(x_shape).astype(np.float32),
             "W": (rng.standard_normal([dirs, gates * hidden, size]) * 0.5).astype(np.float32),
             "R": (rng.standard_normal([dirs, gates * hidden, hidden]) * 0.5).astype(np.float32),
             "B": (rng.standard_normal([dirs, 2 * gates * hidden]) * 0.3).astype(np.float32)}
    state = [dirs, batch, hidden] if layout == 0 else [batch, dirs, hidden]
    if lens is not None:
        feeds["sequence_lens"] = np.array(lens, np.int32)
    if init:
        feeds["initial_h"] = rng.standard_normal(state).astype(np.float32)
        if op == "LSTM":
            feeds["initial_c"] = rng.standard_normal(state).astype(np.float32)
    if peep:
        feeds["P"] = rng.standard_normal([dirs, 3 * hidden]).astype(np.float32)
    n_inputs = 8 if peep else (7 if op == "LSTM" else 6)
    direction = {1: "forward", 2: "bidirectional"}[dirs] if attrs.get("direction") is None \
        else attrs.pop("direction")
    outputs = ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")
    model = _model(op, n_inputs, dict(hidden_size=hidden, direction=direction, layout=layout,
                                      **attrs), {n: list(v.shape) for n, v in feeds.items()},
                   outputs)
    return model, feeds


CASES = {
    "lstm-forward": ("LSTM", 4, {}),
    "lstm-reverse-lens": ("LSTM", 4, dict(direction="reverse", lens=[7, 3, 1])),
    "lstm-bidirectional-peepholes": ("LSTM", 4, dict(dirs=2, peep=True, lens=[2, 7, 5])),
    "lstm-batch-first-clip": ("LSTM", 4, dict(layout=1, clip=0.7, init=False)),
    "lstm-input-forget": ("LSTM", 4, dict(input_forget=1, hidden=16, size=9)),
    "gru-forward": ("GRU", 3, {}),
    "gru-linear-before-reset": ("GRU", 3, dict(linear_before_reset=1, lens=[1, 7, 4])),
    "gru-bidirectional-batch-first": ("GRU", 3, dict(dirs=2, layout=1, clip=1.5)),
    "gru-reverse-no-initial": ("GRU", 3, dict(direction="reverse", init=False, hidden=16)),
}


def _onnxruntime(op, gates, attrs, feeds):
    batch_first = attrs.pop("layout", 0)
    model, _ = _case(op, gates, layout=0, **attrs)
    if batch_first:  # X [batch, seq, in] -> [seq, batch, in]; states [batch, dirs, h] -> [dirs, ...]
        feeds = {n: np.swapaxes(v, 0, 1) if n in ("X", "initial_h", "initial_c") else v
                 for n, v in feeds.items()}
    outs = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    if batch_first:  # Y [seq, dirs, batch, h] -> [batch, seq, dirs, h]; states back
        outs = [np.transpose(outs[0], (2, 0, 1, 3))] + [np.swapaxes(o, 0, 1) for o in outs[1:]]
    return outs


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime_and_the_reference(name):
    op, gates, attrs = CASES[name]
    model, feeds = _case(op, gates, **dict(attrs))
    want = _onnxruntime(op, gates, dict(attrs), feeds)
    got = onnxkit.Session(model, executor="cpu").run(None, feeds)
    ref = onnxkit.Session(model, executor="reference").run(None, feeds)
    for g, w, r in zip(got, want, ref):
        assert g.shape == w.shape and g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)
