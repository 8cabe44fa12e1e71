"""The disagreements the differential search kept (tests/conformance/disagreements/): each is a
reproducible case, and where the spec's text decides it, onnxkit gives the spec's answer.
docs/conformance-differential.md lists them all with the deciding sentence."""

import json
from pathlib import Path

import numpy as np
import pytest

from onnxkit.conformance.differential import load
from onnxkit.runtime.session import Session

FOLDER = Path(__file__).parent / "disagreements"
CASES = sorted(p.name for p in FOLDER.iterdir() if (p / "model.onnx").exists())

# case -> the answer the spec's text decides (hand-computed from that text)
DECIDED = {
    # "Softmax(input, axis) = Exp(input) / ReduceSum(Exp(input), axis=axis, keepdims=1)":
    # exp([0, inf]) = [1, inf], sum inf: [1/inf, inf/inf] = [0, nan]
    "softmax_13_axis_onnxkit": [np.array([0.0, np.nan], np.float32)],
    # "LogSoftmax(input, axis) = Log(Softmax(input, axis=axis))", exactly: x - log(sum(exp(x)))
    # = [60, -40] - (60 + log1p(e^-100)) = [0, -100] in float32
    "logsoftmax_13_axis_onnxkit": [np.array([0.0, -100.0], np.float32)],
    # "Computes the log sum exponent of the input tensor's elements": log(exp(inf)) = inf
    "reducelogsumexp_18_axes_onnxkit": [np.array(np.inf, np.float32)],
    # "Softplus takes one input data (Tensor<T>) and produces one output data (Tensor<T>) where the
    # softplus function, y = ln(exp(x) + 1)": ln(exp(3e38) + 1) = 3e38, finite
    "softplus_22_float_all": [np.array([3e38], np.float32)],
}
# binary operators on two scalars: broadcasting (Broadcasting.md) gives a scalar, shape ()
SCALAR = [c for c in CASES if c.split("_")[0] in ("add", "sub", "mul", "div", "pow", "max", "min",
                                                   "less", "greater", "mod")]


@pytest.mark.parametrize("name", CASES)
def test_kept_case_is_reproducible(name):
    model, feeds = load(str(FOLDER / name))
    answers = json.loads((FOLDER / name / "answers.json").read_text())
    assert len(answers["groups"]) >= 2
    Session(model, executor="reference").run(None, feeds)


@pytest.mark.parametrize("name", sorted(DECIDED))
def test_onnxkit_gives_the_answer_the_spec_decides(name):
    model, feeds = load(str(FOLDER / name))
    with np.errstate(all="ignore"):
        got = Session(model, executor="reference").run(None, feeds)
    for out, want in zip(got, DECIDED[name]):
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out, want, rtol=1e-6, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", SCALAR)
def test_two_scalars_broadcast_to_a_scalar(name):
    model, feeds = load(str(FOLDER / name))
    assert all(v.shape == () for v in feeds.values())
    (out,) = Session(model, executor="reference").run(None, feeds)
    assert out.shape == ()
