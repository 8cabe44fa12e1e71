"""The onnxkit command: info, run, conformance."""

import json

import numpy as np
import onnx
import pytest

import onnxkit
from onnxkit.cli import main

MODEL = """
<ir_version: 8, opset_import: ["" : 18], producer_name: "hand">
demo (float[N, 3] x) => (float[N, 3] y, float[N, 3] z) {
  y = Relu(x)
  z = Add(y, x)
}
"""


@pytest.fixture
def model_path(tmp_path):
    path = tmp_path / "demo.onnx"
    onnx.save(onnxkit.load(MODEL), str(path))
    return str(path)


def test_info_lists_versions_io_and_operators(model_path, capsys):
    assert main(["info", model_path]) == 0
    out = capsys.readouterr().out
    assert "IR version   8" in out and "ai.onnx:18" in out and "producer     hand" in out
    assert "x: tensor(float) [N, 3]" in out and "z: tensor(float) [N, 3]" in out
    assert "Relu  1" in out and "Add   1" in out


def test_run_with_given_input_saves_outputs(model_path, tmp_path, capsys):
    x = np.array([[-1, 2, -3]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out_dir = tmp_path / "out"
    assert main(["run", model_path, "--input", f"x={tmp_path / 'x.npy'}", "-o", str(out_dir)]) == 0
    np.testing.assert_array_equal(np.load(out_dir / "y.npy"), [[0, 2, 0]])
    np.testing.assert_array_equal(np.load(out_dir / "z.npy"), [[-1, 4, -3]])
    assert "out y: float32[1, 3]" in capsys.readouterr().out


def test_run_random_inputs_use_dim_values(model_path, capsys):
    assert main(["run", model_path, "--dim", "N=4"]) == 0
    assert "in  x: float32[4, 3]" in capsys.readouterr().out


def test_run_bad_input_is_a_clear_error(model_path, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((1, 3), np.int64))
    assert main(["run", model_path, "--input", f"x={tmp_path / 'x.npy'}"]) == 1
    assert "expects tensor(float)" in capsys.readouterr().err


def test_run_repeat_and_profile_count_every_node(model_path, capsys):
    assert main(["run", model_path, "--repeat", "3", "--profile", "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 more runs: median" in out
    # per op type: each of the two nodes ran once per run; the node table shows --top 1
    assert "| Relu | 3 |" in out and "| Add | 3 |" in out
    nodes = out.split("the 1 slowest nodes:")[1]
    assert len([line for line in nodes.splitlines() if line.startswith("| ")
                and "**total**" not in line and "calls" not in line]) == 1
    assert "| **total** | 6 |" in nodes


def test_run_profile_alone_times_ten_runs(model_path, capsys):
    assert main(["run", model_path, "--profile"]) == 0
    assert "10 more runs" in capsys.readouterr().out


CONV_MODEL = """
<ir_version: 8, opset_import: ["" : 17]>
conv (float[1, 4, 6, 6] x) => (float y) {
  c = Conv <pads = [1, 1, 1, 1]> (x, W, B)
  y = Relu(c)
}
"""


@pytest.fixture
def conv_path(tmp_path):
    model = onnxkit.load(CONV_MODEL)
    rng = np.random.default_rng(0)
    model.graph.initializer.extend([
        onnx.numpy_helper.from_array(rng.standard_normal((8, 4, 3, 3)).astype(np.float32), "W"),
        onnx.numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "B")])
    path = tmp_path / "conv.onnx"
    onnx.save(model, str(path))
    return str(path)


def _profiled_algorithm(out: str, op_type: str) -> str:
    """The algorithm in brackets after the kernel of ``op_type``'s row (per op type)."""
    (row,) = [line for line in out.splitlines() if line.startswith(f"| {op_type} |")][:1]
    kernel = row.rstrip(" |").rsplit("|", 1)[1].strip()
    assert kernel.endswith("]"), row
    return kernel[kernel.rindex("[") + 1:-1]


def test_run_profile_shows_the_conv_algorithm_the_plan_reports(conv_path, capsys):
    """``--profile`` names the algorithm of the Conv, the one the session's plan reports."""
    steps = onnxkit.Session(conv_path, executor="cpu").plan.steps
    (planned,) = [step.algorithm for step in steps if step.node.op_type == "Conv"]
    assert planned  # the static rule decided it when the plan was built (declared shape)
    assert main(["run", conv_path, "-e", "cpu", "--profile", "-r", "1"]) == 0
    out = capsys.readouterr().out
    assert "tuned" not in out.splitlines()[0]
    assert _profiled_algorithm(out, "Conv") == planned
    assert "Relu" in out and "[" not in [line for line in out.splitlines()
                                         if line.startswith("| Relu |")][0]


def test_run_tune_times_the_algorithms_and_shows_the_choice(conv_path, capsys):
    from onnxkit.kernels.cpu._conv_rules import CONV

    assert main(["run", conv_path, "-e", "cpu", "--tune", "--profile", "-r", "1"]) == 0
    out = capsys.readouterr().out
    assert "  tuned  " in out.splitlines()[0]
    assert _profiled_algorithm(out, "Conv") in {row.algorithm for row in CONV}


def test_run_tune_on_another_executor_is_a_clear_error(conv_path, capsys):
    assert main(["run", conv_path, "-e", "reference", "--tune"]) == 2
    captured = capsys.readouterr()
    assert "--tune times the cpu executor's algorithms" in captured.err
    assert "out y" not in captured.out


def test_run_negative_repeat_is_a_clear_error(model_path, capsys):
    assert main(["run", model_path, "--repeat", "-1"]) == 2
    captured = capsys.readouterr()
    assert "argument --repeat/-r: -1 is out of range: give a whole number from 0 to 100,000" \
        in captured.err
    assert "out y" not in captured.out  # refused before the model ran


@pytest.mark.parametrize("runtime", ["onnxruntime", "onnx.reference", "cpu"])
def test_run_compare_with_another_runtime(model_path, runtime, capsys):
    assert main(["run", model_path, "--dim", "N=3", "--compare", runtime]) == 0
    out = capsys.readouterr().out
    assert f"compare with {runtime}" in out
    assert "ok   y: max |diff| 0" in out and "ok   z: max |diff| 0" in out


def test_run_compare_reports_a_difference_and_fails(model_path, monkeypatch, capsys):
    from onnxkit.conformance import backends

    def off_by_one(model, feeds_list):  # a runtime whose z is wrong by 1
        x = feeds_list[0]["x"]
        return [[np.maximum(x, 0), np.maximum(x, 0) + x + 1]]

    monkeypatch.setattr(backends, "resolve_backend", lambda name: off_by_one)
    assert main(["run", model_path, "--compare", "broken"]) == 1
    out = capsys.readouterr().out
    assert "ok   y: max |diff| 0" in out
    assert "DIFF z: max |diff| 1 " in out
    assert "1 of 2 outputs differ from broken beyond the tolerance" in out


def test_conformance_writes_report(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["conformance", "--backend", "reference", "-k", "^test_relu$", "-j", "1",
                 "--out", str(out)]) == 0
    data = json.loads((out / "conformance-reference.json").read_text())
    assert data["counts"]["pass"] == 1 and data["operators"]["Relu"]["pass"] == 1
    assert (out / "conformance-reference.png").stat().st_size > 1000
    assert "1 / 1 passed" in (out / "conformance-reference.md").read_text()


@pytest.mark.parametrize("backend", ["onnxkit.backend", "onnxruntime", "onnx.reference"])
def test_conformance_runs_other_runtimes(backend, tmp_path):
    out = tmp_path / "report"
    assert main(["conformance", "--backend", backend, "-k", "^test_(relu|loop11)$", "-j", "1",
                 "--out", str(out)]) == 0
    (json_file,) = out.glob("*.json")
    data = json.loads(json_file.read_text())
    assert data["backend"] == backend
    assert data["counts"]["pass"] == 2, data["cases"]


def test_conformance_unknown_backend_is_a_clear_error(capsys):
    assert main(["conformance", "--backend", "no_such_runtime_xyz", "-k", "^test_relu$", "-j", "2"]) == 1
    assert "unknown backend 'no_such_runtime_xyz'" in capsys.readouterr().err
