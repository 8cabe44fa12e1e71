"""Findings of the fuzzing work that live outside the fuzzed kernels."""

import numpy as np
import pytest
from onnx import helper

import onnxkit
from onnxkit import errors
from onnxkit.cli import main
from onnxkit.conformance.report import Report
from onnxkit.conformance.runner import CaseResult
from onnxkit.runtime.limits import check_allocation
from onnxkit.shape_inference import InferenceSkipped, infer_shapes


def test_negative_dimension_is_refused_before_allocating():
    with pytest.raises(errors.LimitExceededError, match="negative dimension"):
        check_allocation([-4, -4], np.float32)


def test_einsum_equation_outside_the_grammar_skips_shape_inference():
    node = helper.make_node("Einsum", ["a", "b"], ["c"], equation="\u00a1x-\U000b0915i")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, 1, [3]) for n in "ab"],
                              [helper.make_tensor_value_info("c", 1, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(InferenceSkipped, match="Einsum equation"):
        infer_shapes(model)
    good = helper.make_model(helper.make_graph(
        [helper.make_node("Einsum", ["a", "b"], ["c"], equation="i,j->ij")], "g",
        [helper.make_tensor_value_info(n, 1, [3]) for n in "ab"],
        [helper.make_tensor_value_info("c", 1, None)]), opset_imports=[helper.make_opsetid("", 18)])
    inferred = infer_shapes(good)
    assert [d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim] == [3, 3]
    # and the optimizer still handles the hostile model (it may refuse it, but it returns)
    try:
        onnxkit.Session(model, level=2)
    except errors.OnnxkitError:
        pass


def test_markdown_report_escapes_model_strings():
    evil = "<script>alert(1)</script>|x"
    report = Report("b", [CaseResult(evil, "node", [evil], "fail", evil + "\nmore", 0.0)])
    text = report.to_markdown()
    assert "<script>" not in text and "&lt;script&gt;" in text


def test_pickled_input_file_is_refused_with_an_argument_error(tmp_path, capsys):
    model = tmp_path / "m.onnx"
    model.write_bytes(onnxkit.load("""<ir_version: 8, opset_import: ["" : 18]>
        g (float[2] x) => (float[2] y) { y = Relu(x) }""").SerializeToString())
    np.save(tmp_path / "x.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    # a bad --input file is an argument error (exit 2), one line, and nothing is unpickled
    assert main(["run", str(model), "--input", f"x={tmp_path / 'x.npy'}"]) == 2
    err = capsys.readouterr().err
    assert "never unpickles" in err and len(err.strip().splitlines()) == 1
