"""Every installed runtime's adapter runs onnx's own cases and matches onnx's expected outputs."""

import pytest

from onnxkit.conformance import node_cases, run_case
from onnxkit.conformance.backends import resolve_backend
from onnxkit.conformance.runtimes import RUNTIMES, installed, version
from onnxkit.conformance.runtimes._common import dist_version
from onnxkit.errors import OnnxkitError

INSTALLED = installed()
CASES = {c.name: c for c in node_cases()}


@pytest.mark.parametrize("name", [n for n in RUNTIMES if n != "cpu"])
def test_installed_runtime_passes_onnx_s_relu_and_broadcast_add(name):
    if name not in INSTALLED:
        pytest.skip(f"{name} is not installed here")
    run = resolve_backend(name)
    for case in ("test_relu", "test_add_bcast"):
        result = run_case(CASES[case], run)
        assert result.status == "pass", (name, case, result.message)


def test_a_runtime_that_is_not_installed_has_no_version():
    assert dist_version("onnxkit-no-such-runtime", "onnxkit_no_such_runtime") is None


def test_an_unknown_runtime_names_the_known_ones():
    with pytest.raises(OnnxkitError, match="openvino"):
        version("no-such-runtime")
