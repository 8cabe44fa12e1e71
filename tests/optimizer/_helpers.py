"""Build tiny models from ONNX text syntax, optimize them, compare with the level-0 run."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

import onnxkit
from onnxkit.inputs import random_feeds
from onnxkit.optimizer import optimize

RTOL, ATOL = 1e-5, 1e-6


def model(text: str, **initializers) -> onnx.ModelProto:
    """Parse ``text``; each keyword becomes an initializer (an array)."""
    m = onnx.parser.parse_model(text)
    for name, value in initializers.items():
        m.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    return m


def rand(*shape, seed: int = 0, low: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed + len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    return np.abs(x) + low if low is not None else x


def run_pass(m: onnx.ModelProto, *passes, level: int | None = None, feeds=None, rtol=RTOL, atol=ATOL):
    """Optimize with ``passes`` (or a level) and check outputs equal the level-0 run's."""
    if level is None:
        out, report = optimize(m, 1, passes=passes)
    else:
        out, report = optimize(m, level)
    feeds = random_feeds(m, 0) if feeds is None else feeds
    expected = onnxkit.Session(m).run(None, feeds)
    actual = onnxkit.Session(out).run(None, feeds)
    for e, a in zip(expected, actual):
        assert e.shape == a.shape and e.dtype == a.dtype
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)
    return out, report


def ops(m: onnx.ModelProto) -> list[str]:
    return [(f"{n.domain}::" if n.domain else "") + n.op_type for n in m.graph.node]
