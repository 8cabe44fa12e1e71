"""Checks of exercise 3: the text parses, passes onnx's checker with shape inference, uses
the operators it may, and computes values checked by hand."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

import onnxkit
from exercises.tests.select import exercise

ex = exercise("ex3_text")


def load_checked(text: str, forbidden: set[str]) -> onnx.ModelProto:
    model = onnxkit.load(text)
    onnx.checker.check_model(model, full_check=True)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 18)]
    used = {n.op_type for n in model.graph.node}
    assert not used & forbidden, f"do not use {sorted(used & forbidden)}"
    return model


def run(model, x):
    (y,) = onnxkit.Session(model, executor="reference").run(None, {"x": x})
    return y


@pytest.mark.task3_1
def test_softplus_by_hand():
    model = load_checked(ex.softplus_text(), {"Softplus"})
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["y"]
    # log(1 + e^0) = log 2;  log(1 + e^log(e - 1)) = log(e) = 1;  e^-30 is tiny: log(1 + tiny) ~ tiny
    x = np.array([0.0, np.log(np.e - 1), -30.0], np.float32)
    y = run(model, x)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, [np.log(2.0), 1.0, 0.0], rtol=1e-6, atol=1e-7)


@pytest.mark.task3_1
@pytest.mark.hidden
def test_softplus_any_length():
    model = load_checked(ex.softplus_text(), {"Softplus"})
    x = np.linspace(-5, 5, 11, dtype=np.float32)
    np.testing.assert_allclose(run(model, x), np.log(1 + np.exp(x)), rtol=1e-6)


@pytest.mark.task3_2
def test_normalize_by_hand():
    model = load_checked(ex.normalize_text(), {"LayerNormalization", "MeanVarianceNormalization"})
    # row [1, 2, 3]: mean 2, var (1 + 0 + 1) / 3 = 2/3;  row [5, 5, 5]: var 0 -> y = 0
    x = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0]], np.float32)
    y = run(model, x)
    assert y.shape == (2, 3) and y.dtype == np.float32
    s = 1 / np.sqrt(2 / 3 + 1e-5)
    np.testing.assert_allclose(y, [[-s, 0.0, s], [0.0, 0.0, 0.0]], rtol=1e-5, atol=1e-6)


@pytest.mark.task3_2
@pytest.mark.hidden
def test_normalize_any_shape():
    model = load_checked(ex.normalize_text(), {"LayerNormalization", "MeanVarianceNormalization"})
    x = np.random.default_rng(0).standard_normal((4, 7)).astype(np.float32)
    mean = x.mean(axis=-1, keepdims=True)
    expected = (x - mean) / np.sqrt(((x - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(run(model, x), expected, rtol=1e-5, atol=1e-6)
