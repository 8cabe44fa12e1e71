"""The same model on the same machine gives the same bits in every process: by default the
cpu executor chooses each layer's algorithm by a written rule, never by timing."""

import os
import subprocess
import sys

import numpy as np

import onnxkit
from onnxkit.runtime.profile import Profiler
from tests.cpu_models import NAMES, build

MODELS = NAMES  # every family of the fast kernels (``python -m benchmarks.determinism``: the
# benchmark's six models)
SCRIPT = """
import hashlib, sys
sys.path.insert(0, {root!r})
import onnxkit
from tests.cpu_models import build
for name in {models!r}:
    model, feeds = build(name)
    (y,) = onnxkit.Session(model, executor="cpu", level=3).run(None, feeds)
    print(name, hashlib.sha256(y.tobytes()).hexdigest())
"""
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fresh_process() -> str:
    env = {k: v for k, v in os.environ.items() if k != "ONNXKIT_CPU_TUNE"}  # the default
    return subprocess.run([sys.executable, "-c", SCRIPT.format(root=ROOT, models=MODELS)],
                          capture_output=True, text=True, env=env, timeout=600,
                          check=True).stdout


def test_two_fresh_processes_give_bit_identical_outputs():
    first, second = _fresh_process(), _fresh_process()
    assert len(first.splitlines()) == len(MODELS)
    assert first == second


def test_the_rule_s_outputs_match_the_reference():
    """What the rule runs is right too: each model within float32 rounding of the
    reference executor (float64 products, rounded once)."""
    for name in ("resnet_block", "mobilenet_block", "transformer"):
        model, feeds = build(name)
        (want,) = onnxkit.Session(model, executor="reference").run(None, feeds)
        (got,) = onnxkit.Session(model, executor="cpu", level=3).run(None, feeds)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_the_profile_shows_each_convolution_s_algorithm():
    """The rule's choices, read off the table in ``_conv_rules``: 3x3 layers of 16 channels
    on 20x20 planes have 100 tiles of 2x2 (F(2x2) from 36) and 25 of 4x4 (F(4x4) from 49);
    the strided layers run im2col; MobileNet's 3x3 layers of one channel per filter are
    depthwise."""
    seen = {}
    for name in ("resnet_block", "mobilenet_block"):
        model, feeds = build(name)
        sess = onnxkit.Session(model, executor="cpu", level=3)
        prof = Profiler(sess)
        sess.run(None, feeds, trace=prof)
        seen[name] = sorted(r["kernel"].rsplit(" ", 1)[-1] for r in prof.rows("node")
                            if r["op_type"].endswith("Conv"))
    assert seen["resnet_block"] == ["[im2col]", "[im2col]", "[winograd]", "[winograd]"]
    assert seen["mobilenet_block"] == ["[depthwise]", "[depthwise]", "[im2col]", "[im2col]"]
